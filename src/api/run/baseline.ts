import { itemKey, type ItemResults } from '../../config/baselines.js';
import { metricSpec } from '../../config/load.js';
import type { CodegaugeConfig } from '../../config/schema.js';
import { InputError } from '../../errors.js';
import { compareResults, type ResultsSystem } from '../compare-input.js';
import type { BaselineComparison, GateStatus } from './types.js';

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

/** compare's paired bootstrap of every current per-item result against the baseline's, and the gates. */
export function compareWithBaseline(
  config: CodegaugeConfig,
  current: readonly ItemResults[],
  saved: readonly ItemResults[],
  options: { failIfWorse?: number; baseline?: string; /** A shard: compare with the baseline's items of this shard only. */ subset?: boolean },
): BaselineComparison[] {
  const byKey = new Map(saved.map((r) => [itemKey(r), r]));
  const name = options.baseline ?? 'baseline';
  return current.map((r) => {
    const deltaValue = gateDelta(config, r, options.failIfWorse);
    const delta = deltaValue ?? null;
    const scale = r.kind === 'exec' ? 100 : 1;
    const score = mean(r.values) === null ? null : mean(r.values)! * scale;
    const base: BaselineComparison = { kind: r.kind, system: r.system, metric: r.metric, baseline_score: null, score, diff: null, ci: null, p_value: null, delta, status: 'missing', reason: '' };
    const whole = byKey.get(itemKey(r));
    const mine = new Set(r.ids);
    const old = whole && options.subset ? { ...whole, ids: whole.ids.filter((id) => mine.has(id)), values: whole.values.filter((_, i) => mine.has(whole.ids[i])) } : whole;
    if (!old) return { ...base, reason: `baseline "${name}" has no ${r.metric} for ${r.system}` };
    base.baseline_score = mean(old.values) === null ? null : mean(old.values)! * scale;
    if (old.signature !== r.signature) return { ...base, status: 'not-comparable', reason: `baseline "${name}" is not comparable: signatures differ (baseline ${old.signature}, this run ${r.signature})` };
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
    try {
      const report = compareResults({
        results: { id: 'id', metrics: [r.metric], systems: [system(`baseline ${name}`, old), system(r.system, r)] },
        test: 'paired-bs',
        cluster: clustered ? 'task_id' : undefined,
        failIfWorse: delta ?? undefined,
      });
      const s = report.systems[1].scores[0];
      const failure = report.fail_if_worse?.failures[0];
      const diffText = s.diff ? `difference ${s.diff.value.toFixed(2)}, 95% CI [${s.diff.ci[0].toFixed(2)}, ${s.diff.ci[1].toFixed(2)}]` : 'no difference';
      const status: GateStatus = delta === null ? 'compared' : failure ? 'failed' : 'passed';
      const reason =
        status === 'failed'
          ? `${r.system} ${r.metric} is worse than baseline "${name}" by more than ${delta}: ${diffText}`
          : status === 'passed'
            ? `${r.system} ${r.metric} is not worse than baseline "${name}" by more than ${delta} with confidence: ${diffText}`
            : `${r.system} ${r.metric} against baseline "${name}": ${diffText}`;
      return { ...base, baseline_score: report.systems[0].scores[0].score, score: s.score, diff: s.diff?.value ?? null, ci: s.diff?.ci ?? null, p_value: s.p_value, status, reason };
    } catch (e) {
      if (e instanceof InputError) return { ...base, status: 'not-comparable', reason: `baseline "${name}" is not comparable for ${r.system} ${r.metric}: ${e.message}` };
      throw e;
    }
  });
}
