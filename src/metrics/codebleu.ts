import { UsageError } from '../errors.js';
import { readFileSync } from 'node:fs';
import { CodeAnalyzer } from '../code/analysis-cache.js';
import { PairTable } from '../code/pair-table.js';
import { loadLanguage, type LanguageId } from '../code/languages.js';
import { fsum, isPyWhitespace, pyStrip } from '../compat/python-strings.js';
import { VERSION } from '../version.js';
import { SEGMENT_CACHE_ENTRIES } from './bounded-cache.js';
import type { Metric } from './metric.js';

/**
 * CodeBLEU as the `codebleu` package 0.7.1 (k4black, after CodeXGLUE) computes it:
 *   alpha * ngram_match + beta * weighted_ngram_match + gamma * syntax_match + theta * (dataflow_match or 1)
 * - n-gram match: NLTK-style corpus BLEU on whitespace tokens with smoothing method1 (epsilon 0.1);
 * - weighted n-gram match: its *recall*-based form, unigrams weighted 1 for keywords and 0.2 otherwise, summed
 *   over references, with its brevity penalty computed against a reference "length" of 2 (the length of each
 *   [tokens, weights] pair, a quirk we keep because it is part of every published CodeBLEU number);
 * - syntax match: share of reference subtrees (after comment removal) that also occur in the hypothesis;
 * - data-flow match: share of normalised reference data-flow edges found in the hypothesis (multiset).
 * The `dataflow or 1` rule: a data-flow score of 0 (no reference edges anywhere, or none matched) counts as 1.
 * All four components are corpus-level ratios, so the statistics below are their numerators and denominators.
 */
const ORDER = 4;
const EPSILON = 0.1;

const KEYWORD_FILES: Record<LanguageId, string> = {
  python: 'python', java: 'java', javascript: 'javascript', typescript: 'typescript', tsx: 'typescript',
  c_sharp: 'c_sharp', c: 'c', cpp: 'cpp', go: 'go', rust: 'rust', php: 'php', ruby: 'ruby',
};

function loadKeywords(language: LanguageId): Set<string> {
  const url = new URL(`../../data/codebleu-keywords/${KEYWORD_FILES[language]}.txt`, import.meta.url);
  return new Set(readFileSync(url, 'utf8').split('\n').map((l) => pyStrip(l)));
}

export interface CodeBleuWeights {
  ngram: number;
  weightedNgram: number;
  syntax: number;
  dataflow: number;
}

// Statistics layout.
const NG = 0; // ngram: num[4], den[4], hyp len, ref len
const WNG = NG + 2 * ORDER + 2; // weighted: num[4], den[4], hyp len, ref len
const SYN = WNG + 2 * ORDER + 2; // syntax: matched, total
const DF = SYN + 2; // dataflow: matched, total
const SIZE = DF + 2;

/**
 * Tokens and word n-grams of orders 1-4 as dense integers, so that counting and clipping are array work with no
 * string keys. Tokens get ids for as long as the store keeps its texts; an n-gram of order 2-4 is its (n-1)-gram's id
 * extended by a token, hash-consed for one segment only (ids from the number of tokens up), so that the table stays
 * as small as one segment's texts. Token sequences and n-gram ids correspond one to one, as the space-joined keys of
 * the string form did (tokens hold no whitespace).
 */
class GramTable {
  private readonly tokens = new TokenTable();
  private tokenCount = 0;
  private pairs = new PairTable(1 << 10);
  private next = 0;
  private readonly freshId = () => this.fresh();
  /** Per token id: 1 for a keyword (weight 1 in the weighted match, else 0.2). */
  keyword = new Uint8Array(1024);
  /** Per id (token or n-gram) scratch counts, all zero between uses. */
  scratch = new Int32Array(1024);

  constructor(private readonly keywords: Set<string>) {}

  /** How many token ids exist. */
  get size(): number {
    return this.tokenCount;
  }

  /** Forgets every token (keeping the capacity); ids start again from 0. */
  clear(): void {
    this.tokens.clear();
    this.keyword.fill(0, 0, this.tokenCount);
    this.tokenCount = 0;
  }

  /** The ids of the whitespace-separated tokens of `text` (Python's `str.split()`), valid until the next call. */
  tokenIds(text: string): Int32Array {
    return this.tokens.split(text, (word) => {
      const id = this.tokenCount++;
      if (id === this.keyword.length) {
        const keyword = new Uint8Array(2 * id);
        keyword.set(this.keyword);
        this.keyword = keyword;
      }
      if (this.keywords.has(word)) this.keyword[id] = 1;
      return id;
    });
  }

  /** Forgets the n-grams of the last segment; `grams` is about how many the next one has. */
  beginSegment(grams: number): void {
    if (this.pairs.capacity > 16 * Math.max(1 << 10, 2 * grams)) this.pairs = new PairTable(grams);
    else this.pairs.clear();
    this.next = this.tokenCount;
    if (this.scratch.length < this.next) this.scratch = grown(this.scratch, this.next);
  }

  private fresh(): number {
    const id = this.next++;
    if (id >= this.scratch.length) {
      const scratch = new Int32Array(2 * this.scratch.length);
      scratch.set(this.scratch);
      this.scratch = scratch;
    }
    return id;
  }

  /** The id of an n-gram of order 2-4: its (n-1)-gram's id extended by a token (in this segment). */
  extend(prefix: number, token: number): number {
    return this.pairs.intern(prefix, token, this.freshId);
  }
}

/**
 * Strings kept as UTF-16 code units in one growing array rather than as JavaScript strings: a store of thousands of
 * texts and tokens is then a few arrays that the garbage collector neither traces nor copies.
 */
class CharPool {
  chars = new Uint16Array(1 << 12);
  used = 0;

  /** Forgets every string (shrinking after far more than `keep` code units). */
  clear(keep: number): void {
    if (this.chars.length > 4 * keep) this.chars = new Uint16Array(keep);
    this.used = 0;
  }

  /** Appends text[start, end); returns where it starts. */
  add(text: string, start: number, end: number): number {
    const at = this.used;
    const n = end - start;
    if (at + n > this.chars.length) {
      let length = 2 * this.chars.length;
      while (at + n > length) length *= 2;
      const grown = new Uint16Array(length);
      grown.set(this.chars.subarray(0, at));
      this.chars = grown;
    }
    const chars = this.chars;
    for (let i = 0; i < n; i++) chars[at + i] = text.charCodeAt(start + i);
    this.used = at + n;
    return at;
  }

  /** Whether the code units from `at` are those of text[start, end). */
  equals(at: number, text: string, start: number, end: number): boolean {
    const chars = this.chars;
    for (let i = start; i < end; i++) if (chars[at + i - start] !== text.charCodeAt(i)) return false;
    return true;
  }
}

/**
 * Token ids read straight from the text: Python's `str.split()` tokens, looked up in an open-addressing table hashed
 * on their characters, so that a token seen before costs no substring and no string hash.
 */
class TokenTable {
  private readonly pool = new CharPool();
  private count = 0;
  // Per token: where its characters are in the pool, how many, its hash and its id.
  private at = new Int32Array(1024);
  private length = new Int32Array(1024);
  private hashes = new Int32Array(1024);
  private wordIds = new Int32Array(1024);
  private slots = new Int32Array(2048).fill(-1);
  private ids = new Int32Array(256);

  clear(): void {
    this.pool.clear(1 << 16);
    this.count = 0;
    this.slots.fill(-1);
  }

  split(text: string, fresh: (word: string) => number): Int32Array {
    let count = 0;
    let start = -1;
    let hash = 0;
    for (let i = 0; i <= text.length; i++) {
      const c = i < text.length ? text.charCodeAt(i) : 0x20;
      if (!isPyWhitespace(c)) {
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
        this.ids[count++] = this.idOf(text, start, i, hash, fresh);
        start = -1;
      }
    }
    return this.ids.subarray(0, count);
  }

  private idOf(text: string, start: number, end: number, hash: number, fresh: (word: string) => number): number {
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (let k = this.slots[slot]; k >= 0; k = this.slots[slot]) {
      if (this.hashes[k] === hash && this.length[k] === end - start && this.pool.equals(this.at[k], text, start, end)) return this.wordIds[k];
      slot = (slot + 1) & mask;
    }
    const k = this.count++;
    if (k === this.hashes.length) {
      this.at = grownCopy(this.at);
      this.length = grownCopy(this.length);
      this.hashes = grownCopy(this.hashes);
      this.wordIds = grownCopy(this.wordIds);
    }
    const id = fresh(text.slice(start, end));
    this.at[k] = this.pool.add(text, start, end);
    this.length[k] = end - start;
    this.hashes[k] = hash;
    this.wordIds[k] = id;
    this.slots[slot] = k;
    if (2 * this.count > this.slots.length) this.slots = rehash(this.hashes, this.count, 2 * this.slots.length);
    return id;
  }
}

/** An array twice as long with the same start. */
function grownCopy(a: Int32Array): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(2 * a.length);
  grown.set(a);
  return grown;
}

/** Open-addressing slots (linear probing, -1 empty) for items 0..count-1 with the given hashes. */
function rehash(hashes: ArrayLike<number>, count: number, size: number): Int32Array<ArrayBuffer> {
  const slots = new Int32Array(size).fill(-1);
  const m = size - 1;
  for (let j = 0; j < count; j++) {
    let at = hashes[j] & m;
    while (slots[at] >= 0) at = (at + 1) & m;
    slots[at] = j;
  }
  return slots;
}

/** Python's `str.strip()`. */
function strip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isPyWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isPyWhitespace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** The reference texts of a segment (what they contribute is cached by text and looked up when scoring). */
interface CodeBleuRef {
  texts: string[];
}

/**
 * Layout of what one text contributes in either role (a reference serves many hypotheses, so it is computed once
 * per distinct text), stored in one of `TextStore.chunks` from the entry's offset: a header, then its token ids, the
 * subtree identities (pre-order), the distinct data-flow edge numbers (in order of first occurrence) followed by
 * their counts, and the text itself, two UTF-16 code units to an integer. Offsets in the header are relative to the
 * entry.
 */
const E_HASH = 0; // of the text
const E_TEXT = 1; // offset of the text's code units, how many
const E_TOKENS = 3; // offset of the token ids, number of tokens
const E_SUBTREES = 5; // offset, count
const E_FLOW = E_SUBTREES + 2; // offset, distinct, total edges
const E_HEADER = E_FLOW + 3;

/** Layout of a text's n-gram block in a segment (see `CodeBleu.grams`). */
const G_LENGTH = 0; // number of tokens
const G_ORDERS = 1; // per order: offset, distinct
const G_HEADER = G_ORDERS + 2 * ORDER;

/** Room for the n-gram block of a text of `tokens` tokens. */
function gramBlockSize(tokens: number): number {
  let size = G_HEADER;
  for (let n = 1; n <= ORDER; n++) size += 2 * Math.max(0, tokens - n + 1);
  return size;
}

/** Texts kept before the store starts afresh (as a `BoundedCache` forgets everything when full). */
const STORE_TEXTS = SEGMENT_CACHE_ENTRIES;
/** Past this many token ids, or this many subtree or data-flow ids, the store starts afresh. */
const TOKEN_LIMIT = 1 << 18;
const ANALYSIS_LIMIT = 1 << 19;
/** Chunk sizes (integers): the first, and the most they grow to (an entry larger than that gets its own chunk). */
const FIRST_CHUNK = 1 << 14;
const CHUNK = 1 << 18;

/** The text's hash: FNV-1a over its UTF-16 code units, two at a time. */
function textHash(text: string): number {
  const n = text.length;
  let hash = 0x811c9dc5 ^ n;
  let i = 0;
  for (; i + 1 < n; i += 2) hash = Math.imul(hash ^ (text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16)), 0x01000193);
  if (i < n) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash;
}

/**
 * Everything CodeBLEU needs from each distinct text, computed once. The entries, texts included, live in integer
 * chunks that are filled in turn and never copied or grown: no object or string is kept per text, so a full store
 * is a few megabytes that the garbage collector never traces, and growing it leaves no dead copy behind (an
 * ArrayBuffer that lived long is freed only by a full collection). Texts find their entry by hash. The ids in the
 * entries come from the store's tables; when the store is full, or a table has grown past its bound, it starts
 * afresh (keeping its chunks for reuse) with new tables, between segments only.
 */
class TextStore {
  readonly chunks: Int32Array[] = [new Int32Array(FIRST_CHUNK)];
  private current = 0;
  private used = 0;
  /** Per entry number: its chunk and offset. */
  entryChunk = new Int32Array(1 << 9);
  entryAt = new Int32Array(1 << 9);
  private count = 0;
  /** Entry numbers by text hash (open addressing, -1 empty). */
  private slots = new Int32Array(1 << 10).fill(-1);
  readonly table: GramTable;
  readonly analyzer: CodeAnalyzer;
  /** Per subtree identity: scratch marks, all zero between uses. */
  marks = new Uint8Array(1024);
  /** Per data-flow edge number: scratch counts, all zero between uses. */
  flowCounts = new Int32Array(1024);

  constructor(language: LanguageId, keywords: Set<string>) {
    this.table = new GramTable(keywords);
    this.analyzer = new CodeAnalyzer(language);
  }

  /** Called between segments only: starts afresh when full. */
  bound(): void {
    if (this.count < STORE_TEXTS && this.table.size < TOKEN_LIMIT && this.analyzer.subtreeIds < ANALYSIS_LIMIT && this.analyzer.edgeIds < ANALYSIS_LIMIT) return;
    this.count = 0;
    this.slots.fill(-1);
    // Chunks of the usual sizes are refilled; one made for a single large entry is dropped.
    for (let c = this.chunks.length - 1; c > 0; c--) if (this.chunks[c].length > CHUNK) this.chunks.splice(c, 1);
    this.current = 0;
    this.used = 0;
    this.table.clear();
    this.analyzer.clear();
  }

  /** The number of the entry of `text` (its chunk and offset: `entryChunk`, `entryAt`). */
  entry(text: string): number {
    const hash = textHash(text);
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (let k = this.slots[slot]; k >= 0; k = this.slots[slot]) {
      const d = this.chunks[this.entryChunk[k]];
      const at = this.entryAt[k];
      if (d[at + E_HASH] === hash && d[at + E_TEXT + 1] === text.length && sameText(d, at + d[at + E_TEXT], text)) return k;
      slot = (slot + 1) & mask;
    }
    const k = this.count;
    if (k === this.entryAt.length) {
      this.entryChunk = grownCopy(this.entryChunk);
      this.entryAt = grownCopy(this.entryAt);
    }
    this.add(text, hash, k);
    this.count++;
    this.slots[slot] = k;
    if (2 * this.count > this.slots.length) {
      const hashes = new Int32Array(this.count);
      for (let j = 0; j < this.count; j++) hashes[j] = this.chunks[this.entryChunk[j]][this.entryAt[j] + E_HASH];
      this.slots = rehash(hashes, this.count, 2 * this.slots.length);
    }
    return k;
  }

  /** Room for `size` integers: the current chunk, or the next one (reused, or made). */
  private reserve(size: number): void {
    if (this.used + size <= this.chunks[this.current].length) return;
    const next = this.current + 1;
    if (next < this.chunks.length && size <= this.chunks[next].length) {
      this.current = next;
    } else {
      const length = Math.max(size, Math.min(CHUNK, 2 * this.chunks[this.current].length));
      this.chunks.splice(next, 0, new Int32Array(length));
      this.current = next;
    }
    this.used = 0;
  }

  private add(text: string, hash: number, k: number): void {
    // Fresh arrays for each text: a reused long-lived array's new backing stores would outlive young collections.
    const subtrees: number[] = [];
    const flow: number[] = [];
    this.analyzer.analyse(strip(text), subtrees, flow);
    // The tokens of the stripped code are those of the text: split() ignores outer whitespace.
    const tokenIds = this.table.tokenIds(text);
    const L = tokenIds.length;
    this.reserve(E_HEADER + L + subtrees.length + 2 * flow.length + Math.ceil(text.length / 2));
    const at = this.used;
    const data = this.chunks[this.current];
    data[at + E_HASH] = hash;
    let used = E_HEADER;
    data[at + E_TOKENS] = used;
    data[at + E_TOKENS + 1] = L;
    data.set(tokenIds, at + used);
    used += L;
    data[at + E_SUBTREES] = used;
    data[at + E_SUBTREES + 1] = subtrees.length;
    for (let k = 0; k < subtrees.length; k++) data[at + used + k] = subtrees[k];
    used += subtrees.length;
    // Data-flow edges as a multiset: distinct numbers in order of first occurrence, then their counts.
    if (this.flowCounts.length < this.analyzer.edgeIds) this.flowCounts = grown(this.flowCounts, this.analyzer.edgeIds);
    const counts = this.flowCounts;
    let distinct = 0;
    const base = at + used;
    for (const e of flow) if (counts[e]++ === 0) data[base + distinct++] = e;
    for (let k = 0; k < distinct; k++) {
      data[base + distinct + k] = counts[data[base + k]];
      counts[data[base + k]] = 0;
    }
    data[at + E_FLOW] = used;
    data[at + E_FLOW + 1] = distinct;
    data[at + E_FLOW + 2] = flow.length;
    used += 2 * distinct;
    // The text, two code units to an integer.
    data[at + E_TEXT] = used;
    data[at + E_TEXT + 1] = text.length;
    for (let i = 0; i < text.length; i += 2) data[at + used + (i >> 1)] = text.charCodeAt(i) | (i + 1 < text.length ? text.charCodeAt(i + 1) << 16 : 0);
    used += Math.ceil(text.length / 2);
    this.used = at + used;
    this.entryChunk[k] = this.current;
    this.entryAt[k] = at;
    if (this.marks.length < this.analyzer.subtreeIds) this.marks = grown(this.marks, this.analyzer.subtreeIds);
  }
}

/** Whether the code units packed two to an integer from `at` are those of `text` (whose length is checked). */
function sameText(d: Int32Array, at: number, text: string): boolean {
  const n = text.length;
  for (let i = 0; i + 1 < n; i += 2) {
    const v = d[at + (i >> 1)];
    if ((v & 0xffff) !== text.charCodeAt(i) || v >>> 16 !== text.charCodeAt(i + 1)) return false;
  }
  return n % 2 === 0 || (d[at + (n >> 1)] & 0xffff) === text.charCodeAt(n - 1);
}

/** A zeroed array of the same kind with room for `size` (doubling). */
function grown<T extends Int32Array | Uint8Array>(a: T, size: number): T {
  let length = 2 * a.length;
  while (length < size) length *= 2;
  return new (a.constructor as new (n: number) => T)(length);
}

/** codebleu `bleu.corpus_bleu` / `weighted_ngram_match.corpus_bleu` from summed statistics. */
function smoothedBleu(stats: ArrayLike<number>, offset: number): number {
  const hypLen = stats[offset + 2 * ORDER];
  const refLen = stats[offset + 2 * ORDER + 1];
  if (stats[offset] === 0) return 0;
  const bp = hypLen > refLen ? 1 : hypLen === 0 ? 0 : Math.exp(1 - refLen / hypLen);
  const logs: number[] = [];
  for (let n = 0; n < ORDER; n++) {
    const num = stats[offset + n] === 0 ? stats[offset + n] + EPSILON : stats[offset + n];
    logs.push(0.25 * Math.log(num / stats[offset + ORDER + n]));
  }
  return bp * Math.exp(fsum(logs));
}

export class CodeBleu implements Metric<CodeBleuRef> {
  readonly name = 'CodeBLEU';
  readonly statsSize = SIZE;
  readonly weights: CodeBleuWeights;
  private store: TextStore | null = null;
  // Per segment, reused: its references' entries, their chunks and offsets.
  private readonly refEntries: number[] = [];
  private readonly refData: Int32Array[] = [];
  private readonly refAt: number[] = [];
  private readonly refBlock: number[] = [];
  /** The segment's n-gram blocks (see `grams`), and scratch ids. */
  private ws = new Int32Array(1 << 12);
  private gramIds = new Int32Array(256);

  constructor(
    readonly language: LanguageId,
    weights: Partial<CodeBleuWeights> = {},
    readonly spec = `codebleu:lang=${language}`,
  ) {
    this.weights = { ngram: 0.25, weightedNgram: 0.25, syntax: 0.25, dataflow: 0.25, ...weights };
  }

  async ready(): Promise<void> {
    await loadLanguage(this.language);
    this.store ??= new TextStore(this.language, loadKeywords(this.language));
  }

  signature(nrefs: number | 'var'): string {
    const w = this.weights;
    return `nrefs:${nrefs}|lang:${this.language}|weights:${w.ngram}/${w.weightedNgram}/${w.syntax}/${w.dataflow}|tok:split|smooth:method1|dataflow:or-1|impl:codebleu-0.7.1|version:${VERSION}`;
  }

  prepareReferences(refs: readonly string[]): CodeBleuRef {
    return { texts: refs.slice() };
  }

  /**
   * Writes the n-gram block of the entry at d[e] into `ws` from `at` and returns where it ends: its number of
   * tokens, then per order (1-4) the offset (from `at`) and number of its distinct n-gram ids, which follow in order
   * of first occurrence, each order's ids followed by their counts.
   */
  private grams(table: GramTable, d: Int32Array, e: number, at: number): number {
    const ws = this.ws;
    const tokens = e + d[e + E_TOKENS];
    const L = d[e + E_TOKENS + 1];
    ws[at + G_LENGTH] = L;
    if (this.gramIds.length < L) this.gramIds = grown(this.gramIds, L);
    // The n-gram at i is the (n-1)-gram at i extended by token i + n - 1, computed in place (ids[i] is read before
    // it is overwritten, and only ids[i'] with i' >= i are read after); unigrams are the tokens.
    const ids = this.gramIds;
    for (let i = 0; i < L; i++) ids[i] = d[tokens + i];
    let used = G_HEADER;
    for (let n = 1; n <= ORDER; n++) {
      const count = Math.max(0, L - n + 1);
      if (n > 1) for (let i = 0; i < count; i++) ids[i] = table.extend(ids[i], d[tokens + i + n - 1]);
      const scratch = table.scratch;
      let distinct = 0;
      const base = at + used;
      for (let i = 0; i < count; i++) if (scratch[ids[i]]++ === 0) ws[base + distinct++] = ids[i];
      for (let k = 0; k < distinct; k++) {
        ws[base + distinct + k] = scratch[ws[base + k]];
        scratch[ws[base + k]] = 0;
      }
      ws[at + G_ORDERS + 2 * (n - 1)] = used;
      ws[at + G_ORDERS + 2 * (n - 1) + 1] = distinct;
      used += 2 * distinct;
    }
    return at + used;
  }

  segmentStatistics(hypText: string, prepared: CodeBleuRef, out: Float64Array, o: number): void {
    const store = this.store;
    if (!store) throw new UsageError('CodeBLEU: call and await metric.ready() before scoring (scoreSystems does it for you)');
    // Between segments: the store may start afresh here, never between a hypothesis and its references.
    store.bound();
    const texts = prepared.texts;
    const R = texts.length;
    const hk = store.entry(hypText);
    const refs = this.refEntries;
    refs.length = R;
    for (let i = 0; i < R; i++) refs[i] = store.entry(texts[i]);
    // Each entry is read in its chunk: hd[h + ...] for the hypothesis, rd[r + ...] for a reference.
    const hd = store.chunks[store.entryChunk[hk]];
    const h = store.entryAt[hk];
    const refData = this.refData;
    const refAt = this.refAt;
    refData.length = R;
    refAt.length = R;
    for (let i = 0; i < R; i++) {
      refData[i] = store.chunks[store.entryChunk[refs[i]]];
      refAt[i] = store.entryAt[refs[i]];
    }
    // The n-grams of the segment's texts, in `ws`: per text its block (see `grams`), the hypothesis's at 0.
    const table = store.table;
    let size = gramBlockSize(hd[h + E_TOKENS + 1]);
    for (let i = 0; i < R; i++) size += gramBlockSize(refData[i][refAt[i] + E_TOKENS + 1]);
    if (this.ws.length < size) this.ws = grown(this.ws, size);
    table.beginSegment(size);
    const refBlock = this.refBlock;
    refBlock.length = R;
    let end = this.grams(table, hd, h, 0);
    for (let i = 0; i < R; i++) {
      refBlock[i] = end;
      end = this.grams(table, refData[i], refAt[i], end);
    }
    const ws = this.ws;
    const hypLength = ws[G_LENGTH];
    // n-gram precision, clipped by the maximum count over references.
    for (let n = 0; n < ORDER; n++) {
      const scratch = table.scratch;
      const g = G_ORDERS + 2 * n;
      for (let i = 0; i < R; i++) {
        const b = refBlock[i];
        const ids = b + ws[b + g];
        const distinct = ws[b + g + 1];
        for (let k = 0; k < distinct; k++) if (ws[ids + distinct + k] > scratch[ws[ids + k]]) scratch[ws[ids + k]] = ws[ids + distinct + k];
      }
      let matched = 0;
      let total = 0;
      const ids = ws[g];
      const distinct = ws[g + 1];
      for (let k = 0; k < distinct; k++) {
        const c = ws[ids + distinct + k];
        total += c;
        matched += Math.min(c, scratch[ws[ids + k]]);
      }
      for (let i = 0; i < R; i++) {
        const b = refBlock[i];
        const rids = b + ws[b + g];
        const rdistinct = ws[b + g + 1];
        for (let k = 0; k < rdistinct; k++) scratch[ws[rids + k]] = 0;
      }
      out[o + NG + n] = matched;
      out[o + NG + ORDER + n] = Math.max(1, total);
    }
    out[o + NG + 2 * ORDER] = hypLength;
    let closest = Infinity;
    for (let i = 0; i < R; i++) {
      const length = ws[refBlock[i] + G_LENGTH];
      const diff = Math.abs(length - hypLength);
      const best = Math.abs(closest - hypLength);
      if (diff < best || (diff === best && length < closest)) closest = length;
    }
    out[o + NG + 2 * ORDER + 1] = closest;
    // Weighted n-gram recall, summed over references; the reference's n-grams in order of first occurrence, as the
    // reference implementation's dict iterates them (the weights of 0.2 make the float sums order-dependent).
    // Unigram ids are token ids, which the keyword flags are indexed by.
    const keyword = table.keyword;
    for (let n = 0; n < ORDER; n++) {
      const scratch = table.scratch;
      const g = G_ORDERS + 2 * n;
      const hids = ws[g];
      const hdistinct = ws[g + 1];
      for (let k = 0; k < hdistinct; k++) scratch[ws[hids + k]] = ws[hids + hdistinct + k];
      let num = 0;
      let den = 0;
      for (let i = 0; i < R; i++) {
        const b = refBlock[i];
        const ids = b + ws[b + g];
        const distinct = ws[b + g + 1];
        let clipped = 0;
        let all = 0;
        for (let k = 0; k < distinct; k++) {
          const id = ws[ids + k];
          const c = ws[ids + distinct + k];
          const m = Math.min(c, scratch[id]);
          const w = n === 0 ? (keyword[id] === 1 ? 1 : 0.2) : 1;
          clipped += m * w;
          all += c * w;
        }
        num += clipped;
        den += Math.max(1, all);
      }
      for (let k = 0; k < hdistinct; k++) scratch[ws[hids + k]] = 0;
      out[o + WNG + n] = num;
      out[o + WNG + ORDER + n] = den;
    }
    out[o + WNG + 2 * ORDER] = hypLength;
    out[o + WNG + 2 * ORDER + 1] = 2; // len([tokens, weights]), see the class comment
    // Syntax match: how many of each reference's subtrees (with repeats) occur among the hypothesis's.
    const marks = store.marks;
    const hsub = h + hd[h + E_SUBTREES];
    const hsubCount = hd[h + E_SUBTREES + 1];
    for (let k = 0; k < hsubCount; k++) marks[hd[hsub + k]] = 1;
    let synMatch = 0;
    let synTotal = 0;
    for (let i = 0; i < R; i++) {
      const rd = refData[i];
      const r = refAt[i];
      const sub = r + rd[r + E_SUBTREES];
      const count = rd[r + E_SUBTREES + 1];
      for (let k = 0; k < count; k++) synMatch += marks[rd[sub + k]];
      synTotal += count;
    }
    for (let k = 0; k < hsubCount; k++) marks[hd[hsub + k]] = 0;
    // Data flow: each reference edge matches one unused equal hypothesis edge (min of the two counts per edge).
    const flow = store.flowCounts;
    const hflow = h + hd[h + E_FLOW];
    const hflowDistinct = hd[h + E_FLOW + 1];
    for (let k = 0; k < hflowDistinct; k++) flow[hd[hflow + k]] = hd[hflow + hflowDistinct + k];
    let dfMatch = 0;
    let dfTotal = 0;
    for (let i = 0; i < R; i++) {
      const rd = refData[i];
      const r = refAt[i];
      const edges = rd[r + E_FLOW + 2];
      if (edges === 0) continue;
      dfTotal += edges;
      const f = r + rd[r + E_FLOW];
      const distinct = rd[r + E_FLOW + 1];
      for (let k = 0; k < distinct; k++) dfMatch += Math.min(rd[f + distinct + k], flow[rd[f + k]]);
    }
    for (let k = 0; k < hflowDistinct; k++) flow[hd[hflow + k]] = 0;
    out[o + SYN] = synMatch;
    out[o + SYN + 1] = synTotal;
    out[o + DF] = dfMatch;
    out[o + DF + 1] = dfTotal;
  }

  /** The four components on the 0-1 scale (data flow before the `or 1` rule). */
  componentsFromStatistics(stats: ArrayLike<number>): { ngram: number; weighted_ngram: number; syntax: number; dataflow: number } {
    return {
      ngram: smoothedBleu(stats, NG),
      weighted_ngram: smoothedBleu(stats, WNG),
      syntax: stats[SYN + 1] > 0 ? stats[SYN] / stats[SYN + 1] : 0,
      dataflow: stats[DF + 1] > 0 ? stats[DF] / stats[DF + 1] : 0,
    };
  }

  /** CodeBLEU on the package's 0-1 scale. */
  fraction(stats: ArrayLike<number>): number {
    const c = this.componentsFromStatistics(stats);
    const w = this.weights;
    return w.ngram * c.ngram + w.weightedNgram * c.weighted_ngram + w.syntax * c.syntax + w.dataflow * (c.dataflow || 1);
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return 100 * this.fraction(stats);
  }

  components(stats: ArrayLike<number>): Record<string, number> {
    const c = this.componentsFromStatistics(stats);
    return { ngram: 100 * c.ngram, weighted_ngram: 100 * c.weighted_ngram, syntax: 100 * c.syntax, dataflow: 100 * c.dataflow };
  }
}
