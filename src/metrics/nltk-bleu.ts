import { codeTokens } from '../text/code-tokenizer.js';
import { fsum, pySplit } from '../compat/python-strings.js';
import { VERSION } from '../version.js';
import type { Metric } from './metric.js';
import { clippedMatches, maxMerge, wordNgramCounts } from './ngrams.js';

/**
 * NLTK `corpus_bleu` / `sentence_bleu` with uniform 4-gram weights and no smoothing (NLTK's `method0`:
 * a zero n-gram precision is replaced by the smallest positive double), on whitespace tokens. This is the
 * BLEU of the SBC reference implementation (`sentence_bleu([req1.split()], req2.split())`).
 * Statistics: numerators[1..4], denominators[1..4], hypothesis length, closest reference length.
 */
const ORDER = 4;
const FLOAT_MIN = 2.2250738585072014e-308; // Python sys.float_info.min

interface NltkRefInfo {
  ngrams: Map<string, number>[];
  lengths: number[];
}

export type NltkBleuTokenizer = 'ws' | 'code';

export class NltkBleu implements Metric<NltkRefInfo> {
  readonly name = 'NLTK-BLEU';
  readonly statsSize = 2 * ORDER + 2;

  constructor(
    readonly tokenize: NltkBleuTokenizer = 'ws',
    readonly spec = 'nltk-bleu',
  ) {}

  signature(nrefs: number | 'var'): string {
    return `nrefs:${nrefs}|tok:${this.tokenize}|weights:0.25/0.25/0.25/0.25|smooth:none|impl:nltk-3.8|version:${VERSION}`;
  }

  tokens(text: string): string[] {
    return this.tokenize === 'code' ? codeTokens(text) : pySplit(text);
  }

  prepareReferences(refs: readonly string[]): NltkRefInfo {
    const ngrams = wordNgramCounts([], ORDER);
    const lengths: number[] = [];
    for (const ref of refs) {
      const tokens = this.tokens(ref);
      lengths.push(tokens.length);
      const counts = wordNgramCounts(tokens, ORDER);
      for (let n = 0; n < ORDER; n++) maxMerge(ngrams[n], counts[n]);
    }
    return { ngrams, lengths };
  }

  segmentStatistics(hyp: string, refs: NltkRefInfo, out: Float64Array, offset: number): void {
    const tokens = this.tokens(hyp);
    const counts = wordNgramCounts(tokens, ORDER);
    for (let n = 0; n < ORDER; n++) {
      const { matched, total } = clippedMatches(counts[n], refs.ngrams[n]);
      out[offset + n] = matched;
      out[offset + ORDER + n] = Math.max(1, total);
    }
    const hypLen = tokens.length;
    out[offset + 2 * ORDER] = hypLen;
    // NLTK closest_ref_length: min by (|ref - hyp|, ref).
    let closest = Infinity;
    for (const len of refs.lengths) {
      if (Math.abs(len - hypLen) < Math.abs(closest - hypLen) || (Math.abs(len - hypLen) === Math.abs(closest - hypLen) && len < closest)) closest = len;
    }
    out[offset + 2 * ORDER + 1] = Number.isFinite(closest) ? closest : 0;
  }

  /** NLTK `corpus_bleu` from summed statistics, on the 0-100 scale. */
  scoreFromStatistics(stats: ArrayLike<number>): number {
    return 100 * this.fraction(stats);
  }

  /** NLTK `corpus_bleu` from summed statistics on NLTK's own 0-1 scale (bit-identical to NLTK). */
  fraction(stats: ArrayLike<number>): number {
    const hypLen = stats[2 * ORDER];
    const refLen = stats[2 * ORDER + 1];
    if (stats[0] === 0) return 0;
    const bp = hypLen > refLen ? 1 : hypLen === 0 ? 0 : Math.exp(1 - refLen / hypLen);
    const logs: number[] = [];
    for (let n = 0; n < ORDER; n++) {
      const p = stats[n] !== 0 ? stats[n] / stats[ORDER + n] : FLOAT_MIN;
      logs.push(0.25 * Math.log(p));
    }
    return bp * Math.exp(fsum(logs));
  }
}
