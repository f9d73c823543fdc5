import { parseMetric } from './metrics/registry.js';
import { prepareAll, scoreCorpus, type Metric } from './metrics/metric.js';
import { bootstrapDraws, corpusConfidenceInterval, DEFAULT_SEED, resampledScores } from './stats/resampling.js';

/** Library entry point behind `codegauge score`: several systems, several metrics, one reference set. */
export interface SystemInput {
  name: string;
  hypotheses: readonly string[];
}

export interface MetricScore {
  metric: string;
  name: string;
  score: number;
  signature: string;
  components?: Record<string, number>;
  details?: Record<string, number>;
  segments?: number[];
  segment_details?: string[];
  /** With `confidence`: sacrebleu's bootstrap estimate (`--confidence`): mean of the resampled scores ± half the
   * width of their central 95% range. */
  confidence?: { mean: number; ci: number };
}

export interface ScoreReport {
  systems: { name: string; scores: MetricScore[] }[];
}

export async function scoreSystems(input: {
  references: readonly (readonly string[])[];
  systems: readonly SystemInput[];
  metrics: readonly (string | Metric<any>)[];
  segments?: boolean;
  /** Bootstrap confidence intervals as sacrebleu's `--confidence` (1000 samples, seed 12345 by default). */
  confidence?: { samples?: number; seed?: number };
}): Promise<ScoreReport> {
  const metrics = input.metrics.map((m) => (typeof m === 'string' ? parseMetric(m) : m));
  for (const m of metrics) await m.ready?.();
  for (const s of input.systems) {
    if (s.hypotheses.length !== input.references.length) {
      throw new Error(`system ${s.name}: ${s.hypotheses.length} hypotheses but ${input.references.length} references`);
    }
  }
  const report: ScoreReport = { systems: input.systems.map((s) => ({ name: s.name, scores: [] })) };
  const samples = input.confidence?.samples ?? 1000;
  const seed = input.confidence?.seed ?? DEFAULT_SEED;
  const draws = input.confidence ? bootstrapDraws(input.references.length, samples, seed) : null;
  for (const metric of metrics) {
    // References are preprocessed once per metric and shared by all systems.
    const refInfos = prepareAll(metric, input.references);
    input.systems.forEach((system, i) => {
      const r = scoreCorpus(metric, system.hypotheses, input.references, { segments: input.segments, refInfos });
      const entry: MetricScore = { metric: r.metric, name: r.name, score: r.score, signature: r.signature };
      if (draws) {
        entry.confidence = corpusConfidenceInterval(resampledScores(metric, r.statistics, draws, samples), metric.float32Scores === true);
        entry.signature = withResamplingSignature(r.signature, 'bs', samples, seed);
      }
      if (r.components) entry.components = r.components;
      if (r.details) entry.details = r.details;
      if (r.segmentDetails) entry.segment_details = r.segmentDetails;
      if (r.segments) entry.segments = r.segments;
      report.systems[i].scores.push(entry);
    });
  }
  return report;
}

/** sacrebleu puts the resampling settings right after the number of references: `nrefs:1|bs:1000|seed:12345|...`. */
export function withResamplingSignature(signature: string, test: 'bs' | 'ar', samples: number, seed: number): string {
  const i = signature.indexOf('|');
  return `${signature.slice(0, i)}|${test}:${samples}|seed:${seed}${signature.slice(i)}`;
}
