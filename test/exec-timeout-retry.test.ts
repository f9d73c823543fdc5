import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Problem } from '../src/exec/problems.js';
import { readBenchmark } from '../src/exec/problems.js';
import { pyodidePackage, pyodideRunnerFor } from '../src/exec/pyodide.js';
import { execSignature, execSystems, retriesTimeout, runSample, type ExecAttempt, type TimeoutRetry } from '../src/exec/run.js';
import { runnerFor } from '../src/exec/runners.js';
import { bwrapAvailable, Sandbox, type SandboxMode } from '../src/exec/sandbox.js';
import { WarmNodePool } from '../src/exec/warm-node.js';
import { WarmPythonPool } from '../src/exec/warm-python.js';
import { javascriptProblem, JS_OK, PY_OK, pythonProblem } from './exec-fixtures.js';
import { cli } from './helpers.js';

/**
 * `--timeout-retry always|starved|never`: what a timeout leads to, decided on the CPU time each runner measures for
 * the program (cold runs from /proc just before the kill, the fork server from wait4, the warm node server from its
 * own CPU counters, pyodide's child from /proc). Real programs, each bounded by a 1 s timeout (2 s for a retry):
 * one that burns the CPU is `timeout` at once under `starved`, one that sleeps (blocked: it had no CPU to use) is
 * given its second chance. The burning programs run several busy processes or threads, so that they have their
 * time's worth of CPU even when other work loads the machine.
 */
const hasBwrap = bwrapAvailable();
const tmp = () => mkdtempSync(join(tmpdir(), 'codegauge-retry-test-'));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const py = pythonProblem('retry/0');
const js = javascriptProblem('retry/1');
/** Eight busy processes. */
const PY_BURN = `${PY_OK}import os\nos.fork()\nos.fork()\nos.fork()\nwhile True:\n    pass\n`;
const PY_SLEEP = `${PY_OK}import time\ntime.sleep(10)\n`;
/** Busy in four threads (three Workers beside the main one): the warm runner counts its process's threads. */
const JS_BURN = `${JS_OK}const { Worker } = require('worker_threads');\nfor (let i = 0; i < 3; i++) new Worker('while (true) {}', { eval: true });\nwhile (true) {}\n`;
/** Blocked for 10 s without using the CPU. */
const JS_SLEEP = `${JS_OK}Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10000);\n`;

interface Setup {
  sandbox: Sandbox;
  warm?: WarmPythonPool;
  warmNode?: WarmNodePool;
  close(): void;
}

function setup(mode: SandboxMode, warm: boolean): Setup {
  const sandbox = new Sandbox(mode);
  const w = warm ? new WarmPythonPool(sandbox) : undefined;
  const wn = warm ? new WarmNodePool(sandbox) : undefined;
  return {
    sandbox,
    warm: w,
    warmNode: wn,
    close() {
      w?.close();
      wn?.close();
      sandbox.close();
    },
  };
}

async function attempts(s: Setup, problem: Problem, code: string, timeoutRetry: TimeoutRetry): Promise<ExecAttempt[]> {
  const runner = s.sandbox.mode === 'pyodide' ? pyodideRunnerFor('python') : runnerFor(problem.language);
  const r = await runSample(s.sandbox, { problem, runner, code }, { timeoutMs: 1000, memoryMb: 512, timeoutRetry }, 0, s.warm, undefined, s.warmNode);
  expect(r.verdict.status).toBe('timeout');
  expect(r.attempts.every((a) => a.status === 'timeout')).toBe(true);
  expect(r.attempts.map((a) => a.timeout_ms)).toEqual([1000, 2000].slice(0, r.attempts.length));
  return r.attempts;
}

describe('the policy', () => {
  it('always retries, never does not, starved retries below half a core or when the CPU time is unknown', () => {
    expect(retriesTimeout('always', { timeoutMs: 3000, cpuMs: 3000 })).toBe(true);
    expect(retriesTimeout('never', { timeoutMs: 3000, cpuMs: 0 })).toBe(false);
    expect(retriesTimeout('starved', { timeoutMs: 3000, cpuMs: 1499 })).toBe(true);
    expect(retriesTimeout('starved', { timeoutMs: 3000, cpuMs: 1500 })).toBe(false);
    expect(retriesTimeout('starved', { timeoutMs: 3000 })).toBe(true);
    // killed by its CPU-time limit: it had the CPU
    expect(retriesTimeout('starved', { timeoutMs: 3000, cpuLimit: true })).toBe(false);
  });

  it('the signature names the policy only when it is not the default', () => {
    const runners = [{ version: 'python-3.11.7' }] as never;
    const base = execSignature(runners, 'bwrap', 3000, 1024, 'abcdef0123456789');
    expect(execSignature(runners, 'bwrap', 3000, 1024, 'abcdef0123456789', 'always')).toBe(base);
    expect(execSignature(runners, 'bwrap', 3000, 1024, 'abcdef0123456789', 'starved')).toBe(base.replace('|timeout:3s|', '|timeout:3s|timeout-retry:starved|'));
    expect(execSignature(runners, 'bwrap', 3000, 1024, 'abcdef0123456789', 'never')).toContain('|timeout-retry:never|');
  });
});

describe.skipIf(!hasBwrap)('Python in the bwrap sandbox', () => {
  for (const warm of [true, false]) {
    describe(warm ? 'the warm runner (fork server)' : 'a fresh interpreter per program', () => {
      const s = hasBwrap ? setup('bwrap', warm) : undefined;
      afterAll(() => s?.close());

      it('starved: a program burning the CPU gets one attempt, one sleeping gets two', async () => {
        const burn = await attempts(s!, py, PY_BURN, 'starved');
        expect(burn).toHaveLength(1);
        expect(burn[0].cpu_ms).toBeGreaterThanOrEqual(500);
        const sleep = await attempts(s!, py, PY_SLEEP, 'starved');
        expect(sleep).toHaveLength(2);
        for (const a of sleep) expect(a.cpu_ms).toBeLessThan(300);
      });

      it.runIf(warm)('always: two attempts; never: one; a finished program has its CPU time too', async () => {
        const always = await attempts(s!, py, PY_BURN, 'always');
        expect(always).toHaveLength(2);
        for (const a of always) expect(a.cpu_ms).toBeGreaterThan(100);
        expect(await attempts(s!, py, PY_SLEEP, 'never')).toHaveLength(1);
        const busy = `${PY_OK}x = 0\nfor i in range(3_000_000):\n    x += i\n`;
        const ok = await runSample(s!.sandbox, { problem: py, runner: runnerFor('python'), code: busy }, { timeoutMs: 10_000, memoryMb: 512, timeoutRetry: 'starved' }, 0, s!.warm);
        expect(ok.verdict.status).toBe('passed');
        expect(ok.attempts[0].cpu_ms).toBeGreaterThan(20);
      });
    });
  }
});

describe.skipIf(!hasBwrap)('JavaScript in the bwrap sandbox', () => {
  for (const warm of [true, false]) {
    describe(warm ? 'the warm runner (a Worker per program)' : 'a fresh node per program', () => {
      const s = hasBwrap ? setup('bwrap', warm) : undefined;
      afterAll(() => s?.close());

      it('starved: a program burning the CPU gets one attempt, one blocked gets two; never: one', async () => {
        const burn = await attempts(s!, js, JS_BURN, 'starved');
        expect(burn).toHaveLength(1);
        expect(burn[0].cpu_ms).toBeGreaterThanOrEqual(500);
        const sleep = await attempts(s!, js, JS_SLEEP, 'starved');
        expect(sleep).toHaveLength(2);
        for (const a of sleep) expect(a.cpu_ms).toBeLessThan(400);
        if (warm) {
          expect(await attempts(s!, js, JS_SLEEP, 'never')).toHaveLength(1);
          // the next program is not affected by the burning one's threads
          const next = await runSample(s!.sandbox, { problem: js, runner: runnerFor('javascript'), code: JS_OK }, { timeoutMs: 3000, memoryMb: 512 }, 0, undefined, undefined, s!.warmNode);
          expect(next.verdict.status).toBe('passed');
          expect(next.attempts[0].cpu_ms).toBeGreaterThan(0);
        }
      });
    });
  }
});

describe('Python in process mode', () => {
  it('starved: a program burning the CPU gets one attempt, one sleeping gets two', async () => {
    const s = setup('process', false);
    try {
      const burn = await attempts(s, py, PY_BURN, 'starved');
      expect(burn).toHaveLength(1);
      expect(burn[0].cpu_ms).toBeGreaterThanOrEqual(500);
      expect(await attempts(s, py, PY_SLEEP, 'starved')).toHaveLength(2);
    } finally {
      s.close();
    }
  });
});

let pyodideMissing = false;
try {
  pyodidePackage();
} catch {
  pyodideMissing = true;
}

describe.skipIf(pyodideMissing || process.platform !== 'linux')('Python in pyodide', () => {
  it('the CPU time of a timeout is measured, and decides the retry under starved', async () => {
    const s = setup('pyodide', false);
    try {
      // pyodide's time.sleep may spin: only the rule is asserted for it
      const burn = await attempts(s, py, `${PY_OK}while True:\n    pass\n`, 'starved');
      expect(burn[0].cpu_ms).toBeDefined();
      expect(burn).toHaveLength(burn[0].cpu_ms! < 500 ? 2 : 1);
      const sleep = await attempts(s, py, PY_SLEEP, 'starved');
      expect(sleep).toHaveLength(sleep[0].cpu_ms! < 500 ? 2 : 1);
    } finally {
      s.close();
    }
  }, 240_000);
});

describe.skipIf(!hasBwrap)('exec, eval and run', () => {
  it('exec records each attempt and names a policy other than the default in the signature', async () => {
    const dir = tmp();
    dirs.push(dir);
    const samples = join(dir, 'samples.jsonl');
    writeFileSync(samples, [{ task_id: 'HumanEval/0', completion: '    import time\n    time.sleep(10)\n' }, { task_id: 'HumanEval/0', completion: '    return False\n' }].map((r) => JSON.stringify(r) + '\n').join(''));
    const problems = readBenchmark('humaneval');
    const { rows, summary } = await execSystems({ problems, samples: [samples], ks: [1], timeoutMs: 1000, memoryMb: 512, jobs: 2, sandbox: 'bwrap', outDir: join(dir, 'out'), timeoutRetry: 'never' });
    expect(rows[0].status).toBe('timeout');
    expect(rows[0].attempts).toHaveLength(1);
    expect(rows[0].attempts[0].cpu_ms).toBeLessThan(300);
    expect(rows[1].attempts[0].cpu_ms).toBeGreaterThanOrEqual(0);
    expect(summary.systems[0].signature).toContain('|timeout:1s|timeout-retry:never|');
    const written = readFileSync(join(dir, 'out', 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(written[0].attempts[0]).toMatchObject({ status: 'timeout', timeout_ms: 1000 });
    expect(typeof written[0].attempts[0].cpu_ms).toBe('number');
    // the same folder under another policy is another run
    await expect(execSystems({ problems, samples: [samples], ks: [1], timeoutMs: 1000, memoryMb: 512, jobs: 2, sandbox: 'bwrap', outDir: join(dir, 'out') })).rejects.toThrow(/holds a run of "samples" with other settings/);
  });

  it('a bad --timeout-retry (or exec.timeout_retry) is one line naming it, exit 2', async () => {
    const dir = tmp();
    dirs.push(dir);
    const samples = join(dir, 's.jsonl');
    writeFileSync(samples, '{"task_id": "HumanEval/0", "completion": "    return True\\n"}\n');
    for (const argv of [
      ['exec', '--benchmark', 'humaneval', '--samples', samples, '--out', join(dir, 'o'), '--timeout-retry', 'sometimes'],
      ['eval', '--benchmark', 'humaneval', '--model', 'openai:x', '--out', join(dir, 'e'), '--timeout-retry', 'sometimes'],
      ['run', '--config', join(dir, 'none.yaml'), '--timeout-retry', 'sometimes'],
    ]) {
      const r = await cli(...argv);
      expect(r.code, argv[0]).toBe(2);
      expect(r.err.trim().split('\n'), argv[0]).toHaveLength(1);
      expect(r.err, argv[0]).toMatch(/--timeout-retry.*sometimes/);
    }
    const config = join(dir, 'codegauge.config.yaml');
    writeFileSync(config, `exec:\n  benchmark: humaneval\n  limit: 1\n  systems:\n    canonical: canonical\n  timeout_retry: sometimes\n`);
    const bad = await cli('run', '--config', config, '--out', join(dir, 'r'));
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    expect(bad.err).toMatch(/exec\.timeout_retry/);
  });

  it('run: exec.timeout_retry reaches the exec signature; --timeout-retry overrides it', async () => {
    const dir = tmp();
    dirs.push(dir);
    const config = join(dir, 'codegauge.config.yaml');
    writeFileSync(config, `exec:\n  benchmark: humaneval\n  limit: 1\n  systems:\n    canonical: canonical\n  sandbox: bwrap\n  timeout_retry: starved\n`);
    const first = await cli('run', '--config', config, '--out', join(dir, 'a'), '--format', 'json');
    expect(first.code, first.err).toBe(0);
    expect(JSON.parse(first.out).scores.find((s: { metric: string }) => s.metric === 'pass@1').signature).toContain('|timeout-retry:starved|');
    const second = await cli('run', '--config', config, '--out', join(dir, 'b'), '--format', 'json', '--timeout-retry', 'always');
    expect(second.code, second.err).toBe(0);
    expect(JSON.parse(second.out).scores.find((s: { metric: string }) => s.metric === 'pass@1').signature).not.toContain('timeout-retry');
  });
});
