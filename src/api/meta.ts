import { corpusCorrelation, exampleCorrelation, pairwiseKendall, type CorrelationSet } from '../stats/meta.js';
import { agreementByBin, bootstrapStudy, dropDuplicateSystems, synthesizeSystems, type AgreementBin, type StudyData } from '../stats/model-pairs.js';
import { PythonRandom } from '../compat/python-random.js';
import { InputError } from '../errors.js';
import { numericColumn, stringColumn, type Table } from '../io/table.js';
import { VERSION } from '../version.js';

/** Library entry point behind `codegauge meta`. */
export interface MetaReport {
  kind: 'meta';
  version: string;
  truth: string;
  metrics: {
    metric: string;
    /** Rows where both the truth and the metric are present. */
    n: number;
    corpus: CorrelationSet;
    example?: CorrelationSet & { groups: number };
    pairwise_kendall?: { tau: number; concordant: number; discordant: number; ties: number };
    /** Why some correlations are undefined (a constant column, a single group), in words. */
    notes?: string[];
  }[];
  model_pairs?: ModelPairReport;
}

export interface ModelPairReport {
  systems: string[];
  synthetic: number;
  samples: number;
  /** Per metric: agreement of its verdicts with the truth's, by metric-difference bin (0-100 points). */
  bins: Record<string, AgreementBin[]>;
}

/**
 * The "Out of the BLEU" model-pair study on a long table (one row per item and system): per-item truth and metric
 * values are averaged over bootstrap samples of items. Metric values on a 0-1 scale are compared in points (x100),
 * as in the paper; pass values already on 0-100 with `scale: 1`.
 */
export function modelPairStudy(input: {
  items: string[];
  systems: string[];
  truth: number[];
  metrics: { name: string; values: number[] }[];
  outputs?: string[];
  samples?: number;
  seed?: number;
  rng?: 'numpy' | 'python';
  edges?: number[];
  synthesize?: boolean;
}): ModelPairReport {
  const itemIds = [...new Set(input.items)];
  const systemIds = [...new Set(input.systems)];
  const itemIndex = new Map(itemIds.map((x, i) => [x, i]));
  const empty = () => Object.fromEntries(systemIds.map((s) => [s, new Array<number>(itemIds.length).fill(NaN)]));
  const data: StudyData = {
    items: itemIds.length,
    systems: systemIds.slice(),
    outputs: Object.fromEntries(systemIds.map((s) => [s, new Array<string>(itemIds.length).fill('')])),
    human: { name: '__truth', perItem: empty() },
    metrics: input.metrics.map((m) => ({ name: m.name, perItem: empty() })),
  };
  input.items.forEach((item, r) => {
    const i = itemIndex.get(item)!;
    const s = input.systems[r];
    data.human.perItem![s][i] = input.truth[r];
    input.metrics.forEach((m, k) => (data.metrics[k].perItem![s][i] = m.values[r]));
    data.outputs[s][i] = input.outputs ? input.outputs[r] : `${r}`;
  });
  for (const s of systemIds) {
    const missing = data.human.perItem![s].findIndex((v) => Number.isNaN(v));
    if (missing >= 0) throw new InputError(`model pairs: system "${s}" has no row for item "${itemIds[missing]}"; every system needs every item`);
  }
  const before = data.systems.length;
  if (input.synthesize ?? true) {
    synthesizeSystems(data, systemIds);
    dropDuplicateSystems(data);
  }
  const samples = input.samples ?? 500;
  const result = bootstrapStudy(data, { samples, rng: input.rng ?? 'numpy', seed: input.seed, pythonRandom: input.rng === 'python' ? new PythonRandom(input.seed ?? 42) : undefined });
  return {
    systems: data.systems,
    synthetic: data.systems.length - before,
    samples,
    bins: agreementByBin(result, data.systems, '__truth', input.metrics.map((m) => m.name), input.edges ?? [2, 5, 10]),
  };
}

export function metaEvaluate(input: {
  truthName: string;
  truth: (number | null)[];
  metrics: { name: string; values: (number | null)[] }[];
  groups?: string[];
  samples?: number;
  seed?: number;
}): MetaReport {
  const report: MetaReport = { kind: 'meta', version: VERSION, truth: input.truthName, metrics: [] };
  for (const m of input.metrics) {
    const keep: number[] = [];
    input.truth.forEach((t, i) => {
      if (t !== null && m.values[i] !== null) keep.push(i);
    });
    if (keep.length < 2) throw new InputError(`column "${m.name}": fewer than 2 rows with both it and "${input.truthName}"`);
    const truth = keep.map((i) => input.truth[i]!);
    const values = keep.map((i) => m.values[i]!);
    const entry: MetaReport['metrics'][number] = {
      metric: m.name,
      n: keep.length,
      corpus: corpusCorrelation(truth, values, { samples: input.samples, seed: input.seed }),
    };
    const notes: string[] = [];
    if (isConstant(values)) notes.push(`constant column: every "${m.name}" value is ${values[0]}, so no correlation is defined`);
    if (isConstant(truth)) notes.push(`constant column: every "${input.truthName}" value is ${truth[0]}, so no correlation is defined`);
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
      if (groups.length < 2) notes.push('one group only: the example-level correlation averages over a single group');
    }
    if (notes.length) entry.notes = notes;
    report.metrics.push(entry);
  }
  return report;
}

/** `meta --model-pairs` on a table: items, systems, truth and metric columns, every value present. */
export function modelPairStudyOfTable(
  table: Table,
  path: string,
  options: { truth: string; metrics: string[]; group: string; system: string; outputColumn?: string; samples: number; seed: number; rng: 'numpy' | 'python'; edges: number[] },
): ModelPairReport {
  const truth = numericColumn(table, options.truth);
  const metricValues = options.metrics.map((c) => ({ name: c, values: numericColumn(table, c) }));
  const missing = truth.findIndex((t, i) => t === null || metricValues.some((m) => m.values[i] === null));
  if (missing >= 0) throw new InputError('--model-pairs needs every value present', path, table.lines[missing]);
  return modelPairStudy({
    items: stringColumn(table, options.group),
    systems: stringColumn(table, options.system),
    truth: truth as number[],
    metrics: metricValues.map((m) => ({ name: m.name, values: m.values as number[] })),
    outputs: options.outputColumn ? stringColumn(table, options.outputColumn) : undefined,
    samples: options.samples,
    seed: options.rng === 'python' ? undefined : options.seed,
    rng: options.rng,
    edges: options.edges,
  });
}

const isConstant = (values: readonly number[]) => values.every((v) => v === values[0]);
