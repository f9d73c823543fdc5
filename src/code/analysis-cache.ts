import { BoundedCache } from '../metrics/bounded-cache.js';
import { removeCommentsAndDocstrings } from './comments.js';
import { dataFlow, normalizeDataFlow } from './dataflow.js';
import type { LanguageId } from './languages.js';
import { SubtreeInterner, subtreeIdentities } from './subtrees.js';
import { parseCode, textOf } from './syntax-tree.js';

/**
 * What CodeBLEU needs from one program, computed once per distinct text and language in a run (a reference is
 * typically shared by many hypotheses): subtree identities and normalised data-flow edges, both after CodeBLEU's
 * comment removal. Kept compact, since a run caches thousands.
 */
export interface CodeAnalysis {
  /** Subtree identities (of this cache's interner), in pre-order. */
  subtrees: Int32Array;
  /** Number of data-flow edges. */
  dataflowEdges: number;
  /** The normalised data-flow edges as a multiset. */
  dataflowCounts: Map<string, number>;
}

/** Past this many subtree identities the interner starts afresh (with the analyses that use its numbers). */
const INTERNER_LIMIT = 1 << 19;

export class CodeAnalysisCache {
  private interner = new SubtreeInterner();
  private cache = new BoundedCache<CodeAnalysis>();
  /** Scratch marks by subtree identity, all zero between uses. */
  private marks = new Uint8Array(1024);

  constructor(readonly language: LanguageId) {}

  /** Call between segments (never between analyses that are compared): keeps the interner's memory bounded. */
  bound(): void {
    if (this.interner.size < INTERNER_LIMIT) return;
    this.interner = new SubtreeInterner();
    this.cache = new BoundedCache<CodeAnalysis>();
  }

  analyse(code: string): CodeAnalysis {
    return this.cache.getOrCompute(code, () => {
      const cleaned = removeCommentsAndDocstrings(code, this.language);
      const parsed = parseCode(this.language, cleaned);
      const subtrees = new Int32Array(subtreeIdentities(parsed.root, this.interner, (n) => textOf(parsed, n)));
      const dataflow = normalizeDataFlow(dataFlow(parsed));
      const dataflowCounts = new Map<string, number>();
      for (const e of dataflow) dataflowCounts.set(e, (dataflowCounts.get(e) ?? 0) + 1);
      return { subtrees, dataflowEdges: dataflow.length, dataflowCounts };
    });
  }

  /** How many of the reference's subtrees (with repeats) occur among the hypothesis's. */
  subtreeMatches(hypothesis: CodeAnalysis, reference: CodeAnalysis): number {
    if (this.marks.length < this.interner.size) this.marks = new Uint8Array(Math.max(2 * this.marks.length, this.interner.size));
    const marks = this.marks;
    for (const id of hypothesis.subtrees) marks[id] = 1;
    let matched = 0;
    for (const id of reference.subtrees) matched += marks[id];
    for (const id of hypothesis.subtrees) marks[id] = 0;
    return matched;
  }
}
