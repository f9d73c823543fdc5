import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { execSystems, retriesTimeout, type ExecAttempt } from '../src/exec/run.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { findExecutable } from '../src/exec/sandbox/paths.js';
import type { SandboxMode } from '../src/exec/sandbox/types.js';
import { JS_DOUBLE, PY_DOUBLE } from './exec-attacks.js';
import { runBatch } from './exec-fixtures.js';
import { cli } from './helpers.js';

/**
 * `--timeout-retry always|starved|never` (default `starved`): what a timeout leads to, decided on the CPU time the
 * runner measured for the attempt. Nothing here depends on how busy the machine is: the policy is tested on given
 * CPU figures, and real programs only where the outcome is the same at any load (a program that sleeps uses no CPU;
 * for one that burns it, the decision must match its own measurement, whatever that was).
 */
const hasBwrap = bwrapAvailable();
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'codegauge-retry-test-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the policy', () => {
  it('always retries, never does not, starved retries below half a core or when the CPU time is unknown', () => {
    expect(retriesTimeout('always', { timeoutMs: 3000, cpuMs: 3000 })).toBe(true);
    expect(retriesTimeout('never', { timeoutMs: 3000, cpuMs: 0 })).toBe(false);
    expect(retriesTimeout('starved', { timeoutMs: 3000, cpuMs: 1499 })).toBe(true);
    expect(retriesTimeout('starved', { timeoutMs: 3000, cpuMs: 1500 })).toBe(false);
    expect(retriesTimeout('starved', { timeoutMs: 3000 })).toBe(true);
    // killed by its CPU-time limit: it had the CPU
    expect(retriesTimeout('starved', { timeoutMs: 3000, cpuMs: 100, cpuLimit: true })).toBe(false);
  });
});

/** Under `starved`, each retry must follow from its attempt's own CPU figure: below half its time, or unknown. */
function consistent(attempts: ExecAttempt[]): void {
  expect(attempts.length).toBeGreaterThanOrEqual(1);
  expect(attempts.length).toBeLessThanOrEqual(2);
  expect(attempts.map((a) => a.timeout_ms)).toEqual([1000, 2000].slice(0, attempts.length));
  const first = attempts[0];
  const retried = first.cpu_ms === undefined || first.cpu_ms < first.timeout_ms / 2;
  expect(attempts.length === 2, JSON.stringify(attempts)).toBe(retried);
}

const PY_SLEEP = '    import time\n    time.sleep(30)\n';
const PY_BURN = '    while True:\n        pass\n';
const JS_SLEEP = '  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30000);\n}\n';
const JS_BURN = '  for (;;) {}\n}\n';

const modes: { mode: SandboxMode; runs: boolean }[] = [
  { mode: 'bwrap', runs: hasBwrap },
  { mode: 'process', runs: !!findExecutable('prlimit') && process.platform === 'linux' },
];

describe.each(modes)('CPU time decides the retry ($mode)', ({ mode, runs }) => {
  it.skipIf(!runs)('a sleeping program (no CPU at any load) gets its second attempt; a burning one as its CPU time says', async () => {
    const rows = await runBatch(mode, [PY_DOUBLE, JS_DOUBLE], [
      { name: 'py-sleep', task_id: PY_DOUBLE.taskId, completion: PY_SLEEP },
      { name: 'py-burn', task_id: PY_DOUBLE.taskId, completion: PY_BURN },
      { name: 'js-sleep', task_id: JS_DOUBLE.taskId, completion: JS_SLEEP },
      { name: 'js-burn', task_id: JS_DOUBLE.taskId, completion: JS_BURN },
    ], { timeoutMs: 1000, jobs: 2 });
    for (const name of ['py-sleep', 'py-burn', 'js-sleep', 'js-burn']) {
      expect(rows[name].status, name).toBe('timeout');
      consistent(rows[name].attempts);
    }
    for (const name of ['py-sleep', 'js-sleep']) {
      expect(rows[name].attempts, name).toHaveLength(2);
      expect(rows[name].attempts[0].cpu_ms, name).toBeLessThan(500);
    }
  }, 60_000);
});

describe.skipIf(!hasBwrap)('exec, eval and run', () => {
  it('exec records each attempt and names the policy in the signature; never gives one attempt', async () => {
    const dir = tmp();
    const samples = join(dir, 'samples.jsonl');
    writeFileSync(samples, [{ task_id: 'HumanEval/0', completion: '    import time\n    time.sleep(10)\n' }, { task_id: 'HumanEval/0', completion: '    return False\n' }].map((r) => JSON.stringify(r) + '\n').join(''));
    const problems = readBenchmark('humaneval');
    const { rows, summary } = await execSystems({ problems, samples: [samples], ks: [1], timeoutMs: 1000, memoryMb: 512, jobs: 2, sandbox: 'bwrap', outDir: join(dir, 'out'), timeoutRetry: 'never' });
    expect(rows[0].status).toBe('timeout');
    expect(rows[0].attempts).toHaveLength(1);
    expect(rows[0].attempts[0].cpu_ms).toBeLessThan(500);
    expect(summary.systems[0].signature).toContain('|timeout:1s|timeout-retry:never|');
    const written = readFileSync(join(dir, 'out', 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(written[0].attempts[0]).toMatchObject({ status: 'timeout', timeout_ms: 1000 });
    expect(typeof written[0].attempts[0].cpu_ms).toBe('number');
    // the same folder under another policy is another run
    await expect(execSystems({ problems, samples: [samples], ks: [1], timeoutMs: 1000, memoryMb: 512, jobs: 2, sandbox: 'bwrap', outDir: join(dir, 'out') })).rejects.toThrow(/holds a run of "samples" with other settings/);
  }, 60_000);

  it('a bad --timeout-retry (or exec.timeout_retry) is one line naming it, exit 2', async () => {
    const dir = tmp();
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

  it('run: exec.timeout_retry reaches the exec signature (starved by default); --timeout-retry overrides it', async () => {
    const dir = tmp();
    const config = join(dir, 'codegauge.config.yaml');
    writeFileSync(config, `exec:\n  benchmark: humaneval\n  limit: 1\n  systems:\n    canonical: canonical\n  sandbox: bwrap\n`);
    const first = await cli('run', '--config', config, '--out', join(dir, 'a'), '--format', 'json');
    expect(first.code, first.err).toBe(0);
    expect(JSON.parse(first.out).scores.find((s: { metric: string }) => s.metric === 'pass@1').signature).toContain('|timeout-retry:starved|');
    const second = await cli('run', '--config', config, '--out', join(dir, 'b'), '--format', 'json', '--timeout-retry', 'always');
    expect(second.code, second.err).toBe(0);
    expect(JSON.parse(second.out).scores.find((s: { metric: string }) => s.metric === 'pass@1').signature).toContain('|timeout-retry:always|');
  }, 60_000);
});
