import { BoundedCache } from '../metrics/bounded-cache.js';
import { removeCommentsAndDocstrings } from './comments.js';
import { dataFlow, normalizeDataFlow } from './dataflow.js';
import type { LanguageId } from './languages.js';
import { SubtreeInterner, subtreeIdentities } from './subtrees.js';
import { parseCode, textOf } from './syntax-tree.js';

/**
 * What CodeBLEU needs from one program, computed once per distinct text and language in a run (a reference is
 * typically shared by many hypotheses): subtree identities and normalised data-flow edges, both after CodeBLEU's
 * comment removal.
 */
export interface CodeAnalysis {
  subtrees: number[];
  subtreeSet: Set<number>;
  dataflow: string[];
}

export class CodeAnalysisCache {
  private readonly interner = new SubtreeInterner();
  private readonly cache = new BoundedCache<CodeAnalysis>();

  constructor(readonly language: LanguageId) {}

  analyse(code: string): CodeAnalysis {
    return this.cache.getOrCompute(code, () => {
      const cleaned = removeCommentsAndDocstrings(code, this.language);
      const parsed = parseCode(this.language, cleaned);
      const subtrees = subtreeIdentities(parsed.root, this.interner, (n) => textOf(parsed, n));
      return { subtrees, subtreeSet: new Set(subtrees), dataflow: normalizeDataFlow(dataFlow(parsed)) };
    });
  }
}
