import type { Language, Node as TsNode, Tree } from 'web-tree-sitter';
import { WorkBoundError } from '../errors.js';
import { loadedLanguages, parserFor, treeSitterExports, type LanguageId } from './languages.js';

/**
 * A parsed program as plain JavaScript objects. Built once per parse with an iterative cursor walk, so later
 * passes (subtree matching, data flow, decomposition) neither cross into WASM for every property nor recurse
 * on the native stack: input nested 10,000 levels deep is fine.
 */
export interface SyntaxNode {
  type: string;
  /** Named in the grammar (what tree-sitter's S-expressions print). */
  named: boolean;
  /** Inserted by error recovery. */
  missing: boolean;
  /** The field this node fills in its parent, e.g. `name`, `body`. */
  field: string | null;
  startRow: number;
  startColumn: number;
  endRow: number;
  endColumn: number;
  startIndex: number;
  endIndex: number;
  children: SyntaxNode[];
  parent: SyntaxNode | null;
}

export interface ParsedCode {
  language: LanguageId;
  source: string;
  root: SyntaxNode;
  /** True when tree-sitter had to recover from syntax errors. */
  hasError: boolean;
}

export function childByField(node: SyntaxNode, field: string): SyntaxNode | null {
  for (const c of node.children) if (c.field === field) return c;
  return null;
}

export function textOf(parsed: { source: string }, node: SyntaxNode): string {
  return parsed.source.slice(node.startIndex, node.endIndex);
}

/**
 * Longest one parse may run, in milliseconds of wall time. tree-sitter's error recovery is super-linear on long
 * broken input (240 KB of `x = 1` lines as Java: 33 s) and counts none of that work in its operations, so only a
 * clock bounds it; valid code parses at ~1 MB/s here, far inside it. Past it a ParseBoundError: CodeBLEU stops
 * with the segment named, RUBY drops to its string level, extraction keeps the code unsanitised.
 */
export const PARSE_TIME_LIMIT_MS = 10_000;

/** A parse abandoned at its time limit (a WorkBoundError: an input error when nothing else can be done). */
export class ParseBoundError extends WorkBoundError {
  override name = 'WorkBoundError';
}

/**
 * Parses `source` (the language must be loaded) into a plain tree. `deadline` (a performance.now() time) can
 * share one limit among several parses; by default each parse gets PARSE_TIME_LIMIT_MS.
 */
export function parseCode(language: LanguageId, source: string, options: { deadline?: number } = {}): ParsedCode {
  const deadline = options.deadline ?? performance.now() + PARSE_TIME_LIMIT_MS;
  const parser = parserFor(language);
  // Called every ~100 parser operations; returning true cancels the parse.
  const tree = parser.parse(source, null, { progressCallback: () => performance.now() > deadline });
  if (!tree) {
    parser.reset(); // else the next parse would resume this one, on the old source
    const limit = options.deadline === undefined ? `within ${PARSE_TIME_LIMIT_MS / 1000} s` : 'by its deadline';
    throw new ParseBoundError(`tree-sitter ${language} parse of ${source.length} characters did not finish ${limit} (error recovery on long broken code is super-linear; split or fix the input)`);
  }
  try {
    const walker = fastWalker();
    return { language, source, root: walker ? walker(tree, source) : toPlainTree(tree, source), hasError: tree.rootNode.hasError };
  } finally {
    tree.delete();
  }
}

/** Per grammar: type names and whether each type is named, so that a node costs one call for its type. */
interface TypeTable {
  types: string[];
  named: Uint8Array;
}

const typeTables = new WeakMap<Language, TypeTable>();

function typeTable(language: Language): TypeTable {
  let table = typeTables.get(language);
  if (!table) {
    // `types` is what the cursor's nodeType reads (`types[id] || "ERROR"`).
    const types = language.types;
    const named = new Uint8Array(types.length);
    for (let id = 0; id < types.length; id++) named[id] = language.nodeTypeIsNamed(id) ? 1 : 0;
    table = { types, named };
    typeTables.set(language, table);
  }
  return table;
}

/** Start index of every line (tree-sitter counts rows at '\n' only). */
function lineStarts(source: string): Int32Array {
  let count = 1;
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) count++;
  const starts = new Int32Array(count);
  let k = 1;
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) starts[k++] = i + 1;
  return starts;
}

/** The row of an index: the last line start at or before it. */
function rowOf(starts: Int32Array, index: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid] <= index) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Each property read on a tree-sitter cursor is a call into WASM with the cursor copied in, so a node reads only
 * what is not derivable: its type id (name and named-ness come from the grammar's table), its field, its start and
 * end indices (rows and columns follow from the indices: web-tree-sitter counts both in UTF-16 units and rows at
 * '\n', as the lines below do), and, for an empty node only, whether it is MISSING (ERROR, id 65535, is named).
 */
function toPlainTree(tree: Tree, source: string): SyntaxNode {
  const cursor = tree.walk();
  const { types, named } = typeTable(tree.language);
  const starts = lineStarts(source);
  const make = (parent: SyntaxNode | null): SyntaxNode => {
    const typeId = cursor.nodeTypeId;
    const startIndex = cursor.startIndex;
    const endIndex = cursor.endIndex;
    const startRow = rowOf(starts, startIndex);
    const endRow = rowOf(starts, endIndex);
    const node: SyntaxNode = {
      type: types[typeId] || 'ERROR',
      named: typeId < named.length ? named[typeId] === 1 : true,
      missing: startIndex === endIndex ? cursor.nodeIsMissing : false,
      field: parent ? cursor.currentFieldName : null,
      startRow,
      startColumn: startIndex - starts[startRow],
      endRow,
      endColumn: endIndex - starts[endRow],
      startIndex,
      endIndex,
      children: NO_CHILDREN,
      parent,
    };
    if (parent) pending.push(node);
    return node;
  };
  const pending: SyntaxNode[] = [];
  const marks: number[] = [];
  const root = make(null);
  let current = root;
  try {
    while (true) {
      if (cursor.gotoFirstChild()) {
        marks.push(pending.length);
        current = make(current);
        continue;
      }
      current.children = [];
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return root;
        current = closeChildren(current.parent!, pending, marks);
      }
      current = make(current.parent);
    }
  } finally {
    cursor.delete();
  }
}

/**
 * Placeholder until a node's children are known. Children are collected on a shared stack and each node gets an
 * array of exactly its children when its last child is done (an array grown by push would hold room for 16).
 */
const NO_CHILDREN: SyntaxNode[] = [];

function closeChildren(parent: SyntaxNode, pending: SyntaxNode[], marks: number[]): SyntaxNode {
  const mark = marks.pop()!;
  parent.children = pending.slice(mark);
  pending.length = mark;
  return parent;
}

/** The WASM exports of web-tree-sitter 0.25 that walk a cursor held in its transfer buffer. */
interface CursorExports {
  HEAP32: Int32Array;
  _ts_init(): number;
  _ts_tree_cursor_goto_first_child_wasm(tree: number): number;
  _ts_tree_cursor_goto_next_sibling_wasm(tree: number): number;
  _ts_tree_cursor_goto_parent_wasm(tree: number): number;
  _ts_tree_cursor_current_node_type_id_wasm(tree: number): number;
  _ts_tree_cursor_current_field_id_wasm(tree: number): number;
  _ts_tree_cursor_start_index_wasm(tree: number): number;
  _ts_tree_cursor_end_index_wasm(tree: number): number;
  _ts_tree_cursor_current_node_is_missing_wasm(tree: number): number;
}

type Walker = (tree: Tree, source: string) => SyntaxNode;
let fast: Walker | null | undefined;

/**
 * `toPlainTree` without web-tree-sitter's JavaScript cursor, which copies the cursor into WASM memory and back
 * around every call: the cursor is placed in the transfer buffer once and the exported cursor functions are called
 * directly (navigation updates it there; the read-only ones leave it), then copied back so that it can be deleted.
 * It depends on web-tree-sitter's internals, so it is used only when every export is there and, on a sample in the
 * first loaded language, it builds exactly the tree `toPlainTree` builds; otherwise `toPlainTree` is used.
 */
function fastWalker(): Walker | null {
  if (fast !== undefined) return fast;
  const m = treeSitterExports() as Partial<CursorExports> | null;
  if (!m) return null;
  const needed: (keyof CursorExports)[] = ['_ts_init', '_ts_tree_cursor_goto_first_child_wasm', '_ts_tree_cursor_goto_next_sibling_wasm', '_ts_tree_cursor_goto_parent_wasm', '_ts_tree_cursor_current_node_type_id_wasm', '_ts_tree_cursor_current_field_id_wasm', '_ts_tree_cursor_start_index_wasm', '_ts_tree_cursor_end_index_wasm', '_ts_tree_cursor_current_node_is_missing_wasm'];
  if (!(m.HEAP32 instanceof Int32Array) || needed.some((k) => typeof m[k] !== 'function')) return (fast = null);
  const walker = makeFastWalker(m as CursorExports);
  fast = selfCheck(walker) ? walker : null;
  return fast;
}

const SELF_CHECK_SOURCE = 'def f(a, b=[1, 2]):\n    """doc"""\n    for x in a:\n        if x: b += x  # c\n    return (b\n';

function selfCheck(walker: Walker): boolean {
  try {
    const language = loadedLanguages()[0];
    const source = language === 'python' ? SELF_CHECK_SOURCE : `${SELF_CHECK_SOURCE}\n{ x = [1, "é", ; }`;
    const a = parserFor(language).parse(source);
    const b = parserFor(language).parse(source);
    if (!a || !b) return false;
    try {
      return sameTree(walker(a, source), toPlainTree(b, source));
    } finally {
      a.delete();
      b.delete();
    }
  } catch {
    return false;
  }
}

function sameTree(x: SyntaxNode, y: SyntaxNode): boolean {
  const stack: [SyntaxNode, SyntaxNode][] = [[x, y]];
  while (stack.length) {
    const [a, b] = stack.pop()!;
    if (a.type !== b.type || a.named !== b.named || a.missing !== b.missing || a.field !== b.field || a.startIndex !== b.startIndex || a.endIndex !== b.endIndex || a.startRow !== b.startRow || a.startColumn !== b.startColumn || a.endRow !== b.endRow || a.endColumn !== b.endColumn || a.children.length !== b.children.length) return false;
    for (let i = 0; i < a.children.length; i++) stack.push([a.children[i], b.children[i]]);
  }
  return true;
}

function makeFastWalker(m: CursorExports): Walker {
  const transfer = m._ts_init() >> 2;
  return (tree, source) => {
    const { types, named } = typeTable(tree.language);
    const fields = tree.language.fields;
    const starts = lineStarts(source);
    const cursor = tree.walk() as unknown as Record<number, number> & { delete(): void };
    const t = (tree as unknown as Record<0, number>)[0];
    let heap = m.HEAP32;
    for (let k = 0; k < 4; k++) heap[transfer + k] = cursor[k];
    const make = (parent: SyntaxNode | null): SyntaxNode => {
      const typeId = m._ts_tree_cursor_current_node_type_id_wasm(t);
      const startIndex = m._ts_tree_cursor_start_index_wasm(t);
      const endIndex = m._ts_tree_cursor_end_index_wasm(t);
      const startRow = rowOf(starts, startIndex);
      const endRow = rowOf(starts, endIndex);
      const node: SyntaxNode = {
        type: types[typeId] || 'ERROR',
        named: typeId < named.length ? named[typeId] === 1 : true,
        missing: startIndex === endIndex ? m._ts_tree_cursor_current_node_is_missing_wasm(t) === 1 : false,
        field: parent ? fields[m._ts_tree_cursor_current_field_id_wasm(t)] : null,
        startRow,
        startColumn: startIndex - starts[startRow],
        endRow,
        endColumn: endIndex - starts[endRow],
        startIndex,
        endIndex,
        children: NO_CHILDREN,
        parent,
      };
      if (parent) pending.push(node);
      return node;
    };
    const pending: SyntaxNode[] = [];
    const marks: number[] = [];
    const root = make(null);
    let current = root;
    try {
      while (true) {
        if (m._ts_tree_cursor_goto_first_child_wasm(t)) {
          marks.push(pending.length);
          current = make(current);
          continue;
        }
        current.children = [];
        while (!m._ts_tree_cursor_goto_next_sibling_wasm(t)) {
          if (!m._ts_tree_cursor_goto_parent_wasm(t)) return root;
          current = closeChildren(current.parent!, pending, marks);
        }
        current = make(current.parent);
      }
    } finally {
      // The cursor's stack may have moved while it grew: hand the JavaScript cursor its current handle to delete.
      heap = m.HEAP32;
      for (let k = 0; k < 4; k++) cursor[k] = heap[transfer + k];
      cursor.delete();
    }
  };
}

/** The tree-sitter S-expression of a node, straight from tree-sitter (used to check subtree identities). */
export function nativeSExpression(language: LanguageId, source: string): (path: number[]) => string {
  const tree = parserFor(language).parse(source)!;
  return (path: number[]) => {
    let node: TsNode = tree.rootNode;
    for (const i of path) node = node.child(i)!;
    return node.toString();
  };
}
