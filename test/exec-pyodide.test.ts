import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { pyodideRunnerFor } from '../src/exec/runners/pyodide.js';
import { resolveSandboxMode } from '../src/exec/sandbox/mode.js';
import { pyodidePackage } from '../src/exec/sandbox/pyodide/package.js';
import { pyodideNodeFlags } from '../src/exec/sandbox/pyodide/pool.js';
import { hostBait, PYODIDE_LONG_MS, pyodideSkipReason } from './exec-fixtures.js';
import { cli } from './helpers.js';

/**
 * `--sandbox pyodide`: Python in WebAssembly inside restricted node children, a fresh interpreter per candidate job
 * (from a memory snapshot) and the tests in another. Real attacks against a file, a folder and a 127.0.0.1 server this
 * test makes; each must fail safe. The attacks run in a few batches (a fresh child costs ~0.5 s).
 */
const skipReason = pyodideSkipReason();
const LONG = PYODIDE_LONG_MS;

describe('sandbox (pyodide): the optional package', () => {
  it('missing, it is one usage error naming the npm install to run', () => {
    const missing = () => {
      throw Object.assign(new Error("Cannot find module 'pyodide/package.json'"), { code: 'MODULE_NOT_FOUND' });
    };
    expect(() => pyodidePackage(missing)).toThrow(UsageError);
    expect(() => pyodidePackage(missing)).toThrow('--sandbox pyodide needs the optional package pyodide: npm install pyodide@0.28');
  });
});

describe.skipIf(!!skipReason)('sandbox (pyodide)', () => {
  const { dir, planted, target } = hostBait('codegauge-pyodide-test-');

  it('resolves only when asked for (auto never picks it), names pyodide and its CPython, runs Python only', () => {
    expect(resolveSandboxMode('pyodide')).toBe('pyodide');
    expect(pyodideRunnerFor('python').version).toMatch(/^pyodide-0\.28\.\d+\/python-3\.13\.\d+$/);
    expect(() => pyodideRunnerFor('javascript')).toThrow(/--sandbox pyodide runs Python only; javascript samples need --sandbox bwrap or --sandbox process/);
  });

  it('runs in a node child with no eval, a capped heap and the permission model; those flags alone deny host access', () => {
    const pkg = pyodidePackage();
    const probe = join(dir, 'probe.mjs');
    writeFileSync(probe, `
const out = {};
const fs = await import('node:fs');
const cp = await import('node:child_process');
const tryIt = (name, f) => { try { f(); out[name] = 'allowed'; } catch (e) { out[name] = e.code ?? e.name; } };
tryIt('read', () => fs.readFileSync(${JSON.stringify(planted)}, 'utf8'));
tryIt('write', () => fs.writeFileSync(${JSON.stringify(target)}, 'x'));
tryIt('spawn', () => cp.spawnSync('true'));
tryIt('eval', () => eval('1 + 1'));
tryIt('Function', () => new Function('return 1')());
tryIt('binding', () => process.binding('fs'));
tryIt('pyodide', () => fs.readFileSync(${JSON.stringify(pkg.dir + 'package.json')}));
console.log(JSON.stringify(out));
`);
    const r = spawnSync(process.execPath, [...pyodideNodeFlags(pkg, probe), probe], { encoding: 'utf8', env: {} });
    const seen = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, string>;
    expect(seen).toEqual({ read: 'ERR_ACCESS_DENIED', write: 'ERR_ACCESS_DENIED', spawn: 'ERR_ACCESS_DENIED', eval: 'EvalError', Function: 'EvalError', binding: 'ERR_ACCESS_DENIED', pyodide: 'allowed' });
    expect(existsSync(target)).toBe(false);
  });
});

describe.skipIf(!!skipReason)('exec --sandbox pyodide (CLI)', () => {
  it('gives the right pass@1 on a small HumanEval sample file, and the signature says pyodide', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codegauge-pyodide-cli-'));
    const set = readBenchmark('humaneval');
    const samples = join(dir, 'samples.jsonl');
    const rows = [0, 1, 2, 3].map((i) => ({ task_id: set.problems[i].taskId, completion: i === 3 ? '    return None\n' : set.problems[i].canonicalSolution }));
    writeFileSync(samples, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const r = await cli('exec', '--benchmark', 'humaneval', '--samples', samples, '--out', join(dir, 'out'), '--sandbox', 'pyodide', '--k', '1', '--jobs', '2', '--timeout', '10', '--format', 'json');
    expect(r.code, r.err).toBe(0);
    const summary = JSON.parse(r.out) as { systems: { pass_at: Record<string, number>; statuses: Record<string, number>; signature: string }[] };
    expect(summary.systems[0].pass_at['1']).toBeCloseTo(0.75, 12);
    expect(summary.systems[0].statuses).toMatchObject({ passed: 3, failed: 1, sandbox_error: 0 });
    expect(summary.systems[0].signature).toMatch(/^exec\|runner:pyodide-0\.28\.\d+\/python-3\.13\.\d+\|sandbox:pyodide\|timeout:10s\|timeout-retry:starved\|memory:1024MB\|/);
    const results = readFileSync(join(dir, 'out', 'results.jsonl'), 'utf8');
    expect(results).toContain('"isolation":"boundary"');
    rmSync(dir, { recursive: true, force: true });
  }, LONG);

  it('a non-Python benchmark under --sandbox pyodide is a usage error naming the language and the modes that run it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codegauge-pyodide-cli-'));
    const samples = join(dir, 'samples.jsonl');
    writeFileSync(samples, JSON.stringify({ task_id: 'HumanEval_0_has_close_elements', completion: '}' }) + '\n');
    const r = await cli('exec', '--benchmark', 'humaneval-js', '--samples', samples, '--out', join(dir, 'out'), '--sandbox', 'pyodide');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--sandbox pyodide runs Python only; javascript samples need --sandbox bwrap or --sandbox process/);
    rmSync(dir, { recursive: true, force: true });
  });
});
