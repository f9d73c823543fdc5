import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { Problem, ProblemSet } from '../src/exec/benchmarks/problems.js';
import { execSystems, type ExecRow } from '../src/exec/run.js';
import { pyodidePackage } from '../src/exec/sandbox/pyodide/package.js';
import type { SandboxMode } from '../src/exec/sandbox/types.js';

/** What the sandbox tests share: one-line problems, the host-side bait that attacks aim at, and a process probe. */

/** `f()` must return 1: a human-eval style Python problem. */
export function pythonProblem(taskId: string): Problem {
  return {
    taskId, key: taskId, language: 'python', format: 'human-eval', line: 1,
    prompt: 'def f():\n', tests: 'def check(candidate):\n    assert candidate() == 1\n', entryPoint: 'f',
  };
}

/** `f()` must return 1: a MultiPL-E style JavaScript problem. */
export function javascriptProblem(taskId: string): Problem {
  return {
    taskId, key: taskId, language: 'javascript', format: 'multipl-e', line: 1,
    prompt: 'function f(){\n', tests: "const assert = require('node:assert');\nassert.deepEqual(f(), 1);\n",
  };
}

export const PY_OK = 'def f():\n    return 1\n';
export const JS_OK = 'function f(){ return 1; }\n';

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Host processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

export interface HostBait {
  /** A host folder the sandbox must not see, world-writable (even a sandbox uid could write there, were it visible). */
  dir: string;
  /** A file planted in `dir`, holding `secret`. */
  planted: string;
  secret: string;
  /** Where a sample would write if it could. */
  target: string;
  /** The port of a 127.0.0.1 TCP server that answers "hello" (set once the suite has started). */
  port(): number;
  /** How many connections reached that server. */
  connections(): number;
}

/** Makes the bait for the enclosing `describe` (its hooks start and remove it). */
export function hostBait(prefix = 'codegauge-exec-test-'): HostBait {
  const dir = tempDir(prefix);
  const secret = `codegauge-secret-${process.pid}-${Date.now()}`;
  const planted = join(dir, 'planted.txt');
  let server: Server | undefined;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    chmodSync(dir, 0o777);
    writeFileSync(planted, secret, { mode: 0o644 });
    server = createServer((socket) => {
      connections++;
      socket.end('hello\n');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => {
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, planted, secret, target: join(dir, 'written-by-sample.txt'), port: () => port, connections: () => connections };
}

/** Problems as a set `execSystems` takes. */
export function problemSet(problems: Problem[]): ProblemSet {
  return { path: '(test problems)', problems, byKey: new Map(problems.map((p) => [p.key, p])), sha256: '0'.repeat(64) };
}

export interface NamedSample {
  name: string;
  task_id: string;
  completion?: string;
  solution?: string;
}

/**
 * Runs named samples in order through the real `exec` pipeline on one worker (so that each sample follows the one
 * before it on the same servers) and returns each one's row by name.
 */
export async function runBatch(mode: SandboxMode, problems: Problem[] | ProblemSet, samples: NamedSample[], opts: { timeoutMs?: number; memoryMb?: number; jobs?: number; diskMb?: number } = {}): Promise<Record<string, ExecRow>> {
  const dir = tempDir('codegauge-batch-');
  try {
    const file = join(dir, 'samples.jsonl');
    writeFileSync(file, samples.map(({ name: _name, ...s }) => JSON.stringify(s) + '\n').join(''));
    const set = Array.isArray(problems) ? problemSet(problems) : problems;
    const { rows } = await execSystems({ problems: set, samples: [file], ks: [1], timeoutMs: opts.timeoutMs ?? 10_000, memoryMb: opts.memoryMb ?? 512, jobs: opts.jobs ?? 1, sandbox: mode, outDir: join(dir, 'out'), diskMb: opts.diskMb });
    return Object.fromEntries(samples.map((s, i) => [s.name, rows[i]]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A row's verdict and why, for assertion messages. */
export const why = (row: ExecRow | undefined) => (row ? `${row.status}${row.note ? ` (${row.note})` : ''}\n${row.stderr.slice(-600)}` : 'no row');

/** A pyodide test's time limit: a fresh interpreter per job costs ~0.5 s, and a batch of attacks holds dozens. */
export const PYODIDE_LONG_MS = 240_000;

/** Why the pyodide tests cannot run here (the optional package is missing, said once), or '' when they can. */
export function pyodideSkipReason(): string {
  try {
    pyodidePackage();
    return '';
  } catch (e) {
    const reason = (e as Error).message;
    console.warn(`exec-pyodide: skipped: ${reason}`);
    return reason;
  }
}
