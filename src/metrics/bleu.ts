import { bleuSpanTokenizer, bleuTokens, TokenSpans, type BleuTokenizerName } from '../text/sacrebleu-tokenizers.js';
import { pyRstrip } from '../compat/python-strings.js';
import { BoundedCache } from './bounded-cache.js';
import { VERSION } from '../version.js';
import type { Metric } from './metric.js';
import { div, f32, mul, py, add, type Num } from '../compat/numpy-float.js';
import { NgramMatcher, sameStrings, TOKEN_CACHE_ENTRIES, Vocabulary } from './ngram-match.js';

/** BLEU exactly as sacrebleu 2.x computes it (sacrebleu/metrics/bleu.py). */
import type { BleuSmoothing } from './bleu-smoothings.js';
export { BLEU_SMOOTHINGS, type BleuSmoothing } from './bleu-smoothings.js';
const SMOOTH_DEFAULTS: Record<BleuSmoothing, number | null> = { none: null, floor: 0.1, 'add-k': 1, exp: null };

export interface BleuOptions {
  tokenize?: BleuTokenizerName;
  smooth?: BleuSmoothing;
  /** Value for `floor` and `add-k`; their sacrebleu defaults (0.1, 1) when omitted. */
  smoothValue?: number;
  lowercase?: boolean;
  maxOrder?: number;
  effectiveOrder?: boolean;
}

interface BleuRefInfo {
  /** Token ids of each reference. */
  tokens: Int32Array[];
  lengths: number[];
}

/** sacrebleu's `my_log`: log floored to a very low number so that a zero precision gives a zero score. */
function myLog(x: number): number {
  return x === 0 ? -9999999999 : Math.log(x);
}

export interface BleuDetails {
  score: number;
  counts: number[];
  totals: number[];
  precisions: number[];
  bp: number;
  sysLen: number;
  refLen: number;
}

/** sacrebleu `BLEU.compute_bleu`, including its in-place add-k adjustment and early exit on no matches. */
export function computeBleu(
  correctIn: ArrayLike<number>,
  totalIn: ArrayLike<number>,
  sysLen: number,
  refLen: number,
  smooth: BleuSmoothing,
  smoothValue: number | null,
  effectiveOrder: boolean,
  maxOrder: number,
): BleuDetails {
  const value = smoothValue ?? SMOOTH_DEFAULTS[smooth];
  const correct = Array.from(correctIn);
  const total = Array.from(totalIn);
  let bp = 1.0;
  if (sysLen < refLen) bp = sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0.0;
  const precisions = new Array<number>(maxOrder).fill(0);
  const details = { counts: correct, totals: total, precisions, bp, sysLen, refLen };
  if (!correct.some((c) => c !== 0)) return { score: 0, ...details };

  let smoothMteval = 1;
  let effOrder = maxOrder;
  for (let n = 1; n <= maxOrder; n++) {
    if (smooth === 'add-k' && n > 1) {
      correct[n - 1] += value as number;
      total[n - 1] += value as number;
    }
    if (total[n - 1] === 0) break;
    if (effectiveOrder) effOrder = n;
    if (correct[n - 1] === 0) {
      if (smooth === 'exp') {
        smoothMteval *= 2;
        precisions[n - 1] = 100 / (smoothMteval * total[n - 1]);
      } else if (smooth === 'floor') {
        precisions[n - 1] = (100 * (value as number)) / total[n - 1];
      }
    } else {
      precisions[n - 1] = (100 * correct[n - 1]) / total[n - 1];
    }
  }
  let logSum = 0;
  for (let i = 0; i < effOrder; i++) logSum += myLog(precisions[i]);
  return { score: bp * Math.exp(logSum / effOrder), ...details };
}

/**
 * `computeBleu(...).score` on a statistics vector [sysLen, refLen, correct x order, total x order], without
 * building the details (sentence scores call it once per segment): the same operations in the same order.
 */
export function bleuScore(stats: ArrayLike<number>, maxOrder: number, smooth: BleuSmoothing, smoothValue: number | null, effectiveOrder: boolean): number {
  const value = smoothValue ?? SMOOTH_DEFAULTS[smooth];
  const sysLen = stats[0];
  const refLen = stats[1];
  let bp = 1.0;
  if (sysLen < refLen) bp = sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0.0;
  let anyCorrect = false;
  for (let i = 0; i < maxOrder; i++) {
    if (stats[2 + i] !== 0) {
      anyCorrect = true;
      break;
    }
  }
  if (!anyCorrect) return 0;
  let smoothMteval = 1;
  // Precisions of the orders before the first empty one are summed as logs in order; the others are 0.
  let processed = 0;
  let logSum = 0;
  for (let n = 1; n <= maxOrder; n++) {
    let correct = stats[1 + n];
    let total = stats[1 + maxOrder + n];
    if (smooth === 'add-k' && n > 1) {
      correct += value as number;
      total += value as number;
    }
    if (total === 0) break;
    processed = n;
    let precision = 0;
    if (correct === 0) {
      if (smooth === 'exp') {
        smoothMteval *= 2;
        precision = 100 / (smoothMteval * total);
      } else if (smooth === 'floor') {
        precision = (100 * (value as number)) / total;
      }
    } else {
      precision = (100 * correct) / total;
    }
    logSum += myLog(precision);
  }
  const effOrder = effectiveOrder && processed > 0 ? processed : maxOrder;
  for (let i = processed; i < effOrder; i++) logSum += myLog(0);
  return bp * Math.exp(logSum / effOrder);
}

/** sacrebleu `_get_closest_ref_len`: closest length, ties to the shorter reference. */
function closestRefLength(hypLen: number, refLens: readonly number[]): number {
  let closestDiff = -1;
  let closestLen = -1;
  for (const len of refLens) {
    const diff = Math.abs(hypLen - len);
    if (closestDiff === -1 || diff < closestDiff) {
      closestDiff = diff;
      closestLen = len;
    } else if (diff === closestDiff && len < closestLen) {
      closestLen = len;
    }
  }
  return closestLen;
}

export class Bleu implements Metric<BleuRefInfo> {
  readonly name = 'BLEU';
  readonly statsSize: number;
  readonly tokenize: BleuTokenizerName;
  readonly smooth: BleuSmoothing;
  readonly smoothValue: number | null;
  readonly lowercase: boolean;
  readonly maxOrder: number;
  readonly effectiveOrder: boolean;
  /**
   * Effective order of sentence scores in score reports: sacrebleu's CLI (2.x) turns it on for `--sentence-level`
   * whatever the corpus setting, so we do too, unless `eff` was given explicitly.
   */
  readonly sentenceEffectiveOrder: boolean;
  private readonly tokenizer: (line: string) => string[];
  /** The same tokenizer writing spans, interned without a string per token (null for `intl`). */
  private readonly spanTokenizer: ((line: string, out: TokenSpans) => void) | null;
  private readonly spans = new TokenSpans();
  private readonly vocabulary = new Vocabulary();
  private readonly matcher = new NgramMatcher();
  /**
   * Token ids of recently seen segments, references and hypotheses alike: a reference is usually shared by many
   * hypotheses, and a text often comes back in another role (cf. sacrebleu's lru_cache of 2^16 on its tokenizers).
   */
  private readonly idCache = new BoundedCache<Int32Array>(TOKEN_CACHE_ENTRIES);
  /** The reference information of the last reference set, returned again while the same strings come. */
  private lastRefs: readonly string[] = [];
  private lastRefInfo: BleuRefInfo | null = null;

  constructor(
    options: BleuOptions = {},
    readonly spec = 'bleu',
  ) {
    this.tokenize = options.tokenize ?? '13a';
    this.smooth = options.smooth ?? 'exp';
    this.smoothValue = options.smoothValue ?? null;
    this.lowercase = options.lowercase ?? false;
    this.maxOrder = options.maxOrder ?? 4;
    this.effectiveOrder = options.effectiveOrder ?? false;
    this.sentenceEffectiveOrder = options.effectiveOrder ?? true;
    this.tokenizer = bleuTokens(this.tokenize);
    this.spanTokenizer = bleuSpanTokenizer(this.tokenize);
    this.statsSize = 2 + 2 * this.maxOrder;
  }

  signature(nrefs: number | 'var', effectiveOrder = this.effectiveOrder): string {
    let smooth: string = this.smooth;
    const def = SMOOTH_DEFAULTS[this.smooth];
    if (def !== null) smooth += `[${(this.smoothValue ?? def).toFixed(2)}]`;
    // sacrebleu does not record the n-gram order; we add it only when it is not the default 4.
    const order = this.maxOrder === 4 ? '' : `|order:${this.maxOrder}`;
    return `nrefs:${nrefs}|case:${this.lowercase ? 'lc' : 'mixed'}|eff:${effectiveOrder ? 'yes' : 'no'}|tok:${this.tokenize}|smooth:${smooth}${order}|version:${VERSION}`;
  }

  /** Lowercase (optionally), rstrip, tokenize, split on whitespace: sacrebleu's `_preprocess_segment`. */
  tokens(segment: string): string[] {
    return this.tokenizer(pyRstrip(this.lowercase ? segment.toLowerCase() : segment));
  }

  /** The interned tokens of a segment, memoised for recent segments. */
  private ids(segment: string): Int32Array {
    let ids = this.idCache.get(segment);
    if (ids === undefined) {
      const line = pyRstrip(this.lowercase ? segment.toLowerCase() : segment);
      if (this.spanTokenizer) {
        this.spanTokenizer(line, this.spans);
        ids = this.vocabulary.encodeSpans(this.spans);
      } else ids = this.vocabulary.encode(this.tokenizer(line), true);
      this.idCache.set(segment, ids);
    }
    return ids;
  }

  prepareReferences(refs: readonly string[]): BleuRefInfo {
    const last = this.lastRefs;
    if (this.lastRefInfo && sameStrings(refs, last)) return this.lastRefInfo;
    // A plain loop, not `.map`: when `ids` deoptimizes in the middle of a map, the array map builds changes its
    // elements kind, and the code that reads `tokens` and `lengths` later deoptimizes on the unexpected map.
    const tokens: Int32Array[] = [];
    const lengths: number[] = [];
    for (let i = 0; i < refs.length; i++) {
      const t = this.ids(refs[i]);
      tokens.push(t);
      lengths.push(t.length);
    }
    const info = { tokens, lengths };
    this.lastRefs = refs.slice();
    this.lastRefInfo = info;
    return info;
  }

  segmentStatistics(hyp: string, refs: BleuRefInfo, out: Float64Array, offset: number): void {
    const tokens = this.ids(hyp);
    const order = this.maxOrder;
    const len = tokens.length;
    out[offset] = len;
    out[offset + 1] = closestRefLength(len, refs.lengths);
    if (refs.tokens.length === 1) this.matcher.matchPair(tokens, refs.tokens[0], order, out, offset + 2);
    else {
      this.matcher.loadReferences(refs.tokens, order);
      this.matcher.matchHypothesis(tokens, order, out, offset + 2);
    }
    for (let n = 1; n <= order; n++) out[offset + 1 + order + n] = len - n + 1 > 0 ? len - n + 1 : 0;
  }

  details(stats: ArrayLike<number>): BleuDetails {
    const order = this.maxOrder;
    const view = (start: number) => (stats instanceof Float64Array ? stats.subarray(start, start + order) : Array.prototype.slice.call(stats, start, start + order));
    return computeBleu(view(2), view(2 + order), stats[0], stats[1], this.smooth, this.smoothValue, this.effectiveOrder, order);
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return bleuScore(stats, this.maxOrder, this.smooth, this.smoothValue, this.effectiveOrder);
  }

  sentenceScoreFromStatistics(stats: ArrayLike<number>): number {
    return bleuScore(stats, this.maxOrder, this.smooth, this.smoothValue, this.sentenceEffectiveOrder);
  }

  sentenceSignature(nrefs: number | 'var'): string {
    return this.signature(nrefs, this.sentenceEffectiveOrder);
  }

  /** `compute_bleu` on float32 statistics under NumPy 2 promotion (sacrebleu's resampling path). */
  float32Score(stats: ArrayLike<number>): number {
    const order = this.maxOrder;
    const value = this.smoothValue ?? SMOOTH_DEFAULTS[this.smooth];
    const sysLen = Math.trunc(Math.fround(stats[0]));
    const refLen = Math.trunc(Math.fround(stats[1]));
    const correct: Num[] = Array.from({ length: order }, (_, i) => f32(stats[2 + i]));
    const total: Num[] = Array.from({ length: order }, (_, i) => f32(stats[2 + order + i]));
    let bp = 1.0;
    if (sysLen < refLen) bp = sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0.0;
    if (!correct.some((c) => c.v !== 0)) return 0;
    const precisions: Num[] = new Array(order).fill(py(0));
    let smoothMteval = 1;
    let effOrder = order;
    for (let n = 1; n <= order; n++) {
      if (this.smooth === 'add-k' && n > 1) {
        correct[n - 1] = add(correct[n - 1], py(value as number));
        total[n - 1] = add(total[n - 1], py(value as number));
      }
      if (total[n - 1].v === 0) break;
      if (this.effectiveOrder) effOrder = n;
      if (correct[n - 1].v === 0) {
        if (this.smooth === 'exp') {
          smoothMteval *= 2;
          precisions[n - 1] = div(py(100), mul(py(smoothMteval), total[n - 1]));
        } else if (this.smooth === 'floor') {
          precisions[n - 1] = div(py(100 * (value as number)), total[n - 1]);
        }
      } else {
        precisions[n - 1] = div(mul(py(100), correct[n - 1]), total[n - 1]);
      }
    }
    let logSum = 0;
    for (let i = 0; i < effOrder; i++) logSum += myLog(precisions[i].v);
    return bp * Math.exp(logSum / effOrder);
  }
}
