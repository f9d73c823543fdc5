import { codeTokens } from '../text/code-tokenizer.js';
import { WorkBoundError } from '../errors.js';
import { alignmentSteps, describeSteps, lcsIndices, lcsLength, lcsLengthOfIds, MAX_LCS_WORD_STEPS } from '../text/lcs.js';
import { porterStem } from '../text/porter.js';
import { tokenIds } from '../text/token-ids.js';
import { BoundedCache, SEGMENT_CACHE_ENTRIES } from './bounded-cache.js';
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
  /** Work bound of one segment's LCS in word steps (default MAX_LCS_WORD_STEPS); not part of the signature: the
   * score is exact below it and refused past it. */
  maxWork?: number;
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

export function rougeL(target: readonly string[], prediction: readonly string[], maxSteps = MAX_LCS_WORD_STEPS): PRF {
  if (target.length === 0 || prediction.length === 0) return ZERO;
  const lcs = lcsLength(target, prediction, maxSteps);
  const precision = lcs / prediction.length;
  const recall = lcs / target.length;
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

/** Sentence pairs of at most this many cells are aligned by a plain DP table (no set-up), larger ones by lcsIndices. */
const SMALL_ALIGNMENT_CELLS = 4096;
/** What one sentence pair costs beyond its cells or word steps, in ROUGE-Lsum's work count. */
const PAIR_STEPS = 16;
let dpScratch = new Int32Array(SMALL_ALIGNMENT_CELLS + 256);

/**
 * rouge-score `_summary_level_lcs`: union LCS per reference sentence, clipped by token counts. Its work is
 * bounded: sentence pairs times PAIR_STEPS, plus the cells of small pairs and the word steps of large ones, at
 * most `maxSteps` (MAX_LCS_WORD_STEPS by default; a WorkBoundError past it): 7,500 one-token lines each side take
 * about 2 s.
 */
export function rougeLsum(targetSents: readonly string[][], predictionSents: readonly string[][], maxSteps = MAX_LCS_WORD_STEPS): PRF {
  if (targetSents.length === 0 || predictionSents.length === 0) return ZERO;
  const m = targetSents.reduce((s, x) => s + x.length, 0);
  const n = predictionSents.reduce((s, x) => s + x.length, 0);
  if (!n || !m) return ZERO;
  if (targetSents.length === 1 && predictionSents.length === 1) {
    // One sentence each: the union is one LCS, whose tokens all pass the clipping (each occurs in the LCS at most
    // as often as in either summary), so the hits are its length and no alignment is needed (long single lines).
    const hits = lcsLength(targetSents[0], predictionSents[0], maxSteps);
    return { precision: hits / n, recall: hits / m, fmeasure: fmeasure(hits / n, hits / m) };
  }
  const pairs = targetSents.length * predictionSents.length;
  const tooMuch = () =>
    new WorkBoundError(`the union LCS of ${targetSents.length} x ${predictionSents.length} sentences (${m} x ${n} tokens) exceeds the bound of ${describeSteps(maxSteps)} steps (split such long texts, or raise it with --max-work)`);
  if (pairs * PAIR_STEPS > maxSteps) throw tooMuch();
  // Integer ids for the segment's tokens: the pairs compare numbers, and the clipping counts live in arrays.
  const ids = new Map<string, number>();
  const refs = targetSents.map((s) => tokenIds(s, ids));
  const cans = predictionSents.map((s) => tokenIds(s, ids));
  const countsR = new Int32Array(ids.size);
  const countsC = new Int32Array(ids.size);
  for (const r of refs) for (const t of r) countsR[t]++;
  for (const c of cans) for (const t of c) countsC[t]++;
  let steps = 0;
  let hits = 0;
  for (const r of refs) {
    const inUnion = new Uint8Array(r.length);
    for (const c of cans) {
      const cells = r.length * c.length;
      steps += PAIR_STEPS + (cells <= SMALL_ALIGNMENT_CELLS ? cells : alignmentSteps(r.length, c.length));
      if (steps > maxSteps) throw tooMuch();
      if (cells === 0) continue;
      if (cells <= SMALL_ALIGNMENT_CELLS) markSmallAlignment(r, c, inUnion);
      else for (const idx of lcsIndices(r, c, undefined, maxSteps)) inUnion[idx] = 1;
    }
    for (let idx = 0; idx < r.length; idx++) {
      if (!inUnion[idx]) continue;
      const t = r[idx];
      if (countsC[t] > 0 && countsR[t] > 0) {
        hits++;
        countsC[t]--;
        countsR[t]--;
      }
    }
  }
  const recall = hits / m;
  const precision = hits / n;
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

/** Marks in `inUnion` the indices into r of the LCS lcsIndices(r, c) picks, from a full DP table (small pairs). */
function markSmallAlignment(r: Int32Array, c: Int32Array, inUnion: Uint8Array): void {
  const rows = r.length;
  const width = c.length + 1;
  if (dpScratch.length < (rows + 1) * width) dpScratch = new Int32Array((rows + 1) * width);
  const T = dpScratch;
  T.fill(0, 0, width);
  for (let i = 1; i <= rows; i++) {
    const row = i * width;
    const above = row - width;
    const x = r[i - 1];
    T[row] = 0;
    for (let j = 1; j < width; j++) {
      T[row + j] = x === c[j - 1] ? T[above + j - 1] + 1 : Math.max(T[above + j], T[row + j - 1]);
    }
  }
  // rouge-score's _backtrack_norec: a match, else left when T[i][j-1] > T[i-1][j], else up.
  let i = rows;
  let j = c.length;
  while (i > 0 && j > 0) {
    if (r[i - 1] === c[j - 1]) {
      inUnion[i - 1] = 1;
      i--;
      j--;
    } else if (T[i * width + j - 1] > T[(i - 1) * width + j]) j--;
    else i--;
  }
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

/** Past this many distinct tokens ROUGE-L's vocabulary starts afresh, and the cached ids with it. */
const VOCABULARY_LIMIT = 1 << 18;

/** ASCII character classes for the token scan: the lowercase code of [A-Za-z0-9], 0 for other characters. */
const ALNUM_LOWER = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ALNUM_LOWER[c] = c;
for (let c = 97; c <= 122; c++) ALNUM_LOWER[c] = c;
for (let c = 65; c <= 90; c++) ALNUM_LOWER[c] = c + 32;

const ID_STORE_INITIAL = 1 << 14;

/**
 * ROUGE-L's token ids of recent texts, end to end in one Int32Array. One typed array per text (thousands alive at
 * once, most of them over V8's on-heap size) cost more in allocation and garbage collection than the tokenization.
 * Like BoundedCache it forgets everything past SEGMENT_CACHE_ENTRIES texts, but only when told, between segments,
 * so that the ranges of one segment's texts stay valid while it is scored.
 */
class IdStore {
  data = new Int32Array(ID_STORE_INITIAL);
  length = 0;
  private readonly index = new Map<string, number>(); // text -> entry
  private starts = new Int32Array(256);
  private ends = new Int32Array(256);

  push(id: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(2 * this.length);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = id;
  }

  /** The entry of a text, or -1. */
  find(text: string): number {
    return this.index.get(text) ?? -1;
  }

  /** Records the ids data[start, length) as the text's; returns its entry. */
  add(text: string, start: number): number {
    const entry = this.index.size;
    if (entry === this.starts.length) {
      const starts = new Int32Array(2 * entry);
      const ends = new Int32Array(2 * entry);
      starts.set(this.starts);
      ends.set(this.ends);
      this.starts = starts;
      this.ends = ends;
    }
    this.starts[entry] = start;
    this.ends[entry] = this.length;
    this.index.set(text, entry);
    return entry;
  }

  start(entry: number): number {
    return this.starts[entry];
  }

  end(entry: number): number {
    return this.ends[entry];
  }

  /** Between segments: forgets everything when `incoming` more texts could pass the bound. */
  makeRoom(incoming: number): void {
    if (this.index.size + incoming > SEGMENT_CACHE_ENTRIES) this.clear();
  }

  clear(): void {
    this.index.clear();
    this.length = 0;
    if (this.data.length > 64 * ID_STORE_INITIAL) this.data = new Int32Array(ID_STORE_INITIAL); // after a huge text
    if (this.starts.length > SEGMENT_CACHE_ENTRIES) {
      this.starts = new Int32Array(256);
      this.ends = new Int32Array(256);
    }
  }
}

/**
 * ROUGE-L's vocabulary for the default tokenizer without stemming: token ids read straight from ASCII text (tokens
 * are the runs of [A-Za-z0-9], lowercased), with an open-addressing table hashed on the characters, so that a token
 * seen before costs no substring, lowercase copy or string hash. Other text goes through `rougeTokens`.
 */
class RunVocabulary {
  readonly words: string[] = [];
  private hashes = new Int32Array(1024);
  private slots = new Int32Array(2048).fill(-1);

  /**
   * Appends the token ids of `text` to `out`; false when it is not ASCII (Unicode lowercasing can make ASCII
   * letters), having appended some.
   */
  readIds(text: string, out: IdStore): boolean {
    const length = text.length;
    let i = 0;
    while (i < length) {
      let c = text.charCodeAt(i);
      if (c > 0x7f) return false;
      let lower = ALNUM_LOWER[c];
      if (lower === 0) {
        i++;
        continue;
      }
      const start = i;
      let hash = Math.imul(0x811c9dc5 ^ lower, 0x01000193);
      while (++i < length) {
        c = text.charCodeAt(i);
        if (c > 0x7f) return false;
        lower = ALNUM_LOWER[c];
        if (lower === 0) break;
        hash = Math.imul(hash ^ lower, 0x01000193);
      }
      out.push(this.idOf(text, start, i, hash));
    }
    return true;
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

export class Rouge implements Metric<RougeRefInfo> {
  readonly name: string;
  readonly statsSize = MEAN_STATS_SIZE;
  readonly tokenize: RougeTokenizer;
  readonly stem: boolean;
  readonly measure: RougeMeasure;
  /** Work bound of one segment's LCS (ROUGE-L, ROUGE-Lsum), in word steps: exact below it, a WorkBoundError past it. */
  readonly maxWork: number;
  private readonly order: number;

  constructor(
    readonly type: RougeType,
    options: RougeOptions = {},
    readonly spec: string = type,
  ) {
    this.tokenize = options.tokenize ?? 'default';
    this.stem = options.stem ?? false;
    this.measure = options.measure ?? 'f';
    this.maxWork = options.maxWork ?? MAX_LCS_WORD_STEPS;
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
  private readonly store = new IdStore();

  /** ROUGE-L: the store entry of a text's token ids (one vocabulary per instance, bounded: see VOCABULARY_LIMIT). */
  private idsOf(text: string): number {
    const store = this.store;
    let entry = store.find(text);
    if (entry < 0) {
      const start = store.length;
      if (!(this.tokenize === 'default' && !this.stem && this.vocabulary.readIds(text, store))) {
        store.length = start;
        const tokens = this.tokenize === 'code' ? codeTokens(text) : rougeTokens(text, this.stem);
        const ids = tokens.map((token) => this.otherId(token));
        for (const id of ids) store.push(id);
      }
      entry = store.add(text, start);
    }
    return entry;
  }

  /** Id of a token read otherwise: the same word has one id whichever way it was read. */
  private otherId(token: string): number {
    let id = this.otherIds.get(token);
    if (id === undefined) {
      const store = this.store;
      const at = store.length;
      const read = this.vocabulary.readIds(token, store) && store.length > at ? store.data[at] : -1;
      store.length = at;
      id = read >= 0 && this.vocabulary.words[read] === token ? read : -1 - this.otherIds.size;
      this.otherIds.set(token, id);
    }
    return id;
  }

  prepareReferences(refs: readonly string[]): RougeRefInfo {
    if (this.type === 'rougeL') return { tokens: [], sentences: [], texts: refs.slice() };
    const infos = refs.map((r) => this.info(r));
    return { tokens: infos.map((i) => i.tokens), sentences: infos.map((i) => i.sentences), texts: [] };
  }

  /** Precision, recall and F of one prediction against one tokenised reference. */
  private scoreOne(target: { tokens: string[]; sentences: string[][] }, prediction: { tokens: string[]; sentences: string[][] }): PRF {
    if (this.type === 'rougeL') return rougeL(target.tokens, prediction.tokens, this.maxWork);
    if (this.type === 'rougeLsum') return rougeLsum(target.sentences, prediction.sentences, this.maxWork);
    return rougeN(target.tokens, prediction.tokens, this.order);
  }

  /** Best-F score over references (rouge-score `score_multi`); the first reference wins ties. */
  scoreSegment(hyp: string, refs: RougeRefInfo): PRF {
    if (this.type === 'rougeL') {
      // Between segments only: ids of one segment come from one vocabulary, and its ranges stay in the store.
      if (this.vocabulary.size + this.otherIds.size >= VOCABULARY_LIMIT) {
        this.vocabulary = new RunVocabulary();
        this.otherIds = new Map();
        this.store.clear();
      } else {
        this.store.makeRoom(refs.texts.length + 1);
      }
      const store = this.store;
      const entry = this.idsOf(hyp);
      const hypStart = store.start(entry);
      const hypEnd = store.end(entry);
      let best: PRF | null = null;
      for (const text of refs.texts) {
        const ref = this.idsOf(text);
        const refStart = store.start(ref);
        const refEnd = store.end(ref);
        let precision = 0;
        let recall = 0;
        let f = 0;
        if (refEnd > refStart && hypEnd > hypStart) {
          const lcs = lcsLengthOfIds(store.data, refStart, refEnd, store.data, hypStart, hypEnd, this.maxWork);
          precision = lcs / (hypEnd - hypStart);
          recall = lcs / (refEnd - refStart);
          f = fmeasure(precision, recall);
        }
        if (best === null || f > best.fmeasure) best = { precision, recall, fmeasure: f };
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
