import { corpusStatistics, nrefsOf, prepareAll, sumRows, type Metric } from '../metrics/metric.js';
import { loadMetrics } from '../metrics/specs.js';
import { InputError, UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { checkResamplingSize, withResamplingSignature, type SystemInput } from './score.js';
import {
  approximateRandomizationTest,
  bootstrapDraws,
  DEFAULT_SEED,
  estimateCi,
  pairedBootstrapTest,
  randomizationSelections,
  resampledScoresMany,
} from '../stats/resampling.js';

/** Library entry point behind `codegauge compare`: significance of each system against the first (the baseline). */
export type PairedTestKind = 'bs' | 'ar';
export const DEFAULT_SAMPLES: Record<PairedTestKind, number> = { bs: 1000, ar: 10000 };

export interface ComparisonScore {
  metric: string;
  name: string;
  score: number;
  mean: number | null;
  ci: number | null;
  p_value: number | null;
  signature: string;
  /** Every hypothesis equals the baseline's: no difference to test, whatever the p-value says. */
  identical?: boolean;
  /**
   * Approximate randomization over d differing segments, 2^d < trials: the smallest p-value its 2^d patterns can
   * give (1/2^d). `p_value` stays sacrebleu's estimate (parity); tables show neither a value nor a star below this.
   */
  p_min?: number;
}

/** The smallest p-value approximate randomization can give over `differing` units, when it binds (2^d < trials). */
export function arPMin(differing: number, samples: number): number | undefined {
  return differing > 0 && differing < 30 && 2 ** differing < samples ? 1 / 2 ** differing : undefined;
}

export interface ComparisonReport {
  kind: 'compare';
  version: string;
  test: PairedTestKind;
  samples: number;
  seed: number;
  systems: { name: string; scores: ComparisonScore[] }[];
  /** Why some p-values deserve less trust than they seem to (too few segments, too few distinct resamples). */
  warnings: string[];
}

/** Below this many segments a paired test has little to resample: its p-values are rough, so say so. */
export const FEW_SEGMENTS = 30;

/** What limits the meaning of the p-values of one system against the baseline. */
function sampleWarnings(name: string, differing: number, n: number, test: PairedTestKind, samples: number): string[] {
  const out: string[] = [];
  if (differing === 0) return out;
  if (test === 'ar' && arPMin(differing, samples) !== undefined) {
    out.push(`${name}: approximate randomization over ${differing} differing segment(s) has only ${2 ** differing} distinct patterns; a p-value below ${(1 / 2 ** differing).toPrecision(2)} means nothing, so tables show that value instead`);
  } else if (n < FEW_SEGMENTS) {
    out.push(`${name}: only ${n} segments; a paired test on so few is rough, read its p-value with care`);
  }
  return out;
}

export async function compareSystems(input: {
  references: readonly (readonly string[])[];
  systems: readonly SystemInput[];
  metrics: readonly (string | Metric<any>)[];
  test: PairedTestKind;
  samples?: number;
  seed?: number;
  onProgress?: (done: number, total: number) => void;
}): Promise<ComparisonReport> {
  if (input.systems.length < 2) throw new UsageError('compare needs a baseline and at least one system');
  const metrics = await loadMetrics(input.metrics);
  for (const m of metrics) await m.ready?.();
  const samples = input.samples ?? DEFAULT_SAMPLES[input.test];
  const seed = input.seed ?? DEFAULT_SEED;
  const n = input.references.length;
  for (const s of input.systems) {
    if (s.hypotheses.length !== n) throw new InputError(`system ${s.name}: ${s.hypotheses.length} hypotheses but ${n} references`);
  }
  checkResamplingSize(samples, n);
  // One draw serves every system and metric, as in sacrebleu (each test re-seeds the same generator).
  const draws = input.test === 'bs' ? bootstrapDraws(n, samples, seed) : null;
  const selections = input.test === 'ar' ? randomizationSelections(n, samples, seed) : null;
  const report: ComparisonReport = { kind: 'compare', version: VERSION, test: input.test, samples, seed, systems: input.systems.map((s) => ({ name: s.name, scores: [] })), warnings: [] };
  const baseline = input.systems[0].hypotheses;
  const differing = input.systems.map((s) => s.hypotheses.reduce((c, h, i) => c + (h === baseline[i] ? 0 : 1), 0));
  for (let s = 1; s < input.systems.length; s++) {
    if (differing[s] === 0) report.warnings.push(`${input.systems[s].name} is identical to the baseline: no difference to test`);
    report.warnings.push(...sampleWarnings(input.systems[s].name, differing[s], n, input.test, samples));
  }
  const total = metrics.length * input.systems.length;
  let done = 0;
  // Statistics of every system under every metric.
  const prepared = metrics.map((metric) => {
    const refInfos = prepareAll(metric, input.references);
    const matrices = input.systems.map((system) => {
      const matrix = corpusStatistics(metric, system.hypotheses, refInfos);
      input.onProgress?.(++done, total);
      return matrix;
    });
    return { metric, matrices, scores: matrices.map((m) => metric.scoreFromStatistics(sumRows(m))) };
  });
  // Paired bootstrap: all resamples of all systems and metrics over the shared draws.
  const resampled = draws ? resampledScoresMany(prepared.flatMap((p) => p.matrices.map((matrix) => ({ metric: p.metric, matrix }))), draws, samples) : null;
  prepared.forEach(({ metric, matrices, scores }, mi) => {
    const signature = withResamplingSignature(metric.signature(nrefsOf(input.references)), input.test, samples, seed);
    const single = metric.float32Scores === true;
    const row = (s: number) => resampled![mi * input.systems.length + s];
    // The baseline's own bootstrap confidence interval (paired bootstrap only; sacrebleu gives none with ar).
    const baselineCi = resampled ? estimateCi(row(0), single) : { mean: null, ci: null };
    report.systems[0].scores.push({ metric: metric.spec, name: metric.name, score: scores[0], ...baselineCi, p_value: null, signature });
    for (let s = 1; s < input.systems.length; s++) {
      const result =
        input.test === 'bs'
          ? pairedBootstrapTest(metric, scores[0], scores[s], row(0), row(s), samples)
          : approximateRandomizationTest(metric, matrices[0], matrices[s], scores[0], scores[s], selections!, samples);
      const entry: ComparisonScore = { metric: metric.spec, name: metric.name, score: scores[s], mean: result.mean, ci: result.ci, p_value: result.pValue, signature };
      if (differing[s] === 0) entry.identical = true;
      const pMin = input.test === 'ar' ? arPMin(differing[s], samples) : undefined;
      if (pMin !== undefined) entry.p_min = pMin;
      report.systems[s].scores.push(entry);
    }
  });
  return report;
}
