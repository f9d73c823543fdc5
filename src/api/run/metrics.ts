import { metricSpec } from '../../config/load.js';
import type { Metric } from '../../metrics/metric.js';
import { ExactSums } from '../../stats/exact-sum.js';
import { compareSystems } from '../compare.js';
import type { ItemStatistics } from '../merge.js';
import { scoreSystems, type MetricScore, type ScoreReport } from '../score.js';
import { baseSignature, finite, writeJson, type RunContext, type RunData } from './context.js';

/** Stage 2: the config's metrics on every system (OUT/score.json), with bootstrap intervals and exact sums per item. */
export async function scoreStage(ctx: RunContext, data: RunData): Promise<void> {
  const { config } = ctx;
  ctx.log(`scoring ${data.systems.length} system(s) x ${config.metrics.length} metric(s) on ${data.ids.length} segment(s)`);
  const specs = config.metrics.map(metricSpec);
  const { loadMetrics } = await import('../../metrics/specs.js');
  const metrics = await loadMetrics(specs, { language: config.data!.lang });
  metrics.forEach((m, i) => ctx.scorers.set(specs[i], m));
  const taps = metrics.map((m) => tapStatistics(m, data.systems.length));
  const report: ScoreReport & { ids?: string[] } = await scoreSystems({
    references: data.references,
    systems: data.systems,
    metrics: taps.map((t) => t.metric),
    segments: true,
    confidence: config.confidence > 0 ? { samples: config.confidence } : undefined,
  });
  if (ctx.shard) report.ids = data.ids;
  const path = ctx.file('score.json');
  writeJson(path, report);
  report.systems.forEach((s, si) => {
    s.scores.forEach((m, mi) => {
      const score = finite(m.score);
      ctx.result.scores.push({ kind: 'metric', system: s.name, metric: m.metric, aggregation: 'corpus', score, ci: m.confidence && score !== null ? [m.confidence.mean - m.confidence.ci, m.confidence.mean + m.confidence.ci] : null, signature: m.signature });
      const statistics = taps[mi].statistics(si, m, config.data!.lang);
      ctx.items.push({
        kind: 'metric',
        system: s.name,
        metric: m.metric,
        signature: `${baseSignature(m.signature)}|refs:${data.refsSha}`,
        ids: data.ids,
        values: (m.segments ?? []).map(finite),
        segment_statistics: taps[mi].rows(si),
        ...(statistics ? { statistics } : {}),
      });
    });
  });
}

/** Stage 3: sacrebleu's paired tests of every system against the baseline system, on corpus scores (OUT/compare.json). */
export async function compareStage(ctx: RunContext, data: RunData): Promise<void> {
  const c = ctx.config.compare!;
  const baseName = c.baseline ?? data.systems[0].name;
  const ordered = [data.systems.find((s) => s.name === baseName)!, ...data.systems.filter((s) => s.name !== baseName)];
  ctx.log(`comparing ${ordered.length - 1} system(s) with ${baseName} (${c.test})`);
  const report = await compareSystems({ references: data.references, systems: ordered, metrics: ctx.config.metrics.map(metricSpec), test: c.test === 'paired-ar' ? 'ar' : 'bs', samples: c.samples, seed: c.seed, onProgress: ctx.options.onProgress?.('comparing') });
  const path = ctx.file('compare.json');
  writeJson(path, report);
  ctx.result.warnings.push(...report.warnings);
}

/**
 * A metric whose per-system sums of sufficient statistics are kept as they are computed (the score path itself is
 * unchanged), so that `merge` can recompute corpus scores of shards exactly. Statistics are only additive across
 * shards when a segment's vector does not depend on the rest of the reference set (not CrystalBLEU's corpus=refs
 * nor CodeBERTScore's idf=yes, whose weights are fitted on the references they see).
 */
function tapStatistics(metric: Metric<any>, systems: number): { metric: Metric<any>; statistics(system: number, score: MetricScore, lang?: string): ItemStatistics | undefined; rows(system: number): number[][] } {
  const sums = Array.from({ length: systems }, () => new ExactSums(metric.statsSize));
  // Each segment's vector too: a baseline gate resamples them to compare corpus scores.
  const rows = Array.from({ length: systems }, () => [] as number[][]);
  let call = 0;
  const tapped = new Proxy(metric, {
    get(target, prop) {
      if (prop === 'segmentStatistics') {
        // The accumulator asks for each segment's systems in system order.
        return (hyp: string, refs: unknown, row: Float64Array, offset: number) => {
          target.segmentStatistics(hyp, refs, row, offset);
          const vector = row.subarray(offset, offset + target.statsSize);
          sums[call % systems].add(vector);
          rows[call++ % systems].push(Array.from(vector));
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    metric: tapped,
    rows: (system) => rows[system],
    statistics(system, score, lang) {
      if (metric.fitReferences && /\|(idf|corpus):refs\|/.test(`|${score.signature}|`)) return undefined;
      const state = sums[system];
      // Guard: the kept sums must give the very score the report holds.
      if (!Object.is(metric.scoreFromStatistics(state.values()), score.score)) return undefined;
      return { sums: state.state(), ...(lang ? { lang } : {}) };
    },
  };
}
