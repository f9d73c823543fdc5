import { loadLanguage, type LanguageId } from './languages.js';
import { parseCode, textOf, type SyntaxNode } from './syntax-tree.js';

/**
 * DSA-CQE's decomposition: a depth-first walk of the syntax tree in which the sub-trees under a fixed set of node
 * kinds (For, While, Assign, If, ClassDef, FunctionDef, Switch/match, Call) become sub-codes. Units come in
 * post-order, inner before outer, so that what a loop body means is known before the loop is analysed. Units
 * nested deeper than `maxDepth` are not split off: their text stays inside the enclosing unit.
 */
export type UnitKind = 'for' | 'while' | 'assign' | 'if' | 'class' | 'function' | 'switch' | 'call';

export interface CodeUnit {
  kind: UnitKind;
  /** The tree-sitter node type, e.g. `for_statement`. */
  nodeType: string;
  code: string;
  startLine: number;
  endLine: number;
  /** Nesting among units: 0 for a top-level unit. */
  depth: number;
  /** Names the unit defines (assignment targets, loop variables, function/class names, parameters). */
  defines: string[];
  /** Identifiers the unit uses. */
  references: string[];
}

const KINDS: Record<LanguageId, Partial<Record<string, UnitKind>>> = {
  python: {
    for_statement: 'for', while_statement: 'while', assignment: 'assign', augmented_assignment: 'assign', if_statement: 'if',
    class_definition: 'class', function_definition: 'function', match_statement: 'switch', call: 'call',
  },
  java: {
    for_statement: 'for', enhanced_for_statement: 'for', while_statement: 'while', do_statement: 'while', assignment_expression: 'assign',
    local_variable_declaration: 'assign', if_statement: 'if', class_declaration: 'class', interface_declaration: 'class', record_declaration: 'class',
    enum_declaration: 'class', method_declaration: 'function', constructor_declaration: 'function', lambda_expression: 'function',
    switch_expression: 'switch', method_invocation: 'call', object_creation_expression: 'call',
  },
  javascript: {
    for_statement: 'for', for_in_statement: 'for', while_statement: 'while', do_statement: 'while', assignment_expression: 'assign',
    augmented_assignment_expression: 'assign', lexical_declaration: 'assign', variable_declaration: 'assign', if_statement: 'if',
    class_declaration: 'class', function_declaration: 'function', generator_function_declaration: 'function', method_definition: 'function',
    switch_statement: 'switch', call_expression: 'call', new_expression: 'call',
  },
  c: {
    for_statement: 'for', while_statement: 'while', do_statement: 'while', assignment_expression: 'assign', declaration: 'assign',
    if_statement: 'if', struct_specifier: 'class', function_definition: 'function', switch_statement: 'switch', call_expression: 'call',
  },
  cpp: {
    for_statement: 'for', for_range_loop: 'for', while_statement: 'while', do_statement: 'while', assignment_expression: 'assign',
    declaration: 'assign', if_statement: 'if', struct_specifier: 'class', class_specifier: 'class', function_definition: 'function',
    lambda_expression: 'function', switch_statement: 'switch', call_expression: 'call',
  },
  c_sharp: {
    for_statement: 'for', foreach_statement: 'for', while_statement: 'while', do_statement: 'while', assignment_expression: 'assign',
    local_declaration_statement: 'assign', if_statement: 'if', class_declaration: 'class', struct_declaration: 'class',
    interface_declaration: 'class', record_declaration: 'class', method_declaration: 'function', constructor_declaration: 'function',
    local_function_statement: 'function', switch_statement: 'switch', switch_expression: 'switch', invocation_expression: 'call',
    object_creation_expression: 'call',
  },
  go: {
    for_statement: 'for', assignment_statement: 'assign', short_var_declaration: 'assign', var_declaration: 'assign', if_statement: 'if',
    type_declaration: 'class', function_declaration: 'function', method_declaration: 'function', func_literal: 'function',
    expression_switch_statement: 'switch', type_switch_statement: 'switch', select_statement: 'switch', call_expression: 'call',
  },
  rust: {
    for_expression: 'for', while_expression: 'while', loop_expression: 'while', let_declaration: 'assign', assignment_expression: 'assign',
    compound_assignment_expr: 'assign', if_expression: 'if', struct_item: 'class', enum_item: 'class', impl_item: 'class', trait_item: 'class',
    function_item: 'function', closure_expression: 'function', match_expression: 'switch', call_expression: 'call', macro_invocation: 'call',
  },
  php: {
    for_statement: 'for', foreach_statement: 'for', while_statement: 'while', do_statement: 'while', assignment_expression: 'assign',
    augmented_assignment_expression: 'assign', if_statement: 'if', class_declaration: 'class', function_definition: 'function',
    method_declaration: 'function', switch_statement: 'switch', match_expression: 'switch', function_call_expression: 'call',
    member_call_expression: 'call',
  },
  ruby: {
    for: 'for', while: 'while', until: 'while', assignment: 'assign', operator_assignment: 'assign', if: 'if', unless: 'if',
    class: 'class', module: 'class', method: 'function', singleton_method: 'function', case: 'switch', call: 'call',
  },
  typescript: {},
  tsx: {},
};
KINDS.typescript = {
  ...KINDS.javascript, interface_declaration: 'class', abstract_class_declaration: 'class', enum_declaration: 'class',
  function_signature: 'function',
};
KINDS.tsx = KINDS.typescript;

/** Node types whose child is a call that stands as a statement of its own (`f(x)` on its own line). */
const STATEMENT_WRAPPERS = new Set(['expression_statement', 'call_expression_statement']);

/** Leaves that name a value (variables, functions, fields), not types or keywords. */
const NAME_LEAF = /^(identifier|name|variable_name|constant|simple_identifier|shorthand_property_identifier|property_identifier|field_identifier)$/;
const BINDING_LEAF = /^(identifier|name|variable_name|constant)$/;

function leaves(parsed: { source: string }, node: SyntaxNode, pattern: RegExp, out: Set<string>, firstOnly = false): void {
  const stack = [node];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.children.length === 0 && pattern.test(n.type)) {
      out.add(textOf(parsed, n));
      if (firstOnly) return;
    }
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
}

function descendants(node: SyntaxNode, test: (n: SyntaxNode) => boolean): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  const stack = [...node.children];
  while (stack.length) {
    const n = stack.pop()!;
    if (test(n)) found.push(n);
    else stack.push(...n.children);
  }
  return found;
}

/** Names a unit introduces: the name of a function or class and its parameters, assignment and declaration
 * targets (the object itself for `a[i] = ...` or `a.x = ...`), loop variables. */
function definedNames(parsed: { source: string }, node: SyntaxNode, kind: UnitKind): string[] {
  const out = new Set<string>();
  const target = (n: SyntaxNode) => leaves(parsed, n, BINDING_LEAF, out, /subscript|member|attribute|field|index|element_reference|selector/.test(n.type));
  const declarators = (n: SyntaxNode) => {
    for (const d of [n, ...descendants(n, (x) => x.type.endsWith('declarator') || x.type === 'variable_declarator')].filter((x) => x.type.endsWith('declarator'))) {
      const name = d.children.find((c) => c.field === 'name' || c.field === 'declarator') ?? d.children[0];
      if (name) leaves(parsed, name, BINDING_LEAF, out, true);
    }
  };
  if (kind === 'function' || kind === 'class') {
    for (const c of node.children) {
      if (c.field === 'name') leaves(parsed, c, NAME_LEAF, out, true);
      else if (c.field === 'declarator') {
        // C/C++: the name and parameters sit inside the function declarator.
        leaves(parsed, c, BINDING_LEAF, out, true);
        for (const p of descendants(c, (x) => x.type.endsWith('parameter_declaration') || x.type === 'parameter')) declarators(p);
      }
      if (c.field === 'parameters' || c.type.endsWith('parameters') || c.type === 'parameter_list' || c.type === 'formal_parameters') {
        for (const p of c.children) {
          const name = p.children.find((x) => x.field === 'name' || x.field === 'pattern' || x.field === 'declarator');
          if (name) leaves(parsed, name, BINDING_LEAF, out, true);
          else if (BINDING_LEAF.test(p.type)) out.add(textOf(parsed, p));
          else if (p.children.length) leaves(parsed, p, BINDING_LEAF, out, true);
        }
      }
    }
  } else if (kind === 'assign') {
    const left = node.children.find((c) => c.field === 'left' || c.field === 'pattern');
    if (left) target(left);
    else if (node.children[0]?.type === 'expression_list') target(node.children[0]);
    else declarators(node);
  } else if (kind === 'for') {
    const variable = node.children.find((c) => c.field === 'left' || c.field === 'pattern' || c.field === 'name');
    if (variable) target(variable);
    const init = node.children.find((c) => c.field === 'initializer' || c.field === 'init' || c.type === 'for_clause');
    if (init) declarators(init);
  }
  return [...out];
}

export interface DecomposeOptions {
  /** Units nested deeper than this stay inside their enclosing unit (default 4). */
  maxDepth?: number;
  /** Calls become units only when they stand as statements of their own (default true), to avoid one unit per
   * nested call in `f(g(h(x)))`. */
  statementCallsOnly?: boolean;
}

/** Splits a program into units along its syntax tree, inner units before the units that contain them. */
export async function decompose(language: LanguageId, source: string, options: DecomposeOptions = {}): Promise<CodeUnit[]> {
  await loadLanguage(language);
  const parsed = parseCode(language, source);
  const kinds = KINDS[language];
  const maxDepth = options.maxDepth ?? 4;
  const statementCallsOnly = options.statementCallsOnly ?? true;
  const units: CodeUnit[] = [];
  const kindOf = (n: SyntaxNode): UnitKind | undefined => {
    const kind = kinds[n.type];
    if (kind !== 'call' || !statementCallsOnly) return kind;
    return n.parent && (STATEMENT_WRAPPERS.has(n.parent.type) || n.parent.type === 'block' || n.parent.type === 'module') ? kind : undefined;
  };
  // Iterative post-order walk: a unit is emitted after all units inside it.
  const stack: { node: SyntaxNode; depth: number; exit: boolean }[] = [{ node: parsed.root, depth: 0, exit: false }];
  while (stack.length) {
    const frame = stack.pop()!;
    const kind = kindOf(frame.node);
    const isUnit = kind !== undefined && frame.depth <= maxDepth;
    if (frame.exit) {
      const refs = new Set<string>();
      leaves(parsed, frame.node, NAME_LEAF, refs);
      units.push({
        kind: kind!,
        nodeType: frame.node.type,
        code: textOf(parsed, frame.node),
        startLine: frame.node.startRow + 1,
        endLine: frame.node.endRow + 1,
        depth: frame.depth,
        defines: definedNames(parsed, frame.node, kind!),
        references: [...refs],
      });
      continue;
    }
    if (isUnit) stack.push({ node: frame.node, depth: frame.depth, exit: true });
    const childDepth = isUnit ? frame.depth + 1 : frame.depth;
    for (let i = frame.node.children.length - 1; i >= 0; i--) stack.push({ node: frame.node.children[i], depth: childDepth, exit: false });
  }
  return units;
}
