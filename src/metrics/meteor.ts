import { codeTokens } from '../text/code-tokenizer.js';
import { porterStem } from '../text/porter.js';
import { pySplit } from '../text/python.js';
import { WordNet, type WordNetVersion } from '../text/wordnet.js';
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

type Enum = [index: number, word: string];

/** NLTK `_match_enums` for one stage; `key` maps a word to what the stage compares. Mutates both lists. */
function matchStage(hyp: Enum[], ref: Enum[], matches: [number, number][], same: (h: string, r: string) => boolean): void {
  for (let i = hyp.length - 1; i >= 0; i--) {
    for (let j = ref.length - 1; j >= 0; j--) {
      if (same(hyp[i][1], ref[j][1])) {
        matches.push([hyp[i][0], ref[j][0]]);
        hyp.splice(i, 1);
        ref.splice(j, 1);
        break;
      }
    }
  }
}

/** Exact-string stage in O(n + m) with the same pairing as the quadratic scan: the last remaining equal word. */
function exactStage(hyp: Enum[], ref: Enum[], matches: [number, number][]): [Enum[], Enum[]] {
  const positions = new Map<string, number[]>();
  for (let j = 0; j < ref.length; j++) {
    const list = positions.get(ref[j][1]);
    if (list) list.push(j);
    else positions.set(ref[j][1], [j]);
  }
  const refUsed = new Uint8Array(ref.length);
  const hypUsed = new Uint8Array(hyp.length);
  for (let i = hyp.length - 1; i >= 0; i--) {
    const list = positions.get(hyp[i][1]);
    if (list && list.length > 0) {
      const j = list.pop()!;
      refUsed[j] = 1;
      hypUsed[i] = 1;
      matches.push([hyp[i][0], ref[j][0]]);
    }
  }
  return [hyp.filter((_, i) => !hypUsed[i]), ref.filter((_, j) => !refUsed[j])];
}

function countChunks(matches: [number, number][]): number {
  let chunks = 1;
  for (let i = 0; i < matches.length - 1; i++) {
    if (!(matches[i + 1][0] === matches[i][0] + 1 && matches[i + 1][1] === matches[i][1] + 1)) chunks++;
  }
  return chunks;
}

export class Meteor implements Metric<string[][]> {
  readonly name = 'METEOR';
  readonly statsSize = MEAN_STATS_SIZE;
  readonly tokenize: MeteorTokenizer;
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
  readonly wordnetVersion: WordNetVersion;
  private wordnet: WordNet | null = null;
  private readonly synonymCache = new Map<string, Set<string>>();

  constructor(
    options: MeteorOptions = {},
    readonly spec = 'meteor',
  ) {
    this.tokenize = options.tokenize ?? 'ws';
    this.alpha = options.alpha ?? 0.9;
    this.beta = options.beta ?? 3;
    this.gamma = options.gamma ?? 0.5;
    this.wordnetVersion = options.wordnet ?? '3.0';
  }

  signature(nrefs: number | 'var'): string {
    return `nrefs:${nrefs}|tok:${this.tokenize}|alpha:${this.alpha}|beta:${this.beta}|gamma:${this.gamma}|stages:exact+stem+wordnet|wordnet:${this.wordnetVersion}|impl:nltk-3.8|version:${VERSION}`;
  }

  tokens(text: string): string[] {
    return this.tokenize === 'code' ? codeTokens(text) : pySplit(text);
  }

  /** The hypothesis word itself plus every single-word lemma name of its WordNet synsets. */
  private synonyms(word: string): Set<string> {
    let set = this.synonymCache.get(word);
    if (!set) {
      this.wordnet ??= WordNet.load(this.wordnetVersion);
      set = new Set(this.wordnet.synonymLemmaNames(word).filter((n) => !n.includes('_')));
      set.add(word);
      this.synonymCache.set(word, set);
    }
    return set;
  }

  /** NLTK `single_meteor_score` on pre-tokenised input, with the alignment it found. */
  align(referenceTokens: readonly string[], hypothesisTokens: readonly string[]): MeteorAlignment {
    const hyp: Enum[] = hypothesisTokens.map((w, i) => [i, w.toLowerCase()]);
    const ref: Enum[] = referenceTokens.map((w, i) => [i, w.toLowerCase()]);
    const translationLength = hyp.length;
    const referenceLength = ref.length;
    const matches: [number, number][] = [];
    let [h, r] = exactStage(hyp, ref, matches);
    const hStem: Enum[] = h.map(([i, w]) => [i, porterStem(w)]);
    const rStem: Enum[] = r.map(([i, w]) => [i, porterStem(w)]);
    [h, r] = exactStage(hStem, rStem, matches);
    // NLTK carries the *stemmed* words into the synonym stage.
    matchStage(h, r, matches, (hw, rw) => this.synonyms(hw).has(rw));
    matches.sort((a, b) => a[0] - b[0]);
    const m = matches.length;
    if (m === 0 || translationLength === 0 || referenceLength === 0) return { matches, chunks: 0, score: 0 };
    const precision = m / translationLength;
    const recall = m / referenceLength;
    const fmean = (precision * recall) / (this.alpha * precision + (1 - this.alpha) * recall);
    const chunks = countChunks(matches);
    const penalty = this.gamma * (chunks / m) ** this.beta;
    return { matches, chunks, score: (1 - penalty) * fmean };
  }

  prepareReferences(refs: readonly string[]): string[][] {
    return refs.map((r) => this.tokens(r));
  }

  segmentStatistics(hyp: string, refs: string[][], out: Float64Array, offset: number): void {
    const hypTokens = this.tokens(hyp);
    let best = 0;
    for (const ref of refs) best = Math.max(best, this.align(ref, hypTokens).score);
    out[offset] = 100 * best;
    out[offset + 1] = 1;
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return meanScore(stats);
  }
}
