import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { InputError, UsageError } from '../errors.js';
import { pySplit } from '../compat/python-strings.js';
import { codeTokens } from '../text/code-tokenizer.js';
import { VERSION } from '../version.js';
import { BoundedCache } from './bounded-cache.js';
import type { Metric } from './metric.js';
import { fsum } from '../compat/python-strings.js';
import { exactExp, exactLog } from './exact-math.js';

/**
 * CrystalBLEU (Eghbali and Pradel, ASE 2022; sola-st/crystalbleu `bleu_ignoring.py`): NLTK `corpus_bleu` (uniform
 * 4-gram weights, no smoothing) in which the k most frequent 1-4-grams of a corpus are ignored, in the hypotheses
 * and in the references alike. The ignored set is the README's recipe: `Counter` of every 1-4-gram of the
 * tokenized corpus, `most_common(k)` (ties in order of first occurrence, as Python's stable sort keeps them).
 *
 * The corpus is, by default, the distinct references of the whole input (each counted once, in order of first
 * appearance; the n-grams of each reference are counted on its own, as the paper's scripts do), or a file of code
 * (`corpus=FILE`, tokenized as one text), or a set written earlier (`ngrams=FILE`). With the references as corpus
 * the set depends on every reference: the library counts them as they are prepared (`scoreCorpus` prepares all
 * references first) or through `fitReferences`, and freezes the set at the first scored segment.
 *
 * Statistics (as NLTK BLEU's): clipped matches of non-ignored n-grams [1..4], max(1, non-ignored hypothesis
 * n-grams) [1..4], hypothesis length, closest reference length (lengths count every token).
 */
const ORDER = 4;
export const CRYSTALBLEU_DEFAULT_K = 500;
export type CrystalBleuTokenizer = 'code' | 'ws';

export interface CrystalBleuOptions {
  /**
   * How many of the most frequent n-grams to ignore (default 500). With an n-gram file or list: its first k (a file
   * lists them most frequent first, so this is the set k would give on the file's corpus); default, all of them.
   */
  k?: number;
  tokenize?: CrystalBleuTokenizer;
  /** A file of code whose n-grams are counted instead of the references'. */
  corpusFile?: string;
  /** Text of such a corpus, for library use. */
  corpusText?: string;
  /** A file written by `ngramsFile()` (`--write-ngrams`): the ignored set of an earlier run. */
  ngramsFile?: string;
  /** The ignored n-grams themselves (each a list of tokens), for library use. */
  ngrams?: readonly (readonly string[])[];
}

/** The JSON written by `--write-ngrams` and read by `ngrams=FILE`. */
export interface CrystalBleuNgramsFile {
  kind: 'crystalbleu-ngrams';
  version: string;
  k: number;
  tok: CrystalBleuTokenizer;
  corpus: string;
  /** [tokens, count in the corpus], most frequent first. */
  ngrams: [string[], number][];
}

/** A text's token ids and, once the ignored set is fixed, which of its n-grams are ignored (bit n-1 of `mask[i]`:
 * the n-gram starting at token i). Cached per text, so a text seen as reference and as hypothesis is done once. */
interface TextInfo {
  ids: Int32Array;
  mask: Uint8Array | null;
}

interface CrystalRefInfo {
  tokens: TextInfo[];
  lengths: number[];
}

const ROOT = -2;
const FLOAT_MIN = 2.2250738585072014e-308; // Python sys.float_info.min

/** Token ids shared by references, hypotheses and the ignored set; a hypothesis word no one has seen is -1. */
class WordIds {
  private readonly ids = new Map<string, number>();
  readonly words: string[] = [];

  encode(words: readonly string[], intern: boolean): Int32Array {
    const out = new Int32Array(words.length);
    for (let i = 0; i < words.length; i++) {
      let id = this.ids.get(words[i]);
      if (id === undefined) {
        if (intern) {
          id = this.words.length;
          this.ids.set(words[i], id);
          this.words.push(words[i]);
        } else id = -1;
      }
      out[i] = id;
    }
    return out;
  }
}

/**
 * An open-addressing table from a pair of non-negative ints to an int (-1: absent), growing as it fills: the (prefix,
 * token) -> id map of the n-gram counter and the (node, token) -> child map of the ignored-n-gram trie.
 */
class PairTable {
  private capacity: number;
  private keyA: Int32Array;
  private keyB: Int32Array;
  private value: Int32Array;
  private size = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.keyA = new Int32Array(capacity);
    this.keyB = new Int32Array(capacity);
    this.value = new Int32Array(capacity).fill(-1);
  }

  private slot(a: number, b: number): number {
    const mask = this.capacity - 1;
    let h = Math.imul(a ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77);
    h ^= h >>> 16;
    let i = h & mask;
    while (this.value[i] !== -1 && (this.keyA[i] !== a || this.keyB[i] !== b)) i = (i + 1) & mask;
    return i;
  }

  get(a: number, b: number): number {
    return this.value[this.slot(a, b)];
  }

  /** Sets a pair that is not in the table yet. */
  add(a: number, b: number, value: number): void {
    if ((this.size + 1) * 2 > this.capacity) this.grow();
    const i = this.slot(a, b);
    this.keyA[i] = a;
    this.keyB[i] = b;
    this.value[i] = value;
    this.size++;
  }

  private grow(): void {
    const { keyA, keyB, value } = this;
    this.capacity *= 2;
    this.keyA = new Int32Array(this.capacity);
    this.keyB = new Int32Array(this.capacity);
    this.value = new Int32Array(this.capacity).fill(-1);
    for (let i = 0; i < value.length; i++) {
      if (value[i] === -1) continue;
      const j = this.slot(keyA[i], keyB[i]);
      this.keyA[j] = keyA[i];
      this.keyB[j] = keyB[i];
      this.value[j] = value[i];
    }
  }
}

/**
 * Counts every 1-4-gram of a corpus without building strings: an n-gram's id is interned from (id of its
 * (n-1)-gram prefix, its last token) in an open-addressing table. Ids are given in order of first occurrence, which
 * is the order in which Python's `Counter` first sees them.
 */
class NgramCounter {
  private readonly table = new PairTable(1 << 16);
  size = 0;
  counts = new Int32Array(1 << 15);
  prefix = new Int32Array(1 << 15);
  last = new Int32Array(1 << 15);
  private scratch = new Int32Array(256);

  private intern(a: number, b: number): number {
    const known = this.table.get(a, b);
    if (known !== -1) return known;
    const id = this.size++;
    this.table.add(a, b, id);
    if (id >= this.counts.length) {
      const grow = (x: Int32Array) => {
        const y = new Int32Array(x.length * 2);
        y.set(x);
        return y;
      };
      this.counts = grow(this.counts);
      this.prefix = grow(this.prefix);
      this.last = grow(this.last);
    }
    this.prefix[id] = a;
    this.last[id] = b;
    return id;
  }

  /** Counts the 1-4-grams of one document (orders in turn, as `for n in 1..4: ngrams(doc, n)`). */
  add(tokens: Int32Array): void {
    if (this.scratch.length < tokens.length) this.scratch = new Int32Array(tokens.length * 2);
    const prefix = this.scratch;
    for (let n = 1; n <= ORDER; n++) {
      const positions = tokens.length - n + 1;
      for (let i = 0; i < positions; i++) {
        const id = this.intern(n === 1 ? ROOT : prefix[i], tokens[i + n - 1]);
        prefix[i] = id;
        this.counts[id]++;
      }
    }
  }

  /** `Counter.most_common(k)`: by count, ties in order of first occurrence (a count threshold, then a small sort). */
  mostCommon(k: number): { ids: number[]; counts: number[] } {
    const counts = this.counts;
    const size = this.size;
    k = Math.min(k, size);
    if (k === 0) return { ids: [], counts: [] };
    // The k-th largest count: the smallest c with #(count >= c) >= k.
    let max = 0;
    for (let i = 0; i < size; i++) if (counts[i] > max) max = counts[i];
    const histogram = new Int32Array(max + 2);
    for (let i = 0; i < size; i++) histogram[counts[i]]++;
    let threshold = max;
    let above = histogram[max];
    while (above < k) above += histogram[--threshold];
    let atThreshold = k - (above - histogram[threshold]);
    const ids: number[] = [];
    for (let i = 0; i < size; i++) {
      if (counts[i] > threshold) ids.push(i);
      else if (counts[i] === threshold && atThreshold > 0) {
        ids.push(i);
        atThreshold--;
      }
    }
    ids.sort((x, y) => counts[y] - counts[x] || x - y);
    return { ids, counts: ids.map((id) => counts[id]) };
  }

  tokensOf(id: number): number[] {
    const out: number[] = [];
    for (let cur = id; cur !== ROOT; cur = this.prefix[cur]) out.push(this.last[cur]);
    return out.reverse();
  }
}

/**
 * The ignored n-grams as a trie over token ids, its edges in one open-addressing table keyed by (node, token):
 * `child(node, t)` is the node of the n-gram extended by `t` (or -1), `ignored(node)` whether that n-gram is ignored.
 */
class IgnoredTrie {
  private readonly edges = new PairTable(1 << 10);
  private flags = new Uint8Array(1 << 9);
  private nodes = 1;
  count = 0;

  add(tokens: readonly number[]): void {
    let node = 0;
    for (const t of tokens) {
      let next = this.edges.get(node, t);
      if (next === -1) {
        if (this.nodes >= this.flags.length) {
          const flags = new Uint8Array(this.flags.length * 2);
          flags.set(this.flags);
          this.flags = flags;
        }
        next = this.nodes++;
        this.edges.add(node, t, next);
      }
      node = next;
    }
    if (!this.flags[node]) this.count++;
    this.flags[node] = 1;
  }

  /** The trie node reached from `node` by token `t`, or -1. */
  child(node: number, t: number): number {
    if (node < 0 || t < 0 || this.nodes === 1) return -1;
    return this.edges.get(node, t);
  }

  ignored(node: number): boolean {
    return node >= 0 && this.flags[node] === 1;
  }

  /** Bit n-1 of `mask[i]` set when the n-gram of order n starting at token i is ignored. */
  mask(tokens: Int32Array): Uint8Array {
    const mask = new Uint8Array(tokens.length);
    if (this.count === 0) return mask;
    for (let i = 0; i < tokens.length; i++) {
      let node = 0;
      for (let n = 1; n <= ORDER && i + n <= tokens.length; n++) {
        node = this.child(node, tokens[i + n - 1]);
        if (node < 0) break;
        if (this.flags[node] === 1) mask[i] |= 1 << (n - 1);
      }
    }
    return mask;
  }
}

/**
 * Clipped n-gram matching of one segment with ignored n-grams left out (the design of `NgramMatcher`: local
 * n-gram ids interned from (prefix id, token) in a small open-addressing table that only holds this segment's
 * references). Reference n-grams that are ignored keep an id, so that longer n-grams can extend them, but no count.
 */
class IgnoringMatcher {
  private capacity = 1 << 12;
  private keyA = new Int32Array(this.capacity);
  private keyB = new Int32Array(this.capacity);
  private value = new Int32Array(this.capacity);
  private slotGeneration = new Int32Array(this.capacity);
  private generation = 1;
  private size = 0;
  private current = new Int32Array(1024);
  private best = new Int32Array(1024);
  private used = new Int32Array(1024);
  private prefix = new Int32Array(1024);
  private lastReferences: readonly TextInfo[] = [];

  private hash(a: number, b: number): number {
    let h = Math.imul(a ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77);
    h ^= h >>> 16;
    return h & (this.capacity - 1);
  }

  private find(a: number, b: number): number {
    const mask = this.capacity - 1;
    let i = this.hash(a, b);
    while (this.slotGeneration[i] === this.generation) {
      if (this.keyA[i] === a && this.keyB[i] === b) return this.value[i];
      i = (i + 1) & mask;
    }
    return -1;
  }

  private insert(a: number, b: number, id: number): void {
    const mask = this.capacity - 1;
    let i = this.hash(a, b);
    while (this.slotGeneration[i] === this.generation) i = (i + 1) & mask;
    this.slotGeneration[i] = this.generation;
    this.keyA[i] = a;
    this.keyB[i] = b;
    this.value[i] = id;
  }

  private intern(a: number, b: number): number {
    const found = this.find(a, b);
    if (found !== -1) return found;
    if ((this.size + 1) * 2 > this.capacity) this.rehash();
    const id = this.size++;
    if (id >= this.best.length) {
      const grow = (x: Int32Array) => {
        const y = new Int32Array(x.length * 2);
        y.set(x);
        return y;
      };
      this.current = grow(this.current);
      this.best = grow(this.best);
      this.used = grow(this.used);
    }
    this.best[id] = 0;
    this.current[id] = 0;
    this.used[id] = 0;
    this.insert(a, b, id);
    return id;
  }

  private rehash(): void {
    const { keyA, keyB, value, slotGeneration, generation } = this;
    this.capacity *= 2;
    this.keyA = new Int32Array(this.capacity);
    this.keyB = new Int32Array(this.capacity);
    this.value = new Int32Array(this.capacity);
    this.slotGeneration = new Int32Array(this.capacity);
    this.generation = 1;
    for (let i = 0; i < value.length; i++) if (slotGeneration[i] === generation) this.insert(keyA[i], keyB[i], value[i]);
  }

  private scratch(length: number): void {
    if (this.prefix.length < length) this.prefix = new Int32Array(length * 2);
  }

  load(references: readonly TextInfo[]): void {
    const last = this.lastReferences;
    if (references.length === last.length && references.every((r, i) => r === last[i])) {
      this.used.fill(0, 0, this.size);
      return;
    }
    this.size = 0;
    if (++this.generation >= 2 ** 30) {
      this.slotGeneration.fill(0);
      this.generation = 1;
    }
    for (const ref of references) this.addReference(ref);
    this.lastReferences = references.slice();
  }

  private addReference(text: TextInfo): void {
    const tokens = text.ids;
    const mask = text.mask!;
    this.scratch(tokens.length);
    const prefix = this.prefix;
    const seen: number[] = [];
    for (let n = 1; n <= ORDER; n++) {
      const positions = tokens.length - n + 1;
      const bit = 1 << (n - 1);
      for (let i = 0; i < positions; i++) {
        const id = this.intern(n === 1 ? ROOT : prefix[i], tokens[i + n - 1]);
        prefix[i] = id;
        if (mask[i] & bit) continue;
        if (this.current[id]++ === 0) seen.push(id);
      }
    }
    for (const id of seen) {
      if (this.current[id] > this.best[id]) this.best[id] = this.current[id];
      this.current[id] = 0;
    }
  }

  /** Writes clipped matches [0..3] and max(1, counted n-grams) [4..7] of the hypothesis. */
  match(text: TextInfo, out: Float64Array, offset: number): void {
    const tokens = text.ids;
    const mask = text.mask!;
    this.scratch(tokens.length);
    const prefix = this.prefix;
    for (let n = 1; n <= ORDER; n++) {
      const positions = tokens.length - n + 1;
      const bit = 1 << (n - 1);
      let matched = 0;
      let total = 0;
      for (let i = 0; i < positions; i++) {
        const t = tokens[i + n - 1];
        const p = n === 1 ? ROOT : prefix[i];
        const id = p === -1 ? -1 : this.find(p, t);
        prefix[i] = id;
        if (mask[i] & bit) continue;
        total++;
        if (id !== -1 && this.used[id] < this.best[id]) {
          this.used[id]++;
          matched++;
        }
      }
      out[offset + n - 1] = matched;
      out[offset + ORDER + n - 1] = Math.max(1, total);
    }
  }
}

export class CrystalBleu implements Metric<CrystalRefInfo> {
  readonly name = 'CrystalBLEU';
  readonly statsSize = 2 * ORDER + 2;
  /** The k of the ignored set; with an n-gram file, fixed when the file is read (its own k, or the k given). */
  k: number;
  readonly tokenize: CrystalBleuTokenizer;
  private readonly options: CrystalBleuOptions;
  private readonly vocabulary = new WordIds();
  private readonly tokenCache = new BoundedCache<TextInfo>();
  private counter: NgramCounter | null = null;
  /** Distinct references counted so far (corpus = references). */
  private counted: Set<string> | null = null;
  private trie: IgnoredTrie | null = null;
  private matcher: IgnoringMatcher | null = null;
  private ignoredList: [string[], number][] = [];
  private setHash = '';

  constructor(options: CrystalBleuOptions = {}, readonly spec = 'crystalbleu') {
    this.options = options;
    this.k = options.k ?? CRYSTALBLEU_DEFAULT_K;
    this.tokenize = options.tokenize ?? 'code';
    if (!Number.isInteger(this.k) || this.k < 0) throw new UsageError(`crystalbleu: k must be an integer >= 0, not ${this.k}`);
    const sources = [options.corpusFile, options.corpusText, options.ngramsFile, options.ngrams].filter((x) => x !== undefined).length;
    if (sources > 1) throw new UsageError('crystalbleu: give at most one of corpus=FILE and ngrams=FILE');
    if (this.corpusKind === 'references') {
      this.counter = new NgramCounter();
      this.counted = new Set();
    }
  }

  private get corpusKind(): 'references' | 'file' | 'ngrams' {
    const o = this.options;
    return o.ngramsFile !== undefined || o.ngrams !== undefined ? 'ngrams' : o.corpusFile !== undefined || o.corpusText !== undefined ? 'file' : 'references';
  }

  signature(nrefs: number | 'var'): string {
    // A set that can no longer change is fixed here, so that a report made from partial statistics (scoring
    // threads) still names it.
    if (!this.trie && (this.corpusKind !== 'references' || this.fitted)) this.freeze();
    const o = this.options;
    const corpus = this.corpusKind === 'references' ? 'refs' : this.corpusKind === 'file' ? (o.corpusFile ? `file` : 'text') : 'ngrams-file';
    const set = this.trie ? `${this.trie.count}@${this.setHash}` : 'pending';
    return `nrefs:${nrefs}|k:${this.k}|corpus:${corpus}|ignored:${set}|tok:${this.tokenize}|weights:0.25/0.25/0.25/0.25|smooth:none|impl:crystalbleu-nltk-3.8|version:${VERSION}`;
  }

  /** Tokens of a text (the code tokenizer of "Out of the BLEU", or Python's `str.split()`). */
  tokens(text: string): string[] {
    return this.tokenize === 'code' ? codeTokens(text) : pySplit(text);
  }

  private text(text: string): TextInfo {
    return this.tokenCache.getOrCompute(text, (t) => ({ ids: this.vocabulary.encode(this.tokens(t), true), mask: null }));
  }

  private masked(info: TextInfo): TextInfo {
    if (!info.mask) info.mask = this.trie!.mask(info.ids);
    return info;
  }

  /** Loads the corpus file or n-gram file (the registry's `ready`); the set is built at the first scored segment. */
  async ready(): Promise<void> {
    if (this.corpusKind !== 'references') this.freeze();
  }

  /** Counts the references of a whole input before scoring (a streamed input's first pass). */
  fitReferences(references: Iterable<readonly string[]>): void {
    for (const refs of references) for (const ref of refs) this.count(ref);
    this.fitted = true;
  }

  private fitted = false;

  private count(ref: string): void {
    if (!this.counted || this.counted.has(ref)) return;
    if (this.trie) {
      throw new UsageError(
        'crystalbleu: the ignored n-grams of corpus=references depend on every reference, and a new reference came after scoring began (a streamed input); use corpus=FILE or ngrams=FILE, or count the references first (fitReferences, or score the input in memory)',
      );
    }
    this.counted.add(ref);
    this.counter!.add(this.text(ref).ids);
  }

  prepareReferences(refs: readonly string[]): CrystalRefInfo {
    for (const ref of refs) this.count(ref);
    const tokens = refs.map((r) => this.text(r));
    return { tokens, lengths: tokens.map((t) => t.ids.length) };
  }

  /** Fixes the ignored set (from the counted references, the corpus file or the n-gram file). */
  private freeze(): void {
    if (this.trie) return;
    const trie = new IgnoredTrie();
    const o = this.options;
    let list: [string[], number][];
    if (this.corpusKind === 'ngrams') {
      const file = o.ngrams ? undefined : readNgramsFile(o.ngramsFile!, this.tokenize);
      list = file ? file.ngrams : o.ngrams!.map((g) => [g.slice(), 0] as [string[], number]);
      // A file made with k = K holds the K most frequent n-grams (fewer only when its corpus had fewer).
      const made = file && Number.isInteger(file.k) ? file.k : list.length;
      if (o.k !== undefined && o.k > list.length && list.length >= made) {
        throw new UsageError(`crystalbleu: k=${o.k}, but ${o.ngramsFile ?? 'the n-gram list'} holds only the ${list.length} most frequent n-grams${file ? ` (written with k=${file.k})` : ''}; write it again with k >= ${o.k}, or leave k out`);
      }
      if (o.k !== undefined) list = list.slice(0, o.k);
      this.k = o.k ?? made;
    } else {
      let counter = this.counter;
      if (this.corpusKind === 'file') {
        counter = new NgramCounter();
        counter.add(this.vocabulary.encode(this.tokens(o.corpusText ?? readCorpus(o.corpusFile!)), true));
      }
      const { ids, counts } = counter!.mostCommon(this.k);
      list = ids.map((id, i) => [counter!.tokensOf(id).map((t) => this.word(t)), counts[i]]);
      this.counter = null;
    }
    for (const [tokens] of list) {
      if (tokens.length < 1 || tokens.length > ORDER) throw new InputError(`crystalbleu: an ignored n-gram must have 1 to ${ORDER} tokens, not ${tokens.length}`, o.ngramsFile);
      trie.add(Array.from(this.vocabulary.encode(tokens, true)));
    }
    this.ignoredList = list;
    this.setHash = createHash('sha256').update(JSON.stringify(list.map((g) => g[0]))).digest('hex').slice(0, 8);
    this.trie = trie;
    this.matcher = new IgnoringMatcher();
  }

  private word(id: number): string {
    return this.vocabulary.words[id];
  }

  /** The ignored n-grams, most frequent first (each its tokens), once the set is fixed. */
  ignoredNgrams(): string[][] {
    this.freeze();
    return this.ignoredList.map((g) => g[0]);
  }

  /** The JSON that `ngrams=FILE` reads back (`--write-ngrams`). */
  ngramsFile(): CrystalBleuNgramsFile {
    this.freeze();
    const o = this.options;
    const corpus = this.corpusKind === 'references' ? 'references' : this.corpusKind === 'file' ? (o.corpusFile ?? 'text') : (o.ngramsFile ?? 'list');
    return { kind: 'crystalbleu-ngrams', version: VERSION, k: this.k, tok: this.tokenize, corpus, ngrams: this.ignoredList.map(([g, c]) => [g.slice(), c]) };
  }

  segmentStatistics(hyp: string, refs: CrystalRefInfo, out: Float64Array, offset: number): void {
    this.freeze();
    const text = this.masked(this.text(hyp));
    for (const ref of refs.tokens) this.masked(ref);
    this.matcher!.load(refs.tokens);
    this.matcher!.match(text, out, offset);
    const hypLen = text.ids.length;
    out[offset + 2 * ORDER] = hypLen;
    // NLTK closest_ref_length: min by (|ref - hyp|, ref).
    let closest = Infinity;
    for (const len of refs.lengths) {
      const d = Math.abs(len - hypLen);
      const dc = Math.abs(closest - hypLen);
      if (d < dc || (d === dc && len < closest)) closest = len;
    }
    out[offset + 2 * ORDER + 1] = Number.isFinite(closest) ? closest : 0;
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return 100 * this.fraction(stats);
  }

  /**
   * `corpus_bleu` from summed statistics on the reference's 0-1 scale: bp * exp(fsum(w * log(p_n))), a zero
   * precision replaced by the smallest double (method0), 0 without a unigram match. exp and log are correctly
   * rounded, as glibc's (CPython's `math`) are, so the value is the reference's to the last bit.
   */
  fraction(stats: ArrayLike<number>): number {
    if (stats[0] === 0) return 0;
    const hypLen = stats[2 * ORDER];
    const refLen = stats[2 * ORDER + 1];
    const bp = hypLen > refLen ? 1 : hypLen === 0 ? 0 : exactExp(1 - refLen / hypLen);
    const logs: number[] = [];
    for (let n = 0; n < ORDER; n++) logs.push(0.25 * exactLog(stats[n] !== 0 ? stats[n] / stats[ORDER + n] : FLOAT_MIN));
    return bp * exactExp(fsum(logs));
  }
}

function readCorpus(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError(`crystalbleu corpus=${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** Reads and checks an n-gram file written by `ngramsFile()`. */
export function readNgramsFile(path: string, tokenize?: CrystalBleuTokenizer): CrystalBleuNgramsFile {
  let parsed: CrystalBleuNgramsFile;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(code ? `cannot read the crystalbleu n-gram file: ${code}` : `not a crystalbleu n-gram file (invalid JSON): ${(e as Error).message}`, path);
  }
  const ok = parsed && parsed.kind === 'crystalbleu-ngrams' && Array.isArray(parsed.ngrams) && parsed.ngrams.every((g) => Array.isArray(g) && Array.isArray(g[0]) && g[0].every((t) => typeof t === 'string') && typeof g[1] === 'number');
  if (!ok) throw new InputError('not a crystalbleu n-gram file (expected {"kind": "crystalbleu-ngrams", "ngrams": [[tokens, count], ...]})', path);
  if (tokenize && parsed.tok && parsed.tok !== tokenize) throw new UsageError(`crystalbleu: ${path} holds n-grams of tok=${parsed.tok}, but this run uses tok=${tokenize}`);
  return parsed;
}
