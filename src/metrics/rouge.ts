import { codeTokens } from '../text/code-tokenizer.js';
import { lcsIndices, lcsLength } from '../text/lcs.js';
import { porterStem } from '../text/porter.js';
import { BoundedCache } from './bounded-cache.js';
import { VERSION } from '../version.js';
import { MEAN_STATS_SIZE, meanScore, type Metric } from './metric.js';

/**
 * ROUGE-N, ROUGE-L and ROUGE-Lsum as rouge-score 0.1.2 computes them (google-research/rouge), per segment;
 * the corpus score is the mean segment score. With several references the best F-measure wins (`score_multi`).
 */
export type RougeType = 'rouge1' | 'rouge2' | 'rougeL' | 'rougeLsum' | `rouge${number}`;
export type RougeTokenizer = 'default' | 'code';
export type RougeMeasure = 'f' | 'p' | 'r';

export interface RougeOptions {
  tokenize?: RougeTokenizer;
  stem?: boolean;
  measure?: RougeMeasure;
}

export interface PRF {
  precision: number;
  recall: number;
  fmeasure: number;
}

const ZERO: PRF = { precision: 0, recall: 0, fmeasure: 0 };

export function fmeasure(precision: number, recall: number): number {
  return precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
}

/**
 * rouge-score's DefaultTokenizer: lowercase, replace runs of non-[a-z0-9] by a space, split, stem words longer
 * than 3 characters (Porter, NLTK mode), keep tokens matching ^[a-z0-9]+$. That is: the maximal runs of [a-z0-9]
 * of the lowercased text, each stemmed when longer than 3 (stems of such runs stay in [a-z0-9]); scanned by hand.
 */
export function rougeTokens(text: string, stem: boolean): string[] {
  const lower = text.toLowerCase();
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0;
    const alnum = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
    if (alnum) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      const part = lower.slice(start, i);
      out.push(stem && part.length > 3 ? porterStem(part) : part);
      start = -1;
    }
  }
  return out;
}

function ngramCounts(tokens: readonly string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    const key = tokens.slice(i, i + n).join(' ');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export function rougeN(target: readonly string[], prediction: readonly string[], n: number): PRF {
  const t = ngramCounts(target, n);
  const p = ngramCounts(prediction, n);
  let overlap = 0;
  for (const [k, c] of t) {
    const pc = p.get(k);
    if (pc !== undefined) overlap += Math.min(c, pc);
  }
  let tCount = 0;
  for (const c of t.values()) tCount += c;
  let pCount = 0;
  for (const c of p.values()) pCount += c;
  const precision = overlap / Math.max(pCount, 1);
  const recall = overlap / Math.max(tCount, 1);
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

// LCS length: bit-parallel, linear memory (n * m / 32 word steps, far fewer on large vocabularies); the alignment
// ROUGE-Lsum needs: rouge-score's own backtracking over a 1-bit-per-cell table, bounded (see lcs.ts).
export { lcsIndices, lcsLength };

export function rougeL(target: readonly string[], prediction: readonly string[]): PRF {
  if (target.length === 0 || prediction.length === 0) return ZERO;
  const lcs = lcsLength(target, prediction);
  const precision = lcs / prediction.length;
  const recall = lcs / target.length;
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

/** rouge-score `_summary_level_lcs`: union LCS per reference sentence, clipped by token counts. */
export function rougeLsum(targetSents: readonly string[][], predictionSents: readonly string[][]): PRF {
  if (targetSents.length === 0 || predictionSents.length === 0) return ZERO;
  const m = targetSents.reduce((s, x) => s + x.length, 0);
  const n = predictionSents.reduce((s, x) => s + x.length, 0);
  if (!n || !m) return ZERO;
  if (targetSents.length === 1 && predictionSents.length === 1) {
    // One sentence each: the union is one LCS, whose tokens all pass the clipping (each occurs in the LCS at most
    // as often as in either summary), so the hits are its length and no alignment is needed (long single lines).
    const hits = lcsLength(targetSents[0], predictionSents[0]);
    return { precision: hits / n, recall: hits / m, fmeasure: fmeasure(hits / n, hits / m) };
  }
  const countsR = new Map<string, number>();
  const countsC = new Map<string, number>();
  for (const s of targetSents) for (const t of s) countsR.set(t, (countsR.get(t) ?? 0) + 1);
  for (const s of predictionSents) for (const t of s) countsC.set(t, (countsC.get(t) ?? 0) + 1);
  let hits = 0;
  for (const r of targetSents) {
    const union = new Set<number>();
    for (const c of predictionSents) for (const idx of lcsIndices(r, c)) union.add(idx);
    for (const idx of [...union].sort((a, b) => a - b)) {
      const t = r[idx];
      const cc = countsC.get(t) ?? 0;
      const cr = countsR.get(t) ?? 0;
      if (cc > 0 && cr > 0) {
        hits++;
        countsC.set(t, cc - 1);
        countsR.set(t, cr - 1);
      }
    }
  }
  const recall = hits / m;
  const precision = hits / n;
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

/** rouge-score splits summaries into sentences on newlines and drops empty ones. */
function sentences(text: string): string[] {
  return text.split('\n').filter((s) => s.length > 0);
}

interface RougeRefInfo {
  tokens: string[][];
  sentences: string[][][];
}

export class Rouge implements Metric<RougeRefInfo> {
  readonly name: string;
  readonly statsSize = MEAN_STATS_SIZE;
  readonly tokenize: RougeTokenizer;
  readonly stem: boolean;
  readonly measure: RougeMeasure;
  private readonly order: number;

  constructor(
    readonly type: RougeType,
    options: RougeOptions = {},
    readonly spec: string = type,
  ) {
    this.tokenize = options.tokenize ?? 'default';
    this.stem = options.stem ?? false;
    this.measure = options.measure ?? 'f';
    const m = /^rouge([1-9])$/.exec(type);
    if (!m && type !== 'rougeL' && type !== 'rougeLsum') throw new Error(`invalid ROUGE type ${type}`);
    this.order = m ? Number(m[1]) : 0;
    this.name = type === 'rougeL' ? 'ROUGE-L' : type === 'rougeLsum' ? 'ROUGE-Lsum' : `ROUGE-${this.order}`;
  }

  signature(nrefs: number | 'var'): string {
    return `nrefs:${nrefs}|tok:${this.tokenize}|stem:${this.stem ? 'yes' : 'no'}|measure:${this.measure}|impl:rouge-score-0.1.2|version:${VERSION}`;
  }

  private readonly tokenCache = new BoundedCache<string[]>();

  /** Tokens of a text, memoised for recent texts (references are shared by many hypotheses). */
  tokens(text: string): string[] {
    return this.tokenCache.getOrCompute(text, (t) => (this.tokenize === 'code' ? codeTokens(t) : rougeTokens(t, this.stem)));
  }

  private info(text: string): { tokens: string[]; sentences: string[][] } {
    if (this.type === 'rougeLsum') return { tokens: [], sentences: sentences(text).map((s) => this.tokens(s)) };
    return { tokens: this.tokens(text), sentences: [] };
  }

  prepareReferences(refs: readonly string[]): RougeRefInfo {
    const infos = refs.map((r) => this.info(r));
    return { tokens: infos.map((i) => i.tokens), sentences: infos.map((i) => i.sentences) };
  }

  /** Precision, recall and F of one prediction against one tokenised reference. */
  private scoreOne(target: { tokens: string[]; sentences: string[][] }, prediction: { tokens: string[]; sentences: string[][] }): PRF {
    if (this.type === 'rougeL') return rougeL(target.tokens, prediction.tokens);
    if (this.type === 'rougeLsum') return rougeLsum(target.sentences, prediction.sentences);
    return rougeN(target.tokens, prediction.tokens, this.order);
  }

  /** Best-F score over references (rouge-score `score_multi`); the first reference wins ties. */
  scoreSegment(hyp: string, refs: RougeRefInfo): PRF {
    const prediction = this.info(hyp);
    let best: PRF | null = null;
    for (let i = 0; i < refs.tokens.length; i++) {
      const s = this.scoreOne({ tokens: refs.tokens[i], sentences: refs.sentences[i] }, prediction);
      if (best === null || s.fmeasure > best.fmeasure) best = s;
    }
    return best ?? ZERO;
  }

  segmentStatistics(hyp: string, refs: RougeRefInfo, out: Float64Array, offset: number): void {
    const s = this.scoreSegment(hyp, refs);
    out[offset] = 100 * (this.measure === 'f' ? s.fmeasure : this.measure === 'p' ? s.precision : s.recall);
    out[offset + 1] = 1;
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return meanScore(stats);
  }
}
