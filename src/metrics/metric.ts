import { ExactSums } from '../stats/exact-sum.js';
import type { StatisticsMatrix, StatisticsScorer } from '../stats/statistics.js';
/**
 * The one scoring path shared by every metric, after sacrebleu's design: a segment becomes a vector of
 * sufficient statistics, a corpus score is computed from the element-wise sum of those vectors, and a sentence
 * score is the same computation on one segment's vector. Segment-averaged metrics (ROUGE, METEOR) use the
 * statistics [segment score, 1], so their corpus score is the mean. Bootstrap resampling reuses the same matrix.
 */
export interface Metric<RefInfo = unknown> extends StatisticsScorer {
  /** Display name, e.g. `BLEU`, `chrF2++`, `ROUGE-L`. */
  readonly name: string;
  /** The metric spec this instance was built from, e.g. `bleu:tok=code`. */
  readonly spec: string;
  /** Length of one segment's statistics vector. */
  readonly statsSize: number;
  /** Reproducibility signature for a run with `nrefs` references per segment ('var' when it varies). */
  signature(nrefs: number | 'var'): string;
  /** Preprocesses the references of one segment; cached so that several systems share the work. */
  prepareReferences(refs: readonly string[]): RefInfo;
  /** Writes the sufficient statistics of one segment into `out` at `offset`. */
  segmentStatistics(hyp: string, refs: RefInfo, out: Float64Array, offset: number): void;
  /** Score on the 0-100 scale from (summed) statistics. */
  scoreFromStatistics(stats: ArrayLike<number>): number;
  /**
   * A sentence score in a score report where it differs from the corpus computation on one segment (BLEU: with
   * effective order, as sacrebleu's CLI computes sentence scores), with its own signature.
   */
  sentenceScoreFromStatistics?(stats: ArrayLike<number>): number;
  sentenceSignature?(nrefs: number | 'var'): string;
  /**
   * The score as sacrebleu computes it during resampling, where statistics are float32 and NumPy does the
   * arithmetic in single precision (BLEU and chrF only; used for bit-identical bootstrap results).
   */
  float32Score?(stats: ArrayLike<number>): number;
  /** Whether those resampled scores are themselves float32 (chrF), so that their mean and CI are taken in float32. */
  readonly float32Scores?: boolean;
  /** Named parts of the score (0-100), for metrics made of components (CodeBLEU). */
  components?(stats: ArrayLike<number>): Record<string, number>;
  /** Counts or facts about a corpus beyond its score (RUBY: segments per level). */
  summary?(stats: ArrayLike<number>): Record<string, number>;
  /** A label for one segment (RUBY: the level used). */
  segmentLabel?(row: ArrayLike<number>): string;
  /**
   * Sees every reference of the input before scoring, for metrics whose weights depend on the whole reference set
   * (CrystalBLEU's default corpus, CodeBERTScore idf=yes); a streamed input is read twice for them.
   */
  fitReferences?(references: Iterable<readonly string[]>): void;
  /** Loads what the metric needs (grammars, word lists); awaited once before scoring. */
  ready?(): Promise<void>;
}

export type { StatisticsMatrix } from '../stats/statistics.js';

export function nrefsOf(references: readonly (readonly string[])[]): number | 'var' {
  if (references.length === 0) return 1;
  const first = references[0].length;
  return references.every((r) => r.length === first) ? first : 'var';
}

export function prepareAll<R>(metric: Metric<R>, references: readonly (readonly string[])[]): R[] {
  return references.map((refs) => metric.prepareReferences(refs));
}

export function corpusStatistics<R>(metric: Metric<R>, hypotheses: readonly string[], refInfos: readonly R[]): StatisticsMatrix {
  if (hypotheses.length !== refInfos.length) {
    throw new Error(`${metric.name}: ${hypotheses.length} hypotheses but ${refInfos.length} reference sets`);
  }
  const size = metric.statsSize;
  const data = new Float64Array(hypotheses.length * size);
  for (let i = 0; i < hypotheses.length; i++) metric.segmentStatistics(hypotheses[i], refInfos[i], data, i * size);
  return { rows: hypotheses.length, size, data };
}

/**
 * Sums the rows named by `indices` (all rows when omitted). The sum of all rows is exact and then rounded, so it
 * does not depend on the order of the rows (the same corpus score however a corpus is split); drawn rows
 * (resampling) take the plain running sum.
 */
export function sumRows(matrix: StatisticsMatrix, indices?: ArrayLike<number>): Float64Array {
  const { size, data } = matrix;
  if (!indices) {
    // Integer statistics (counts) whose magnitudes add up to less than 2^53 sum exactly in plain doubles, in any
    // order: the same values as the exact sums, without keeping partials per element.
    const total = new Float64Array(size);
    let magnitude = 0;
    let integers = true;
    const n = matrix.rows * size;
    for (let i = 0; i < n; i += size) {
      for (let k = 0; k < size; k++) {
        const x = data[i + k];
        total[k] += x;
        magnitude += x < 0 ? -x : x;
        if (integers && !Number.isInteger(x)) integers = false;
      }
    }
    if (integers && magnitude < 2 ** 53) return total;
    const sums = new ExactSums(size);
    for (let r = 0; r < matrix.rows; r++) sums.add(data.subarray(r * size, (r + 1) * size));
    return sums.values();
  }
  const total = new Float64Array(size);
  for (let r = 0; r < indices.length; r++) {
    const base = indices[r] * size;
    for (let k = 0; k < size; k++) total[k] += data[base + k];
  }
  return total;
}

export function rowOf(matrix: StatisticsMatrix, row: number): Float64Array {
  return matrix.data.subarray(row * matrix.size, (row + 1) * matrix.size);
}

export interface CorpusResult {
  metric: string;
  name: string;
  score: number;
  signature: string;
  components?: Record<string, number>;
  details?: Record<string, number>;
  segments?: number[];
  segmentDetails?: string[];
  statistics: StatisticsMatrix;
}

/** Corpus score (and optionally sentence scores) of one system. */
export function scoreCorpus<R>(
  metric: Metric<R>,
  hypotheses: readonly string[],
  references: readonly (readonly string[])[],
  options: { segments?: boolean; refInfos?: readonly R[] } = {},
): CorpusResult {
  const refInfos = options.refInfos ?? prepareAll(metric, references);
  const statistics = corpusStatistics(metric, hypotheses, refInfos);
  const result: CorpusResult = {
    metric: metric.spec,
    name: metric.name,
    score: metric.scoreFromStatistics(sumRows(statistics)),
    signature: metric.signature(nrefsOf(references)),
    statistics,
  };
  if (metric.components) result.components = metric.components(sumRows(statistics));
  if (metric.summary) result.details = metric.summary(sumRows(statistics));
  if (options.segments) {
    result.segments = Array.from({ length: statistics.rows }, (_, i) => metric.scoreFromStatistics(rowOf(statistics, i)));
    if (metric.segmentLabel) result.segmentDetails = Array.from({ length: statistics.rows }, (_, i) => metric.segmentLabel!(rowOf(statistics, i)));
  }
  return result;
}

/** One statistics row per size, reused by sentence scores (called once per segment, often in a loop). */
const sentenceRows = new Map<number, Float64Array>();
let sentenceRowBusy = false;

/** Sentence-level score of one hypothesis against its references: the corpus path on one segment. */
export function scoreSentence<R>(metric: Metric<R>, hypothesis: string, references: readonly string[]): number {
  const size = metric.statsSize;
  // A metric that scores sentences inside its own statistics gets a row of its own.
  const reuse = !sentenceRowBusy;
  let out = reuse ? sentenceRows.get(size) : undefined;
  if (out === undefined) {
    out = new Float64Array(size);
    if (reuse) sentenceRows.set(size, out);
  } else out.fill(0);
  if (reuse) sentenceRowBusy = true;
  try {
    metric.segmentStatistics(hypothesis, metric.prepareReferences(references), out, 0);
    return metric.scoreFromStatistics(out);
  } finally {
    if (reuse) sentenceRowBusy = false;
  }
}

/** Helper for segment-averaged metrics: statistics are [score, 1]. */
export const MEAN_STATS_SIZE = 2;
export function meanScore(stats: ArrayLike<number>): number {
  return stats[1] > 0 ? stats[0] / stats[1] : 0;
}
