import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { lockOutput } from '../io/lock.js';
import { UsageError, writing } from '../errors.js';
import { VERSION } from '../version.js';
import { meanPassAtK, meanPassHatK } from './pass-at-k.js';
import { matchSamples, readSamples, type ExecLanguage, type Problem, type ProblemSet, type Sample } from './problems.js';
import { mountProgram, runnerFor, STATUSES, withMemory, writeProgram, type ExecStatus, type Program, type Runner, type Verdict } from './runners.js';
import { pyodideRunnerFor } from './pyodide.js';
import { discardWorkDir, makeWorkDir, Sandbox, type Limits, type SandboxMode } from './sandbox.js';
import { WarmNodePool } from './warm-node.js';
import { WarmPythonPool } from './warm-python.js';

/**
 * `exec`: every sample of every system run against its problem's tests in the sandbox. Verdicts are appended to
 * DIR/results.jsonl as they finish; a rerun of the same command keeps them and runs only what is missing; at the
 * end results.jsonl is rewritten in input order (one row per sample) and DIR/summary.json holds pass@k.
 */
export interface ExecAttempt {
  status: ExecStatus;
  duration_ms: number;
  timeout_ms: number;
  /** CPU time the program used (its processes and threads), when the runner could measure it. */
  cpu_ms?: number;
}

/**
 * What a timeout leads to. `always`: run once more with twice the time (the default; a program starved of the CPU
 * by other work is not called `timeout` for it). `starved`: only when the first attempt had less than half a core
 * on average (CPU time < timeout / 2: starved, or blocked) or its CPU time is unknown; a program that had the CPU
 * the whole time and did not finish is `timeout` at once, as openai/human-eval does. `never`: no retry.
 */
export type TimeoutRetry = 'always' | 'starved' | 'never';
export const TIMEOUT_RETRIES: readonly TimeoutRetry[] = ['always', 'starved', 'never'];

/** Whether an attempt that ended in `timeout` is run again with twice the time. */
export function retriesTimeout(policy: TimeoutRetry, attempt: { timeoutMs: number; cpuMs?: number; cpuLimit?: boolean }): boolean {
  if (policy === 'never') return false;
  if (policy === 'always') return true;
  // killed by its CPU-time limit: it had the CPU (more than its time's worth)
  if (attempt.cpuLimit) return false;
  return attempt.cpuMs === undefined || attempt.cpuMs < attempt.timeoutMs / 2;
}

export interface ExecRow {
  system: string;
  index: number;
  task_id: string;
  status: ExecStatus;
  passed: boolean;
  duration_ms: number;
  exit_code: number | null;
  stderr: string;
  note?: string;
  attempts: ExecAttempt[];
  /** sha256 prefix of the program run (code + tests), so a changed sample is never resumed from an old verdict. */
  sha: string;
}

export interface ExecSystemSummary {
  name: string;
  file: string;
  pass_at: Record<string, number | null>;
  /** pass^k: all of k samples pass (C(c,k)/C(n,k) per problem, averaged), beside pass@k. */
  pass_hat?: Record<string, number | null>;
  notes?: string[];
  n: number;
  problems: number;
  statuses: Record<ExecStatus, number>;
  per_problem: Record<string, { n: number; c: number }>;
  signature: string;
}

export interface ExecSummary {
  kind: 'exec';
  version: string;
  systems: ExecSystemSummary[];
}

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
  /** Python: one warm interpreter per worker that forks a child per program; JavaScript and TypeScript: one warm node
   * per worker that runs each program in a fresh Worker (bwrap only; default true there). */
  warm?: boolean;
  /** What a timeout leads to (default `always`: once more with twice the time). */
  timeoutRetry?: TimeoutRetry;
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

export function execSignature(runners: Runner[], sandbox: SandboxMode, timeoutMs: number, memoryMb: number, problemsSha: string, timeoutRetry: TimeoutRetry = 'always'): string {
  const versions = [...new Set(runners.map((r) => r.version))].join(',');
  // the default policy is left out, so signatures (and results) from before the option stay valid
  const retry = timeoutRetry === 'always' ? '' : `|timeout-retry:${timeoutRetry}`;
  return `exec|runner:${versions}|sandbox:${sandbox}|timeout:${timeoutMs / 1000}s${retry}|memory:${memoryMb}MB|problems:${problemsSha.slice(0, 12)}|version:${VERSION}`;
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

/**
 * Compiled programs by their source and compile command: identical programs (duplicate samples, the retry of a
 * timeout) are compiled once. Holds the build outputs, or the compile error.
 */
export class CompileCache {
  private readonly dir = mkdtempSync(join(tmpdir(), 'codegauge-build-'));
  private readonly entries = new Map<string, { outputs?: string; verdict?: Verdict }>();
  private next = 0;

  static key(program: Program): string {
    return createHash('sha256').update(JSON.stringify([program.files, program.compile])).digest('hex');
  }

  get(key: string) {
    return this.entries.get(key);
  }

  /** Keeps what the compiler wrote into `work` (everything but the program's own files), or its error. */
  store(key: string, work: string, program: Program, verdict?: Verdict): void {
    if (verdict) {
      this.entries.set(key, { verdict });
      return;
    }
    const outputs = join(this.dir, String(this.next++));
    mkdirSync(outputs);
    for (const name of readdirSync(work)) if (!(name in program.files)) cpSync(join(work, name), join(outputs, name), { recursive: true });
    this.entries.set(key, { outputs });
  }

  restore(outputs: string, work: string): void {
    for (const name of readdirSync(outputs)) cpSync(join(outputs, name), join(work, name), { recursive: true });
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Runs one sample: compile (if the language has a step), run; a timeout is retried once with twice the time, as
 * `limits.timeoutRetry` says (default `always`).
 */
export async function runSample(
  sandbox: Sandbox,
  task: Pick<Task, 'problem' | 'runner' | 'code'>,
  limits: { timeoutMs: number; memoryMb: number; timeoutRetry?: TimeoutRetry },
  slot = 0,
  warm?: WarmPythonPool,
  builds?: CompileCache,
  warmNode?: WarmNodePool,
): Promise<{ verdict: Verdict; attempts: ExecAttempt[] }> {
  const { runner, problem, code } = task;
  const program = runner.program(problem, code);
  mountProgram(sandbox, program);
  const attempts: ExecAttempt[] = [];
  let verdict: Verdict | undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    const timeoutMs = limits.timeoutMs * (attempt + 1);
    let cpuMs: number | undefined;
    // the work folder, made only when something runs in it (a warm runner has folders of its own)
    let work: string | undefined;
    const workDir = (): string => {
      if (work === undefined) {
        work = makeWorkDir();
        sandbox.prepare(work, slot);
        writeProgram(work, program);
      }
      return work;
    };
    try {
      const nonce = randomBytes(16).toString('hex');
      const base: Limits = { timeoutMs, memoryMb: limits.memoryMb, memoryKind: runner.memoryKind, processes: runner.processes };
      verdict = undefined;
      let compileMs = 0;
      const key = program.compile && builds ? CompileCache.key(program) : undefined;
      const built = key ? builds!.get(key) : undefined;
      if (built?.verdict) verdict = built.verdict;
      else if (built?.outputs) builds!.restore(built.outputs, workDir());
      else if (program.compile) {
        const compileLimits: Limits = { ...base, timeoutMs: Math.max(30_000, timeoutMs), memoryMb: Math.max(2048, limits.memoryMb), memoryKind: runner.language === 'java' ? 'none' : 'as', processes: 512 };
        const r = await sandbox.run({ argv: program.compile, workDir: workDir(), limits: compileLimits, slot });
        compileMs = r.durationMs;
        const v = runner.classify(r, nonce, 'compile');
        if (v.status !== 'passed') verdict = v.status === 'timeout' ? { ...v, status: 'compile_error', note: 'compilation timed out' } : v;
        // a sandbox failure is not the program's: never cached
        if (key && verdict?.status !== 'sandbox_error') builds!.store(key, workDir(), program, verdict);
      }
      if (!verdict) {
        const cold = () => sandbox.run({ argv: withMemory(program.run, limits.memoryMb), workDir: workDir(), stdin: nonce + '\n', limits: base, slot });
        const script = program.run[program.run.length - 1];
        const js = warmNode && (runner.language === 'javascript' || runner.language === 'typescript') && program.run.length > 0;
        let r = warm && runner.language === 'python' && !program.compile ? await warm.run(program.run[0], program.files, script, nonce + '\n', base, slot) : js ? await warmNode.run(program.run[0], program.files, script, nonce + '\n', base, slot) : await cold();
        // a program that kills the warm runner itself is run again on its own
        if (r.sandboxError && (warm || js)) r = await cold();
        cpuMs = r.cpuMs;
        verdict = runner.classify(r, nonce, 'run');
        verdict = { ...verdict, durationMs: verdict.durationMs + compileMs };
      }
    } finally {
      // nothing runs in it any more: removed in the background
      if (work !== undefined) discardWorkDir(work);
    }
    attempts.push({ status: verdict.status, duration_ms: verdict.durationMs, timeout_ms: timeoutMs, ...(cpuMs !== undefined ? { cpu_ms: Math.round(cpuMs) } : {}) });
    if (verdict.status !== 'timeout') break;
    if (!retriesTimeout(limits.timeoutRetry ?? 'always', { timeoutMs, cpuMs, cpuLimit: verdict.note === 'CPU time limit' })) break;
  }
  return { verdict: verdict!, attempts };
}

/** The runner of a language in a sandbox mode: pyodide runs Python in WebAssembly (no python3 needed) and nothing else. */
export function runnerIn(sandbox: SandboxMode, language: ExecLanguage): Runner {
  return sandbox === 'pyodide' ? pyodideRunnerFor(language) : runnerFor(language);
}

export async function execSystems(options: ExecOptions): Promise<{ summary: ExecSummary; rows: ExecRow[] }> {
  const timeoutRetry = options.timeoutRetry ?? 'always';
  if (!TIMEOUT_RETRIES.includes(timeoutRetry)) throw new UsageError(`timeoutRetry must be one of ${TIMEOUT_RETRIES.join(', ')}, got "${String(timeoutRetry)}"`);
  const names = systemNames(options.samples);
  const tasks: Task[][] = options.samples.map((path, s) => {
    const samples = readSamples(path);
    const problems = matchSamples(samples, options.problems, path);
    return samples.map((sample, i) => {
      const problem = problems[i];
      const runner = runnerIn(options.sandbox, problem.language);
      const code = runner.code(problem, sample);
      const program = runner.program(problem, code);
      const sha = createHash('sha256').update(JSON.stringify([program.files, program.compile ?? null, program.run])).digest('hex').slice(0, 16);
      return { system: names[s], sample, problem, runner, code, sha };
    });
  });
  const sandbox = new Sandbox(options.sandbox);
  const warm = options.sandbox === 'bwrap' && options.warm !== false ? new WarmPythonPool(sandbox) : undefined;
  const warmNode = options.sandbox === 'bwrap' && options.warm !== false ? new WarmNodePool(sandbox) : undefined;
  const builds = new CompileCache();
  const signatures = tasks.map((list) => execSignature(list.length ? [...new Set(list.map((t) => t.runner))] : [], options.sandbox, options.timeoutMs, options.memoryMb, options.problems.sha256, timeoutRetry));

  const dir = options.outDir;
  writing(dir, () => mkdirSync(dir, { recursive: true }));
  const unlock = lockOutput(dir);
  try {
    const runPath = join(dir, 'run.json');
    if (existsSync(runPath)) {
      const previous = JSON.parse(readFileSync(runPath, 'utf8')) as { signatures?: Record<string, string> };
      names.forEach((name, s) => {
        const old = previous.signatures?.[name];
        if (old && old !== signatures[s]) throw new UsageError(`--out ${dir}: holds a run of "${name}" with other settings (${old}); use another folder`);
      });
    }
    writing(runPath, () => writeFileSync(runPath, JSON.stringify({ kind: 'exec', signatures: Object.fromEntries(names.map((n, s) => [n, signatures[s]])) }, null, 2) + '\n'));
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
    const worker = async (slot: number) => {
      for (let next = queue.next(); !next.done; next = queue.next()) {
        const t = next.value;
        const { verdict, attempts } = await runSample(sandbox, t, { timeoutMs: options.timeoutMs, memoryMb: options.memoryMb, timeoutRetry }, slot, warm, builds, warmNode);
        const row: ExecRow = {
          system: t.system,
          index: t.sample.index,
          task_id: t.sample.taskId,
          status: verdict.status,
          passed: verdict.status === 'passed',
          duration_ms: attempts.reduce((s, a) => s + a.duration_ms, 0),
          exit_code: verdict.exitCode,
          stderr: verdict.stderr.length > STDERR_ROW ? '…' + verdict.stderr.slice(verdict.stderr.length - STDERR_ROW) : verdict.stderr,
          ...(verdict.note ? { note: verdict.note } : {}),
          attempts,
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
    const summary: ExecSummary = {
      kind: 'exec',
      version: VERSION,
      systems: names.map((name, s) => summariseSystem(name, options.samples[s], tasks[s].map((t) => rows.get(`${t.system}\u0000${t.sample.index}`)!), tasks[s], options.ks, signatures[s])),
    };
    const summaryPath = join(dir, 'summary.json');
    writing(summaryPath, () => writeFileSync(summaryPath, JSON.stringify(summary, null, 2) + '\n'));
    return { summary, rows: ordered };
  } finally {
    warm?.close();
    warmNode?.close();
    sandbox.close();
    builds.close();
    unlock();
  }
}

export function summariseSystem(name: string, file: string, rows: ExecRow[], tasks: { problem: Problem }[], ks: number[], signature: string): ExecSystemSummary {
  const statuses = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<ExecStatus, number>;
  const perProblem: Record<string, { n: number; c: number }> = {};
  rows.forEach((row, i) => {
    statuses[row.status]++;
    const p = (perProblem[tasks[i].problem.taskId] ??= { n: 0, c: 0 });
    p.n++;
    if (row.passed) p.c++;
  });
  const { values, notes } = meanPassAtK(Object.values(perProblem), ks);
  // pass^k's notes repeat pass@k's (the same problems are short of samples)
  const hat = meanPassHatK(Object.values(perProblem), ks);
  return { name, file, pass_at: values, pass_hat: hat.values, ...(notes.length ? { notes } : {}), n: rows.length, problems: Object.keys(perProblem).length, statuses, per_problem: perProblem, signature };
}
