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

  /** How many identities exist (callers bound their memory by clearing the interner). */
  get size(): number {
    return this.next;
  }

  /** Forgets every identity (keeping the tables' capacity); numbering starts again from 0. */
  clear(): void {
    this.ids.clear();
    this.pairs.clear();
    this.fields.clear();
    for (const byType of Object.values(this.heads)) byType.clear();
    this.next = 0;
  }

  /** Head identities by kind (N: named or missing, R: anonymous with children, L: anonymous leaf) and type. */
  private readonly heads = { N: new Map<string, number>(), R: new Map<string, number>(), L: new Map<string, number>() };

  /** The identity of `${kind}|${type}`, without building the string each time. */
  head(kind: 'N' | 'R' | 'L', type: string): number {
    const byType = this.heads[kind];
    let id = byType.get(type);
    if (id === undefined) byType.set(type, (id = this.id(`${kind}|${type}`)));
    return id;
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
 * in pre-order, appended to `out` (and returned). `text` gives a node's source text (for error tokens).
 *
 * A node's S-expression lists, after its head, each visible child under its field; an anonymous child prints
 * nothing itself, its children print in its place, inheriting its field when they have none. So one walk without
 * recursion computes them bottom-up: each visible node passes up one item (its field, its identity), an anonymous
 * node passes up its children's items, and an anonymous node with children also prints as the root of its own
 * S-expression (head `R|type`, its children's items).
 */
export function subtreeIdentities(root: SyntaxNode, interner: SubtreeInterner, text: (n: SyntaxNode) => string, out: number[] = []): number[] {
  // The open nodes with their next child, where their children's items start and their slot in `out`; the items,
  // (field, identity) of the visible nodes that a node's S-expression lists. (Arrays of this call: they die young.)
  const openNodes: SyntaxNode[] = [];
  const openNext: number[] = [];
  const openItems: number[] = [];
  const openOut: number[] = [];
  const itemFields: (string | null)[] = [];
  const itemIds: number[] = [];
  const extendByItems = (head: number, mark: number): number => {
    let id = head;
    for (let k = mark; k < itemIds.length; k++) id = interner.extend(id, itemFields[k] ?? '', itemIds[k]);
    return id;
  };
  const enter = (n: SyntaxNode) => {
    openNodes.push(n);
    openNext.push(0);
    openItems.push(itemIds.length);
    // A slot in pre-order for the root and each node with children, filled when the node is done.
    if (n === root || n.children.length > 0) {
      openOut.push(out.length);
      out.push(-1);
    } else openOut.push(-1);
  };
  enter(root);
  while (openNodes.length > 0) {
    const top = openNodes.length - 1;
    const n = openNodes[top];
    const next = openNext[top];
    if (next < n.children.length) {
      openNext[top] = next + 1;
      enter(n.children[next]);
      continue;
    }
    const mark = openItems[top];
    const slot = openOut[top];
    openNodes.pop();
    openNext.pop();
    openItems.pop();
    openOut.pop();
    if (visible(n) || n === root) {
      let id: number;
      if (n.missing) id = interner.id(`M|${n.named ? n.type : JSON.stringify(n.type)}`);
      else if (n.type === 'ERROR' && n.children.length === 0 && n.endIndex > n.startIndex) id = interner.id(`U|${text(n).slice(0, 1)}`);
      else id = extendByItems(interner.head(visible(n) ? 'N' : n.children.length ? 'R' : 'L', n.type), mark);
      if (slot >= 0) out[slot] = id;
      itemFields.length = mark;
      itemIds.length = mark;
      itemFields.push(n.field);
      itemIds.push(id);
    } else if (n.children.length > 0) {
      // An anonymous node with children prints as the root of its own S-expression.
      out[slot] = extendByItems(interner.head('R', n.type), mark);
      for (let k = mark; k < itemFields.length; k++) itemFields[k] ??= n.field;
    }
  }
  return out;
}
