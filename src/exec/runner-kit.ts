import { spawnSync } from 'node:child_process';
import { UsageError } from '../errors.js';
import type { ExecLanguage, Problem, Sample } from './problems.js';
import type { Runner, Verdict } from './runners.js';
import { isBwrapFailure, type RunResult } from './sandbox.js';

/** What every runner shares: finding a toolchain, the last line of stderr, the verdicts common to all languages. */
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

/** The verdict shared by every language once its own signs (memory, compile errors) are checked. */
export function baseVerdict(result: RunResult, nonce: string): Verdict | undefined {
  const base = { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
  if (result.sandboxError || isBwrapFailure(result)) return { ...base, status: 'sandbox_error', note: result.sandboxError ?? lastLine(result.stderr) };
  if (result.timedOut) return { ...base, status: 'timeout' };
  if (result.signal === 'SIGXCPU' || result.exitCode === 128 + 24) return { ...base, status: 'timeout', note: 'CPU time limit' };
  if (result.outputExceeded) return { ...base, status: 'runtime_error', note: 'output limit exceeded' };
  if (result.exitCode === 0) {
    if (result.stdout.includes(nonce)) return { ...base, status: 'passed' };
    return { ...base, status: 'failed', note: 'exited before the tests finished' };
  }
  return undefined;
}

export function completionCode(problem: Problem, sample: Sample): string {
  if (sample.solution !== undefined) return sample.solution;
  return (sample.prompt ?? problem.prompt) + (sample.completion ?? '');
}

/** A compile step's verdict (Java, C++): the sandbox's own verdicts first, then the compiler's exit code. */
export function compileVerdict(result: Parameters<Runner['classify']>[0], nonce: string): ReturnType<Runner['classify']> {
  const v = { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
  const base = baseVerdict({ ...result, stdout: nonce }, nonce);
  if (base && base.status !== 'passed') return base;
  return { ...v, status: result.exitCode !== 0 ? 'compile_error' : 'passed' };
}
