import { corpusStatistics, nrefsOf, prepareAll, sumRows, type Metric } from './metrics/metric.js';
import { parseMetric } from './metrics/registry.js';
import type { SystemInput } from './score.js';
import {
  approximateRandomizationTest,
  bootstrapDraws,
  DEFAULT_SEED,
  estimateCi,
  pairedBootstrapTest,
  randomizationSelections,
  resampledScores,
} from './stats/resampling.js';

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
}

export interface ComparisonReport {
  test: PairedTestKind;
  samples: number;
  seed: number;
  systems: { name: string; scores: ComparisonScore[] }[];
}

/** sacrebleu adds the test and seed right after the number of references. */
function testSignature(signature: string, test: PairedTestKind, samples: number, seed: number): string {
  const i = signature.indexOf('|');
  return `${signature.slice(0, i)}|${test}:${samples}|seed:${seed}${signature.slice(i)}`;
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
  if (input.systems.length < 2) throw new Error('compare needs a baseline and at least one system');
  const metrics = input.metrics.map((m) => (typeof m === 'string' ? parseMetric(m) : m));
  for (const m of metrics) await m.ready?.();
  const samples = input.samples ?? DEFAULT_SAMPLES[input.test];
  const seed = input.seed ?? DEFAULT_SEED;
  const n = input.references.length;
  for (const s of input.systems) {
    if (s.hypotheses.length !== n) throw new Error(`system ${s.name}: ${s.hypotheses.length} hypotheses but ${n} references`);
  }
  // One draw serves every system and metric, as in sacrebleu (each test re-seeds the same generator).
  const draws = input.test === 'bs' ? bootstrapDraws(n, samples, seed) : null;
  const selections = input.test === 'ar' ? randomizationSelections(n, samples, seed) : null;
  const report: ComparisonReport = { test: input.test, samples, seed, systems: input.systems.map((s) => ({ name: s.name, scores: [] })) };
  const total = metrics.length * input.systems.length;
  let done = 0;
  for (const metric of metrics) {
    const refInfos = prepareAll(metric, input.references);
    const signature = testSignature(metric.signature(nrefsOf(input.references)), input.test, samples, seed);
    const baseline = corpusStatistics(metric, input.systems[0].hypotheses, refInfos);
    const baselineScore = metric.scoreFromStatistics(sumRows(baseline));
    const single = metric.float32Scores === true;
    // The baseline's own bootstrap confidence interval (paired bootstrap only; sacrebleu gives none with ar).
    const baselineScores = draws ? resampledScores(metric, baseline, draws, samples) : null;
    const baselineCi = baselineScores ? estimateCi(baselineScores, single) : { mean: null, ci: null };
    report.systems[0].scores.push({ metric: metric.spec, name: metric.name, score: baselineScore, ...baselineCi, p_value: null, signature });
    input.onProgress?.(++done, total);
    for (let s = 1; s < input.systems.length; s++) {
      const system = corpusStatistics(metric, input.systems[s].hypotheses, refInfos);
      const systemScore = metric.scoreFromStatistics(sumRows(system));
      const result =
        input.test === 'bs'
          ? pairedBootstrapTest(metric, system, baselineScore, systemScore, baselineScores!, draws!, samples)
          : approximateRandomizationTest(metric, baseline, system, baselineScore, systemScore, selections!, samples);
      report.systems[s].scores.push({ metric: metric.spec, name: metric.name, score: systemScore, mean: result.mean, ci: result.ci, p_value: result.pValue, signature });
      input.onProgress?.(++done, total);
    }
  }
  return report;
}
