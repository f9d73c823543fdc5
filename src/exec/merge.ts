import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, UsageError, writing } from '../errors.js';
import { makeDir } from '../io/dirs.js';
import { VERSION } from '../version.js';
import { summariseSystem, type ExecRow, type ExecSummary } from './summary.js';

/**
 * `merge` of `exec --shard i/N` (and `eval --shard i/N`) folders: the rows of every shard in one results.jsonl, in
 * the input's order, and pass@k computed from them: the very summary an unsharded run writes. Shards must share
 * every system's signature and the split; a missing shard or a system some shards lack is reported.
 */
export interface ExecRunInfo {
  kind: 'exec';
  signatures: Record<string, string>;
  shard?: string;
  ks?: number[];
  samples?: Record<string, string>;
}

export interface ExecMergeReport {
  summary: ExecSummary;
  rows: ExecRow[];
  shards: { count: number; present: number[]; missing: number[] };
  missing: string[];
  complete: boolean;
}

/** The run.json of an exec (or eval) folder, or undefined when the folder holds another kind of result. */
export function readExecRun(dir: string): ExecRunInfo | undefined {
  const path = join(dir, 'run.json');
  if (!existsSync(path)) return undefined;
  let run: ExecRunInfo;
  try {
    run = JSON.parse(readFileSync(path, 'utf8')) as ExecRunInfo;
  } catch (e) {
    throw new InputError(`invalid JSON (${(e as Error).message})`, path);
  }
  return run.kind === 'exec' ? run : undefined;
}

/** Folders given, or the shard-i-of-N folders inside them. */
export function shardFolders(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) => {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError('not a folder', dir);
    const subs = readdirSync(dir).filter((d) => /^shard-\d+-of-\d+$/.test(d) && statSync(join(dir, d)).isDirectory());
    return subs.length ? subs.map((d) => join(dir, d)) : [dir];
  });
}

function readRows(dir: string): ExecRow[] {
  const path = join(dir, 'results.jsonl');
  if (!existsSync(path)) throw new InputError('file not found', path);
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line, i) => [line, i] as const)
    .filter(([line]) => line.trim())
    .map(([line, i]) => {
      try {
        return JSON.parse(line) as ExecRow;
      } catch (e) {
        throw new InputError(`invalid JSON (${(e as Error).message})`, path, i + 1);
      }
    });
}

export function mergeExecShards(dirs: readonly string[], options: { out?: string } = {}): ExecMergeReport {
  const folders = shardFolders(dirs);
  if (folders.length === 0) throw new UsageError('merge needs at least one results folder');
  const shards = folders.map((dir) => {
    const run = readExecRun(dir);
    if (!run) throw new InputError('not an exec or eval results folder (its run.json is not of codegauge exec)', join(dir, 'run.json'));
    const m = /^(\d+)\/(\d+)$/.exec(run.shard ?? '1/1');
    if (!m) throw new InputError(`invalid shard "${run.shard}"`, join(dir, 'run.json'));
    return { dir, run, index: Number(m[1]), count: Number(m[2]), rows: readRows(dir) };
  });
  const count = shards[0].count;
  const seen = new Map<number, string>();
  for (const s of shards) {
    if (s.count !== count) throw new InputError(`shard ${s.index}/${s.count} does not belong to a ${count}-way split (${shards[0].dir})`, s.dir);
    if (seen.has(s.index)) throw new InputError(`shard ${s.index}/${count} is given twice (also ${seen.get(s.index)})`, s.dir);
    seen.set(s.index, s.dir);
    for (const [system, signature] of Object.entries(s.run.signatures)) {
      const other = shards[0].run.signatures[system];
      if (other !== undefined && other !== signature) throw new InputError(`${system}: signatures differ between shards, so they are not one run: ${other} vs ${signature}`, s.dir);
    }
  }
  const systems = [...new Set(shards.flatMap((s) => Object.keys(s.run.signatures)))];
  const missing: string[] = [];
  const missingShards = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seen.has(i));
  if (missingShards.length) missing.push(`shard(s) ${missingShards.map((i) => `${i}/${count}`).join(', ')} missing`);
  for (const system of systems) {
    const holders = shards.filter((s) => s.run.signatures[system] !== undefined).length;
    if (holders !== shards.length) missing.push(`system ${system}: in ${holders} of ${shards.length} shard(s)`);
  }
  const rows = shards.flatMap((s) => s.rows);
  const order = new Map(systems.map((name, i) => [name, i]));
  rows.sort((a, b) => (order.get(a.system) ?? 0) - (order.get(b.system) ?? 0) || a.index - b.index);
  const ks = shards[0].run.ks ?? [1, 10, 100];
  const summary: ExecSummary = {
    kind: 'exec',
    version: VERSION,
    systems: systems.map((name) => {
      const mine = rows.filter((r) => r.system === name);
      const file = shards.find((s) => s.run.samples?.[name])?.run.samples?.[name] ?? '(merged shards)';
      return summariseSystem(name, file, mine, mine.map((r) => ({ problem: { taskId: r.problem_id ?? r.task_id } })), ks, shards.find((s) => s.run.signatures[name])!.run.signatures[name]);
    }),
  };
  if (options.out) {
    const out = options.out;
    makeDir(out);
    const run: ExecRunInfo = { kind: 'exec', signatures: Object.fromEntries(systems.map((n) => [n, shards.find((s) => s.run.signatures[n])!.run.signatures[n]])), ks, samples: shards[0].run.samples };
    writing(join(out, 'run.json'), () => writeFileSync(join(out, 'run.json'), JSON.stringify(run, null, 2) + '\n'));
    writing(join(out, 'results.jsonl'), () => writeFileSync(join(out, 'results.jsonl'), rows.map((r) => JSON.stringify(r) + '\n').join('')));
    writing(join(out, 'summary.json'), () => writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n'));
  }
  return { summary, rows, shards: { count, present: [...seen.keys()].sort((a, b) => a - b), missing: missingShards }, missing, complete: missing.length === 0 };
}
