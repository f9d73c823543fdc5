import type { SyntaxNode } from './syntax-tree.js';

/**
 * Structural identities of subtrees: two subtrees get the same number exactly when tree-sitter prints the same
 * S-expression for them (`node.toString()`: named nodes with their field names, MISSING and UNEXPECTED markers,
 * anonymous nodes omitted). CodeBLEU's syntax match compares those strings; comparing numbers is equivalent,
 * linear in tree size and needs no recursion, so deeply nested input is safe. Tests check the equivalence
 * against tree-sitter's own strings.
 */
export class SubtreeInterner {
  private readonly ids = new Map<string, number>();

  id(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) this.ids.set(key, (id = this.ids.size));
    return id;
  }
}

function visible(n: SyntaxNode): boolean {
  return n.named || n.missing;
}

/**
 * Ids of the root and of every node that has children (the subtrees CodeBLEU's `get_all_sub_trees` lists),
 * in pre-order. `text` gives a node's source text (for error tokens).
 */
export function subtreeIdentities(root: SyntaxNode, interner: SubtreeInterner, text: (n: SyntaxNode) => string): number[] {
  const sid = new Map<SyntaxNode, number>();
  // Post-order without recursion.
  const order: SyntaxNode[] = [];
  const stack: SyntaxNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    order.push(n);
    for (const c of n.children) stack.push(c);
  }
  const contributions = (n: SyntaxNode, inheritedField: string | null, out: string[]) => {
    // Anonymous nodes print nothing themselves; their children print in their place.
    const work: [SyntaxNode, string | null][] = n.children.map((c) => [c, c.field ?? inheritedField]);
    for (let i = 0; i < work.length; i++) {
      const [c, field] = work[i];
      if (visible(c)) out.push(`${field ?? ''}:${sid.get(c)}`);
      else if (c.children.length) {
        const nested: [SyntaxNode, string | null][] = c.children.map((g) => [g, g.field ?? field]);
        work.splice(i + 1, 0, ...nested);
      }
    }
  };
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i];
    if (!visible(n) && n !== root) continue;
    let key: string;
    if (n.missing) key = `M|${n.named ? n.type : JSON.stringify(n.type)}`;
    else if (n.type === 'ERROR' && n.children.length === 0 && n.endIndex > n.startIndex) key = `U|${text(n).slice(0, 1)}`;
    else {
      const parts: string[] = [];
      contributions(n, null, parts);
      key = `${visible(n) ? 'N' : n.children.length ? 'R' : 'L'}|${n.type}|${parts.join(',')}`;
    }
    sid.set(n, interner.id(key));
  }
  const out: number[] = [];
  const pre: SyntaxNode[] = [root];
  while (pre.length) {
    const n = pre.pop()!;
    if (n === root || n.children.length) {
      out.push(visible(n) || n === root ? sid.get(n)! : interner.id(`R|${n.type}|${anonymousContributions(n, sid)}`));
    }
    for (let k = n.children.length - 1; k >= 0; k--) pre.push(n.children[k]);
  }
  return out;
}

/** An anonymous node with children printed as the root of its own S-expression. */
function anonymousContributions(n: SyntaxNode, sid: Map<SyntaxNode, number>): string {
  const parts: string[] = [];
  const work: [SyntaxNode, string | null][] = n.children.map((c) => [c, c.field]);
  for (let i = 0; i < work.length; i++) {
    const [c, field] = work[i];
    if (c.named || c.missing) parts.push(`${field ?? ''}:${sid.get(c)}`);
    else if (c.children.length) work.splice(i + 1, 0, ...c.children.map((g): [SyntaxNode, string | null] => [g, g.field ?? field]));
  }
  return parts.join(',');
}
