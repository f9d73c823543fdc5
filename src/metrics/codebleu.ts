import { UsageError } from '../errors.js';
import { readFileSync } from 'node:fs';
import { CodeAnalysisCache } from '../code/analysis-cache.js';
import { PairTable } from '../code/pair-table.js';
import { loadLanguage, type LanguageId } from '../code/languages.js';
import { fsum, isPyWhitespace, pyStrip } from '../compat/python-strings.js';
import { VERSION } from '../version.js';
import { BoundedCache } from './bounded-cache.js';
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

/** Past this many distinct tokens and n-grams the table starts afresh (cached texts carry their generation). */
const GRAM_LIMIT = 1 << 18;

/**
 * Tokens and word n-grams of orders 1-4 as dense integers (an n-gram is its (n-1)-gram's id extended by a token), so
 * that counting and clipping are array work with no string keys. Token sequences and n-gram ids correspond one to
 * one, as the space-joined keys of the string form did (tokens hold no whitespace).
 */
class GramTable {
  generation = 0;
  private tokens = new TokenTable();
  private pairs = new PairTable();
  private next = 0;
  private readonly freshId = () => this.fresh();
  /** Per id: 1 for a token that is a keyword (weight 1 in the weighted match, else 0.2). */
  keyword = new Uint8Array(1024);
  /** Per id scratch counts, all zero between uses. */
  scratch = new Int32Array(1024);

  constructor(private readonly keywords: Set<string>) {}

  /** Called between segments only. */
  bound(): void {
    if (this.next < GRAM_LIMIT) return;
    this.tokens = new TokenTable();
    this.pairs = new PairTable();
    this.next = 0;
    this.keyword = new Uint8Array(1024);
    this.scratch = new Int32Array(1024);
    this.generation++;
  }

  private fresh(): number {
    const id = this.next++;
    if (id >= this.scratch.length) {
      const scratch = new Int32Array(2 * this.scratch.length);
      scratch.set(this.scratch);
      this.scratch = scratch;
      const keyword = new Uint8Array(2 * this.keyword.length);
      keyword.set(this.keyword);
      this.keyword = keyword;
    }
    return id;
  }

  /** The ids of the whitespace-separated tokens of `text` (Python's `str.split()`). */
  tokenIds(text: string): Int32Array {
    return this.tokens.split(text, (word) => {
      const id = this.fresh();
      if (this.keywords.has(word)) this.keyword[id] = 1;
      return id;
    });
  }

  extend(prefix: number, token: number): number {
    return this.pairs.intern(prefix, token, this.freshId);
  }
}

/**
 * Token ids read straight from the text: Python's `str.split()` tokens, looked up in an open-addressing table hashed
 * on their characters, so that a token seen before costs no substring and no string hash.
 */
class TokenTable {
  private words: string[] = [];
  private wordIds: number[] = [];
  private hashes = new Int32Array(1024);
  private slots = new Int32Array(2048).fill(-1);
  private ids = new Int32Array(256);

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
    return this.ids.slice(0, count);
  }

  private idOf(text: string, start: number, end: number, hash: number, fresh: (word: string) => number): number {
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (let k = this.slots[slot]; k >= 0; k = this.slots[slot]) {
      if (this.hashes[k] === hash && sameChars(this.words[k], text, start, end)) return this.wordIds[k];
      slot = (slot + 1) & mask;
    }
    const k = this.words.length;
    const word = text.slice(start, end);
    this.words.push(word);
    const id = fresh(word);
    this.wordIds.push(id);
    if (k === this.hashes.length) {
      const grown = new Int32Array(2 * k);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[k] = hash;
    this.slots[slot] = k;
    if (2 * this.words.length > this.slots.length) {
      this.slots = new Int32Array(2 * this.slots.length).fill(-1);
      const m = this.slots.length - 1;
      for (let j = 0; j < this.words.length; j++) {
        let at = this.hashes[j] & m;
        while (this.slots[at] >= 0) at = (at + 1) & m;
        this.slots[at] = j;
      }
    }
    return id;
  }
}

function sameChars(word: string, text: string, start: number, end: number): boolean {
  if (word.length !== end - start) return false;
  for (let k = 0; k < word.length; k++) if (word.charCodeAt(k) !== text.charCodeAt(start + k)) return false;
  return true;
}

/** Python's `str.strip()`. */
function strip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isPyWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isPyWhitespace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** One order's n-grams of a text: distinct ids in order of first occurrence, with their counts. */
interface Grams {
  ids: Int32Array;
  counts: Int32Array;
}

/** What one text contributes in either role, computed once per text (a reference serves many hypotheses). */
interface TextGrams {
  /** The stripped code, as CodeBLEU parses it. */
  code: string;
  length: number;
  orders: Grams[];
  generation: number;
}

/** The reference texts of a segment (their n-grams and analyses are cached by text and looked up when scoring). */
interface CodeBleuRef {
  texts: string[];
}

/** Distinct n-grams of orders 1-4 with their counts, all in one buffer (thousands of texts are cached). */
function countGrams(table: GramTable, tokenIds: Int32Array): Grams[] {
  const L = tokenIds.length;
  let size = 0;
  for (let n = 1; n <= ORDER; n++) size += 2 * Math.max(0, L - n + 1);
  const buffer = new Int32Array(size); // ids and counts of every order, before duplicates are merged
  const spans: number[] = [];
  let used = 0;
  let ids = tokenIds;
  for (let n = 1; n <= ORDER; n++) {
    const count = Math.max(0, L - n + 1);
    if (n > 1) {
      // the n-gram at i is the (n-1)-gram at i extended by token i + n - 1
      const next = new Int32Array(count);
      for (let i = 0; i < count; i++) next[i] = table.extend(ids[i], tokenIds[i + n - 1]);
      ids = next;
    }
    const scratch = table.scratch;
    let distinct = 0;
    for (let i = 0; i < count; i++) if (scratch[ids[i]]++ === 0) buffer[used + distinct++] = ids[i];
    const gramIds = buffer.subarray(used, used + distinct);
    const counts = buffer.subarray(used + distinct, used + 2 * distinct);
    for (let k = 0; k < distinct; k++) {
      counts[k] = scratch[gramIds[k]];
      scratch[gramIds[k]] = 0;
    }
    spans.push(used, distinct);
    used += 2 * distinct;
  }
  const compact = used < size ? buffer.slice(0, used) : buffer;
  const orders: Grams[] = [];
  for (let n = 0; n < ORDER; n++) {
    const [at, distinct] = [spans[2 * n], spans[2 * n + 1]];
    orders.push({ ids: compact.subarray(at, at + distinct), counts: compact.subarray(at + distinct, at + 2 * distinct) });
  }
  return orders;
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
  private keywords: Set<string> | null = null;
  private analyses: CodeAnalysisCache | null = null;
  private readonly grams = new BoundedCache<TextGrams>();
  private table: GramTable | null = null;

  constructor(
    readonly language: LanguageId,
    weights: Partial<CodeBleuWeights> = {},
    readonly spec = `codebleu:lang=${language}`,
  ) {
    this.weights = { ngram: 0.25, weightedNgram: 0.25, syntax: 0.25, dataflow: 0.25, ...weights };
  }

  async ready(): Promise<void> {
    await loadLanguage(this.language);
    this.keywords ??= loadKeywords(this.language);
    this.analyses ??= new CodeAnalysisCache(this.language);
    this.table ??= new GramTable(this.keywords);
  }

  private get cache(): CodeAnalysisCache {
    if (!this.analyses) throw new UsageError('CodeBLEU: call and await metric.ready() before scoring (scoreSystems does it for you)');
    return this.analyses;
  }

  signature(nrefs: number | 'var'): string {
    const w = this.weights;
    return `nrefs:${nrefs}|lang:${this.language}|weights:${w.ngram}/${w.weightedNgram}/${w.syntax}/${w.dataflow}|tok:split|smooth:method1|dataflow:or-1|impl:codebleu-0.7.1|version:${VERSION}`;
  }

  private textGrams(text: string): TextGrams {
    const table = this.table!;
    let entry = this.grams.get(text);
    if (entry === undefined || entry.generation !== table.generation) {
      // The tokens of the stripped code are those of the text: split() ignores outer whitespace.
      const tokenIds = table.tokenIds(text);
      entry = { code: strip(text), length: tokenIds.length, orders: countGrams(table, tokenIds), generation: table.generation };
      this.grams.set(text, entry);
    }
    return entry;
  }

  prepareReferences(refs: readonly string[]): CodeBleuRef {
    return { texts: refs.slice() };
  }

  segmentStatistics(hypText: string, prepared: CodeBleuRef, out: Float64Array, o: number): void {
    const analyses = this.cache;
    const table = this.table!;
    // Between segments: the tables may start afresh here, never between a hypothesis and its references.
    table.bound();
    analyses.bound();
    const hyp = this.textGrams(hypText);
    const refs = prepared.texts.map((t) => this.textGrams(t));
    // n-gram precision, clipped by the maximum count over references.
    for (let n = 0; n < ORDER; n++) {
      const scratch = table.scratch;
      for (const r of refs) {
        const { ids, counts } = r.orders[n];
        for (let k = 0; k < ids.length; k++) if (counts[k] > scratch[ids[k]]) scratch[ids[k]] = counts[k];
      }
      let matched = 0;
      let total = 0;
      const { ids, counts } = hyp.orders[n];
      for (let k = 0; k < ids.length; k++) {
        total += counts[k];
        matched += Math.min(counts[k], scratch[ids[k]]);
      }
      for (const r of refs) for (const id of r.orders[n].ids) scratch[id] = 0;
      out[o + NG + n] = matched;
      out[o + NG + ORDER + n] = Math.max(1, total);
    }
    out[o + NG + 2 * ORDER] = hyp.length;
    let closest = Infinity;
    for (const t of refs) {
      const d = Math.abs(t.length - hyp.length);
      const best = Math.abs(closest - hyp.length);
      if (d < best || (d === best && t.length < closest)) closest = t.length;
    }
    out[o + NG + 2 * ORDER + 1] = closest;
    // Weighted n-gram recall, summed over references; the reference's n-grams in order of first occurrence, as the
    // reference implementation's dict iterates them (the weights of 0.2 make the float sums order-dependent).
    const keyword = table.keyword;
    for (let n = 0; n < ORDER; n++) {
      const scratch = table.scratch;
      const h = hyp.orders[n];
      for (let k = 0; k < h.ids.length; k++) scratch[h.ids[k]] = h.counts[k];
      let num = 0;
      let den = 0;
      for (const t of refs) {
        const { ids, counts } = t.orders[n];
        let clipped = 0;
        let all = 0;
        for (let k = 0; k < ids.length; k++) {
          const c = counts[k];
          const m = Math.min(c, scratch[ids[k]]);
          const w = n === 0 ? (keyword[ids[k]] === 1 ? 1 : 0.2) : 1;
          clipped += m * w;
          all += c * w;
        }
        num += clipped;
        den += Math.max(1, all);
      }
      for (let k = 0; k < h.ids.length; k++) scratch[h.ids[k]] = 0;
      out[o + WNG + n] = num;
      out[o + WNG + ORDER + n] = den;
    }
    out[o + WNG + 2 * ORDER] = hyp.length;
    out[o + WNG + 2 * ORDER + 1] = 2; // len([tokens, weights]), see the class comment
    // Syntax and data flow, against each reference in turn.
    const h = analyses.analyse(hyp.code);
    let synMatch = 0;
    let synTotal = 0;
    let dfMatch = 0;
    let dfTotal = 0;
    for (const t of refs) {
      const r = analyses.analyse(t.code);
      synMatch += analyses.subtreeMatches(h, r);
      synTotal += r.subtrees.length;
      if (r.dataflowEdges > 0) {
        dfTotal += r.dataflowEdges;
        // Each reference edge matches one unused equal hypothesis edge: min of the two counts per distinct edge.
        for (const [e, count] of r.dataflowCounts) dfMatch += Math.min(count, h.dataflowCounts.get(e) ?? 0);
      }
    }
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
