import { PairTable } from './pair-table.js';
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
  private readonly pairs = new PairTable();
  private readonly fields = new Map<string, number>();
  private next = 0;
  private readonly fresh = () => this.next++;

  /** How many identities exist (callers bound their memory by starting a new interner). */
  get size(): number {
    return this.next;
  }

  id(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) this.ids.set(key, (id = this.next++));
    return id;
  }

  /**
   * The identity of `prefix` followed by (field, child): each distinct sequence of (field, child) pairs after a head
   * gets its own number, as the string of them would, but with one numeric look-up per pair.
   */
  extend(prefix: number, field: string, child: number): number {
    let f = this.fields.get(field);
    if (f === undefined) this.fields.set(field, (f = this.fields.size));
    // (field, child) packed into one 31-bit integer; beyond that range (never in practice), a string key
    if (f >= 2 ** 9 || child >= 2 ** 22) return this.id(`${prefix}|${f}|${child}`);
    return this.pairs.intern(prefix, f * 2 ** 22 + child, this.fresh);
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
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i];
    if (!visible(n) && n !== root) continue;
    let id: number;
    if (n.missing) id = interner.id(`M|${n.named ? n.type : JSON.stringify(n.type)}`);
    else if (n.type === 'ERROR' && n.children.length === 0 && n.endIndex > n.startIndex) id = interner.id(`U|${text(n).slice(0, 1)}`);
    else id = contributions(n, interner.id(`${visible(n) ? 'N' : n.children.length ? 'R' : 'L'}|${n.type}`), interner, sid);
    sid.set(n, id);
  }
  const out: number[] = [];
  const pre: SyntaxNode[] = [root];
  while (pre.length) {
    const n = pre.pop()!;
    if (n === root || n.children.length) {
      // An anonymous node with children prints as the root of its own S-expression.
      out.push(visible(n) || n === root ? sid.get(n)! : contributions(n, interner.id(`R|${n.type}`), interner, sid));
    }
    for (let k = n.children.length - 1; k >= 0; k--) pre.push(n.children[k]);
  }
  return out;
}

/**
 * Extends `head` by what a node's children print, in order: a visible child prints itself under its field;
 * anonymous ones print nothing themselves, their children print in their place, inheriting their field.
 */
function contributions(n: SyntaxNode, head: number, interner: SubtreeInterner, sid: Map<SyntaxNode, number>): number {
  let id = head;
  const work: [SyntaxNode, string | null][] = n.children.map((c) => [c, c.field]);
  for (let i = 0; i < work.length; i++) {
    const [c, field] = work[i];
    if (visible(c)) id = interner.extend(id, field ?? '', sid.get(c)!);
    else if (c.children.length) {
      const nested: [SyntaxNode, string | null][] = c.children.map((g) => [g, g.field ?? field]);
      work.splice(i + 1, 0, ...nested);
    }
  }
  return id;
}
