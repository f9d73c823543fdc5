/**
 * Graph edit distance for program dependence graphs, computed deterministically in polynomial time with the
 * bipartite method of Riesen & Bunke (2009): an optimal assignment (Hungarian algorithm) of nodes under costs
 * that include each node's incident edges, then the exact cost of the edit path that assignment induces.
 * The result is an upper bound on the true GED, equal to it whenever the optimal node mapping is found; unlike
 * networkx's time-bounded search it never depends on machine speed.
 */
export interface LabeledGraph {
  /** Node labels. */
  nodes: string[];
  /** Directed labelled edges [from, to, label]. */
  edges: [number, number, string][];
}

export type NodeCost = (a: string, b: string) => number;

/** Minimum-cost perfect assignment of a square cost matrix (Jonker-Volgenant style Hungarian algorithm). */
export function hungarian(cost: Float64Array, n: number): Int32Array {
  const INF = Number.POSITIVE_INFINITY;
  const u = new Float64Array(n + 1);
  const v = new Float64Array(n + 1);
  const p = new Int32Array(n + 1); // p[j]: row assigned to column j (1-based)
  const way = new Int32Array(n + 1);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    const minv = new Float64Array(n + 1).fill(INF);
    const used = new Uint8Array(n + 1);
    do {
      used[j0] = 1;
      const i0 = p[j0];
      let delta = INF;
      let j1 = 0;
      for (let j = 1; j <= n; j++) {
        if (used[j]) continue;
        const cur = cost[(i0 - 1) * n + (j - 1)] - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (let j = 0; j <= n; j++) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else minv[j] -= delta;
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0);
  }
  const rowToCol = new Int32Array(n);
  for (let j = 1; j <= n; j++) if (p[j] > 0) rowToCol[p[j] - 1] = j - 1;
  return rowToCol;
}

function degrees(g: LabeledGraph): number[] {
  const d = new Array<number>(g.nodes.length).fill(0);
  for (const [a, b] of g.edges) {
    d[a]++;
    d[b]++;
  }
  return d;
}

/** Edit cost of the graph edit path induced by the best bipartite node assignment. */
export function graphEditDistance(g1: LabeledGraph, g2: LabeledGraph, nodeCost: NodeCost): number {
  const n = g1.nodes.length;
  const m = g2.nodes.length;
  const size = n + m;
  if (size === 0) return 0;
  const d1 = degrees(g1);
  const d2 = degrees(g2);
  const BIG = 1e9;
  const cost = new Float64Array(size * size);
  for (let i = 0; i < size; i++) {
    for (let j = 0; j < size; j++) {
      let c: number;
      if (i < n && j < m) c = nodeCost(g1.nodes[i], g2.nodes[j]) + Math.abs(d1[i] - d2[j]) / 2;
      else if (i < n) c = j - m === i ? 1 + d1[i] / 2 : BIG; // delete node i
      else if (j < m) c = i - n === j ? 1 + d2[j] / 2 : BIG; // insert node j
      else c = 0;
      cost[i * size + j] = c;
    }
  }
  const assignment = hungarian(cost, size);
  const map = new Int32Array(n).fill(-1);
  let total = 0;
  const mapped2 = new Uint8Array(m);
  for (let i = 0; i < n; i++) {
    const j = assignment[i];
    if (j < m) {
      map[i] = j;
      mapped2[j] = 1;
      total += nodeCost(g1.nodes[i], g2.nodes[j]);
    } else total += 1;
  }
  for (let j = 0; j < m; j++) if (!mapped2[j]) total += 1;
  // Edge costs under the mapping: an edge survives when its image exists with the same label.
  const edges2 = new Map<string, number>();
  for (const [a, b, l] of g2.edges) edges2.set(`${a},${b},${l}`, (edges2.get(`${a},${b},${l}`) ?? 0) + 1);
  let kept = 0;
  for (const [a, b, l] of g1.edges) {
    if (map[a] >= 0 && map[b] >= 0) {
      const key = `${map[a]},${map[b]},${l}`;
      const left = edges2.get(key) ?? 0;
      if (left > 0) {
        edges2.set(key, left - 1);
        kept++;
      }
    }
  }
  total += g1.edges.length - kept + (g2.edges.length - kept);
  return total;
}
