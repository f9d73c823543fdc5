import { dataFlow, tokenSpans } from './dataflow.js';
import type { LabeledGraph } from './graph-edit-distance.js';
import type { LabeledTree } from './tree-edit-distance.js';
import { textOf, type ParsedCode, type SyntaxNode } from './syntax-tree.js';

/**
 * Program dependence graphs for RUBY (Tran et al. 2019), for every tree-sitter language: one vertex per
 * statement (the named children of statement containers: the program, blocks and bodies), labelled with its
 * normalised tokens; a control-dependence edge from each statement to the statements nested in it; a
 * data-dependence edge wherever the CodeBLEU data-flow extractor links a use to a definition in another
 * statement. A program "yields a PDG" when it has at least one dependence edge; otherwise RUBY falls back to
 * tree similarity, whose trees are the syntax trees below.
 */
const CONTAINERS = new Set([
  'module', 'program', 'source_file', 'translation_unit', 'compilation_unit', 'block', 'compound_statement',
  'statement_block', 'body_statement', 'declaration_list', 'class_body', 'field_declaration_list', 'then', 'else',
  'do', 'begin', 'statement_list', 'switch_body', 'switch_block', 'switch_section', 'case_clause', 'default_clause',
  'block_statement', 'constructor_body', 'enum_body', 'interface_body', 'match_block', 'match_arm', 'php_tag_block',
]);
const BODY_FIELDS = new Set(['body', 'consequence', 'alternative']);

function isContainer(n: SyntaxNode, root: SyntaxNode): boolean {
  return n === root || CONTAINERS.has(n.type) || (n.field !== null && BODY_FIELDS.has(n.field) && n.children.length > 0 && !n.named);
}

export interface ProgramGraph {
  graph: LabeledGraph;
  dependenceEdges: number;
}

export function programDependenceGraph(parsed: ParsedCode, label: (n: SyntaxNode) => string): ProgramGraph {
  const root = parsed.root;
  // The innermost vertex at or above each node (-1: none), recorded on the way down: looking it up from each token
  // upwards was quadratic in nesting depth (a 10,000-call chain: 3.4 s).
  const vertexAt = new Map<SyntaxNode, number>();
  const vertices: SyntaxNode[] = [];
  const parentVertex: number[] = [];
  // Pre-order walk tracking the innermost enclosing vertex.
  const stack: [SyntaxNode, number][] = [[root, -1]];
  while (stack.length) {
    const [n, enclosing] = stack.pop()!;
    let current = enclosing;
    if (n !== root && n.named && n.type !== 'comment' && n.parent && isContainer(n.parent, root)) {
      current = vertices.length;
      vertices.push(n);
      parentVertex.push(enclosing);
    }
    vertexAt.set(n, current);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i], current]);
  }
  const edges: [number, number, string][] = [];
  parentVertex.forEach((p, v) => {
    if (p >= 0) edges.push([p, v, 'control']);
  });
  // Data dependence from the data-flow edges (token index -> enclosing vertex).
  const tokens = tokenSpans(root);
  const tokenVertex = tokens.map((t) => vertexAt.get(t) ?? -1);
  const seen = new Set<string>();
  for (const [, idx, , , parents] of dataFlow(parsed)) {
    const to = tokenVertex[idx];
    for (const p of parents) {
      const from = tokenVertex[p];
      const key = `${from},${to}`;
      if (from >= 0 && to >= 0 && from !== to && !seen.has(key)) {
        seen.add(key);
        edges.push([from, to, 'data']);
      }
    }
  }
  return { graph: { nodes: vertices.map(label), edges }, dependenceEdges: edges.length };
}

const OPERATOR = /^([-+*\/%<>=!&|^~@]+|and|or|not|in|is|not in|is not)$/;

/** Anonymous tokens that an abstract syntax tree keeps: operators (punctuation and keywords are implied by the node type). */
function keepsAnonymous(n: SyntaxNode): boolean {
  return OPERATOR.test(n.type);
}

/**
 * The abstract syntax tree for tree similarity: named nodes labelled by type (named leaves, i.e. identifiers and
 * literals, also by their text) plus operator tokens; punctuation and keywords, which the node types already
 * imply, are left out, as an AST leaves them out.
 */
export function labeledSyntaxTree(parsed: ParsedCode): LabeledTree {
  const make = (n: SyntaxNode): LabeledTree => ({
    label: n.children.length === 0 && n.named ? `${n.type}:${textOf(parsed, n)}` : n.type,
    children: [],
  });
  const root = make(parsed.root);
  const stack: [SyntaxNode, LabeledTree][] = [[parsed.root, root]];
  while (stack.length) {
    const [n, t] = stack.pop()!;
    for (const c of n.children) {
      if (c.type === 'comment' || (!c.named && !keepsAnonymous(c))) continue;
      const ct = make(c);
      t.children.push(ct);
      stack.push([c, ct]);
    }
  }
  return root;
}
