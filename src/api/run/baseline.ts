import { itemKey, type ItemResults } from '../../config/baselines.js';
import { metricSpec } from '../../config/load.js';
import type { CodegaugeConfig } from '../../config/schema.js';
import { InputError } from '../../errors.js';
import { ExactSums } from '../../stats/exact-sum.js';
import { bootstrapDraws, DEFAULT_SEED, pairedBootstrapTest, resampledScoresMany } from '../../stats/resampling.js';
import type { StatisticsMatrix, StatisticsScorer } from '../../stats/statistics.js';
import { DEFAULT_SAMPLES } from '../compare.js';
import { compareResults, type ResultsSystem } from '../compare-input.js';
import { checkResamplingSize } from '../score.js';
import type { Aggregation, BaselineComparison, GateStatus } from './types.js';

/** The gate delta of a result: its own `fail_if_worse` in the config, else the command line's. */
export function gateDelta(config: CodegaugeConfig, r: Pick<ItemResults, 'kind' | 'metric'>, fallback: number | undefined): number | undefined {
  if (r.kind === 'metric') {
    const entry = config.metrics.find((m) => metricSpec(m) === r.metric);
    if (entry && typeof entry !== 'string' && entry.fail_if_worse !== undefined) return entry.fail_if_worse;
  } else if (r.kind === 'exec') {
    if (config.exec?.fail_if_worse !== undefined) return config.exec.fail_if_worse;
  } else {
    const method = r.metric.split('@')[0];
    const j = config.judges.find((x) => x.method === method && x.fail_if_worse !== undefined);
    if (j) return j.fail_if_worse;
  }
  return fallback;
}

const mean = (xs: readonly (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
};

/** Resamples of the paired bootstrap behind a gate (compare's paired-bs defaults). */
const GATE_SAMPLES = DEFAULT_SAMPLES.bs;

/** What a gate compares: the number the run's table shows for the result. */
export const aggregationOf = (kind: ItemResults['kind']): Aggregation => (kind === 'metric' ? 'corpus' : 'mean');

/**
 * compare's paired bootstrap of every current per-item result against the baseline's, and the gates. A metric is
 * compared on its corpus score (from the segments' sufficient statistics, resampled as `compare` resamples them), the
 * score the run shows, not on the mean of its sentence scores; judges and pass/fail on the mean of their items.
 * `scorers` turn a metric's summed statistics into its score (the run's loaded metrics, by spec).
 */
export function compareWithBaseline(
  config: CodegaugeConfig,
  current: readonly ItemResults[],
  saved: readonly ItemResults[],
  options: {
    failIfWorse?: number;
    baseline?: string;
    /** A shard: compare with the baseline's items of this shard only. */
    subset?: boolean;
    scorers?: ReadonlyMap<string, StatisticsScorer>;
  },
): BaselineComparison[] {
  const byKey = new Map(saved.map((r) => [itemKey(r), r]));
  const name = options.baseline ?? 'baseline';
  return current.map((r) => {
    const deltaValue = gateDelta(config, r, options.failIfWorse);
    const delta = deltaValue ?? null;
    const aggregation = aggregationOf(r.kind);
    const scorer = r.kind === 'metric' ? options.scorers?.get(r.metric) : undefined;
    const scale = r.kind === 'exec' ? 100 : 1;
    const shown = (x: ItemResults) => (scorer && x.segment_statistics ? corpusScore(scorer, x.segment_statistics) : mean(x.values) === null ? null : mean(x.values)! * scale);
    const label = `${r.system} ${r.metric} (${aggregation})`;
    const base: BaselineComparison = { kind: r.kind, system: r.system, metric: r.metric, aggregation, baseline_score: null, score: shown(r), diff: null, ci: null, p_value: null, delta, status: 'missing', reason: '' };
    const whole = byKey.get(itemKey(r));
    const mine = new Set(r.ids);
    const keep = (_: unknown, i: number) => mine.has(whole!.ids[i]);
    const old: ItemResults | undefined =
      whole && options.subset
        ? { ...whole, ids: whole.ids.filter(keep), values: whole.values.filter(keep), ...(whole.segment_statistics ? { segment_statistics: whole.segment_statistics.filter(keep) } : {}) }
        : whole;
    if (!old) return { ...base, reason: `baseline "${name}" has no ${r.metric} for ${r.system}` };
    base.baseline_score = shown(old);
    if (old.signature !== r.signature) return { ...base, status: 'not-comparable', reason: `baseline "${name}" is not comparable: signatures differ (baseline ${old.signature}, this run ${r.signature})` };
    if (r.kind === 'metric') {
      const missing = !scorer ? `no scorer for ${r.metric}` : !old.segment_statistics ? `baseline "${name}" holds no segment statistics for ${r.system} ${r.metric} (saved by an earlier codegauge); save it again` : !r.segment_statistics ? 'this run has no segment statistics' : null;
      if (missing) return { ...base, status: 'not-comparable', reason: `${label}: cannot compare corpus scores: ${missing}` };
    }
    let compared: { baseline: number; score: number; diff: number | null; ci: [number, number] | null; p: number | null };
    try {
      compared = scorer ? corpusComparison(scorer, old, r) : meanComparison(r, old, name, delta);
    } catch (e) {
      if (e instanceof InputError) return { ...base, status: 'not-comparable', reason: `baseline "${name}" is not comparable for ${r.system} ${r.metric}: ${e.message}` };
      throw e;
    }
    const diffText = compared.diff !== null && compared.ci ? `difference ${compared.diff.toFixed(2)}, 95% CI [${compared.ci[0].toFixed(2)}, ${compared.ci[1].toFixed(2)}]` : 'no difference';
    const failed = delta !== null && compared.ci !== null && compared.ci[1] < -delta;
    const status: GateStatus = delta === null ? 'compared' : failed ? 'failed' : 'passed';
    const reason =
      status === 'failed'
        ? `${label} is worse than baseline "${name}" by more than ${delta}: ${diffText}`
        : status === 'passed'
          ? `${label} is not worse than baseline "${name}" by more than ${delta} with confidence: ${diffText}`
          : `${label} against baseline "${name}": ${diffText}`;
    return { ...base, baseline_score: compared.baseline, score: compared.score, diff: compared.diff, ci: compared.ci, p_value: compared.p, status, reason };
  });
}

/** The corpus score of segment statistics, summed exactly as `score` sums them (so the very score it reports). */
function corpusScore(scorer: StatisticsScorer, rows: readonly (readonly number[])[]): number | null {
  if (rows.length === 0) return null;
  const sums = new ExactSums(rows[0].length);
  for (const row of rows) sums.add(row);
  const score = scorer.scoreFromStatistics(sums.values());
  return Number.isFinite(score) ? score : null;
}

/** Rows aligned on ids (each id once: a metric item has one row per segment). */
function alignedStatistics(old: ItemResults, now: ItemResults): { base: number[][]; mine: number[][] } {
  const at = new Map(old.ids.map((id, i) => [id, i]));
  const onlyHere = now.ids.filter((id) => !at.has(id));
  if (onlyHere.length || old.ids.length !== now.ids.length) {
    throw new InputError(`rows do not match: ${onlyHere.length ? `${onlyHere.length} segment(s) only in this run (${onlyHere.slice(0, 3).join(', ')})` : `${old.ids.length} segments in the baseline, ${now.ids.length} here`}`);
  }
  const size = now.segment_statistics![0]?.length ?? 0;
  if (old.segment_statistics!.some((row) => row.length !== size)) throw new InputError('segment statistics of another size');
  return { base: now.ids.map((id) => old.segment_statistics![at.get(id)!]), mine: now.segment_statistics!.map((row) => [...row]) };
}

/** sacrebleu's paired bootstrap on corpus statistics, as `compare` runs it; the difference's percentile interval. */
function corpusComparison(scorer: StatisticsScorer, old: ItemResults, now: ItemResults) {
  const { base, mine } = alignedStatistics(old, now);
  const n = mine.length;
  const size = mine[0]?.length ?? 0;
  const matrix = (rows: number[][]): StatisticsMatrix => ({ rows: n, size, data: Float64Array.from(rows.flat()) });
  const baseline = corpusScore(scorer, base) ?? NaN;
  const score = corpusScore(scorer, mine) ?? NaN;
  checkResamplingSize(GATE_SAMPLES, n);
  const draws = bootstrapDraws(n, GATE_SAMPLES, DEFAULT_SEED);
  const [r0, r1] = resampledScoresMany([{ metric: scorer, matrix: matrix(base) }, { metric: scorer, matrix: matrix(mine) }], draws, GATE_SAMPLES);
  const test = pairedBootstrapTest(scorer, baseline, score, r0, r1, GATE_SAMPLES);
  const differences = Float64Array.from(r1, (x, i) => x - r0[i]).sort();
  const lo = Math.floor(differences.length / 40);
  const ci: [number, number] = [differences[lo], differences[differences.length - lo - 1]];
  return { baseline, score, diff: score - baseline, ci, p: test.pValue };
}

/** compare --input's paired bootstrap of item means (judges; pass/fail resampled by problem). */
function meanComparison(r: ItemResults, old: ItemResults, name: string, delta: number | null) {
  const system = (label: string, x: ItemResults): ResultsSystem => {
    const seen = new Map<string, number>();
    const keys = x.ids.map((id) => {
      const k = seen.get(id) ?? 0;
      seen.set(id, k + 1);
      return JSON.stringify([id, k]);
    });
    return { name: label, file: label, keys, ids: [...x.ids], lines: x.ids.map((_, i) => i + 1), values: { [r.metric]: [...x.values] }, clusters: [...x.ids] };
  };
  const clustered = r.kind === 'exec' && new Set(r.ids).size < r.ids.length;
  const report = compareResults({
    results: { id: 'id', metrics: [r.metric], systems: [system(`baseline ${name}`, old), system(r.system, r)] },
    test: 'paired-bs',
    cluster: clustered ? 'task_id' : undefined,
    failIfWorse: delta ?? undefined,
  });
  const s = report.systems[1].scores[0];
  return { baseline: report.systems[0].scores[0].score, score: s.score, diff: s.diff?.value ?? null, ci: s.diff?.ci ?? null, p: s.p_value };
}
