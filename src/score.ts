import { parseMetric } from './metrics/registry.js';
import { prepareAll, scoreCorpus, type Metric } from './metrics/metric.js';

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
}

export interface ScoreReport {
  systems: { name: string; scores: MetricScore[] }[];
}

export async function scoreSystems(input: {
  references: readonly (readonly string[])[];
  systems: readonly SystemInput[];
  metrics: readonly (string | Metric<any>)[];
  segments?: boolean;
}): Promise<ScoreReport> {
  const metrics = input.metrics.map((m) => (typeof m === 'string' ? parseMetric(m) : m));
  for (const m of metrics) await m.ready?.();
  for (const s of input.systems) {
    if (s.hypotheses.length !== input.references.length) {
      throw new Error(`system ${s.name}: ${s.hypotheses.length} hypotheses but ${input.references.length} references`);
    }
  }
  const report: ScoreReport = { systems: input.systems.map((s) => ({ name: s.name, scores: [] })) };
  for (const metric of metrics) {
    // References are preprocessed once per metric and shared by all systems.
    const refInfos = prepareAll(metric, input.references);
    input.systems.forEach((system, i) => {
      const r = scoreCorpus(metric, system.hypotheses, input.references, { segments: input.segments, refInfos });
      const entry: MetricScore = { metric: r.metric, name: r.name, score: r.score, signature: r.signature };
      if (r.components) entry.components = r.components;
      if (r.details) entry.details = r.details;
      if (r.segmentDetails) entry.segment_details = r.segmentDetails;
      if (r.segments) entry.segments = r.segments;
      report.systems[i].scores.push(entry);
    });
  }
  return report;
}
