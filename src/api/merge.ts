import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, UsageError, writing } from '../errors.js';
import { parseMetric } from '../metrics/registry.js';
import { ExactSums } from '../stats/exact-sum.js';
import { VERSION } from '../version.js';
import { itemKey, type ItemResults } from '../config/baselines.js';

/**
 * `codegauge merge`: joins the results of `--shard i/N` runs (each folder holds run.json and items.jsonl; a folder
 * of shard-i-of-N folders counts as all of them) into one result set. Shards must agree on every signature; a
 * shard that is absent or an item result that some shards lack is reported.
 *
 * A metric with additive sufficient statistics (BLEU, chrF, CodeBLEU, ROUGE's [score, 1], ...) gets its corpus
 * score back: each shard's items carry the exact sums of their statistics vectors, the shards' sums are added
 * exactly, and the metric scores the total, so the merged score is the unsharded run's to the last bit. Other
 * results (judges, execution, metrics whose statistics depend on the whole reference set, shards written without
 * statistics) are the mean of their item values, and `aggregation` says which.
 */
export interface ItemStatistics {
  /** Per statistic, the exact (Shewchuk) partials of its sum over the items (`ExactSums.state()`). */
  sums: number[][];
  /** The language the metric was built with (config data.lang), for specs without `lang=`. */
  lang?: string;
}

export type MergedItem = ItemResults & { statistics?: ItemStatistics };

export interface MergeScore {
  kind: ItemResults['kind'];
  system: string;
  metric: string;
  score: number | null;
  n: number;
  /** `corpus`: from the summed statistics, as the unsharded run scores it; `mean`: the mean of the item values. */
  aggregation: 'corpus' | 'mean';
  /** Why a metric is a mean of items rather than its corpus score. */
  note?: string;
}

export interface MergeReport {
  kind: 'merge';
  version: string;
  shards: { count: number; present: number[]; missing: number[] };
  items: MergedItem[];
  scores: MergeScore[];
  /** Item results (kind/system/metric) that not every shard has, and item ids without a value. */
  missing: string[];
  complete: boolean;
}

interface ShardDir {
  dir: string;
  index: number;
  count: number;
  items: MergedItem[];
}

function readShardDir(dir: string): ShardDir[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError('not a folder', dir);
  // A results folder holding shard-i-of-N folders stands for them (an unsharded run.json beside them is not a shard).
  const subs = readdirSync(dir).filter((d) => /^shard-\d+-of-\d+$/.test(d) && statSync(join(dir, d)).isDirectory());
  if (subs.length) return subs.flatMap((d) => readShardDir(join(dir, d)));
  if (!existsSync(join(dir, 'run.json'))) throw new InputError('no run.json here, nor shard-i-of-N folders (write them with codegauge run --shard i/N)', dir);
  let run: { kind?: string; shard?: string | null };
  try {
    run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
  } catch (e) {
    throw new InputError(`invalid JSON (${(e as Error).message})`, join(dir, 'run.json'));
  }
  if (run.kind !== 'run') throw new InputError('not the run.json of codegauge run', join(dir, 'run.json'));
  const m = /^(\d+)\/(\d+)$/.exec(run.shard ?? '1/1');
  if (!m) throw new InputError(`invalid shard "${run.shard}"`, join(dir, 'run.json'));
  const itemsPath = join(dir, 'items.jsonl');
  if (!existsSync(itemsPath)) throw new InputError('file not found', itemsPath);
  const items = readFileSync(itemsPath, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      try {
        return JSON.parse(l) as MergedItem;
      } catch (e) {
        throw new InputError(`invalid JSON (${(e as Error).message})`, itemsPath, i + 1);
      }
    });
  return [{ dir, index: Number(m[1]), count: Number(m[2]), items }];
}

/** The corpus score of merged statistics, or why there is none (the result is then a mean of items). */
function corpusScore(r: MergedItem): { score: number | null; note?: string } {
  if (!r.statistics) return { score: null, note: 'no additive statistics (a metric fitted on the whole reference set, or shards written without them): mean of items' };
  try {
    const metric = parseMetric(r.metric, { language: r.statistics.lang });
    if (metric.statsSize !== r.statistics.sums.length) return { score: null, note: `statistics of ${r.statistics.sums.length} values, but ${r.metric} has ${metric.statsSize}: mean of items` };
    const total = new ExactSums(metric.statsSize);
    total.merge(r.statistics.sums);
    const score = metric.scoreFromStatistics(total.values());
    return Number.isFinite(score) ? { score } : { score: null, note: 'no corpus score from the statistics: mean of items' };
  } catch (e) {
    return { score: null, note: `${r.metric} cannot be rebuilt here (${(e as Error).message.split('\n')[0]}): mean of items` };
  }
}

export function mergeShards(dirs: readonly string[], options: { out?: string } = {}): MergeReport {
  if (dirs.length === 0) throw new UsageError('merge needs at least one results folder');
  const shards = dirs.flatMap(readShardDir);
  const count = shards[0].count;
  for (const s of shards) if (s.count !== count) throw new InputError(`shard ${s.index}/${s.count} does not belong to a ${count}-way split (${shards[0].dir})`, s.dir);
  const seen = new Map<number, string>();
  for (const s of shards) {
    if (seen.has(s.index)) throw new InputError(`shard ${s.index}/${count} is given twice (also ${seen.get(s.index)})`, s.dir);
    seen.set(s.index, s.dir);
  }
  const present = [...seen.keys()].sort((a, b) => a - b);
  const missingShards = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seen.has(i));
  const merged = new Map<string, MergedItem>();
  const holders = new Map<string, number>();
  // Exact sums of statistics per item result; null once a shard lacks them (then the result is a mean).
  const sums = new Map<string, ExactSums | null>();
  const addSums = (key: string, r: MergedItem) => {
    const acc = sums.get(key);
    const st = r.statistics;
    if (acc === null) return;
    if (!st || !Array.isArray(st.sums) || st.sums.length === 0 || (acc && st.sums.length !== acc.values().length)) return void sums.set(key, null);
    const target = acc ?? new ExactSums(st.sums.length);
    target.merge(st.sums);
    sums.set(key, target);
  };
  for (const s of shards) {
    for (const r of s.items) {
      const key = itemKey(r);
      const m = merged.get(key);
      holders.set(key, (holders.get(key) ?? 0) + 1);
      if (r.kind === 'metric') addSums(key, r);
      if (!m) {
        merged.set(key, { ...r, ids: [...r.ids], values: [...r.values], ...(r.segment_statistics ? { segment_statistics: [...r.segment_statistics] } : {}) });
        continue;
      }
      if (m.signature !== r.signature) throw new InputError(`${r.system} ${r.metric}: signatures differ between shards, so they are not one run: ${m.signature} vs ${r.signature}`, s.dir);
      m.ids.push(...r.ids);
      m.values.push(...r.values);
      // Segment statistics (for corpus-level baseline gates) only when every shard has them.
      if (m.segment_statistics && r.segment_statistics) m.segment_statistics.push(...r.segment_statistics);
      else delete m.segment_statistics;
    }
  }
  const missing: string[] = [];
  if (missingShards.length) missing.push(`shard(s) ${missingShards.map((i) => `${i}/${count}`).join(', ')} missing`);
  for (const [key, n] of holders) {
    const r = merged.get(key)!;
    if (n !== shards.length) missing.push(`${r.kind} ${r.system} ${r.metric}: in ${n} of ${shards.length} shard(s)`);
  }
  // Restore a stable order: numeric ids (segments) by number, others by name; samples keep their order.
  const items = [...merged.values()].map((r) => {
    const order = r.ids.map((_, i) => i).sort((a, b) => {
      const x = r.ids[a];
      const y = r.ids[b];
      const nx = Number(x);
      const ny = Number(y);
      if (Number.isFinite(nx) && Number.isFinite(ny) && nx !== ny) return nx - ny;
      return x < y ? -1 : x > y ? 1 : a - b;
    });
    const nulls = r.values.filter((v) => v === null).length;
    if (nulls) missing.push(`${r.kind} ${r.system} ${r.metric}: ${nulls} item(s) without a value`);
    const { statistics: _shard, ...rest } = r;
    void _shard;
    const total = sums.get(itemKey(r));
    // A language that matters is in the metric's signature, which the shards share.
    const statistics: ItemStatistics | undefined = total ? { sums: total.state(), ...(r.statistics?.lang ? { lang: r.statistics.lang } : {}) } : undefined;
    const rows = r.segment_statistics;
    return {
      ...rest,
      ids: order.map((i) => r.ids[i]),
      values: order.map((i) => r.values[i]),
      ...(rows ? { segment_statistics: order.map((i) => rows[i]) } : {}),
      ...(statistics ? { statistics } : {}),
    };
  });
  const scores = items.map((r): MergeScore => {
    const base = { kind: r.kind, system: r.system, metric: r.metric, n: r.ids.length };
    const corpus = r.kind === 'metric' ? corpusScore(r) : { score: null, note: undefined };
    if (corpus.score !== null) return { ...base, score: corpus.score, aggregation: 'corpus' };
    const v = r.values.filter((x): x is number => x !== null);
    const mean = v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
    return { ...base, score: mean === null ? null : r.kind === 'exec' ? 100 * mean : mean, aggregation: 'mean', ...(corpus.note ? { note: corpus.note } : {}) };
  });
  const report: MergeReport = { kind: 'merge', version: VERSION, shards: { count, present, missing: missingShards }, items, scores, missing, complete: missing.length === 0 };
  if (options.out) {
    const out = options.out;
    writing(out, () => mkdirSync(out, { recursive: true }));
    writing(join(out, 'items.jsonl'), () => writeFileSync(join(out, 'items.jsonl'), items.map((r) => JSON.stringify(r) + '\n').join('')));
    const { items: _omit, ...summary } = report;
    void _omit;
    writing(join(out, 'merge.json'), () => writeFileSync(join(out, 'merge.json'), JSON.stringify(summary, null, 2) + '\n'));
  }
  return report;
}
