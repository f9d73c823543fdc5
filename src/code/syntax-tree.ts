import type { Node as TsNode, Tree } from 'web-tree-sitter';
import { parserFor, type LanguageId } from './languages.js';

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

/** Parses `source` (the language must be loaded) into a plain tree. */
export function parseCode(language: LanguageId, source: string): ParsedCode {
  const tree = parserFor(language).parse(source);
  if (!tree) throw new Error(`tree-sitter returned no tree for ${language} input`);
  try {
    return { language, source, root: toPlainTree(tree), hasError: tree.rootNode.hasError };
  } finally {
    tree.delete();
  }
}

function toPlainTree(tree: Tree): SyntaxNode {
  const cursor = tree.walk();
  const make = (parent: SyntaxNode | null): SyntaxNode => {
    const start = cursor.startPosition;
    const end = cursor.endPosition;
    const node: SyntaxNode = {
      type: cursor.nodeType,
      named: cursor.nodeIsNamed,
      missing: cursor.nodeIsMissing,
      field: parent ? cursor.currentFieldName : null,
      startRow: start.row,
      startColumn: start.column,
      endRow: end.row,
      endColumn: end.column,
      startIndex: cursor.startIndex,
      endIndex: cursor.endIndex,
      children: [],
      parent,
    };
    if (parent) parent.children.push(node);
    return node;
  };
  const root = make(null);
  let current = root;
  try {
    while (true) {
      if (cursor.gotoFirstChild()) {
        current = make(current);
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return root;
        current = current.parent!;
      }
      current = make(current.parent);
    }
  } finally {
    cursor.delete();
  }
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
