import { childByField, type ParsedCode, type SyntaxNode } from './syntax-tree.js';
import type { LanguageId } from './languages.js';
import { PairTable } from './pair-table.js';

/**
 * Data-flow graphs as CodeBLEU computes them: a port of GraphCodeBERT/CodeXGLUE's `DFG_<language>` functions as
 * shipped in `codebleu` 0.7.1, with the same traversal, the same per-language node kinds and the same aliasing
 * of state lists, so that the extracted edges are the ones the Python package extracts. One deliberate
 * difference: where Python builds a name list with `list(set(...))`, whose order depends on Python's per-process
 * string hash seed (so the reference itself is not deterministic), we keep first-appearance order.
 *
 * TypeScript and TSX, which no earlier implementation covers, get their own extractor (`typescript` below),
 * built like the JavaScript one but with the grammar's real assignment, declaration, parameter and loop kinds.
 */
export type Relation = 'comesFrom' | 'computedFrom';
/** [variable, token index, relation, parent variables, parent token indices] */
export type DfgEdge = [string, number, Relation, string[], number[]];
type States = Map<string, number[]>;

const LEAF_STRING_TYPES = new Set(['string_literal', 'string', 'character_literal']);

/**
 * Token index by span. codebleu keys tokens by (start point, end point); a node's points and its start and end
 * indices determine each other, so the pair of indices is the same key. Spans may repeat (zero-width MISSING
 * tokens): as with codebleu's dict, the last token of a span wins. One index serves every program in turn.
 */
class SpanIndex {
  private pairs = new PairTable(1 << 8);
  private last = new Int32Array(512);
  private spans = 0;
  private readonly fresh = () => this.spans++;

  /** Starts afresh for `tokens` tokens (shrinking after a program much larger than the next). */
  reset(tokens: number): void {
    if (this.pairs.capacity > 8 * Math.max(256, 2 * tokens)) this.pairs = new PairTable(tokens);
    else this.pairs.clear();
    this.spans = 0;
  }

  add(n: SyntaxNode, token: number): void {
    const id = this.pairs.intern(n.startIndex, n.endIndex, this.fresh);
    if (id >= this.last.length) {
      const grown = new Int32Array(2 * this.last.length);
      grown.set(this.last);
      this.last = grown;
    }
    this.last[id] = token;
  }

  /** The token index of a span, or -1. */
  get(n: SyntaxNode): number {
    const id = this.pairs.get(n.startIndex, n.endIndex);
    return id < 0 ? -1 : this.last[id];
  }
}

const spanIndex = new SpanIndex();
/**
 * The deepest visit that codebleu's recursive extractors reach under CPython's default recursion limit (1000) when
 * `calc_codebleu` is called from a script's top level: measured with codebleu 0.7.1 on Python 3.11 for a chain of
 * `+` and for nested calls (scripts/vectors-dataflow-depth.py); one level deeper, its data-flow graph is empty.
 */
const MAX_VISIT_DEPTH = 993;

/**
 * Work bound of one extraction, in state entries copied or merged: codebleu copies its states at every node, so the
 * work grows with names x writes (6,000 one-line functions: 4 s here, minutes in codebleu). Past it the extraction
 * fails and the graph is empty, as past MAX_VISIT_DEPTH: codebleu's own outcome when its extraction fails. No
 * CoNaLa, HearthStone or HumanEval program comes near it.
 */
export const MAX_STATE_ENTRIES = 1 << 25;
let stateEntries = 0;

/** A copy of the states, counted against MAX_STATE_ENTRIES. */
function copyStates(states: States): States {
  countStates(states.size);
  return new Map(states);
}

function countStates(entries: number): void {
  if ((stateEntries += entries) > MAX_STATE_ENTRIES) throw new RangeError('data-flow extraction past its work bound');
}

function isTokenLeaf(n: SyntaxNode): boolean {
  return (n.children.length === 0 || LEAF_STRING_TYPES.has(n.type)) && n.type !== 'comment';
}

/** codebleu `tree_to_token_index`: spans of leaves (and whole string literals), comments excluded. */
export function tokenSpans(root: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  const stack: SyntaxNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (isTokenLeaf(n)) out.push(n);
    else for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

/**
 * codebleu `index_to_code_token`, which slices the lines of `source.split('\n')` from the start (row, column) to
 * the end (row, column): the text between the two indices without its '\n's (rows and columns follow from the
 * indices, see syntax-tree.ts).
 */
function codeOfSpan(source: string, n: SyntaxNode): string {
  const text = source.slice(n.startIndex, n.endIndex);
  return text.indexOf('\n') < 0 ? text : text.split('\n').join('');
}

function need<T>(x: T | null | undefined, what: string): T {
  if (x === null || x === undefined) throw new Error(`data flow: missing ${what}`);
  return x;
}

/** Python `list(set(a + b))` made deterministic: the unique values of a then b in first-appearance order. */
function uniqueNames(a: readonly string[], b: readonly string[]): string[] {
  if (a.length + b.length > 16) return [...new Set([...a, ...b])];
  const out: string[] = [];
  for (const x of a) if (!out.includes(x)) out.push(x);
  for (const x of b) if (!out.includes(x)) out.push(x);
  return out;
}

/** `sorted(set(a + b))` for numbers, as a new array. */
function sortedUnique(a: readonly number[], b: readonly number[]): number[] {
  return sortUnique(a.concat(b));
}

/**
 * `sorted(set(xs))` for numbers, in place. The lists are short, so they are sorted by insertion, without the copies
 * Array.prototype.sort makes (equal numbers are indistinguishable, so any correct sort gives the same list).
 */
function sortUnique(xs: number[]): number[] {
  const n = xs.length;
  if (n < 2) return xs;
  if (n > 32) xs.sort((x, y) => x - y);
  else {
    for (let i = 1; i < n; i++) {
      const v = xs[i];
      let k = i;
      while (k > 0 && xs[k - 1] > v) {
        xs[k] = xs[k - 1];
        k--;
      }
      xs[k] = v;
    }
  }
  let k = 1;
  for (let i = 1; i < n; i++) if (xs[i] !== xs[k - 1]) xs[k++] = xs[i];
  xs.length = k;
  return xs;
}

/** Python's `sorted(dfg, key=lambda x: x[1])` (stable), in place; the lists are mostly in order already. */
function byIndex(edges: DfgEdge[]): DfgEdge[] {
  sortFrom(edges, 0);
  return edges;
}

/**
 * `byIndex` on the edges from `start` on (the edges of one visit, appended to its caller's list). They are mostly
 * in order already, so a short part is sorted in place by insertion (stable: an edge moves only past greater
 * indices), without the copies Array.prototype.sort makes.
 */
function sortFrom(edges: DfgEdge[], start: number): void {
  for (let i = start + 1; i < edges.length; i++) {
    if (edges[i - 1][1] <= edges[i][1]) continue;
    if (edges.length - start > 64) {
      const sorted = edges.slice(start).sort((a, b) => a[1] - b[1]);
      for (let k = 0; k < sorted.length; k++) edges[start + k] = sorted[k];
      return;
    }
    for (let j = i; j < edges.length; j++) {
      const e = edges[j];
      const key = e[1];
      let k = j;
      while (k > start && edges[k - 1][1] > key) {
        edges[k] = edges[k - 1];
        k--;
      }
      edges[k] = e;
    }
    return;
  }
}

/**
 * The merge that loops apply after visiting their body twice, to the edges from `start` on, keyed by (variable,
 * token index, relation); the token index determines the variable (it is that token's text), so the key is a number.
 */
function mergeLoopEdges(edges: DfgEdge[], start: number): void {
  const merged = new Map<number, DfgEdge>();
  for (let i = start; i < edges.length; i++) {
    const e = edges[i];
    const key = 2 * e[1] + (e[2] === 'comesFrom' ? 0 : 1);
    const cur = merged.get(key);
    if (!cur) merged.set(key, [e[0], e[1], e[2], e[3], e[4]]);
    else {
      cur[3] = uniqueNames(cur[3], e[3]);
      cur[4] = sortedUnique(cur[4], e[4]);
    }
  }
  edges.length = start;
  for (const e of merged.values()) edges.push(e);
  sortFrom(edges, start);
}

interface LanguageRules {
  assignment: string[];
  definition: string[];
  increment: string[];
  ifs: string[];
  fors: string[];
  enhancedFors: string[];
  whiles: string[];
  doFirst: string[];
  /** All but Ruby copy the state map on entry. */
  copyOnEntry: boolean;
  definitionParts(node: SyntaxNode): { name: SyntaxNode | null; value: SyntaxNode | null };
  assignmentStyle: 'python' | 'ruby' | 'simple';
  /** python: else/elif clauses branch; ruby: children of if kinds branch; flag: the first if-kind child and all after it branch. */
  ifStyle: 'python' | 'ruby' | 'flag';
  /** Whether an if without else also keeps the states from before it (PHP never does). */
  ifTag: boolean;
  /** Go, JavaScript and PHP add the states from before the if once more. */
  ifMergeOriginal: boolean;
  forStyle: 'python' | 'ruby' | 'go' | { secondPassAfter: string };
  enhancedForParts?(node: SyntaxNode): { name: SyntaxNode | null; value: SyntaxNode | null; body: SyntaxNode | null };
}

const byFields = (name: string, value: string) => (n: SyntaxNode) => ({ name: childByField(n, name), value: childByField(n, value) });

const RULES: Record<string, LanguageRules> = {
  python: {
    assignment: ['assignment', 'augmented_assignment', 'for_in_clause'],
    definition: ['default_parameter'],
    increment: [],
    ifs: ['if_statement'],
    fors: ['for_statement'],
    enhancedFors: [],
    whiles: ['while_statement'],
    doFirst: ['for_in_clause'],
    copyOnEntry: true,
    definitionParts: byFields('name', 'value'),
    assignmentStyle: 'python',
    ifStyle: 'python',
    ifTag: true,
    ifMergeOriginal: false,
    forStyle: 'python',
  },
  java: {
    assignment: ['assignment_expression'],
    definition: ['variable_declarator'],
    increment: ['update_expression'],
    ifs: ['if_statement', 'else'],
    fors: ['for_statement'],
    enhancedFors: ['enhanced_for_statement'],
    whiles: ['while_statement'],
    doFirst: [],
    copyOnEntry: true,
    definitionParts: byFields('name', 'value'),
    assignmentStyle: 'simple',
    ifStyle: 'flag',
    ifTag: true,
    ifMergeOriginal: false,
    forStyle: { secondPassAfter: 'local_variable_declaration' },
    enhancedForParts: (n) => ({ name: childByField(n, 'name'), value: childByField(n, 'value'), body: childByField(n, 'body') }),
  },
  c_sharp: {
    assignment: ['assignment_expression'],
    definition: ['variable_declarator'],
    increment: ['postfix_unary_expression'],
    ifs: ['if_statement', 'else'],
    fors: ['for_statement'],
    enhancedFors: ['for_each_statement'],
    whiles: ['while_statement'],
    doFirst: [],
    copyOnEntry: true,
    definitionParts: (n) => ({ name: n.children[0] ?? null, value: n.children.length === 2 ? n.children[1] : null }),
    assignmentStyle: 'simple',
    ifStyle: 'flag',
    ifTag: true,
    ifMergeOriginal: false,
    forStyle: { secondPassAfter: 'local_variable_declaration' },
    enhancedForParts: (n) => ({ name: childByField(n, 'left'), value: childByField(n, 'right'), body: childByField(n, 'body') }),
  },
  ruby: {
    assignment: ['assignment', 'operator_assignment'],
    definition: ['keyword_parameter'],
    increment: [],
    ifs: ['if', 'elsif', 'else', 'unless', 'when'],
    fors: ['for'],
    enhancedFors: [],
    whiles: ['while_modifier', 'until'],
    doFirst: [],
    copyOnEntry: false,
    definitionParts: byFields('name', 'value'),
    assignmentStyle: 'ruby',
    ifStyle: 'ruby',
    ifTag: true,
    ifMergeOriginal: false,
    forStyle: 'ruby',
  },
  go: {
    assignment: ['assignment_statement'],
    definition: ['var_spec'],
    increment: ['inc_statement'],
    ifs: ['if_statement', 'else'],
    fors: ['for_statement'],
    enhancedFors: [],
    whiles: [],
    doFirst: [],
    copyOnEntry: true,
    definitionParts: byFields('name', 'value'),
    assignmentStyle: 'simple',
    ifStyle: 'flag',
    ifTag: true,
    ifMergeOriginal: true,
    forStyle: 'go',
  },
  php: {
    assignment: ['assignment_expression', 'augmented_assignment_expression'],
    definition: ['simple_parameter'],
    increment: ['update_expression'],
    ifs: ['if_statement', 'else_clause'],
    fors: ['for_statement'],
    enhancedFors: ['foreach_statement'],
    whiles: ['while_statement'],
    doFirst: [],
    copyOnEntry: true,
    definitionParts: byFields('name', 'default_value'),
    assignmentStyle: 'simple',
    ifStyle: 'flag',
    ifTag: false,
    ifMergeOriginal: true,
    forStyle: { secondPassAfter: 'assignment_expression' },
    enhancedForParts: (n) => {
      let name: SyntaxNode | null = null;
      let value: SyntaxNode | null = null;
      for (const c of n.children) {
        if (c.type === 'variable_name' && value === null) value = c;
        else if (c.type === 'variable_name' && name === null) {
          name = c;
          break;
        }
      }
      return { name, value, body: childByField(n, 'body') };
    },
  },
  javascript: {
    assignment: ['assignment_pattern', 'augmented_assignment_expression'],
    definition: ['variable_declarator'],
    increment: ['update_expression'],
    ifs: ['if_statement', 'else'],
    fors: ['for_statement'],
    enhancedFors: [],
    whiles: ['while_statement'],
    doFirst: [],
    copyOnEntry: true,
    definitionParts: byFields('name', 'value'),
    assignmentStyle: 'simple',
    ifStyle: 'flag',
    ifTag: true,
    ifMergeOriginal: true,
    forStyle: { secondPassAfter: 'variable_declaration' },
  },
  rust: {
    assignment: ['assignment_expression', 'compound_assignment_expr', 'let_expression'],
    definition: ['function_item'],
    increment: [],
    ifs: ['if_expression', 'if_let_expression', 'match_expression', 'else'],
    fors: ['for_expression'],
    enhancedFors: ['for_each_statement'],
    whiles: ['while_expression', 'while_let_expression', 'loop_expression'],
    doFirst: [],
    copyOnEntry: true,
    definitionParts: (n) => ({ name: need(n.children[1], 'function name'), value: n.children.length >= 3 ? n.children[2] : null }),
    assignmentStyle: 'simple',
    ifStyle: 'flag',
    ifTag: true,
    ifMergeOriginal: false,
    forStyle: { secondPassAfter: 'local_variable_declaration' },
    enhancedForParts: (n) => ({ name: childByField(n, 'left'), value: childByField(n, 'right'), body: childByField(n, 'body') }),
  },
  // codegauge's own: the TypeScript grammar's real kinds (plain `x = y` is an assignment_expression there, as
  // it is in JavaScript, where CodeXGLUE's list misses it; parameters with defaults; for-in/for-of loops).
  typescript: {
    assignment: ['assignment_expression', 'augmented_assignment_expression', 'assignment_pattern'],
    definition: ['variable_declarator', 'required_parameter', 'optional_parameter'],
    increment: ['update_expression'],
    ifs: ['if_statement', 'else_clause'],
    fors: ['for_statement'],
    enhancedFors: ['for_in_statement'],
    whiles: ['while_statement', 'do_statement'],
    doFirst: [],
    copyOnEntry: true,
    definitionParts: (n) =>
      n.type === 'variable_declarator'
        ? { name: childByField(n, 'name'), value: childByField(n, 'value') }
        : { name: childByField(n, 'pattern'), value: childByField(n, 'value') },
    assignmentStyle: 'simple',
    ifStyle: 'flag',
    ifTag: true,
    ifMergeOriginal: true,
    forStyle: { secondPassAfter: 'lexical_declaration' },
    enhancedForParts: (n) => ({ name: childByField(n, 'left'), value: childByField(n, 'right'), body: childByField(n, 'body') }),
  },
};

/** Which extractor a language uses (codebleu maps C and C++ to the C# one, as XLCoST does). */
export function dataflowRulesFor(language: LanguageId): string {
  switch (language) {
    case 'c':
    case 'cpp':
      return 'c_sharp';
    case 'tsx':
      return 'typescript';
    default:
      return language;
  }
}

class Extractor {
  private readonly sets: Record<'assignment' | 'definition' | 'increment' | 'ifs' | 'fors' | 'enhancedFors' | 'whiles' | 'doFirst', Set<string>>;

  constructor(
    private readonly rules: LanguageRules,
    private readonly index: SpanIndex,
    private readonly codes: readonly string[],
  ) {
    this.sets = {
      assignment: new Set(rules.assignment),
      definition: new Set(rules.definition),
      increment: new Set(rules.increment),
      ifs: new Set(rules.ifs),
      fors: new Set(rules.fors),
      enhancedFors: new Set(rules.enhancedFors),
      whiles: new Set(rules.whiles),
      doFirst: new Set(rules.doFirst),
    };
  }

  /** The states after the last visit (returned this way rather than in a pair, to save an allocation per node). */
  states: States = new Map();

  /** The token index of a token leaf. */
  private tokenOf(n: SyntaxNode): number {
    const token = this.index.get(n);
    if (token < 0) throw new Error('data flow: missing token');
    return token;
  }

  /** codebleu `tree_to_variable_index`: leaves whose text differs from their type (identifiers, literals). */
  private variableSpans(node: SyntaxNode | null): SyntaxNode[] {
    const root = need(node, 'node');
    const out: SyntaxNode[] = [];
    const stack: SyntaxNode[] = [root];
    while (stack.length) {
      const n = stack.pop()!;
      if (isTokenLeaf(n)) {
        if (n.type !== this.codes[this.tokenOf(n)]) out.push(n);
      } else for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
    }
    return out;
  }

  /** `computedFrom`/`comesFrom` edges from every variable of `left` to every variable of `right`, one per pair. */
  private pairEdges(left: SyntaxNode | null, right: SyntaxNode | null, relation: Relation, frame: Frame, edges: DfgEdge[]): void {
    const names = this.variableSpans(left);
    const values = this.variableSpans(right);
    for (const n1 of names) {
      const idx1 = this.tokenOf(n1);
      const code1 = this.codes[idx1];
      for (const n2 of values) {
        const idx2 = this.tokenOf(n2);
        edges.push([code1, idx1, relation, [this.codes[idx2]], [idx2]]);
      }
      frame.write().set(code1, [idx1]);
    }
  }

  /** One edge per left variable listing all right variables (Python and Ruby assignments). */
  private listEdges(left: SyntaxNode | null, right: SyntaxNode | null, frame: Frame, edges: DfgEdge[]): void {
    const rightSpans = this.variableSpans(right);
    // Plain loops, not `.map`: a mapped array is holey, and these lists meet packed ones (`[idx]`, `known.slice()`)
    // in the same code (uniqueNames, sortUnique, mergeLoopEdges), which then deoptimized on the unexpected map.
    const rightIdx: number[] = [];
    for (let i = 0; i < rightSpans.length; i++) rightIdx.push(this.tokenOf(rightSpans[i]));
    for (const n1 of this.variableSpans(left)) {
      const idx1 = this.tokenOf(n1);
      const code1 = this.codes[idx1];
      const names: string[] = [];
      for (let i = 0; i < rightIdx.length; i++) names.push(this.codes[rightIdx[i]]);
      edges.push([code1, idx1, 'computedFrom', names, rightIdx.slice()]);
      frame.write().set(code1, [idx1]);
    }
  }

  /** Visits the nodes in turn, each with the states the previous one left. */
  private visitAll(nodes: readonly SyntaxNode[], frame: Frame, edges: DfgEdge[]): void {
    for (let i = 0; i < nodes.length; i++) this.visitOne(nodes[i], frame, edges);
  }

  private visitOne(node: SyntaxNode | null, frame: Frame, edges: DfgEdge[]): void {
    this.visit(need(node, 'node'), frame.states, edges);
    frame.adopt(this.states);
  }

  /** Left/right node lists of an assignment, paired element-wise when both sides have the same length. */
  private assignmentSides(node: SyntaxNode): { lefts: SyntaxNode[]; rights: SyntaxNode[] } {
    const left = need(childByField(node, 'left'), 'left side');
    const right = need(childByField(node, 'right'), 'right side');
    let lefts = left.children.filter((x) => x.type !== ',');
    let rights = right.children.filter((x) => x.type !== ',');
    if (rights.length !== lefts.length) {
      lefts = [left];
      rights = [right];
    }
    if (lefts.length === 0) lefts = [left];
    if (rights.length === 0) rights = [right];
    return { lefts, rights };
  }

  /**
   * Visits a node: appends its edges (the list CodeXGLUE's function returns for it) to `out` and leaves the states
   * after it in `this.states`. Each visit's edges are appended to one shared list rather than returned and copied
   * into every caller's, so a visit that sorts or merges its edges does it to its own part, from `start` on.
   */
  visit(node: SyntaxNode, incoming: States, out: DfgEdge[]): void {
    // codebleu's extractors recurse once per level, and Python stops them at its recursion limit (the graph is then
    // empty); counting levels here gives that cut-off at a fixed depth instead of wherever V8's stack runs out, which
    // moves with how far the code has been optimised.
    if (++this.depth > MAX_VISIT_DEPTH) throw new RangeError('data-flow extraction deeper than Python allows');
    this.visitNode(node, incoming, out);
    this.depth--;
  }

  private depth = 0;

  private visitNode(node: SyntaxNode, incoming: States, out: DfgEdge[]): void {
    const r = this.rules;
    const t = node.type;
    if (isTokenLeaf(node)) {
      // Ruby's extractor copies the states at a leaf; the others copy on entry (here: when writing).
      let states = r.copyOnEntry ? incoming : copyStates(incoming);
      const idx = this.tokenOf(node);
      const code = this.codes[idx];
      if (t !== code) {
        const known = states.get(code);
        if (known) out.push([code, idx, 'comesFrom', [code], known.slice()]);
        else {
          if (t === 'identifier') {
            if (r.copyOnEntry) states = copyStates(states);
            states.set(code, [idx]);
          }
          out.push([code, idx, 'comesFrom', [], []]);
        }
      }
      this.states = states;
      return;
    }

    // All but Ruby copy the states on entry; the copy is made when first written to (see Frame).
    const frame = new Frame(incoming, !r.copyOnEntry);
    const start = out.length;

    if (this.sets.definition.has(t)) {
      const { name, value } = r.definitionParts(node);
      if (value === null) {
        for (const n of this.variableSpans(name)) {
          const idx = this.tokenOf(n);
          const code = this.codes[idx];
          out.push([code, idx, 'comesFrom', [], []]);
          frame.write().set(code, [idx]);
        }
      } else {
        this.visitOne(value, frame, out);
        this.pairEdges(name, value, 'comesFrom', frame, out);
      }
      sortFrom(out, start);
    } else if (this.sets.assignment.has(t)) {
      if (r.assignmentStyle === 'simple') {
        const left = childByField(node, 'left');
        const right = childByField(node, 'right');
        this.visitOne(right, frame, out);
        this.pairEdges(left, right, 'computedFrom', frame, out);
        sortFrom(out, start);
      } else {
        let lefts: SyntaxNode[] | null = null;
        let rights: SyntaxNode[] | null = null;
        if (r.assignmentStyle === 'python' && t === 'for_in_clause') {
          rights = [need(node.children[node.children.length - 1], 'iterable')];
          lefts = [need(childByField(node, 'left'), 'left side')];
        } else if (!(r.assignmentStyle === 'python' && childByField(node, 'right') === null)) {
          ({ lefts, rights } = this.assignmentSides(node));
          if (r.assignmentStyle === 'ruby' && t === 'operator_assignment') {
            lefts = [node.children[0]];
            rights = [node.children[node.children.length - 1]];
          }
        }
        // (a Python assignment without a right side, `x: int`, has no edges)
        if (lefts !== null && rights !== null) {
          this.visitAll(rights, frame, out);
          for (let i = 0; i < Math.min(lefts.length, rights.length); i++) this.listEdges(lefts[i], rights[i], frame, out);
          sortFrom(out, start);
        }
      }
    } else if (this.sets.increment.has(t)) {
      this.pairEdges(node, node, 'computedFrom', frame, out);
      sortFrom(out, start);
    } else if (this.sets.ifs.has(t)) {
      this.visitIf(node, frame.states, out);
      return;
    } else if (this.sets.fors.has(t)) {
      const style = r.forStyle;
      if (style === 'python') {
        for (let pass = 0; pass < 2; pass++) {
          const { lefts, rights } = this.assignmentSides(node);
          this.visitAll(rights, frame, out);
          for (let i = 0; i < Math.min(lefts.length, rights.length); i++) this.listEdges(lefts[i], rights[i], frame, out);
          const last = node.children[node.children.length - 1];
          if (last.type === 'block') this.visitOne(last, frame, out);
        }
      } else if (style === 'ruby') {
        for (let pass = 0; pass < 2; pass++) {
          const left = childByField(node, 'pattern');
          const right = childByField(node, 'value');
          this.visitOne(right, frame, out);
          this.listEdges(left, right, frame, out);
          this.visitOne(childByField(node, 'body'), frame, out);
        }
      } else {
        this.visitAll(node.children, frame, out);
        let after = false;
        for (const child of node.children) {
          if (after) this.visitOne(child, frame, out);
          else if (style === 'go') {
            if (child.type === 'for_clause') {
              const update = childByField(child, 'update');
              if (update !== null) this.visitOne(update, frame, out);
              after = true;
            }
          } else if (child.type === style.secondPassAfter) after = true;
        }
      }
      mergeLoopEdges(out, start);
    } else if (this.sets.enhancedFors.has(t) && r.enhancedForParts) {
      const { name, value, body } = r.enhancedForParts(node);
      for (let pass = 0; pass < 2; pass++) {
        this.visitOne(value, frame, out);
        this.pairEdges(name, value, 'computedFrom', frame, out);
        this.visitOne(body, frame, out);
      }
      mergeLoopEdges(out, start);
    } else if (this.sets.whiles.has(t)) {
      for (let pass = 0; pass < 2; pass++) this.visitAll(node.children, frame, out);
      mergeLoopEdges(out, start);
    } else {
      const children = node.children;
      const doFirst = this.sets.doFirst;
      if (doFirst.size > 0) for (let i = 0; i < children.length; i++) if (doFirst.has(children[i].type)) this.visitOne(children[i], frame, out);
      for (let i = 0; i < children.length; i++) if (doFirst.size === 0 || !doFirst.has(children[i].type)) this.visitOne(children[i], frame, out);
      sortFrom(out, start);
    }
    this.states = frame.states;
  }

  private visitIf(node: SyntaxNode, states: States, out: DfgEdge[]): void {
    const r = this.rules;
    const start = out.length;
    // Ruby's visits write into the states they are given, so its current branch needs a copy of its own; the
    // other languages' visits never write into theirs.
    let current: States = r.copyOnEntry ? states : copyStates(states);
    const others: States[] = [];
    let flag = false;
    let tag = r.ifTag && node.type.includes('else');
    for (const child of node.children) {
      if (r.ifTag && child.type.includes('else')) tag = true;
      const branches =
        r.ifStyle === 'python'
          ? child.type === 'elif_clause' || child.type === 'else_clause'
          : r.ifStyle === 'ruby'
            ? this.sets.ifs.has(child.type)
            : flag || this.sets.ifs.has(child.type);
      if (!branches) {
        this.visit(child, current, out);
        current = this.states;
      } else {
        flag = true;
        this.visit(child, states, out);
        others.push(this.states);
      }
    }
    others.push(current);
    if (r.ifTag && !tag) others.push(states);
    const merged: States = new Map();
    for (const dic of others) {
      countStates(dic.size);
      for (const [key, value] of dic) {
        const cur = merged.get(key);
        if (cur === undefined) merged.set(key, value.slice());
        else for (const x of value) cur.push(x);
      }
    }
    if (r.ifMergeOriginal) {
      countStates(states.size);
      for (const [key, value] of states) {
        const cur = merged.get(key);
        if (cur === undefined) merged.set(key, value.slice());
        else for (const x of value) cur.push(x);
      }
    }
    // Every list in `merged` is its own (copied above), so it is sorted in place.
    for (const value of merged.values()) sortUnique(value);
    sortFrom(out, start);
    this.states = merged;
  }
}

/**
 * The states of one visit. CodeXGLUE's extractors copy the states on entry to every node (`states.copy()`), which
 * makes a copy per node; here the copy is made only when the visit first writes, which is equivalent because a
 * visit never writes into the states it was given (Ruby's excepted: its extractor does not copy, and `owned` starts
 * true) and states handed back by a child are either the ones it was given or a fresh map nobody else holds.
 */
class Frame {
  constructor(
    public states: States,
    private owned: boolean,
  ) {}

  /** The states, made this visit's own first. */
  write(): States {
    if (!this.owned) {
      this.states = copyStates(this.states);
      this.owned = true;
    }
    return this.states;
  }

  /** Takes the states a child handed back. */
  adopt(states: States): void {
    if (states !== this.states) {
      this.states = states;
      this.owned = true;
    }
  }
}

/** codebleu `get_data_flow`: the data-flow edges of a program (empty when extraction fails). */
export function dataFlow(parsed: ParsedCode): DfgEdge[] {
  const rules = RULES[dataflowRulesFor(parsed.language)];
  let dfg: DfgEdge[];
  // Extraction errors are dropped (an empty graph), so their stack traces are not worth capturing.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    const spans = tokenSpans(parsed.root);
    spanIndex.reset(spans.length);
    const codes: string[] = [];
    for (let i = 0; i < spans.length; i++) {
      spanIndex.add(spans[i], i);
      codes.push(codeOfSpan(parsed.source, spans[i]));
    }
    let edges: DfgEdge[] = [];
    try {
      stateEntries = 0;
      new Extractor(rules, spanIndex, codes).visit(parsed.root, new Map(), edges);
    } catch {
      edges = []; // codebleu: any exception in the DFG function gives an empty graph
    }
    edges = byIndex(edges);
    const used = new Set<number>();
    for (const e of edges) {
      if (e[4].length !== 0) used.add(e[1]);
      for (const x of e[4]) used.add(x);
    }
    dfg = edges.filter((e) => used.has(e[1]));
  } catch {
    dfg = [];
  } finally {
    Error.stackTraceLimit = limit;
  }
  const byIdx = new Map<number, DfgEdge>();
  for (const e of dfg) {
    const cur = byIdx.get(e[1]);
    if (!cur) byIdx.set(e[1], e);
    else byIdx.set(e[1], [e[0], e[1], e[2], uniqueNames(cur[3], e[3]), [...new Set([...cur[4], ...e[4]])]]);
  }
  return [...byIdx.values()];
}

/** codebleu `normalize_dataflow`: variables renamed var_0, var_1, ... in order of first appearance. */
export function normalizeDataFlow(dfg: DfgEdge[]): string[] {
  const names = new Map<string, string>();
  const rename = (x: string) => {
    let v = names.get(x);
    if (v === undefined) names.set(x, (v = `var_${names.size}`));
    return v;
  };
  return dfg.map((e) => {
    const parents = e[3].map(rename);
    return `${rename(e[0])}|${e[2]}|${parents.join(',')}`;
  });
}

/**
 * The edges of `normalizeDataFlow` as numbers, without building their strings: two edges get the same number (from
 * one interner) exactly when their normalised strings are equal. A string `var_<v>|<relation>|var_<p1>,var_<p2>...`
 * is determined by v, the relation and the list p1, p2, ... (the names hold no ',' or '|'), so an edge is numbered
 * as its head (v, relation) extended by one parent at a time, each step hash-consed.
 */
export class DataFlowInterner {
  private readonly heads = new PairTable(1 << 8);
  private readonly tails = new PairTable(1 << 10);
  private next = 0;
  private readonly fresh = () => this.next++;

  /** How many edge numbers exist (callers bound their memory by clearing the interner). */
  get size(): number {
    return this.next;
  }

  /** Forgets every edge number (keeping the tables' capacity); numbering starts again from 0. */
  clear(): void {
    this.heads.clear();
    this.tails.clear();
    this.next = 0;
  }

  /** The numbers of `normalizeDataFlow(dfg)`, in its order, appended to `out`. */
  edgeIds(dfg: readonly DfgEdge[], out: number[]): void {
    // Per program (a new map rather than a cleared long-lived one, whose new tables would outlive young collections).
    const names = new Map<string, number>();
    const rename = (x: string): number => {
      let v = names.get(x);
      if (v === undefined) names.set(x, (v = names.size));
      return v;
    };
    for (const e of dfg) {
      // As `normalizeDataFlow`: the parents are renamed before the variable itself.
      const parents = e[3];
      const first = parents.length > 0 ? rename(parents[0]) : 0;
      for (let k = 1; k < parents.length; k++) rename(parents[k]);
      let id = this.heads.intern(rename(e[0]), e[2] === 'comesFrom' ? 0 : 1, this.fresh);
      if (parents.length > 0) {
        id = this.tails.intern(id, first, this.fresh);
        for (let k = 1; k < parents.length; k++) id = this.tails.intern(id, names.get(parents[k])!, this.fresh);
      }
      out.push(id);
    }
  }
}
