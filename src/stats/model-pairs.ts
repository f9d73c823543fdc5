import type { StatisticsMatrix, StatisticsScorer } from './statistics.js';
import { numpyMean } from '../compat/numpy-float.js';
import { NumpyGenerator } from '../compat/numpy-random.js';
import { PythonRandom } from '../compat/python-random.js';

/**
 * The model-pair study of "Out of the BLEU" (Evtikhiev et al. 2023; JetBrains-Research/codegen-metrics,
 * 03-bootstrap.ipynb and metrics_evaluation/analysis/bootstrap.py): add synthetic systems that take a system's
 * outputs and swap in another system's output on the items where humans graded that one higher (or lower), drop
 * systems whose outputs coincide, bootstrap every system's human score and metric scores on shared item samples,
 * call a difference significant when one system wins in at least 95% of the samples, and tabulate for each metric,
 * by the size of its score difference, how often its verdict agrees with the humans'.
 */
export interface StudyMetric {
  name: string;
  /** Per-item values averaged over a sample (grades, per-snippet metric values)... */
  perItem?: Record<string, number[]>;
  /** ...or a corpus metric scored from the summed statistics of the sampled items (BLEU), on the 0-1 scale. */
  corpus?: { metric: StatisticsScorer; statistics: Record<string, StatisticsMatrix> };
}

export interface StudyData {
  items: number;
  /** System names; synthetic ones are appended. */
  systems: string[];
  /** System outputs per item: synthetic systems copy them, and systems with identical outputs are merged. */
  outputs: Record<string, string[]>;
  /** Human score per item (the first metric of the study is always the human one). */
  human: StudyMetric;
  metrics: StudyMetric[];
}

const PERCENTAGES = [1, 3, 5, 10, 15, 20, 25, 30];

/** Python's round(): halves to even. */
function pyRoundInt(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function copyRow(from: StatisticsMatrix, to: Float64Array, item: number): void {
  to.set(from.data.subarray(item * from.size, (item + 1) * from.size), item * from.size);
}

/** Adds `<base>_<pct>_<1|0>` systems (improved/worsened on pct% of the items), as `synthesize_model`. */
export function synthesizeSystems(data: StudyData, bases: string[], percentages = PERCENTAGES): void {
  const grade = data.human.perItem!;
  for (const base of bases) {
    const others = bases.filter((m) => m !== base);
    for (const improve of [true, false]) {
      for (const pct of percentages) {
        const name = `${base}_${pct}_${improve ? 1 : 0}`;
        const lump = pyRoundInt((pct * data.items) / 100);
        const changes: [number, number, string][] = [];
        for (let i = 0; i < data.items; i++) {
          let change: [number, number, string] = [0, i, 'model'];
          let changed = false;
          for (const model of others) {
            const diff = grade[model][i] - grade[base][i];
            if ((improve && diff > 0) || (!improve && diff < 0)) {
              if (change[0] < Math.abs(diff)) change = [Math.abs(diff), i, model];
              changed = true;
            }
          }
          if (changed) changes.push(change);
        }
        changes.sort((a, b) => b[0] - a[0]); // stable, like Python's sort(reverse=True)
        const source = new Map<number, string>();
        for (const [, i, model] of changes.slice(0, lump)) source.set(i, model);
        const pick = (i: number) => source.get(i) ?? base;
        data.outputs[name] = Array.from({ length: data.items }, (_, i) => data.outputs[pick(i)][i]);
        for (const m of [data.human, ...data.metrics]) {
          if (m.perItem) m.perItem[name] = Array.from({ length: data.items }, (_, i) => m.perItem![pick(i)][i]);
          if (m.corpus) {
            const template = m.corpus.statistics[base];
            const rows = new Float64Array(template.data.length);
            for (let i = 0; i < data.items; i++) copyRow(m.corpus.statistics[pick(i)], rows, i);
            m.corpus.statistics[name] = { rows: template.rows, size: template.size, data: rows };
          }
        }
        data.systems.push(name);
      }
    }
  }
}

/** `clean_models`: of two systems with identical outputs everywhere, the earlier one is dropped. */
export function dropDuplicateSystems(data: StudyData): string[] {
  const drop = new Set<string>();
  data.systems.forEach((a, i) => {
    for (const b of data.systems.slice(0, i)) {
      if (data.outputs[a].every((x, k) => x === data.outputs[b][k])) drop.add(b);
    }
  });
  data.systems = data.systems.filter((s) => !drop.has(s));
  return [...drop];
}

export interface StudyResult {
  /** Per system and metric: median, low and high of the bootstrap distribution (0-1 scale, as published). */
  scores: Record<string, Record<string, number>>;
  /** pairs[a][b][metric]: share of samples in which a scored higher than b. */
  pairs: Record<string, Record<string, Record<string, number>>>;
}

export function bootstrapStudy(data: StudyData, options: { samples?: number; rng?: 'python' | 'numpy'; seed?: number; pythonRandom?: PythonRandom } = {}): StudyResult {
  const samples = options.samples ?? 500;
  const n = data.items;
  const py = options.pythonRandom ?? new PythonRandom(options.seed ?? 42);
  const np = new NumpyGenerator(options.seed ?? 12345);
  const metrics = [data.human, ...data.metrics];
  const results: Record<string, Record<string, Float64Array>> = {};
  for (const s of data.systems) {
    results[s] = {};
    for (const m of metrics) results[s][m.name] = new Float64Array(samples);
  }
  const values = new Float64Array(n);
  for (let t = 0; t < samples; t++) {
    const idx = options.rng === 'numpy' ? np.choice(n, n) : py.choicesOfRange(n, n);
    for (const s of data.systems) {
      for (const m of metrics) {
        if (m.perItem) {
          const v = m.perItem[s];
          for (let k = 0; k < n; k++) values[k] = v[idx[k]];
          results[s][m.name][t] = numpyMean(values, false);
        } else {
          const st = m.corpus!.statistics[s];
          const sum = new Float64Array(st.size);
          for (let k = 0; k < n; k++) {
            const base = idx[k] * st.size;
            for (let c = 0; c < st.size; c++) sum[c] += st.data[base + c];
          }
          results[s][m.name][t] = m.corpus!.metric.scoreFromStatistics(sum) / 100;
        }
      }
    }
  }
  const pairs: StudyResult['pairs'] = {};
  for (const a of data.systems) {
    pairs[a] = {};
    for (const b of data.systems) {
      if (a === b) continue;
      pairs[a][b] = {};
      for (const m of metrics) {
        const x = results[a][m.name];
        const y = results[b][m.name];
        let wins = 0;
        for (let t = 0; t < samples; t++) if (x[t] > y[t]) wins++;
        pairs[a][b][m.name] = wins / samples;
      }
    }
  }
  const scores: StudyResult['scores'] = {};
  const tail = pyRoundInt((0.05 * samples) / 2);
  for (const s of data.systems) {
    scores[s] = {};
    for (const m of metrics) {
      const sorted = Float64Array.from(results[s][m.name]).sort();
      scores[s][`${m.name}-low`] = sorted[tail];
      scores[s][`${m.name}-high`] = sorted[samples - tail];
      scores[s][m.name] = sorted[pyRoundInt(samples / 2)];
    }
  }
  return { scores, pairs };
}

/**
 * Agreement of a metric with the humans by metric-difference bin (points on the 0-100 scale). Verdicts:
 * agree (both significant the same way, or both not significant), metric significant where humans are not,
 * metric not significant where humans are, and opposite significant verdicts.
 */
export interface AgreementBin {
  bin: string;
  pairs: number;
  agree: number;
  metric_only: number;
  human_only: number;
  opposite: number;
}

export function agreementByBin(result: StudyResult, systems: string[], humanName: string, metricNames: string[], edges: number[]): Record<string, AgreementBin[]> {
  const significant = (share: number) => share >= 0.95 || share <= 0.05;
  const out: Record<string, AgreementBin[]> = {};
  const binOf = (d: number) => {
    for (let i = 0; i < edges.length; i++) if (d < edges[i]) return i;
    return edges.length;
  };
  const labels = [...edges.map((e, i) => (i === 0 ? `<${e}` : `[${edges[i - 1]},${e})`)), `>=${edges[edges.length - 1]}`];
  for (const metric of metricNames) {
    const bins: AgreementBin[] = labels.map((bin) => ({ bin, pairs: 0, agree: 0, metric_only: 0, human_only: 0, opposite: 0 }));
    systems.forEach((a, i) => {
      for (const b of systems.slice(0, i)) {
        const ms = result.pairs[a][b][metric];
        const hs = result.pairs[a][b][humanName];
        const diff = Math.abs(result.scores[a][metric] - result.scores[b][metric]) * 100;
        const bin = bins[binOf(diff)];
        bin.pairs++;
        if (significant(ms) && significant(hs)) {
          if (ms >= 0.95 === hs >= 0.95) bin.agree++;
          else bin.opposite++;
        } else if (significant(ms)) bin.metric_only++;
        else if (significant(hs)) bin.human_only++;
        else bin.agree++;
      }
    });
    out[metric] = bins;
  }
  return out;
}
