import { removeCommentsAndDocstrings } from './comments.js';
import { DataFlowInterner, dataFlow } from './dataflow.js';
import type { LanguageId } from './languages.js';
import { SubtreeInterner, subtreeIdentities } from './subtrees.js';
import { parseCode, textOf } from './syntax-tree.js';

/**
 * What CodeBLEU needs from one program, after its comment removal: subtree identities (CodeBLEU's syntax match
 * compares tree-sitter S-expressions; equal numbers mean equal strings) and normalised data-flow edges (equal
 * numbers mean equal `normalizeDataFlow` strings). Numbers are comparable only between analyses of one analyser
 * since it was made or last cleared; the caller keeps the results (compactly: CodeBLEU caches thousands) and clears
 * the analyser, with the results, to bound memory.
 */
export class CodeAnalyzer {
  private readonly interner = new SubtreeInterner();
  private readonly edges = new DataFlowInterner();

  constructor(readonly language: LanguageId) {}

  /** Forgets every number (the tables keep their capacity, so a store that starts afresh does not regrow them). */
  clear(): void {
    this.interner.clear();
    this.edges.clear();
  }

  /** How many subtree identities exist. */
  get subtreeIds(): number {
    return this.interner.size;
  }

  /** How many data-flow edge numbers exist. */
  get edgeIds(): number {
    return this.edges.size;
  }

  /** Appends the subtree identities (pre-order) to `subtrees` and the data-flow edge numbers (in order) to `dataflow`. */
  analyse(code: string, subtrees: number[], dataflow: number[]): void {
    const cleaned = removeCommentsAndDocstrings(code, this.language);
    const parsed = parseCode(this.language, cleaned);
    subtreeIdentities(parsed.root, this.interner, (n) => textOf(parsed, n), subtrees);
    this.edges.edgeIds(dataFlow(parsed), dataflow);
  }
}
