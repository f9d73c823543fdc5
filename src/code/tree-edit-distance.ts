/**
 * Exact ordered tree edit distance (Zhang & Shasha 1989) with unit insert/delete costs and a rename cost of 1
 * for different labels. Deterministic and iterative (no recursion), so results never depend on machine speed
 * or nesting depth. Runs in O(|T1| |T2| min(depth, leaves)^2) time and O(|T1| |T2|) memory; the exact number of
 * inner-loop steps is zhangShashaWork(T1) * zhangShashaWork(T2), so callers can bound the work before starting.
 */
export interface LabeledTree {
  label: string;
  children: LabeledTree[];
}

interface Postorder {
  labels: number[];
  /** Leftmost leaf descendant (post-order index) of each node. */
  leftmost: Int32Array;
  keyroots: number[];
}

function postorder(root: LabeledTree, labelIds: Map<string, number>): Postorder {
  const labels: number[] = [];
  const leftmostList: number[] = [];
  // Iterative post-order: a stack of [node, child index, leftmost leaf of the node].
  const stack: [LabeledTree, number, number][] = [[root, 0, -1]];
  while (stack.length) {
    const top = stack[stack.length - 1];
    const [node, i] = top;
    if (i < node.children.length) {
      top[1]++;
      stack.push([node.children[i], 0, -1]);
      continue;
    }
    stack.pop();
    const index = labels.length;
    let id = labelIds.get(node.label);
    if (id === undefined) labelIds.set(node.label, (id = labelIds.size));
    labels.push(id);
    const lml = top[2] === -1 ? index : top[2];
    leftmostList.push(lml);
    if (stack.length) {
      const parent = stack[stack.length - 1];
      if (parent[2] === -1) parent[2] = lml; // the first child finished sets the parent's leftmost leaf
    }
  }
  const leftmost = Int32Array.from(leftmostList);
  // Key roots: for each distinct leftmost leaf, the highest node having it.
  const seen = new Map<number, number>();
  for (let i = 0; i < labels.length; i++) seen.set(leftmost[i], i);
  const keyroots = [...seen.values()].sort((a, b) => a - b);
  return { labels, leftmost, keyroots };
}

export function treeSize(root: LabeledTree): number {
  let n = 0;
  const stack = [root];
  while (stack.length) {
    const t = stack.pop()!;
    n++;
    for (const c of t.children) stack.push(c);
  }
  return n;
}

/**
 * The tree's factor of the Zhang-Shasha work: the sum over its key roots of their subtree sizes. The distance of
 * two trees fills exactly zhangShashaWork(a) * zhangShashaWork(b) forest-distance cells.
 */
export function zhangShashaWork(root: LabeledTree): number {
  const { leftmost, keyroots } = postorder(root, new Map());
  let work = 0;
  for (const i of keyroots) work += i - leftmost[i] + 1;
  return work;
}

export function treeEditDistance(a: LabeledTree, b: LabeledTree): number {
  const labelIds = new Map<string, number>();
  const A = postorder(a, labelIds);
  const B = postorder(b, labelIds);
  const n = A.labels.length;
  const m = B.labels.length;
  const td = new Float64Array(n * m);
  const fd = new Float64Array((n + 1) * (m + 1));
  const W = m + 1;
  for (const i of A.keyroots) {
    for (const j of B.keyroots) {
      const li = A.leftmost[i];
      const lj = B.leftmost[j];
      // Forest distances, indexed from (li - 1, lj - 1) as the empty forest.
      const rows = i - li + 2;
      const cols = j - lj + 2;
      fd[0] = 0;
      for (let x = 1; x < rows; x++) fd[x * W] = fd[(x - 1) * W] + 1;
      for (let y = 1; y < cols; y++) fd[y] = fd[y - 1] + 1;
      for (let x = 1; x < rows; x++) {
        const ai = li + x - 1;
        for (let y = 1; y < cols; y++) {
          const bj = lj + y - 1;
          const del = fd[(x - 1) * W + y] + 1;
          const ins = fd[x * W + y - 1] + 1;
          if (A.leftmost[ai] === li && B.leftmost[bj] === lj) {
            const ren = fd[(x - 1) * W + y - 1] + (A.labels[ai] === B.labels[bj] ? 0 : 1);
            const d = Math.min(del, ins, ren);
            fd[x * W + y] = d;
            td[ai * m + bj] = d;
          } else {
            const px = A.leftmost[ai] - li;
            const py = B.leftmost[bj] - lj;
            fd[x * W + y] = Math.min(del, ins, fd[px * W + py] + td[ai * m + bj]);
          }
        }
      }
    }
  }
  return td[(n - 1) * m + (m - 1)];
}
