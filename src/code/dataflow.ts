import { childByField, type ParsedCode, type SyntaxNode } from './syntax-tree.js';
import type { LanguageId } from './languages.js';

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
/** Token (index, code) by span: `spanKey` of the token's node. */
type IndexToCode = Map<number, [number, string]>;

const LEAF_STRING_TYPES = new Set(['string_literal', 'string', 'character_literal']);

/**
 * codebleu keys tokens by (start point, end point); a node's points and its start and end indices determine each
 * other, so the pair of indices, as one number (`width` is the source length + 1), is the same key.
 */
function spanKey(n: SyntaxNode, width: number): number {
  return n.startIndex * width + n.endIndex;
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

/** codebleu `index_to_code_token`: slices lines by (row, column), as the Python code does. */
function codeOfSpan(lines: string[], n: SyntaxNode): string {
  if (n.startRow === n.endRow) return (lines[n.startRow] ?? '').slice(n.startColumn, n.endColumn);
  let s = (lines[n.startRow] ?? '').slice(n.startColumn);
  for (let i = n.startRow + 1; i < n.endRow; i++) s += lines[i] ?? '';
  s += (lines[n.endRow] ?? '').slice(0, n.endColumn);
  return s;
}

function need<T>(x: T | null | undefined, what: string): T {
  if (x === null || x === undefined) throw new Error(`data flow: missing ${what}`);
  return x;
}

/** codebleu `tree_to_variable_index`: leaves whose text differs from their type (identifiers, literals). */
function variableSpans(node: SyntaxNode | null, index: IndexToCode, width: number): SyntaxNode[] {
  const root = need(node, 'node');
  const out: SyntaxNode[] = [];
  const stack: SyntaxNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (isTokenLeaf(n)) {
      const [, code] = need(index.get(spanKey(n, width)), 'token');
      if (n.type !== code) out.push(n);
    } else for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

/** Python `list(set(xs))` made deterministic: unique values in first-appearance order. */
function uniqueNames(xs: string[]): string[] {
  return [...new Set(xs)];
}

function sortedUnique(xs: number[]): number[] {
  return [...new Set(xs)].sort((a, b) => a - b);
}

/** What a visit that finds no edge returns; never written to. */
const NO_EDGES: readonly DfgEdge[] = Object.freeze([]);

/** Python's `sorted(dfg, key=lambda x: x[1])` (stable), in place; the lists are mostly in order already. */
function byIndex(edges: DfgEdge[]): DfgEdge[] {
  for (let i = 1; i < edges.length; i++) if (edges[i - 1][1] > edges[i][1]) return edges.sort((a, b) => a[1] - b[1]);
  return edges;
}

/**
 * The merge that loops apply after visiting their body twice, keyed by (variable, token index, relation); the
 * token index determines the variable (it is that token's text), so the key is a number.
 */
function mergeLoopEdges(edges: DfgEdge[]): DfgEdge[] {
  const merged = new Map<number, DfgEdge>();
  for (const e of edges) {
    const key = 2 * e[1] + (e[2] === 'comesFrom' ? 0 : 1);
    const cur = merged.get(key);
    if (!cur) merged.set(key, [e[0], e[1], e[2], e[3], e[4]]);
    else {
      cur[3] = uniqueNames([...cur[3], ...e[3]]);
      cur[4] = sortedUnique([...cur[4], ...e[4]]);
    }
  }
  return byIndex([...merged.values()]);
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
    private readonly index: IndexToCode,
    private readonly width: number,
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

  private done(edges: readonly DfgEdge[], states: States): readonly DfgEdge[] {
    this.states = states;
    return edges;
  }

  private code(n: SyntaxNode): [number, string] {
    return need(this.index.get(spanKey(n, this.width)), 'token');
  }

  /** `computedFrom`/`comesFrom` edges from every variable of `left` to every variable of `right`, one per pair. */
  private pairEdges(left: SyntaxNode | null, right: SyntaxNode | null, relation: Relation, frame: Frame, edges: DfgEdge[]): void {
    const names = variableSpans(left, this.index, this.width);
    const values = variableSpans(right, this.index, this.width);
    for (const n1 of names) {
      const [idx1, code1] = this.code(n1);
      for (const n2 of values) {
        const [idx2, code2] = this.code(n2);
        edges.push([code1, idx1, relation, [code2], [idx2]]);
      }
      frame.write().set(code1, [idx1]);
    }
  }

  /** One edge per left variable listing all right variables (Python and Ruby assignments). */
  private listEdges(left: SyntaxNode | null, right: SyntaxNode | null, frame: Frame, edges: DfgEdge[]): void {
    const rightSpans = variableSpans(right, this.index, this.width);
    const rightCodes = rightSpans.map((n) => this.code(n));
    for (const n1 of variableSpans(left, this.index, this.width)) {
      const [idx1, code1] = this.code(n1);
      edges.push([code1, idx1, 'computedFrom', rightCodes.map((x) => x[1]), rightCodes.map((x) => x[0])]);
      frame.write().set(code1, [idx1]);
    }
  }

  /** Visits the nodes in turn, each with the states the previous one left. */
  private visitAll(nodes: readonly SyntaxNode[], frame: Frame, edges: DfgEdge[]): void {
    for (const n of nodes) this.visitOne(n, frame, edges);
  }

  private visitOne(node: SyntaxNode | null, frame: Frame, edges: DfgEdge[]): void {
    const e = this.visit(need(node, 'node'), frame.states);
    for (const x of e) edges.push(x);
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

  /** Visits a node: returns its edges and leaves the states after it in `this.states`. */
  visit(node: SyntaxNode, incoming: States): readonly DfgEdge[] {
    const r = this.rules;
    const t = node.type;
    if (isTokenLeaf(node)) {
      // Ruby's extractor copies the states at a leaf; the others copy on entry (here: when writing).
      let states = r.copyOnEntry ? incoming : new Map(incoming);
      const [idx, code] = this.code(node);
      if (t === code) return this.done(NO_EDGES, states);
      const known = states.get(code);
      if (known) return this.done([[code, idx, 'comesFrom', [code], known.slice()]], states);
      if (t === 'identifier') {
        if (r.copyOnEntry) states = new Map(states);
        states.set(code, [idx]);
      }
      return this.done([[code, idx, 'comesFrom', [], []]], states);
    }

    // All but Ruby copy the states on entry; the copy is made when first written to (see Frame).
    const frame = new Frame(incoming, !r.copyOnEntry);

    if (this.sets.definition.has(t)) {
      const { name, value } = r.definitionParts(node);
      const edges: DfgEdge[] = [];
      if (value === null) {
        for (const n of variableSpans(name, this.index, this.width)) {
          const [idx, code] = this.code(n);
          edges.push([code, idx, 'comesFrom', [], []]);
          frame.write().set(code, [idx]);
        }
        return this.done(byIndex(edges), frame.states);
      }
      this.visitOne(value, frame, edges);
      this.pairEdges(name, value, 'comesFrom', frame, edges);
      return this.done(byIndex(edges), frame.states);
    }

    if (this.sets.assignment.has(t)) {
      const edges: DfgEdge[] = [];
      if (r.assignmentStyle === 'simple') {
        const left = childByField(node, 'left');
        const right = childByField(node, 'right');
        this.visitOne(right, frame, edges);
        this.pairEdges(left, right, 'computedFrom', frame, edges);
        return this.done(byIndex(edges), frame.states);
      }
      let lefts: SyntaxNode[];
      let rights: SyntaxNode[];
      if (r.assignmentStyle === 'python' && t === 'for_in_clause') {
        rights = [need(node.children[node.children.length - 1], 'iterable')];
        lefts = [need(childByField(node, 'left'), 'left side')];
      } else if (r.assignmentStyle === 'python' && childByField(node, 'right') === null) {
        return this.done(NO_EDGES, frame.states);
      } else {
        ({ lefts, rights } = this.assignmentSides(node));
        if (r.assignmentStyle === 'ruby' && t === 'operator_assignment') {
          lefts = [node.children[0]];
          rights = [node.children[node.children.length - 1]];
        }
      }
      this.visitAll(rights, frame, edges);
      for (let i = 0; i < Math.min(lefts.length, rights.length); i++) this.listEdges(lefts[i], rights[i], frame, edges);
      return this.done(byIndex(edges), frame.states);
    }

    if (this.sets.increment.has(t)) {
      const edges: DfgEdge[] = [];
      this.pairEdges(node, node, 'computedFrom', frame, edges);
      return this.done(byIndex(edges), frame.states);
    }

    if (this.sets.ifs.has(t)) return this.visitIf(node, frame.states);

    if (this.sets.fors.has(t)) {
      const edges: DfgEdge[] = [];
      const style = r.forStyle;
      if (style === 'python') {
        for (let pass = 0; pass < 2; pass++) {
          const { lefts, rights } = this.assignmentSides(node);
          this.visitAll(rights, frame, edges);
          for (let i = 0; i < Math.min(lefts.length, rights.length); i++) this.listEdges(lefts[i], rights[i], frame, edges);
          const last = node.children[node.children.length - 1];
          if (last.type === 'block') this.visitOne(last, frame, edges);
        }
      } else if (style === 'ruby') {
        for (let pass = 0; pass < 2; pass++) {
          const left = childByField(node, 'pattern');
          const right = childByField(node, 'value');
          this.visitOne(right, frame, edges);
          this.listEdges(left, right, frame, edges);
          this.visitOne(childByField(node, 'body'), frame, edges);
        }
      } else {
        this.visitAll(node.children, frame, edges);
        let after = false;
        for (const child of node.children) {
          if (after) this.visitOne(child, frame, edges);
          else if (style === 'go') {
            if (child.type === 'for_clause') {
              const update = childByField(child, 'update');
              if (update !== null) this.visitOne(update, frame, edges);
              after = true;
            }
          } else if (child.type === style.secondPassAfter) after = true;
        }
      }
      return this.done(mergeLoopEdges(edges), frame.states);
    }

    if (this.sets.enhancedFors.has(t) && r.enhancedForParts) {
      const { name, value, body } = r.enhancedForParts(node);
      const edges: DfgEdge[] = [];
      for (let pass = 0; pass < 2; pass++) {
        this.visitOne(value, frame, edges);
        this.pairEdges(name, value, 'computedFrom', frame, edges);
        this.visitOne(body, frame, edges);
      }
      return this.done(mergeLoopEdges(edges), frame.states);
    }

    if (this.sets.whiles.has(t)) {
      const edges: DfgEdge[] = [];
      for (let pass = 0; pass < 2; pass++) this.visitAll(node.children, frame, edges);
      return this.done(mergeLoopEdges(edges), frame.states);
    }

    const edges: DfgEdge[] = [];
    for (const child of node.children) if (this.sets.doFirst.has(child.type)) this.visitOne(child, frame, edges);
    for (const child of node.children) if (!this.sets.doFirst.has(child.type)) this.visitOne(child, frame, edges);
    return this.done(byIndex(edges), frame.states);
  }

  private visitIf(node: SyntaxNode, states: States): readonly DfgEdge[] {
    const r = this.rules;
    const edges: DfgEdge[] = [];
    // Ruby's visits write into the states they are given, so its current branch needs a copy of its own; the
    // other languages' visits never write into theirs.
    let current: States = r.copyOnEntry ? states : new Map(states);
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
        const e = this.visit(child, current);
        for (const x of e) edges.push(x);
        current = this.states;
      } else {
        flag = true;
        const e = this.visit(child, states);
        for (const x of e) edges.push(x);
        others.push(this.states);
      }
    }
    others.push(current);
    if (r.ifTag && !tag) others.push(states);
    const merged: States = new Map();
    for (const dic of others) {
      for (const [key, value] of dic) {
        const cur = merged.get(key);
        if (cur === undefined) merged.set(key, value.slice());
        else cur.push(...value);
      }
    }
    if (r.ifMergeOriginal) {
      for (const [key, value] of states) {
        const cur = merged.get(key);
        if (cur === undefined) merged.set(key, value);
        else cur.push(...value);
      }
    }
    for (const [key, value] of merged) merged.set(key, sortedUnique(value));
    return this.done(byIndex(edges), merged);
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
      this.states = new Map(this.states);
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
    const lines = parsed.source.split('\n');
    const index: IndexToCode = new Map();
    const width = parsed.source.length + 1;
    spans.forEach((n, i) => index.set(spanKey(n, width), [i, codeOfSpan(lines, n)]));
    let edges: DfgEdge[];
    try {
      edges = new Extractor(rules, index, width).visit(parsed.root, new Map()).slice();
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
    else byIdx.set(e[1], [e[0], e[1], e[2], uniqueNames([...cur[3], ...e[3]]), [...new Set([...cur[4], ...e[4]])]]);
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
