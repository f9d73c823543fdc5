import type { ParsedCode } from './syntax-tree.js';

/**
 * Whether Python code would parse with Python 3's own parser (`ast.parse`), which the reference implementations
 * of RUBY and of "Out of the BLEU"'s CodeBLEU use. tree-sitter's Python grammar is more lenient: it also takes
 * Python 2 (print and exec statements, backtick repr) and recovers from a few errors without an ERROR node.
 */
export function parsesAsPython3(parsed: ParsedCode): boolean {
  if (parsed.hasError) return false;
  const stack = [parsed.root];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'print_statement' || n.type === 'exec_statement') return false;
    if (n.type === 'string' && parsed.source[n.startIndex] === '`') return false;
    if (n.type === 'block' && n.children.length === 0) return false; // a compound statement without a body
    if (n.type === 'list_splat' && n.children.some((c) => c.type === 'list_splat')) return false; // `* *args`
    for (const c of n.children) stack.push(c);
  }
  return true;
}
