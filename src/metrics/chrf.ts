import { codePoints, pySplit } from '../compat/python-strings.js';
import { BoundedCache } from './bounded-cache.js';
import { VERSION } from '../version.js';
import type { Metric } from './metric.js';
import { add, div, f32, mul, py, type Num } from '../compat/numpy-float.js';
import { codePointArray, codePointArrayWithoutWhitespace, NgramMatcher, sameStrings, TOKEN_CACHE_ENTRIES, Vocabulary } from './ngram-match.js';

const NO_WORDS = new Int32Array(0);

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

/** A segment as integer sequences: code points (whitespace removed unless kept) and word ids. */
interface ChrfSegment {
  chars: Int32Array;
  words: Int32Array;
}

export class Chrf implements Metric<ChrfSegment[]> {
  readonly name: string;
  readonly statsSize: number;
  readonly charOrder: number;
  readonly wordOrder: number;
  readonly beta: number;
  readonly lowercase: boolean;
  readonly whitespace: boolean;
  readonly epsSmoothing: boolean;
  readonly float32Scores = true;
  private readonly vocabulary = new Vocabulary();
  private readonly matcher = new NgramMatcher();
  private readonly matched: Float64Array;
  /** One reference's statistics while the best reference is chosen (reused: no allocation per segment). */
  private readonly stats: Float64Array;
  /** For word n-grams (chrF++ only: a matcher's buffers are sized for code-length texts). */
  private readonly wordMatcher: NgramMatcher | null;
  /**
   * Encodings of recently seen segments, references and hypotheses alike: a reference is usually shared by many
   * hypotheses, and a text often comes back in another role.
   */
  private readonly segmentCache = new BoundedCache<ChrfSegment>(TOKEN_CACHE_ENTRIES);
  private lastRefs: readonly string[] = [];
  private lastRefInfo: ChrfSegment[] | null = null;
  /** The text encoded last and its encoding: a hypothesis scored against several references in a row (or a
   * reference against several hypotheses) comes back as a new string each line, and comparing it with the last
   * one is cheaper than hashing it for the cache. */
  private lastText: string | null = null;
  private lastEncoded: ChrfSegment | null = null;

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
    this.matched = new Float64Array(this.charOrder + this.wordOrder);
    this.stats = new Float64Array(this.statsSize);
    this.wordMatcher = this.wordOrder > 0 ? new NgramMatcher() : null;
  }

  signature(nrefs: number | 'var'): string {
    return `nrefs:${nrefs}|case:${this.lowercase ? 'lc' : 'mixed'}|eff:${this.epsSmoothing ? 'no' : 'yes'}|nc:${this.charOrder}|nw:${this.wordOrder}|space:${this.whitespace ? 'yes' : 'no'}|version:${VERSION}`;
  }

  private encode(segment: string): ChrfSegment {
    const last = this.lastEncoded; // read on every call, so that the optimized code has seen it
    let encoded = segment === this.lastText && last !== null ? last : this.segmentCache.get(segment);
    if (encoded === undefined) {
      const text = this.lowercase ? segment.toLowerCase() : segment;
      const chars = this.whitespace ? codePointArray(text) : codePointArrayWithoutWhitespace(text);
      const words = this.wordOrder > 0 ? this.vocabulary.encode(wordsWithPunctuationSplit(text), true) : NO_WORDS;
      encoded = { chars, words };
      this.segmentCache.set(segment, encoded);
    }
    this.lastText = segment;
    this.lastEncoded = encoded;
    return encoded;
  }

  prepareReferences(refs: readonly string[]): ChrfSegment[] {
    const last = this.lastRefs;
    if (this.lastRefInfo && sameStrings(refs, last)) return this.lastRefInfo;
    // built by push, so that every list has the same array shape (see segmentStatistics)
    const info: ChrfSegment[] = [];
    for (let r = 0; r < refs.length; r++) info.push(this.encode(refs[r]));
    this.lastRefs = refs.slice();
    this.lastRefInfo = info;
    return info;
  }

  /** Best statistics across references, chosen by sentence-level F-score as sacrebleu does. */
  segmentStatistics(hyp: string, refs: ChrfSegment[], out: Float64Array, offset: number): void {
    const h = this.encode(hyp);
    const stats = this.stats;
    const { charOrder, wordOrder, matched, matcher, wordMatcher } = this;
    let bestF = -1;
    // an indexed loop over lists of one shape: optimized code checks the shape, and a new one throws it away
    for (let r = 0; r < refs.length; r++) {
      const ref = refs[r];
      matcher.matchPair(h.chars, ref.chars, charOrder, matched, 0);
      if (wordMatcher !== null) wordMatcher.matchPair(h.words, ref.words, wordOrder, matched, charOrder);
      for (let i = 0; i < charOrder + wordOrder; i++) {
        const chars = i < charOrder;
        const hypLen = chars ? h.chars.length : h.words.length;
        const refLen = chars ? ref.chars.length : ref.words.length;
        const n = chars ? i + 1 : i - charOrder + 1;
        const refTotal = Math.max(0, refLen - n + 1);
        stats[3 * i] = refTotal > 0 ? Math.max(0, hypLen - n + 1) : 0;
        stats[3 * i + 1] = refTotal;
        stats[3 * i + 2] = matched[i];
      }
      const f = this.scoreFromStatistics(stats);
      if (f > bestF) {
        bestF = f;
        out.set(stats, offset);
      }
    }
  }

  /** `_compute_f_score` on float32 statistics under NumPy 2 promotion (sacrebleu's resampling path). */
  float32Score(stats: ArrayLike<number>): number {
    const eps = py(1e-16);
    const factor = py(this.beta ** 2);
    const onePlus = py(1 + this.beta ** 2);
    const order = this.charOrder + this.wordOrder;
    let score: Num = py(0);
    let effectiveOrder = 0;
    let avgPrec: Num = py(0);
    let avgRec: Num = py(0);
    for (let i = 0; i < order; i++) {
      const nHyp = f32(stats[3 * i]);
      const nRef = f32(stats[3 * i + 1]);
      const nMatch = f32(stats[3 * i + 2]);
      const prec = nHyp.v > 0 ? div(nMatch, nHyp) : eps;
      const rec = nRef.v > 0 ? div(nMatch, nRef) : eps;
      const denom = add(mul(factor, prec), rec);
      score = add(score, denom.v > 0 ? div(mul(mul(onePlus, prec), rec), denom) : eps);
      if (nHyp.v > 0 && nRef.v > 0) {
        avgPrec = add(avgPrec, prec);
        avgRec = add(avgRec, rec);
        effectiveOrder++;
      }
    }
    if (this.epsSmoothing) return div(mul(py(100), score), py(order)).v;
    if (effectiveOrder === 0) {
      avgPrec = py(0);
      avgRec = py(0);
    } else {
      avgPrec = div(avgPrec, py(effectiveOrder));
      avgRec = div(avgRec, py(effectiveOrder));
    }
    if (add(avgPrec, avgRec).v) {
      let s = mul(mul(onePlus, avgPrec), avgRec);
      s = div(s, add(mul(factor, avgPrec), avgRec));
      return mul(py(100), s).v;
    }
    return 0;
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
