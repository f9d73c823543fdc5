import { corpusCorrelation, exampleCorrelation, pairwiseKendall, type CorrelationSet } from './stats/meta.js';

/** Library entry point behind `codegauge meta`. */
export interface MetaReport {
  truth: string;
  metrics: {
    metric: string;
    /** Rows where both the truth and the metric are present. */
    n: number;
    corpus: CorrelationSet;
    example?: CorrelationSet & { groups: number };
    pairwise_kendall?: { tau: number; concordant: number; discordant: number; ties: number };
  }[];
}

export function metaEvaluate(input: {
  truthName: string;
  truth: (number | null)[];
  metrics: { name: string; values: (number | null)[] }[];
  groups?: string[];
  samples?: number;
  seed?: number;
}): MetaReport {
  const report: MetaReport = { truth: input.truthName, metrics: [] };
  for (const m of input.metrics) {
    const keep: number[] = [];
    input.truth.forEach((t, i) => {
      if (t !== null && m.values[i] !== null) keep.push(i);
    });
    if (keep.length < 2) throw new Error(`metric ${m.name}: fewer than 2 rows with both values`);
    const truth = keep.map((i) => input.truth[i]!);
    const values = keep.map((i) => m.values[i]!);
    const entry: MetaReport['metrics'][number] = {
      metric: m.name,
      n: keep.length,
      corpus: corpusCorrelation(truth, values, { samples: input.samples, seed: input.seed }),
    };
    if (input.groups) {
      const byGroup = new Map<string, { truth: number[]; metric: number[] }>();
      keep.forEach((i, k) => {
        const key = input.groups![i];
        let g = byGroup.get(key);
        if (!g) byGroup.set(key, (g = { truth: [], metric: [] }));
        g.truth.push(truth[k]);
        g.metric.push(values[k]);
      });
      const groups = [...byGroup.values()];
      entry.example = exampleCorrelation(groups, { samples: input.samples, seed: input.seed });
      entry.pairwise_kendall = pairwiseKendall(groups);
    }
    report.metrics.push(entry);
  }
  return report;
}
