import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { inShard, shardLabel, type Shard } from '../config/shard.js';
import { UsageError, writing } from '../errors.js';
import { makeDir } from '../io/dirs.js';
import { lockOutput } from '../io/lock.js';
import { VERSION } from '../version.js';
import type { Problem, ProblemSet } from './benchmarks/problems.js';
import { quarantine } from './benchmarks/quarantine.js';
import { matchSamples, readSamples, type Sample } from './benchmarks/samples.js';
import { CompileCache } from './compile-cache.js';
import { checkJavaProblems } from './runners/java.js';
import type { Runner } from './runners/kit.js';
import { runnerIn } from './runners/registry.js';
import { DEFAULT_TIMEOUT_RETRY, runSample, TIMEOUT_RETRIES, type SampleContext, type TimeoutRetry } from './sample.js';
import { Sandbox } from './sandbox/sandbox.js';
import { DEFAULT_DISK_MB, type SandboxMode } from './sandbox/types.js';
import { Servers } from './servers.js';
import { summariseSystem, type ExecRow, type ExecSummary } from './summary.js';

export { DEFAULT_TIMEOUT_RETRY, retriesTimeout, TIMEOUT_RETRIES, type ExecAttempt, type TimeoutRetry } from './sample.js';
export type { ExecRow, ExecSummary, ExecSystemSummary } from './summary.js';

/**
 * `exec`: every sample of every system run against its problem's tests in the sandbox. Verdicts are appended to
 * DIR/results.jsonl as they finish; a rerun of the same command keeps them and runs only what is missing; at the
 * end results.jsonl is rewritten in input order (one row per sample) and DIR/summary.json holds pass@k. With
 * `shard`, only the problems of that shard run (every sample of a problem in the same shard); `merge` joins shards.
 */
export interface ExecOptions {
  problems: ProblemSet;
  /** One samples file per system; the system is named after the file. */
  samples: string[];
  ks: number[];
  timeoutMs: number;
  memoryMb: number;
  jobs: number;
  sandbox: SandboxMode;
  outDir: string;
  /** Keep one server per worker slot (bwrap; default true). false: a fresh one per sample. */
  warm?: boolean;
  /** What a timeout leads to (default `starved`). */
  timeoutRetry?: TimeoutRetry;
  /** All a sample may write, MiB (default 64). */
  diskMb?: number;
  /** Only this shard's problems. */
  shard?: Shard;
  /** Leave the bundled benchmark's quarantined tasks (data/exec/quarantine.json) out; the summary lists them. */
  excludeBroken?: boolean;
  onProgress?: (done: number, total: number) => void;
}

const STDERR_ROW = 2000;

export function systemNames(paths: string[]): string[] {
  const taken = new Set<string>();
  return paths.map((path) => {
    const base = basename(path).replace(/\.gz$/, '').replace(/\.jsonl$/, '');
    let name = base;
    for (let i = 2; taken.has(name); i++) name = `${base}#${i}`;
    taken.add(name);
    return name;
  });
}

export function execSignature(runners: Runner[], sandbox: SandboxMode, timeoutMs: number, memoryMb: number, problemsSha: string, timeoutRetry: TimeoutRetry = DEFAULT_TIMEOUT_RETRY, diskMb = DEFAULT_DISK_MB): string {
  const versions = [...new Set(runners.map((r) => r.version))].join(',');
  const disk = diskMb === DEFAULT_DISK_MB ? '' : `|disk:${diskMb}MB`;
  return `exec|runner:${versions}|sandbox:${sandbox}|timeout:${timeoutMs / 1000}s|timeout-retry:${timeoutRetry}|memory:${memoryMb}MB${disk}|problems:${problemsSha.slice(0, 12)}|version:${VERSION}`;
}

function readPrevious(path: string): Map<string, ExecRow> {
  const rows = new Map<string, ExecRow>();
  if (!existsSync(path)) return rows;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let row: ExecRow;
    try {
      row = JSON.parse(line);
    } catch {
      continue; // a line cut short by a kill
    }
    if (typeof row?.system === 'string' && typeof row.index === 'number' && typeof row.sha === 'string') rows.set(`${row.system}\u0000${row.index}`, row);
  }
  return rows;
}

interface Task {
  system: string;
  sample: Sample;
  problem: Problem;
  runner: Runner;
  code: string;
  sha: string;
}

/** Everything a run of these options will execute, grouped by system (only the shard's problems). */
function plan(options: ExecOptions, names: string[]): Task[][] {
  const broken = options.excludeBroken && options.problems.benchmark ? quarantine(options.problems.benchmark) : {};
  return options.samples.map((path, s) => {
    const samples = readSamples(path);
    const problems = matchSamples(samples, options.problems, path);
    checkJavaProblems(problems);
    const tasks: Task[] = [];
    samples.forEach((sample, i) => {
      const problem = problems[i];
      if (!inShard(problem.key, options.shard) || problem.key in broken) return;
      const runner = runnerIn(options.sandbox, problem.language);
      const code = runner.code(problem, sample);
      const sha = createHash('sha256').update(JSON.stringify([code, problem.tests, problem.prompt, problem.language, problem.format])).digest('hex').slice(0, 16);
      tasks.push({ system: names[s], sample, problem, runner, code, sha });
    });
    return tasks;
  });
}

export async function execSystems(options: ExecOptions): Promise<{ summary: ExecSummary; rows: ExecRow[] }> {
  const timeoutRetry = options.timeoutRetry ?? DEFAULT_TIMEOUT_RETRY;
  if (!TIMEOUT_RETRIES.includes(timeoutRetry)) throw new UsageError(`timeoutRetry must be one of ${TIMEOUT_RETRIES.join(', ')}, got "${String(timeoutRetry)}"`);
  const names = systemNames(options.samples);
  const tasks = plan(options, names);
  const signatures = tasks.map((list) => execSignature(list.length ? [...new Set(list.map((t) => t.runner))] : [], options.sandbox, options.timeoutMs, options.memoryMb, options.problems.sha256, timeoutRetry, options.diskMb));
  const dir = options.outDir;
  makeDir(dir);
  const unlock = lockOutput(dir);
  const sandbox = new Sandbox(options.sandbox);
  const ctxBase: Omit<SampleContext, 'slot'> = {
    sandbox,
    servers: new Servers(sandbox, options.warm !== false),
    builds: new CompileCache(),
  };
  try {
    const runPath = join(dir, 'run.json');
    if (existsSync(runPath)) {
      const previous = JSON.parse(readFileSync(runPath, 'utf8')) as { signatures?: Record<string, string> };
      names.forEach((name, s) => {
        const old = previous.signatures?.[name];
        if (old && old !== signatures[s]) throw new UsageError(`--out ${dir}: holds a run of "${name}" with other settings (${old}); use another folder`);
      });
    }
    const runInfo = { kind: 'exec', version: VERSION, signatures: Object.fromEntries(names.map((n, s) => [n, signatures[s]])), ...(options.shard ? { shard: shardLabel(options.shard) } : {}), ks: options.ks, samples: Object.fromEntries(names.map((n, s) => [n, options.samples[s]])) };
    writing(runPath, () => writeFileSync(runPath, JSON.stringify(runInfo, null, 2) + '\n'));
    const resultsPath = join(dir, 'results.jsonl');
    const previous = readPrevious(resultsPath);
    const rows = new Map<string, ExecRow>();
    const todo: Task[] = [];
    for (const t of tasks.flat()) {
      const key = `${t.system}\u0000${t.sample.index}`;
      const old = previous.get(key);
      if (old && old.sha === t.sha && old.task_id === t.sample.taskId) rows.set(key, old);
      else todo.push(t);
    }
    // keep what is reused, in a clean file (no half line, nothing stale), then append as verdicts finish
    writing(resultsPath, () => writeFileSync(resultsPath + '.tmp', [...rows.values()].map((r) => JSON.stringify(r) + '\n').join('')));
    renameSync(resultsPath + '.tmp', resultsPath);
    const total = tasks.reduce((n, l) => n + l.length, 0);
    let done = rows.size;
    options.onProgress?.(done, total);
    const queue = todo.values();
    const limits = { timeoutMs: options.timeoutMs, memoryMb: options.memoryMb, timeoutRetry, diskMb: options.diskMb };
    const worker = async (slot: number) => {
      for (let next = queue.next(); !next.done; next = queue.next()) {
        const t = next.value;
        const { verdict, attempts, isolation, fallback } = await runSample({ ...ctxBase, slot }, t, limits);
        const row: ExecRow = {
          system: t.system,
          index: t.sample.index,
          task_id: t.sample.taskId,
          ...(t.problem.taskId !== t.sample.taskId ? { problem_id: t.problem.taskId } : {}),
          status: verdict.status,
          passed: verdict.status === 'passed',
          duration_ms: attempts.reduce((s, a) => s + a.duration_ms, 0),
          exit_code: verdict.exitCode,
          stderr: verdict.stderr.length > STDERR_ROW ? '…' + verdict.stderr.slice(verdict.stderr.length - STDERR_ROW) : verdict.stderr,
          ...(verdict.note ? { note: verdict.note } : {}),
          attempts,
          isolation,
          ...(fallback ? { fallback } : {}),
          sha: t.sha,
        };
        rows.set(`${t.system}\u0000${t.sample.index}`, row);
        writing(resultsPath, () => appendFileSync(resultsPath, JSON.stringify(row) + '\n'));
        options.onProgress?.(++done, total);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs, todo.length || 1)) }, (_, slot) => worker(slot)));
    const ordered = tasks.flat().map((t) => rows.get(`${t.system}\u0000${t.sample.index}`)!);
    writing(resultsPath, () => writeFileSync(resultsPath + '.tmp', ordered.map((r) => JSON.stringify(r) + '\n').join('')));
    renameSync(resultsPath + '.tmp', resultsPath);
    const excluded = options.excludeBroken && options.problems.benchmark ? Object.entries(quarantine(options.problems.benchmark)).map(([key, reason]) => ({ task_id: options.problems.byKey.get(key)?.taskId ?? key, reason })) : [];
    const summary: ExecSummary = {
      kind: 'exec',
      version: VERSION,
      ...(options.shard ? { shard: shardLabel(options.shard) } : {}),
      ...(excluded.length ? { excluded } : {}),
      systems: names.map((name, s) => summariseSystem(name, options.samples[s], tasks[s].map((t) => rows.get(`${t.system}\u0000${t.sample.index}`)!), tasks[s], options.ks, signatures[s])),
    };
    const summaryPath = join(dir, 'summary.json');
    writing(summaryPath, () => writeFileSync(summaryPath, JSON.stringify(summary, null, 2) + '\n'));
    return { summary, rows: ordered };
  } finally {
    ctxBase.servers?.close();
    ctxBase.builds?.close();
    sandbox.close();
    unlock();
  }
}
