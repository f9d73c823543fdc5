import { codeTokens } from '../text/code-tokenizer.js';
import { porterStem } from '../text/porter.js';
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

type Enum = [index: number, word: string];

/**
 * One NLTK `_match_enums` stage: for each hypothesis word from the last, pair it with the *last* remaining
 * reference word it matches, then remove both. `matchKeys(word)` lists the reference words that match; indexing
 * reference positions by word makes this O(n * |keys|) instead of NLTK's O(n * m), with identical pairings.
 * Returns the unmatched hypothesis and reference words, in order.
 */
function greedyStage(
  hyp: Enum[],
  ref: Enum[],
  matches: [number, number][],
  matchKeys: (word: string) => Iterable<string>,
): [Enum[], Enum[]] {
  const positions = new Map<string, number[]>();
  for (let j = 0; j < ref.length; j++) {
    const list = positions.get(ref[j][1]);
    if (list) list.push(j);
    else positions.set(ref[j][1], [j]);
  }
  const refUsed = new Uint8Array(ref.length);
  const hypUsed = new Uint8Array(hyp.length);
  for (let i = hyp.length - 1; i >= 0; i--) {
    let bestList: number[] | null = null;
    let best = -1;
    for (const key of matchKeys(hyp[i][1])) {
      const list = positions.get(key);
      if (list && list.length > 0 && list[list.length - 1] > best) {
        best = list[list.length - 1];
        bestList = list;
      }
    }
    if (bestList) {
      bestList.pop();
      refUsed[best] = 1;
      hypUsed[i] = 1;
      matches.push([hyp[i][0], ref[best][0]]);
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
  private readonly synonymCache = new BoundedCache<Set<string>>(1 << 16);

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
    const same = (word: string) => [word];
    let [h, r] = greedyStage(hyp, ref, matches, same);
    const hStem: Enum[] = h.map(([i, w]) => [i, porterStem(w)]);
    const rStem: Enum[] = r.map(([i, w]) => [i, porterStem(w)]);
    [h, r] = greedyStage(hStem, rStem, matches, same);
    // NLTK carries the *stemmed* words into the synonym stage.
    if (h.length > 0 && r.length > 0) greedyStage(h, r, matches, (word) => this.synonyms(word));
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
