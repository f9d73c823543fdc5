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
  /** ROUGE-L: the reference texts (their token ids are cached by text and looked up when scoring). */
  texts: string[];
}

/** Past this many distinct tokens ROUGE-L's vocabulary starts afresh (cached ids carry their generation). */
const VOCABULARY_LIMIT = 1 << 18;

/**
 * ROUGE-L's vocabulary for the default tokenizer without stemming: token ids read straight from ASCII text (tokens
 * are the runs of [A-Za-z0-9], lowercased), with an open-addressing table hashed on the characters, so that a token
 * seen before costs no substring, lowercase copy or string hash. Other text goes through `rougeTokens`.
 */
class RunVocabulary {
  readonly words: string[] = [];
  private hashes = new Int32Array(1024);
  private slots = new Int32Array(2048).fill(-1);
  private ids = new Int32Array(256);

  /** The token ids of `text`, or null when it is not ASCII (Unicode lowercasing can make ASCII letters). */
  tokenIds(text: string): Int32Array | null {
    let count = 0;
    let start = -1;
    let hash = 0;
    for (let i = 0; i <= text.length; i++) {
      let c = i < text.length ? text.charCodeAt(i) : 32;
      if (c > 0x7f) return null;
      if (c >= 65 && c <= 90) c += 32;
      if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
        if (start < 0) {
          start = i;
          hash = 0x811c9dc5;
        }
        hash = Math.imul(hash ^ c, 0x01000193);
      } else if (start >= 0) {
        if (count === this.ids.length) {
          const grown = new Int32Array(2 * count);
          grown.set(this.ids);
          this.ids = grown;
        }
        this.ids[count++] = this.idOf(text, start, i, hash);
        start = -1;
      }
    }
    return this.ids.slice(0, count);
  }

  get size(): number {
    return this.words.length;
  }

  private idOf(text: string, start: number, end: number, hash: number): number {
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (let id = this.slots[slot]; id >= 0; id = this.slots[slot]) {
      if (this.hashes[id] === hash && sameLowercase(this.words[id], text, start, end)) return id;
      slot = (slot + 1) & mask;
    }
    const id = this.words.length;
    this.words.push(text.slice(start, end).toLowerCase());
    if (id === this.hashes.length) {
      const grown = new Int32Array(2 * id);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[id] = hash;
    this.slots[slot] = id;
    if (2 * this.words.length > this.slots.length) this.rehash();
    return id;
  }

  private rehash(): void {
    this.slots = new Int32Array(2 * this.slots.length).fill(-1);
    const mask = this.slots.length - 1;
    for (let id = 0; id < this.words.length; id++) {
      let slot = this.hashes[id] & mask;
      while (this.slots[slot] >= 0) slot = (slot + 1) & mask;
      this.slots[slot] = id;
    }
  }
}

/** Whether `word` (lowercase ASCII) is text[start, end) lowercased. */
function sameLowercase(word: string, text: string, start: number, end: number): boolean {
  if (word.length !== end - start) return false;
  for (let k = 0; k < word.length; k++) {
    let c = text.charCodeAt(start + k);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== word.charCodeAt(k)) return false;
  }
  return true;
}

/** ROUGE-L on token ids: the LCS only compares tokens for equality, and small integers are cheaper to compare. */
function rougeLIds(target: Int32Array, prediction: Int32Array): PRF {
  if (target.length === 0 || prediction.length === 0) return ZERO;
  const lcs = lcsLength(target as unknown as number[], prediction as unknown as number[]);
  const precision = lcs / prediction.length;
  const recall = lcs / target.length;
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
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

  private vocabulary = new RunVocabulary();
  /** Ids of tokens that `RunVocabulary` does not read (code tokens, stems, non-ASCII text): the word's id there. */
  private otherIds = new Map<string, number>();
  private generation = 0;
  private readonly idCache = new BoundedCache<{ ids: Int32Array; generation: number }>();

  /** ROUGE-L's token ids of a text (one vocabulary per instance, bounded: see VOCABULARY_LIMIT). */
  private ids(text: string): Int32Array {
    let entry = this.idCache.get(text);
    if (entry === undefined || entry.generation !== this.generation) {
      let ids = this.tokenize === 'default' && !this.stem ? this.vocabulary.tokenIds(text) : null;
      if (ids === null) {
        const tokens = this.tokenize === 'code' ? codeTokens(text) : rougeTokens(text, this.stem);
        ids = new Int32Array(tokens.length);
        for (let i = 0; i < tokens.length; i++) {
          // the same word has one id whichever way it was read
          let id = this.otherIds.get(tokens[i]);
          if (id === undefined) {
            id = this.vocabulary.tokenIds(tokens[i])?.[0];
            if (id === undefined || this.vocabulary.words[id] !== tokens[i]) id = -1 - this.otherIds.size;
            this.otherIds.set(tokens[i], id);
          }
          ids[i] = id;
        }
      }
      entry = { ids, generation: this.generation };
      this.idCache.set(text, entry);
    }
    return entry.ids;
  }

  prepareReferences(refs: readonly string[]): RougeRefInfo {
    if (this.type === 'rougeL') return { tokens: [], sentences: [], texts: refs.slice() };
    const infos = refs.map((r) => this.info(r));
    return { tokens: infos.map((i) => i.tokens), sentences: infos.map((i) => i.sentences), texts: [] };
  }

  /** Precision, recall and F of one prediction against one tokenised reference. */
  private scoreOne(target: { tokens: string[]; sentences: string[][] }, prediction: { tokens: string[]; sentences: string[][] }): PRF {
    if (this.type === 'rougeL') return rougeL(target.tokens, prediction.tokens);
    if (this.type === 'rougeLsum') return rougeLsum(target.sentences, prediction.sentences);
    return rougeN(target.tokens, prediction.tokens, this.order);
  }

  /** Best-F score over references (rouge-score `score_multi`); the first reference wins ties. */
  scoreSegment(hyp: string, refs: RougeRefInfo): PRF {
    if (this.type === 'rougeL') {
      // Between segments only: ids of one segment come from one vocabulary.
      if (this.vocabulary.size + this.otherIds.size >= VOCABULARY_LIMIT) {
        this.vocabulary = new RunVocabulary();
        this.otherIds = new Map();
        this.generation++;
      }
      const prediction = this.ids(hyp);
      let best: PRF | null = null;
      for (const text of refs.texts) {
        const s = rougeLIds(this.ids(text), prediction);
        if (best === null || s.fmeasure > best.fmeasure) best = s;
      }
      return best ?? ZERO;
    }
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
