/**
 * What resampling needs of a metric, and nothing more: statistics rows and a way to score their sum. Metrics
 * implement this (src/metrics/metric.ts), so statistics never depend on the metrics themselves.
 */

/** Statistics for a whole corpus: row i holds segment i's vector. */
export interface StatisticsMatrix {
  readonly rows: number;
  readonly size: number;
  readonly data: Float64Array;
}

export interface StatisticsScorer {
  /** Score on the 0-100 scale from (summed) statistics. */
  scoreFromStatistics(stats: ArrayLike<number>): number;
  /** The score as sacrebleu computes it during resampling, in float32 (BLEU and chrF only). */
  float32Score?(stats: ArrayLike<number>): number;
  /** Whether those resampled scores are themselves float32 (chrF). */
  readonly float32Scores?: boolean;
}
