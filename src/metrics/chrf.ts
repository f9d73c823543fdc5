import { codePoints, pySplit } from '../text/python.js';
import { VERSION } from '../version.js';
import type { Metric } from './metric.js';
import { clippedMatches, wordNgramCounts } from './ngrams.js';

/** chrF and chrF++ exactly as sacrebleu 2.x computes them (sacrebleu/metrics/chrf.py). */
export interface ChrfOptions {
  charOrder?: number;
  wordOrder?: number;
  beta?: number;
  lowercase?: boolean;
  /** Keep whitespace inside character n-grams (sacrebleu `whitespace=True`). */
  whitespace?: boolean;
  /** Epsilon smoothing as in chrF++.py / NLTK / Moses; otherwise sacrebleu's effective-order average. */
  epsSmoothing?: boolean;
}

type NgramCounts = Map<string, number>[];

const PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

/** sacrebleu `_remove_punctuation`: splits one leading or trailing ASCII punctuation mark off each word. */
function wordsWithPunctuationSplit(sentence: string): string[] {
  const out: string[] = [];
  for (const word of pySplit(sentence)) {
    const cps = codePoints(word);
    if (cps.length === 1) out.push(word);
    else if (PUNCTUATION.has(cps[cps.length - 1])) out.push(cps.slice(0, -1).join(''), cps[cps.length - 1]);
    else if (PUNCTUATION.has(cps[0])) out.push(cps[0], cps.slice(1).join(''));
    else out.push(word);
  }
  return out;
}

function charNgramCounts(line: string, maxOrder: number, whitespace: boolean): NgramCounts {
  const text = whitespace ? line : pySplit(line).join('');
  const chars = codePoints(text);
  const maps: NgramCounts = [];
  const astral = chars.length !== text.length;
  for (let n = 1; n <= maxOrder; n++) {
    const counts = new Map<string, number>();
    for (let i = 0; i + n <= chars.length; i++) {
      const key = astral ? chars.slice(i, i + n).join('') : text.slice(i, i + n);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    maps.push(counts);
  }
  return maps;
}

export class Chrf implements Metric<NgramCounts[]> {
  readonly name: string;
  readonly statsSize: number;
  readonly charOrder: number;
  readonly wordOrder: number;
  readonly beta: number;
  readonly lowercase: boolean;
  readonly whitespace: boolean;
  readonly epsSmoothing: boolean;

  constructor(
    options: ChrfOptions = {},
    readonly spec = 'chrf',
  ) {
    this.charOrder = options.charOrder ?? 6;
    this.wordOrder = options.wordOrder ?? 0;
    this.beta = options.beta ?? 2;
    this.lowercase = options.lowercase ?? false;
    this.whitespace = options.whitespace ?? false;
    this.epsSmoothing = options.epsSmoothing ?? false;
    this.name = `chrF${this.beta}${'+'.repeat(this.wordOrder)}`;
    this.statsSize = 3 * (this.charOrder + this.wordOrder);
  }

  signature(nrefs: number | 'var'): string {
    return `nrefs:${nrefs}|case:${this.lowercase ? 'lc' : 'mixed'}|eff:${this.epsSmoothing ? 'no' : 'yes'}|nc:${this.charOrder}|nw:${this.wordOrder}|space:${this.whitespace ? 'yes' : 'no'}|version:${VERSION}`;
  }

  private ngrams(segment: string): NgramCounts {
    const text = this.lowercase ? segment.toLowerCase() : segment;
    const counts = charNgramCounts(text, this.charOrder, this.whitespace);
    if (this.wordOrder > 0) counts.push(...wordNgramCounts(wordsWithPunctuationSplit(text), this.wordOrder));
    return counts;
  }

  prepareReferences(refs: readonly string[]): NgramCounts[] {
    return refs.map((ref) => this.ngrams(ref));
  }

  /** Best statistics across references, chosen by sentence-level F-score as sacrebleu does. */
  segmentStatistics(hyp: string, refs: NgramCounts[], out: Float64Array, offset: number): void {
    const hypNgrams = this.ngrams(hyp);
    const stats = new Float64Array(this.statsSize);
    let best: Float64Array | null = null;
    let bestF = -1;
    for (const ref of refs) {
      for (let i = 0; i < hypNgrams.length; i++) {
        const { matched, total } = clippedMatches(hypNgrams[i], ref[i]);
        let refTotal = 0;
        for (const c of ref[i].values()) refTotal += c;
        stats[3 * i] = ref[i].size > 0 ? total : 0;
        stats[3 * i + 1] = refTotal;
        stats[3 * i + 2] = matched;
      }
      const f = this.scoreFromStatistics(stats);
      if (f > bestF) {
        bestF = f;
        best = stats.slice();
      }
    }
    if (best) out.set(best, offset);
  }

  /** sacrebleu `_compute_f_score`. */
  scoreFromStatistics(stats: ArrayLike<number>): number {
    const eps = 1e-16;
    const factor = this.beta ** 2;
    const order = this.charOrder + this.wordOrder;
    let score = 0;
    let effectiveOrder = 0;
    let avgPrec = 0;
    let avgRec = 0;
    for (let i = 0; i < order; i++) {
      const nHyp = stats[3 * i];
      const nRef = stats[3 * i + 1];
      const nMatch = stats[3 * i + 2];
      const prec = nHyp > 0 ? nMatch / nHyp : eps;
      const rec = nRef > 0 ? nMatch / nRef : eps;
      const denom = factor * prec + rec;
      score += denom > 0 ? ((1 + factor) * prec * rec) / denom : eps;
      if (nHyp > 0 && nRef > 0) {
        avgPrec += prec;
        avgRec += rec;
        effectiveOrder += 1;
      }
    }
    if (this.epsSmoothing) return (100 * score) / order;
    if (effectiveOrder === 0) {
      avgPrec = 0;
      avgRec = 0;
    } else {
      avgPrec /= effectiveOrder;
      avgRec /= effectiveOrder;
    }
    if (avgPrec + avgRec) return 100 * (((1 + factor) * avgPrec * avgRec) / (factor * avgPrec + avgRec));
    return 0;
  }
}
