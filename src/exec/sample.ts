import { randomBytes } from 'node:crypto';
import { boundaryVerdict, replyToResult } from './boundary/verdict.js';
import { runSession } from './boundary/session.js';
import type { Problem } from './benchmarks/problems.js';
import { CompileCache } from './compile-cache.js';
import { mountProgram, withMemory, writeProgram, type Program, type Runner, type Split, type Verdict } from './runners/kit.js';
import { DATA_LINE_CAP, type ServerPool } from './sandbox/job-server.js';
import type { Sandbox } from './sandbox/sandbox.js';
import { DEFAULT_DISK_MB, DEFAULT_OUTPUT_BYTES, type Limits, type RunResult } from './sandbox/types.js';
import { discardWorkDir, makeWorkDir } from './sandbox/workdir.js';
import type { Servers } from './servers.js';

/**
 * One sample, end to end: split at the boundary where its language and tests allow (the tests in a harness process
 * of their own), else in one process with the proof of completion; compiled languages are compiled once per
 * distinct program. A timeout is retried with twice the time as the policy says.
 */
export interface ExecAttempt {
  status: Verdict['status'];
  duration_ms: number;
  timeout_ms: number;
  /** CPU time the program used (its processes and threads; with the tests' harness when split), when measured. */
  cpu_ms?: number;
}

/**
 * What a timeout leads to. `starved` (the default): a retry with twice the time only when the attempt had less than
 * half a core on average (CPU time < timeout / 2: starved by other work, or blocked) or its CPU time is unknown; a
 * program that had the CPU the whole time and did not finish is `timeout` at once, as openai/human-eval has it.
 * `always`: every timeout once more with twice the time. `never`: no retry.
 */
export type TimeoutRetry = 'always' | 'starved' | 'never';
export const TIMEOUT_RETRIES: readonly TimeoutRetry[] = ['always', 'starved', 'never'];
export const DEFAULT_TIMEOUT_RETRY: TimeoutRetry = 'starved';

/** Whether an attempt that ended in `timeout` is run again with twice the time. */
export function retriesTimeout(policy: TimeoutRetry, attempt: { timeoutMs: number; cpuMs?: number; cpuLimit?: boolean }): boolean {
  if (policy === 'never') return false;
  if (policy === 'always') return true;
  // killed by its CPU-time limit: it had the CPU (more than its time's worth)
  if (attempt.cpuLimit) return false;
  return attempt.cpuMs === undefined || attempt.cpuMs < attempt.timeoutMs / 2;
}

export type Isolation = 'boundary' | 'in-process';

export interface SampleOutcome {
  verdict: Verdict;
  attempts: ExecAttempt[];
  /** `boundary`: the tests ran in a process of their own; `in-process`: in the candidate's (with the proof). */
  isolation: Isolation;
  /** Why a language that splits its samples ran this one in one process. */
  fallback?: string;
}

export interface SampleLimits {
  timeoutMs: number;
  memoryMb: number;
  timeoutRetry?: TimeoutRetry;
  outputBytes?: number;
  diskMb?: number;
}

export interface SampleContext {
  sandbox: Sandbox;
  /** The family servers (Python, JavaScript, TypeScript; pyodide's interpreters). */
  servers?: Servers;
  builds?: CompileCache;
  slot?: number;
}

const MIB = 1024 * 1024;
/** V8's stack limit in a Worker is its thread's stack less 192 KiB; this gives node's --stack-size=4000 (KiB). */
const WORKER_STACK_MB = (4000 + 192) / 1024;
/** The tests' own memory (they are the benchmark's, not the candidate's: more than a candidate gets). */
const HARNESS_MEMORY_MB = 4096;

const base64Files = (files: Record<string, string>) => Object.fromEntries(Object.entries(files).map(([name, text]) => [name, Buffer.from(text, 'utf8').toString('base64')]));

function familyPool(ctx: SampleContext, runner: Runner, limits: SampleLimits): ServerPool {
  const settings = { memoryMb: limits.memoryMb, outputBytes: limits.outputBytes, diskMb: limits.diskMb };
  if (runner.family === 'pyodide') return ctx.servers!.pyodide(settings);
  return runner.family === 'python' ? ctx.servers!.python(runner.interpreter!, settings) : ctx.servers!.node(runner.interpreter!, settings);
}

/** What a job's child may use (the server applies it: rlimits in Python, the Worker's heap in node). */
function jobLimits(limits: SampleLimits, timeoutMs: number, memoryMb: number) {
  const output = limits.outputBytes ?? DEFAULT_OUTPUT_BYTES;
  return {
    memory: memoryMb * MIB,
    memoryMb,
    stackMb: WORKER_STACK_MB,
    cpu: Math.max(1, Math.ceil(timeoutMs / 1000) + 1),
    fsize: Math.max(output + 1, 16 * MIB),
    nofile: 64,
    output,
  };
}

const lost = (why: string): Verdict => ({ status: 'sandbox_error', exitCode: null, durationMs: 0, stderr: '', note: why });

async function runSplit(ctx: SampleContext, runner: Runner, split: Split, limits: SampleLimits, timeoutMs: number): Promise<{ verdict: Verdict; cpuMs?: number } | { unsupported: string }> {
  const pool = familyPool(ctx, runner, limits);
  const slot = ctx.slot ?? 0;
  const candidate = await pool.get(slot, 'candidate');
  if ('error' in candidate) return { verdict: lost(candidate.error) };
  const harness = await pool.get(slot, 'harness');
  if ('error' in harness) return { verdict: lost(harness.error) };
  const candidateJob = {
    kind: 'serve',
    files: base64Files(split.candidate.files),
    file: split.candidate.file,
    code: split.candidate.files[split.candidate.file],
    key: split.candidate.key,
    ...(split.candidate.returns ? { returns: split.candidate.returns } : {}),
    timeout_ms: timeoutMs,
    limits: jobLimits(limits, timeoutMs, limits.memoryMb),
    line_cap: DATA_LINE_CAP,
  };
  const harnessJob = {
    kind: 'harness',
    files: {},
    file: 'tests',
    timeout_ms: timeoutMs,
    limits: jobLimits(limits, timeoutMs, Math.max(HARNESS_MEMORY_MB, limits.memoryMb)),
    line_cap: DATA_LINE_CAP,
    prompt: split.harness.prompt,
    tests: split.harness.tests,
    names: split.harness.names,
    entry: split.harness.entry,
    call_check: split.harness.callCheck === true,
    assert_fails: split.harness.assertFails === true,
  };
  const outcome = await runSession(candidate.server, harness.server, candidateJob, harnessJob, timeoutMs);
  pool.done(slot, 'candidate', outcome.candidate);
  pool.done(slot, 'harness', outcome.harness);
  return boundaryVerdict(outcome, runner, limits.outputBytes ?? DEFAULT_OUTPUT_BYTES);
}

/** The tests in the candidate's process, on the family's candidate server; the server prints the proof after them. */
async function runProgramOnServer(ctx: SampleContext, runner: Runner, program: Program, nonce: string, limits: SampleLimits, timeoutMs: number, assertFails: boolean): Promise<RunResult> {
  const pool = familyPool(ctx, runner, limits);
  const slot = ctx.slot ?? 0;
  const got = await pool.get(slot, 'candidate');
  if ('error' in got) return { exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, outputExceeded: false, durationMs: 0, sandboxError: got.error };
  const file = program.run[program.run.length - 1];
  const reply = await got.server.run(
    // pyodide's children take the program's text itself (they have no files of the host)
    { kind: 'program', files: base64Files(program.files), file, code: program.files[file], nonce, timeout_ms: timeoutMs, limits: jobLimits(limits, timeoutMs, limits.memoryMb), assert_fails: assertFails },
    timeoutMs,
  );
  pool.done(slot, 'candidate', reply);
  return replyToResult(reply, limits.outputBytes ?? DEFAULT_OUTPUT_BYTES);
}

/** A compiled (or plainly run) program in the sandbox: compile, check, build (each once per distinct program), run. */
async function runCompiled(ctx: SampleContext, runner: Runner, program: Program, nonce: string, limits: SampleLimits, base: Limits): Promise<{ result?: RunResult; verdict?: Verdict; compileMs: number }> {
  const { sandbox, builds } = ctx;
  const slot = ctx.slot ?? 0;
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
    let compileMs = 0;
    const key = program.compile && builds ? CompileCache.key(program) : undefined;
    const built = key ? builds!.get(key) : undefined;
    if (built?.verdict) return { verdict: built.verdict, compileMs };
    if (built?.outputs) builds!.restore(built.outputs, workDir());
    else if (program.compile) {
      const compileLimits: Limits = { ...base, timeoutMs: Math.max(30_000, base.timeoutMs), memoryMb: Math.max(2048, limits.memoryMb), memoryKind: runner.language === 'java' ? 'none' : 'as', processes: 512, diskMb: Math.max(256, limits.diskMb ?? DEFAULT_DISK_MB) };
      let verdict: Verdict | undefined;
      for (const step of [program.compile, 'vet', program.build] as const) {
        if (step === undefined) continue;
        if (step === 'vet') {
          const refused = program.vet?.(workDir());
          if (refused) verdict = { status: 'compile_error', exitCode: null, durationMs: compileMs, stderr: `codegauge: ${refused}\n`, note: refused };
        } else {
          const r = await sandbox.run({ argv: step, workDir: workDir(), limits: compileLimits, slot });
          compileMs += r.durationMs;
          const v = runner.classify(r, nonce, 'compile');
          if (v.status !== 'passed') verdict = v.status === 'timeout' ? { ...v, status: 'compile_error', note: 'compilation timed out' } : v;
        }
        if (verdict) break;
      }
      // a sandbox failure is not the program's: never cached
      if (key && verdict?.status !== 'sandbox_error') builds!.store(key, workDir(), program, verdict);
      if (verdict) return { verdict, compileMs };
    }
    const result = await sandbox.run({ argv: withMemory(program.run, limits.memoryMb), workDir: workDir(), readOnlyWork: true, stdin: nonce + '\n', limits: base, slot });
    return { result, compileMs };
  } finally {
    // nothing runs in it any more: removed in the background
    if (work !== undefined) discardWorkDir(work);
  }
}

export async function runSample(ctx: SampleContext, task: { problem: Problem; runner: Runner; code: string }, given: SampleLimits): Promise<SampleOutcome> {
  const { runner, problem, code } = task;
  // a benchmark's own limits (EvalPlus') hold where the run's are lower
  const limits = { ...given, timeoutMs: Math.max(given.timeoutMs, problem.timeoutMs ?? 0), memoryMb: Math.max(given.memoryMb, problem.memoryMb ?? 0) };
  const attempts: ExecAttempt[] = [];
  let verdict: Verdict | undefined;
  let isolation: Isolation = 'in-process';
  let fallback: string | undefined;
  let program: Program | undefined;
  const programOf = () => {
    if (!program) {
      program = runner.program(problem, code);
      mountProgram(ctx.sandbox, program);
    }
    return program;
  };
  const splitting = runner.split !== undefined && ctx.servers !== undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    const timeoutMs = limits.timeoutMs * (attempt + 1);
    const nonce = randomBytes(16).toString('hex');
    const base: Limits = { timeoutMs, memoryMb: limits.memoryMb, memoryKind: runner.memoryKind, processes: runner.processes, outputBytes: limits.outputBytes, diskMb: limits.diskMb };
    let cpuMs: number | undefined;
    verdict = undefined;
    if (splitting && fallback === undefined) {
      const split = runner.split!(problem, code);
      if (!split) fallback = 'the tests cannot run apart from the program (no function named for them to call, or setup code that builds inputs with the program\'s own classes)';
      else {
        let r = await runSplit(ctx, runner, split, limits, timeoutMs);
        // the candidate's server went away during the sample: once more on a fresh one; twice is the program's doing
        if (!('unsupported' in r) && r.verdict.status === 'sandbox_error') {
          r = await runSplit(ctx, runner, split, limits, timeoutMs);
          if (!('unsupported' in r) && r.verdict.status === 'sandbox_error' && !r.verdict.note?.startsWith('the tests')) r = { ...r, verdict: { ...r.verdict, status: 'runtime_error', note: `the program stopped its runner (${r.verdict.note ?? 'no reason given'})` } };
        }
        if ('unsupported' in r) fallback = r.unsupported;
        else {
          verdict = r.verdict;
          cpuMs = r.cpuMs;
          isolation = 'boundary';
        }
      }
    }
    if (!verdict) {
      isolation = 'in-process';
      let compileMs = 0;
      let result: RunResult | undefined;
      if (runner.family && ctx.servers) {
        result = await runProgramOnServer(ctx, runner, programOf(), nonce, limits, timeoutMs, problem.format === 'humaneval-x' && /\bconsole\.assert\s*\(/.test(problem.tests));
      } else {
        const r = await runCompiled(ctx, runner, programOf(), nonce, limits, base);
        compileMs = r.compileMs;
        verdict = r.verdict;
        result = r.result;
      }
      if (result) {
        cpuMs = result.cpuMs;
        verdict = runner.classify(result, nonce, 'run');
        verdict = { ...verdict, durationMs: verdict.durationMs + compileMs };
      }
    }
    attempts.push({ status: verdict!.status, duration_ms: verdict!.durationMs, timeout_ms: timeoutMs, ...(cpuMs !== undefined ? { cpu_ms: Math.round(cpuMs) } : {}) });
    if (verdict!.status !== 'timeout') break;
    if (!retriesTimeout(limits.timeoutRetry ?? DEFAULT_TIMEOUT_RETRY, { timeoutMs, cpuMs, cpuLimit: verdict!.note === 'CPU time limit' })) break;
  }
  return { verdict: verdict!, attempts, isolation, ...(fallback !== undefined && splitting ? { fallback } : {}) };
}
