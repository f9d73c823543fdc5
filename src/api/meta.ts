import { corpusCorrelation, exampleCorrelation, pairwiseKendall, type CorrelationSet } from '../stats/meta.js';
import { agreementByBin, bootstrapStudy, dropDuplicateSystems, synthesizeSystems, type AgreementBin, type StudyData } from '../stats/model-pairs.js';
import { PythonRandom } from '../compat/python-random.js';
import { InputError } from '../errors.js';
import { aurocWithCi, cohenKappa, confusionAt, confusionRates, roganGladen, youdenThreshold, type Confusion } from '../stats/agreement.js';
import { krippendorffAlpha, type AlphaLevel } from '../stats/krippendorff.js';
import { numericColumn, stringColumn, type Table } from '../io/table.js';
import { VERSION } from '../version.js';

/** Library entry point behind `codegauge meta`. */
export interface MetaReport {
  kind: 'meta';
  version: string;
  truth: string;
  /** With `agreement`: the pass threshold given (else each metric's best Youden threshold). */
  threshold?: number;
  metrics: {
    metric: string;
    /** Rows where both the truth and the metric are present. */
    n: number;
    corpus: CorrelationSet;
    example?: CorrelationSet & { groups: number };
    pairwise_kendall?: { tau: number; concordant: number; discordant: number; ties: number };
    /** Why some correlations are undefined (a constant column, a single group), in words. */
    notes?: string[];
    /** With `agreement`: how far the metric agrees with the truth beyond correlation. */
    agreement?: Agreement;
  }[];
  model_pairs?: ModelPairReport;
}

/**
 * `meta --agreement`, per metric; keys that do not apply are null.
 * - Cohen's kappa (unweighted, linear, quadratic; scikit-learn's definition) and Krippendorff's alpha between the
 *   truth and the metric as two raters: when both are integer grades on one scale (a judge's 0-4 against a
 *   person's 0-4); alpha at the nominal level for two grades, ordinal for more. Against a 0/1 truth, integer grades
 *   of a wider scale (a 0-4 judge) are first binarised at the pass threshold below (`kappa_threshold` says so);
 *   other grades on different scales (1-5 against 0-4) get none, and `scale_note` says why: agreement between
 *   raters on different scales is no agreement at all.
 * - With a 0/1 truth: the AUROC of the metric (bootstrap 95% CI over rows), the confusion matrix where
 *   `metric >= threshold` predicts a pass, at the given threshold or at the best Youden threshold, and its rates;
 *   and the metric's pass rate over every row that has a metric value (labelled or not) corrected by that
 *   sensitivity and specificity (Rogan-Gladen, delta-method 95% CI; 0-100 scale): the real pass rate when only
 *   the judge has seen most items.
 */
export interface Agreement {
  cohen_kappa: number | null;
  kappa_linear: number | null;
  kappa_quadratic: number | null;
  /** Kappa and alpha compare the 0/1 truth with `metric >= kappa_threshold` (a wider integer scale binarised). */
  kappa_threshold: number | null;
  /** Why there is no kappa for integer grades: their scales differ. */
  scale_note: string | null;
  krippendorff_alpha: number | null;
  krippendorff_level: AlphaLevel | null;
  auroc: { value: number | null; ci: [number, number] | null } | null;
  threshold: number | null;
  confusion: Confusion | null;
  sensitivity: number | null;
  specificity: number | null;
  precision: number | null;
  f1: number | null;
  corrected_pass_rate: { value: number | null; ci: [number, number] | null; observed: number; n: number; labelled: number } | null;
}

const finite = (x: number) => (Number.isFinite(x) ? x : null);

/** The agreement of one metric with the truth: `truth`/`values` over labelled rows, `all` the metric over every row. */
export function agreementOf(truth: number[], values: number[], all: number[], options: { threshold?: number; samples?: number; seed?: number } = {}): Agreement {
  const integers = (xs: number[]) => xs.every((x) => Number.isInteger(x));
  const grades = integers(truth) && integers(values);
  const binary = truth.every((t) => t === 0 || t === 1) && truth.includes(0) && truth.includes(1);
  const out: Agreement = {
    cohen_kappa: null,
    kappa_linear: null,
    kappa_quadratic: null,
    kappa_threshold: null,
    scale_note: null,
    krippendorff_alpha: null,
    krippendorff_level: null,
    auroc: null,
    threshold: null,
    confusion: null,
    sensitivity: null,
    specificity: null,
    precision: null,
    f1: null,
    corrected_pass_rate: null,
  };
  // The pass threshold of the metric: the one given, else the best Youden one (0/1 truth only).
  const threshold = binary ? options.threshold ?? youdenThreshold(truth, values) : null;
  if (grades) {
    const range = (xs: number[]) => [Math.min(...xs), Math.max(...xs)];
    const [tLo, tHi] = range(truth);
    const [vLo, vHi] = range(values);
    let rater = values;
    if (binary && (vLo < 0 || vHi > 1)) {
      rater = values.map((v) => (v >= threshold! ? 1 : 0));
      out.kappa_threshold = threshold;
    } else if (tLo !== vLo || tHi !== vHi) {
      out.scale_note = `the truth's grades run ${tLo} to ${tHi}, the metric's ${vLo} to ${vHi}: no kappa or alpha across different scales`;
    }
    if (out.scale_note === null) {
      out.cohen_kappa = finite(cohenKappa(truth, rater, 'none'));
      out.kappa_linear = finite(cohenKappa(truth, rater, 'linear'));
      out.kappa_quadratic = finite(cohenKappa(truth, rater, 'quadratic'));
      const level: AlphaLevel = new Set([...truth, ...rater]).size <= 2 ? 'nominal' : 'ordinal';
      out.krippendorff_alpha = finite(krippendorffAlpha(truth.map((t, i) => [t, rater[i]]), level).alpha);
      out.krippendorff_level = level;
    }
  }
  if (binary && threshold !== null) {
    const auc = aurocWithCi(truth, values, options.samples ?? 1000, options.seed ?? 12345);
    out.auroc = { value: finite(auc.value), ci: auc.ci };
    const confusion = confusionAt(truth, values, threshold);
    Object.assign(out, { threshold, confusion, ...confusionRates(confusion) });
    if (out.sensitivity !== null && out.specificity !== null) {
      const positives = all.filter((v) => v >= threshold).length;
      const rg = roganGladen({
        positives,
        n: all.length,
        sensitivity: out.sensitivity,
        specificity: out.specificity,
        labelledPositives: confusion.tp + confusion.fn,
        labelledNegatives: confusion.tn + confusion.fp,
      });
      out.corrected_pass_rate = {
        value: rg.value === null ? null : 100 * rg.value,
        ci: rg.ci ? [100 * rg.ci[0], 100 * rg.ci[1]] : null,
        observed: 100 * rg.observed,
        n: all.length,
        labelled: truth.length,
      };
    }
  }
  return out;
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
  /** Adds `agreement` to every metric (`threshold`: the pass threshold of the metric, else the best Youden one). */
  agreement?: { threshold?: number };
}): MetaReport {
  const report: MetaReport = { kind: 'meta', version: VERSION, truth: input.truthName, metrics: [] };
  if (input.agreement?.threshold !== undefined) report.threshold = input.agreement.threshold;
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
    if (input.agreement) {
      const all = m.values.filter((v): v is number => v !== null);
      entry.agreement = agreementOf(truth, values, all, { threshold: input.agreement.threshold, samples: input.samples, seed: input.seed });
      if (entry.agreement.scale_note) notes.push(`agreement: ${entry.agreement.scale_note}`);
      else if (entry.agreement.krippendorff_level === null && entry.agreement.auroc === null) {
        notes.push(`agreement: "${input.truthName}" is neither 0/1 nor, with "${m.name}", integer grades, so no kappa, AUROC or confusion applies`);
      }
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
