import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, UsageError, writing } from '../errors.js';
import { VERSION } from '../version.js';
import { itemKey, type ItemResults } from '../config/baselines.js';

/**
 * `codegauge merge`: joins the results of `--shard i/N` runs (each folder holds run.json and items.jsonl; a folder
 * of shard-i-of-N folders counts as all of them) into one result set. Shards must agree on every signature; a
 * shard that is absent or an item result that some shards lack is reported.
 */
export interface MergeReport {
  kind: 'merge';
  version: string;
  shards: { count: number; present: number[]; missing: number[] };
  items: ItemResults[];
  scores: { kind: ItemResults['kind']; system: string; metric: string; score: number | null; n: number }[];
  /** Item results (kind/system/metric) that not every shard has, and item ids without a value. */
  missing: string[];
  complete: boolean;
}

interface ShardDir {
  dir: string;
  index: number;
  count: number;
  items: ItemResults[];
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
        return JSON.parse(l) as ItemResults;
      } catch (e) {
        throw new InputError(`invalid JSON (${(e as Error).message})`, itemsPath, i + 1);
      }
    });
  return [{ dir, index: Number(m[1]), count: Number(m[2]), items }];
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
  const merged = new Map<string, ItemResults>();
  const holders = new Map<string, number>();
  for (const s of shards) {
    for (const r of s.items) {
      const key = itemKey(r);
      const m = merged.get(key);
      holders.set(key, (holders.get(key) ?? 0) + 1);
      if (!m) {
        merged.set(key, { ...r, ids: [...r.ids], values: [...r.values] });
        continue;
      }
      if (m.signature !== r.signature) throw new InputError(`${r.system} ${r.metric}: signatures differ between shards, so they are not one run: ${m.signature} vs ${r.signature}`, s.dir);
      m.ids.push(...r.ids);
      m.values.push(...r.values);
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
    return { ...r, ids: order.map((i) => r.ids[i]), values: order.map((i) => r.values[i]) };
  });
  const scores = items.map((r) => {
    const v = r.values.filter((x): x is number => x !== null);
    const mean = v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
    return { kind: r.kind, system: r.system, metric: r.metric, score: mean === null ? null : r.kind === 'exec' ? 100 * mean : mean, n: r.ids.length };
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
