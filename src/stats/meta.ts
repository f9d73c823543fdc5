import { kendallBoth, pearson, sortKeys, spearman, type SortKeys } from './correlation.js';
import { NumpyGenerator } from '../compat/numpy-random.js';

/**
 * Meta-evaluation: how well a metric agrees with a ground truth (human grades, execution results).
 * - corpus level: one correlation over all rows, with SciPy's p-values and bootstrap confidence intervals;
 * - example level (with groups, e.g. one problem or intent per group): the correlation within each group, then the
 *   mean over groups where it is defined (ICE-Score's protocol: NaN groups, e.g. constant grades, are skipped);
 * - pairwise Kendall (CodeBERTScore's protocol): every ordered pair of outputs inside a group, human and metric
 *   orders compared (ties below a threshold), tau = (C - D) / (C + D + T) pooled over groups.
 */
export interface CorrelationSet {
  pearson: { r: number; p: number | null; ci?: [number, number] };
  spearman: { r: number; p: number | null; ci?: [number, number] };
  kendall_b: { tau: number; p: number | null; ci?: [number, number] };
  kendall_c: { tau: number; p: number | null; ci?: [number, number] };
}

export interface MetaOptions {
  /** Bootstrap resamples for confidence intervals (0 = none). */
  samples?: number;
  seed?: number;
}

type Coefficients = [number, number, number, number];

function coefficients(truth: ArrayLike<number>, metric: ArrayLike<number>, keys?: { x: SortKeys; y: SortKeys }): { values: Coefficients; p: Coefficients } {
  const a = pearson(truth, metric);
  const b = spearman(truth, metric, keys);
  const { b: c, c: d } = kendallBoth(truth, metric, keys);
  return { values: [a.value, b.value, c.value, d.value], p: [a.p, b.p, c.p, d.p] };
}

/** NumPy `percentile` with linear interpolation, ignoring NaN (`nanpercentile`). */
export function percentile(values: ArrayLike<number>, q: number): number {
  const xs = Array.from(values).filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (xs.length === 0) return NaN;
  const pos = ((xs.length - 1) * q) / 100;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo);
}

function build(values: Coefficients, p: Coefficients | null, ci: [number, number][] | null): CorrelationSet {
  const entry = (i: number) => ({ ...(ci ? { ci: ci[i] } : {}) });
  return {
    pearson: { r: values[0], p: p ? p[0] : null, ...entry(0) },
    spearman: { r: values[1], p: p ? p[1] : null, ...entry(1) },
    kendall_b: { tau: values[2], p: p ? p[2] : null, ...entry(2) },
    kendall_c: { tau: values[3], p: p ? p[3] : null, ...entry(3) },
  };
}

function bootstrapCi(count: number, samples: number, seed: number, statistic: (indices: Int32Array) => Coefficients): [number, number][] {
  const draws = new NumpyGenerator(seed).choice(count, samples * count);
  const per: number[][] = [[], [], [], []];
  for (let s = 0; s < samples; s++) {
    const values = statistic(draws.subarray(s * count, (s + 1) * count));
    values.forEach((v, i) => per[i].push(v));
  }
  return per.map((xs) => [percentile(xs, 2.5), percentile(xs, 97.5)]);
}

/** Correlations over all rows. */
export function corpusCorrelation(truth: ArrayLike<number>, metric: ArrayLike<number>, options: MetaOptions = {}): CorrelationSet {
  const { values, p } = coefficients(truth, metric);
  const samples = options.samples ?? 0;
  const tk = samples > 0 ? sortKeys(truth) : undefined;
  const mk = samples > 0 ? sortKeys(metric) : undefined;
  // a resample's values keep their places among the data's distinct values: it sorts by counting
  const pick = <T extends Float64Array | Int32Array>(into: T, from: ArrayLike<number>, idx: Int32Array): T => {
    for (let i = 0; i < idx.length; i++) into[i] = from[idx[i]];
    return into;
  };
  const n = truth.length;
  const ci = samples > 0
    ? bootstrapCi(n, samples, options.seed ?? 12345, (idx) => {
        const keys = tk && mk ? { x: { keys: pick(new Int32Array(n), tk.keys, idx), levels: tk.levels }, y: { keys: pick(new Int32Array(n), mk.keys, idx), levels: mk.levels } } : undefined;
        return coefficients(pick(new Float64Array(n), truth, idx), pick(new Float64Array(n), metric, idx), keys).values;
      })
    : null;
  return build(values, p, ci);
}

function nanMean(xs: number[]): number {
  const ok = xs.filter((x) => !Number.isNaN(x));
  return ok.length ? ok.reduce((s, x) => s + x, 0) / ok.length : NaN;
}

/** Correlations within each group, averaged over the groups where they are defined. */
export function exampleCorrelation(groups: { truth: number[]; metric: number[] }[], options: MetaOptions = {}): CorrelationSet & { groups: number } {
  const perGroup = groups.map((g) => (g.truth.length >= 2 ? coefficients(g.truth, g.metric).values : ([NaN, NaN, NaN, NaN] as Coefficients)));
  const average = (rows: Coefficients[]): Coefficients => [0, 1, 2, 3].map((i) => nanMean(rows.map((r) => r[i]))) as Coefficients;
  const samples = options.samples ?? 0;
  const ci = samples > 0 ? bootstrapCi(groups.length, samples, options.seed ?? 12345, (idx) => average(Array.from(idx, (i) => perGroup[i]))) : null;
  const used = perGroup.filter((r) => !Number.isNaN(r[0]) || !Number.isNaN(r[2])).length;
  return { ...build(average(perGroup), null, ci), groups: used };
}

/** CodeBERTScore's pairwise Kendall tau (its `kendalls_tau_darr`, variant B, threshold 0.001), pooled over groups. */
export function pairwiseKendall(groups: { truth: number[]; metric: number[] }[], threshold = 0.001): { tau: number; concordant: number; discordant: number; ties: number } {
  let concordant = 0;
  let discordant = 0;
  let ties = 0;
  const rank = (a: number, b: number) => (a === b || Math.abs(a - b) < threshold ? 0 : a > b ? 1 : -1);
  for (const g of groups) {
    for (let i = 0; i < g.truth.length; i++) {
      for (let j = 0; j < g.truth.length; j++) {
        if (i === j) continue;
        const h = rank(g.truth[i], g.truth[j]);
        if (h === 0) continue;
        const m = rank(g.metric[i], g.metric[j]);
        if (m === 0) ties++;
        else if (m === h) concordant++;
        else discordant++;
      }
    }
  }
  return { tau: (concordant - discordant) / (concordant + discordant + ties), concordant, discordant, ties };
}
