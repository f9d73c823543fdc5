import type { StatisticsMatrix, StatisticsScorer } from './statistics.js';
import { fsum } from '../compat/python-strings.js';
import { numpyMean } from '../compat/numpy-float.js';
import { NumpyGenerator } from '../compat/numpy-random.js';
import { weightedSums } from './weighted-sums.js';

/**
 * Bootstrap resampling and approximate randomization with sacrebleu's semantics (sacrebleu/significance.py),
 * for every metric: a resample sums the chosen segments' sufficient statistics and scores the sum, so corpus
 * metrics resample statistics and segment-averaged metrics resample segment scores. BLEU and chrF additionally
 * reproduce sacrebleu's float32 resampling arithmetic, so that their means, CIs and p-values are bit-identical.
 */
export const DEFAULT_SEED = 12345;

/** `default_rng(seed).choice(n, size=(samples, n), replace=True)`, row-major. */
export function bootstrapDraws(n: number, samples: number, seed = DEFAULT_SEED): Int32Array {
  return new NumpyGenerator(seed).choice(n, samples * n);
}

/** `default_rng(seed).integers(2, size=(samples, n), dtype=bool)`, row-major. */
export function randomizationSelections(n: number, samples: number, seed = DEFAULT_SEED): Uint8Array {
  return new NumpyGenerator(seed).booleans(samples * n);
}

/**
 * Sum of the rows named by draws[offset .. offset+n). With `float32`, the sum NumPy computes on a float32 array
 * (row by row, rounding each addition); integer statistics whose sums stay below 2^24 need no rounding at all.
 */
function sumDrawn(matrix: StatisticsMatrix, draws: Int32Array, offset: number, n: number, out: Float64Array, float32Rounding: boolean): void {
  const { size, data } = matrix;
  out.fill(0);
  if (!float32Rounding) {
    for (let r = 0; r < n; r++) {
      const base = draws[offset + r] * size;
      for (let k = 0; k < size; k++) out[k] += data[base + k];
    }
    return;
  }
  for (let r = 0; r < n; r++) {
    const base = draws[offset + r] * size;
    for (let k = 0; k < size; k++) out[k] = Math.fround(out[k] + Math.fround(data[base + k]));
  }
}

/** Whether float32 sums of any n rows could differ from exact sums (some value non-integer or a sum >= 2^24). */
function needsFloat32Rounding(matrix: StatisticsMatrix): boolean {
  const { rows, size, data } = matrix;
  const max = new Float64Array(size);
  const n = rows * size;
  for (let i = 0; i < n; i += size) {
    for (let k = 0; k < size; k++) {
      const v = data[i + k];
      if (!Number.isInteger(v) || v < 0) return true;
      if (v > max[k]) max[k] = v;
    }
  }
  for (let k = 0; k < size; k++) if (max[k] * rows >= 2 ** 24) return true;
  return false;
}

/** Scores of `samples` bootstrap resamples of one system. */
export function resampledScores(metric: StatisticsScorer, matrix: StatisticsMatrix, draws: Int32Array, samples: number): Float64Array {
  const n = matrix.rows;
  const scores = new Float64Array(samples);
  const sum = new Float64Array(matrix.size);
  const single = metric.float32Score !== undefined;
  const rounding = single && needsFloat32Rounding(matrix);
  for (let s = 0; s < samples; s++) {
    sumDrawn(matrix, draws, s * n, n, sum, rounding);
    scores[s] = single ? metric.float32Score!(sum) : metric.scoreFromStatistics(sum);
  }
  return scores;
}

/** Resampled scores of several (metric, statistics) pairs over the same draws (see weighted-sums.ts). */
export function resampledScoresMany(entries: { metric: StatisticsScorer; matrix: StatisticsMatrix }[], draws: Int32Array, samples: number): Float64Array[] {
  if (entries.length === 0) return [];
  const n = entries[0].matrix.rows;
  // Metrics whose float32 sums need per-addition rounding (sums >= 2^24) take the exact sequential path.
  const exact = entries.map((e) => e.metric.float32Score !== undefined && needsFloat32Rounding(e.matrix));
  const summed = entries.filter((_, i) => !exact[i]);
  const width = summed.reduce((s, e) => s + e.matrix.size, 0);
  const sums = new Float64Array(samples * width);
  weightedSums(draws, n, 0, samples, summed.map((e) => e.matrix), sums);
  let column = 0;
  return entries.map((e, i) => {
    if (exact[i]) return resampledScores(e.metric, e.matrix, draws, samples);
    const scores = new Float64Array(samples);
    for (let s = 0; s < samples; s++) {
      const view = sums.subarray(s * width + column, s * width + column + e.matrix.size);
      scores[s] = e.metric.float32Score ? e.metric.float32Score(view) : e.metric.scoreFromStatistics(view);
    }
    column += e.matrix.size;
    return scores;
  });
}

/** sacrebleu `estimate_ci`: the mean of the resampled scores and half the width of their central 95% range. */
export function estimateCi(scores: Float64Array, single: boolean): { mean: number; ci: number } {
  const sorted = Float64Array.from(scores).sort();
  const n = sorted.length;
  const lowerIdx = Math.floor(n / 40);
  const upperIdx = n - lowerIdx - 1;
  const width = single ? Math.fround(sorted[upperIdx] - sorted[lowerIdx]) : sorted[upperIdx] - sorted[lowerIdx];
  const ci = single ? Math.fround(0.5 * width) : 0.5 * width;
  return { mean: numpyMean(sorted, single), ci }; // sacrebleu averages the sorted array
}

/**
 * The confidence interval of a single system as sacrebleu's `corpus_score(n_bootstrap=N)` reports it
 * (`Score.estimate_ci`): the same bounds, but the mean by `statistics.mean`, i.e. exact, then rounded.
 */
export function corpusConfidenceInterval(scores: Float64Array, single: boolean): { mean: number; ci: number } {
  const { ci } = estimateCi(scores, single);
  const mean = fsum(scores) / scores.length;
  return { mean: single ? Math.fround(mean) : mean, ci };
}

/** sacrebleu `_compute_p_value`: (count of values above the observed difference + 1) / (count + 1). */
function pValue(values: Float64Array, observed: number): number {
  let c = 0;
  for (const v of values) if (v > observed) c++;
  return (c + 1) / (values.length + 1);
}

export interface TestResult {
  mean: number | null;
  ci: number | null;
  pValue: number;
}

/** Paired bootstrap resampling (Koehn 2004) as sacrebleu runs it; `baselineScores` are the baseline's resamples. */
export function pairedBootstrapTest(
  metric: StatisticsScorer,
  baselineScore: number,
  systemScore: number,
  baselineScores: Float64Array,
  systemScores: Float64Array,
  samples: number,
): TestResult {
  const single = metric.float32Scores === true;
  const { mean, ci } = estimateCi(systemScores, single);
  const diffs = new Float64Array(samples);
  for (let s = 0; s < samples; s++) {
    const d = Math.abs(systemScores[s] - baselineScores[s]);
    diffs[s] = single ? Math.fround(d) : d;
  }
  const centre = numpyMean(diffs, single);
  for (let s = 0; s < samples; s++) diffs[s] = single ? Math.fround(diffs[s] - centre) : diffs[s] - centre;
  const observed = Math.abs(baselineScore - systemScore);
  return { mean, ci, pValue: pValue(diffs, single ? Math.fround(observed) : observed) };
}

/** Approximate randomization (Riezler & Maxwell 2005) as sacrebleu runs it: swap each segment's outputs at random. */
export function approximateRandomizationTest(
  metric: StatisticsScorer,
  baseline: StatisticsMatrix,
  system: StatisticsMatrix,
  baselineScore: number,
  systemScore: number,
  selections: Uint8Array,
  samples: number,
): TestResult {
  const n = baseline.rows;
  const size = baseline.size;
  const a = new Float64Array(size);
  const b = new Float64Array(size);
  const diffs = new Float64Array(samples);
  for (let s = 0; s < samples; s++) {
    a.fill(0);
    b.fill(0);
    const row = s * n;
    for (let i = 0; i < n; i++) {
      const base = i * size;
      if (selections[row + i]) {
        for (let k = 0; k < size; k++) {
          a[k] += baseline.data[base + k];
          b[k] += system.data[base + k];
        }
      } else {
        for (let k = 0; k < size; k++) {
          a[k] += system.data[base + k];
          b[k] += baseline.data[base + k];
        }
      }
    }
    diffs[s] = Math.abs(metric.scoreFromStatistics(a) - metric.scoreFromStatistics(b));
  }
  return { mean: null, ci: null, pValue: pValue(diffs, Math.abs(baselineScore - systemScore)) };
}
