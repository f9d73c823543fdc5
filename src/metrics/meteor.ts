import { codeTokens } from '../text/code-tokenizer.js';
import { stemWord } from '../text/porter.js';
import { pySplit } from '../compat/python-strings.js';
import { WordNet, type WordNetVersion } from '../text/wordnet.js';
import { BoundedCache } from './bounded-cache.js';
import { VERSION } from '../version.js';
import { MEAN_STATS_SIZE, meanScore, type Metric } from './metric.js';

/**
 * METEOR as NLTK 3.8 `meteor_score` computes it: lowercase, then exact, Porter-stem and WordNet-synonym
 * matching stages (each pairs the hypothesis word, from the last, with the last unmatched reference word that
 * fits), fragmentation penalty on chunks; the best score over references.
 */
export type MeteorTokenizer = 'ws' | 'code';

export interface MeteorOptions {
  tokenize?: MeteorTokenizer;
  alpha?: number;
  beta?: number;
  gamma?: number;
  wordnet?: WordNetVersion;
}

export interface MeteorAlignment {
  /** (hypothesis index, reference index) pairs sorted by hypothesis index. */
  matches: [number, number][];
  chunks: number;
  score: number;
}

/**
 * Words as small integers, per WordNet version and shared by every METEOR instance of the process: each token is
 * lowercased and interned once, and each word's Porter stem and WordNet synonym set are computed once, as ids, so
 * that aligning is integer work on typed arrays. Bounded: past LEXICON_WORDS everything is forgotten between
 * segments and the generation moves on (ids cached elsewhere carry the generation they belong to).
 */
const LEXICON_WORDS = 1 << 17;

class Lexicon {
  generation = 0;
  /** head[word id]: the last not yet matched reference position (in the stage's list) with that key, or -1. */
  head = new Int32Array(1024).fill(-1);
  private stems = new Int32Array(1024).fill(-1);
  private synonyms: (Int32Array | undefined)[] = [];
  private words: string[] = [];
  private readonly ids = new Map<string, number>();
  private readonly tokenIds = new Map<string, number>();
  private wordnet: WordNet | null = null;

  constructor(readonly version: WordNetVersion) {}

  /** Called between segments only. */
  checkBound(): void {
    if (this.words.length < LEXICON_WORDS && this.tokenIds.size < LEXICON_WORDS) return;
    this.ids.clear();
    this.tokenIds.clear();
    this.words = [];
    this.synonyms = [];
    this.stems = new Int32Array(1024).fill(-1);
    this.head = new Int32Array(1024).fill(-1);
    this.generation++;
  }

  private wordId(word: string): number {
    let id = this.ids.get(word);
    if (id === undefined) {
      id = this.words.length;
      this.words.push(word);
      this.ids.set(word, id);
      if (id >= this.stems.length) {
        const stems = new Int32Array(2 * this.stems.length).fill(-1);
        stems.set(this.stems);
        this.stems = stems;
        const head = new Int32Array(2 * this.head.length).fill(-1);
        head.set(this.head);
        this.head = head;
      }
    }
    return id;
  }

  /** The id of a token's lowercase form (`str.lower()` as NLTK applies it; JavaScript's lowercasing, as before). */
  tokenId(token: string): number {
    let id = this.tokenIds.get(token);
    if (id === undefined) {
      id = this.wordId(token.toLowerCase());
      this.tokenIds.set(token, id);
    }
    return id;
  }

  stem(id: number): number {
    let s = this.stems[id];
    if (s < 0) {
      s = this.wordId(stemWord(this.words[id]));
      this.stems[id] = s;
    }
    return s;
  }

  /** The word itself plus every single-word lemma name of its WordNet synsets (NLTK `_enum_wordnetsyn_match`). */
  synonymsOf(id: number): Int32Array {
    let syn = this.synonyms[id];
    if (!syn) {
      this.wordnet ??= WordNet.load(this.version);
      const set = new Set<number>();
      for (const name of this.wordnet.synonymLemmaNames(this.words[id])) if (!name.includes('_')) set.add(this.wordId(name));
      set.add(id);
      syn = Int32Array.from(set);
      this.synonyms[id] = syn;
    }
    return syn;
  }
}

const lexicons = new Map<WordNetVersion, Lexicon>();

function lexiconOf(version: WordNetVersion): Lexicon {
  let lex = lexicons.get(version);
  if (!lex) lexicons.set(version, (lex = new Lexicon(version)));
  return lex;
}

/**
 * Scratch arrays of the alignment, grown as needed (one alignment runs at a time in a thread). The first size fits
 * code-sized texts: growing later, after V8 has optimized the alignment, would throw that code away (a path it has
 * not seen) and compile it again, which in a short process costs more than the memory.
 */
const SCRATCH_WORDS = 1 << 13;
let hPos = new Int32Array(SCRATCH_WORDS);
let hKey = new Int32Array(SCRATCH_WORDS);
let rPos = new Int32Array(SCRATCH_WORDS);
let rKey = new Int32Array(SCRATCH_WORDS);
let prev = new Int32Array(SCRATCH_WORDS);
let matchOf = new Int32Array(SCRATCH_WORDS);
let synLists: Int32Array[] = [];

function ensureScratch(n: number, m: number): void {
  if (n > hPos.length || n > matchOf.length) {
    const size = Math.max(n, 2 * hPos.length);
    hPos = new Int32Array(size);
    hKey = new Int32Array(size);
    matchOf = new Int32Array(size);
  }
  if (m > rPos.length) {
    const size = Math.max(m, 2 * rPos.length);
    rPos = new Int32Array(size);
    rKey = new Int32Array(size);
    prev = new Int32Array(size);
  }
}

const EXACT = 0;
const STEM = 1;
const SYNONYM = 2;

/**
 * NLTK `_match_enums` (and the synonym stage's twin): for each remaining hypothesis word from the last, pair it
 * with the *last* remaining reference word it matches, then remove both. Reference positions are kept in one
 * linked list per key (`lex.head` and `prev`), so each match is found in O(keys of the word) instead of NLTK's
 * O(m) scan, with identical pairings. Works on the remaining lists hPos/hKey[0, n) and rPos/rKey[0, m), writes
 * matches into matchOf (hypothesis position -> reference position), compacts the lists and returns their lengths.
 */
function stage(lex: Lexicon, kind: number, n: number, m: number): [number, number] {
  if (kind === STEM) {
    for (let i = 0; i < n; i++) hKey[i] = lex.stem(hKey[i]);
    for (let j = 0; j < m; j++) rKey[j] = lex.stem(rKey[j]);
  } else if (kind === SYNONYM) {
    // Computed before the lists are built: new synonyms may grow lex.head.
    if (synLists.length < n) synLists = new Array<Int32Array>(n);
    for (let i = 0; i < n; i++) synLists[i] = lex.synonymsOf(hKey[i]);
  }
  const head = lex.head;
  for (let j = 0; j < m; j++) {
    const k = rKey[j];
    prev[j] = head[k];
    head[k] = j;
  }
  for (let i = n - 1; i >= 0; i--) {
    let j = -1;
    let key = hKey[i];
    if (kind !== SYNONYM) j = head[key];
    else {
      const list = synLists[i];
      for (let s = 0; s < list.length; s++) {
        const at = head[list[s]];
        if (at > j) {
          j = at;
          key = list[s];
        }
      }
    }
    if (j >= 0) {
      head[key] = prev[j];
      matchOf[hPos[i]] = rPos[j];
      hPos[i] = -1;
      rPos[j] = -1;
    }
  }
  for (let j = 0; j < m; j++) head[rKey[j]] = -1;
  let w = 0;
  for (let i = 0; i < n; i++) {
    if (hPos[i] >= 0) {
      hPos[w] = hPos[i];
      hKey[w++] = hKey[i];
    }
  }
  let v = 0;
  for (let j = 0; j < m; j++) {
    if (rPos[j] >= 0) {
      rPos[v] = rPos[j];
      rKey[v++] = rKey[j];
    }
  }
  if (kind === SYNONYM) synLists.fill(undefined as unknown as Int32Array, 0, n);
  return [w, v];
}

/** Aligns word ids; afterwards matchOf[0, hyp.length) holds each hypothesis position's reference position or -1. */
function alignIds(lex: Lexicon, hyp: Int32Array, ref: Int32Array): void {
  const n0 = hyp.length;
  const m0 = ref.length;
  ensureScratch(n0, m0);
  for (let i = 0; i < n0; i++) {
    hPos[i] = i;
    hKey[i] = hyp[i];
    matchOf[i] = -1;
  }
  for (let j = 0; j < m0; j++) {
    rPos[j] = j;
    rKey[j] = ref[j];
  }
  let [n, m] = stage(lex, EXACT, n0, m0);
  [n, m] = stage(lex, STEM, n, m);
  // NLTK carries the *stemmed* words into the synonym stage.
  if (n > 0 && m > 0) stage(lex, SYNONYM, n, m);
}

interface TokenIds {
  ids: Int32Array;
  generation: number;
}

export class Meteor implements Metric<string[]> {
  readonly name = 'METEOR';
  readonly statsSize = MEAN_STATS_SIZE;
  readonly tokenize: MeteorTokenizer;
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
  readonly wordnetVersion: WordNetVersion;
  private readonly lexicon: Lexicon;
  /** Token ids per text: a reference is shared by many hypotheses. */
  private readonly idCache = new BoundedCache<TokenIds>();

  constructor(
    options: MeteorOptions = {},
    readonly spec = 'meteor',
  ) {
    this.tokenize = options.tokenize ?? 'ws';
    this.alpha = options.alpha ?? 0.9;
    this.beta = options.beta ?? 3;
    this.gamma = options.gamma ?? 0.5;
    this.wordnetVersion = options.wordnet ?? '3.0';
    this.lexicon = lexiconOf(this.wordnetVersion);
  }

  signature(nrefs: number | 'var'): string {
    return `nrefs:${nrefs}|tok:${this.tokenize}|alpha:${this.alpha}|beta:${this.beta}|gamma:${this.gamma}|stages:exact+stem+wordnet|wordnet:${this.wordnetVersion}|impl:nltk-3.8|version:${VERSION}`;
  }

  tokens(text: string): string[] {
    return this.tokenize === 'code' ? codeTokens(text) : pySplit(text);
  }

  private idsOfTokens(tokens: readonly string[]): Int32Array {
    const ids = new Int32Array(tokens.length);
    for (let i = 0; i < tokens.length; i++) ids[i] = this.lexicon.tokenId(tokens[i]);
    return ids;
  }

  private idsOfText(text: string): Int32Array {
    const lex = this.lexicon;
    let entry = this.idCache.get(text);
    if (entry === undefined || entry.generation !== lex.generation) {
      entry = { ids: this.idsOfTokens(this.tokens(text)), generation: lex.generation };
      this.idCache.set(text, entry);
    }
    return entry.ids;
  }

  /** Score of the alignment in matchOf (NLTK's formula, term for term). */
  private scoreOf(hypLength: number, refLength: number): { matched: number; chunks: number; score: number } {
    let m = 0;
    let chunks = 0;
    let lastHyp = -2;
    let lastRef = -2;
    for (let i = 0; i < hypLength; i++) {
      const j = matchOf[i];
      if (j < 0) continue;
      // A chunk continues only where both sides move on by one from the previous match.
      if (!(i === lastHyp + 1 && j === lastRef + 1)) chunks++;
      lastHyp = i;
      lastRef = j;
      m++;
    }
    if (m === 0 || hypLength === 0 || refLength === 0) return { matched: m, chunks: 0, score: 0 };
    const precision = m / hypLength;
    const recall = m / refLength;
    const fmean = (precision * recall) / (this.alpha * precision + (1 - this.alpha) * recall);
    const penalty = this.gamma * (chunks / m) ** this.beta;
    return { matched: m, chunks, score: (1 - penalty) * fmean };
  }

  /** NLTK `single_meteor_score` on pre-tokenised input, with the alignment it found. */
  align(referenceTokens: readonly string[], hypothesisTokens: readonly string[]): MeteorAlignment {
    this.lexicon.checkBound();
    const hyp = this.idsOfTokens(hypothesisTokens);
    const ref = this.idsOfTokens(referenceTokens);
    alignIds(this.lexicon, hyp, ref);
    const { chunks, score } = this.scoreOf(hyp.length, ref.length);
    const matches: [number, number][] = [];
    for (let i = 0; i < hyp.length; i++) if (matchOf[i] >= 0) matches.push([i, matchOf[i]]);
    return { matches, chunks, score };
  }

  /** The reference texts themselves: their token ids are cached by text and looked up when scoring. */
  prepareReferences(refs: readonly string[]): string[] {
    return refs.slice();
  }

  segmentStatistics(hyp: string, refs: string[], out: Float64Array, offset: number): void {
    this.lexicon.checkBound();
    let best = 0;
    const hypIds = this.idsOfText(hyp);
    for (const r of refs) {
      const ref = this.idsOfText(r);
      alignIds(this.lexicon, hypIds, ref);
      best = Math.max(best, this.scoreOf(hypIds.length, ref.length).score);
    }
    out[offset] = 100 * best;
    out[offset + 1] = 1;
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return meanScore(stats);
  }
}
