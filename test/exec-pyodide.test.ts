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
import { PY_AFTER, PY_CORRECT, PY_DOUBLE, PY_FORGERS, PY_NEIGHBOURS, PY_RESOURCES } from './exec-attacks.js';
import { hostBait, runBatch, why } from './exec-fixtures.js';
import { cli } from './helpers.js';

/**
 * `--sandbox pyodide`: Python in WebAssembly inside restricted node children, a fresh interpreter per candidate job
 * (from a memory snapshot) and the tests in another. Real attacks against a file, a folder and a 127.0.0.1 server this
 * test makes; each must fail safe. The attacks run in a few batches (a fresh child costs ~0.5 s).
 */
let skipReason = '';
try {
  pyodidePackage();
} catch (e) {
  skipReason = (e as Error).message;
}
if (skipReason) console.warn(`exec-pyodide: skipped: ${skipReason}`);
const LONG = 240_000;

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
  const { dir, secret, planted, target, port, connections } = hostBait('codegauge-pyodide-test-');

  it('resolves only when asked for (auto never picks it), names pyodide and its CPython, runs Python only', () => {
    expect(resolveSandboxMode('pyodide')).toBe('pyodide');
    expect(pyodideRunnerFor('python').version).toMatch(/^pyodide-0\.28\.\d+\/python-3\.13\.\d+$/);
    expect(() => pyodideRunnerFor('javascript')).toThrow(/--sandbox pyodide runs Python only; javascript samples need --sandbox bwrap or --sandbox process/);
  });

  it('forgers fail, canonical solutions pass, a syntax error is compile_error; no route reaches the host', async () => {
    const humaneval = readBenchmark('humaneval');
    const canonical = [0, 2, 12, 32, 53, 108, 163].map((i) => ({ name: `canonical-${i}`, task_id: humaneval.problems[i].taskId, completion: humaneval.problems[i].canonicalSolution! }));
    const ok = '    return 2 * x\n';
    const routes = {
      'read-planted': `    try:\n        data = open(${JSON.stringify(planted)}).read()\n    except OSError:\n        data = ''\n    return 2 * x if ${JSON.stringify(secret)} not in data else x\n`,
      'import-js': "    for name in ('js', 'pyodide_js'):\n        try:\n            __import__(name)\n            return x\n        except ImportError:\n            pass\n    return 2 * x\n",
      'ffi-node-fs': `    from pyodide.ffi import to_js\n    fs = to_js({}).constructor.constructor('return process')().mainModule.require('fs')\n    print(fs.readFileSync(${JSON.stringify(planted)}, 'utf8'))\n${ok}`,
      'ffi-mount': `    import gc\n    from pyodide.ffi import JsProxy\n    for o in gc.get_objects():\n        if isinstance(o, JsProxy):\n            o.FS.mount(o.FS.filesystems.NODEFS, {'root': '/'}, '/mnt')\n            print(open(${JSON.stringify('/mnt' + planted)}).read())\n    raise SystemExit('no JavaScript object found')\n`,
      'write-host': `    import os\n    for path in (${JSON.stringify(target)},):\n        try:\n            open(path, 'w').write('pwned')\n        except OSError:\n            pass\n${ok}`,
      'socket': `    import socket\n    try:\n        socket.create_connection(('127.0.0.1', ${port()}), timeout=1)\n        return x\n    except OSError:\n        return 2 * x\n`,
      'fetch': `    from pyodide.http import pyfetch\n    import asyncio\n    asyncio.run(pyfetch('http://127.0.0.1:${port()}/'))\n${ok}`,
    };
    const samples = [
      ...canonical,
      { name: 'wrong', task_id: humaneval.problems[53].taskId, completion: '    return x - y\n' },
      { name: 'syntax', task_id: humaneval.problems[53].taskId, completion: '    return x +\n' },
      ...PY_FORGERS,
      ...Object.entries(routes).map(([name, completion]) => ({ name, task_id: PY_DOUBLE.taskId, completion })),
    ];
    const rows = await runBatch('pyodide', { ...humaneval, problems: [...humaneval.problems, PY_DOUBLE], byKey: new Map([...humaneval.byKey, [PY_DOUBLE.key, PY_DOUBLE]]) }, samples, { jobs: 2 });
    for (const c of canonical) expect(rows[c.name].status, `${c.name}: ${why(rows[c.name])}`).toBe('passed');
    expect(rows.wrong.status).toBe('failed');
    expect(rows.syntax.status, why(rows.syntax)).toBe('compile_error');
    for (const s of PY_FORGERS) {
      expect(rows[s.name].status, `${s.name}: ${why(rows[s.name])}`).not.toBe('passed');
      expect(rows[s.name].stderr, s.name).not.toContain('FOUND');
    }
    // plain Python finds nothing of the host; every way to a JavaScript object is refused and the program stops there
    for (const name of ['read-planted', 'import-js', 'socket']) expect(rows[name].status, `${name}: ${why(rows[name])}`).toBe('passed');
    for (const name of ['ffi-node-fs', 'ffi-mount', 'fetch']) {
      expect(rows[name].status, name).not.toBe('passed');
      expect(rows[name].stderr).not.toContain(secret);
    }
    expect(rows['ffi-node-fs'].stderr).toMatch(/reached past Python \(\w+\)/);
    expect(existsSync(target)).toBe(false);
    expect(connections()).toBe(0);
  }, LONG);

  it('what one program changes the next one does not see; files, output and memory are bounded', async () => {
    const rows = await runBatch('pyodide', [PY_DOUBLE], [...PY_NEIGHBOURS, ...PY_RESOURCES, ...PY_AFTER]);
    for (const s of PY_NEIGHBOURS.filter((x) => x.name.startsWith('probe'))) expect(rows[s.name].status, `${s.name}: ${why(rows[s.name])}`).toBe('passed');
    expect(rows['correct-after'].status).toBe('passed');
    expect(rows['wrong-after'].status).toBe('failed');
    // the in-memory files count against --disk and --memory (64 MiB here): a full disk, not a grown runner
    const wrote = Number(/wrote (\d+) MiB, then No space left on device/.exec(rows['disk-fill'].stderr)?.[1]);
    expect(wrote, why(rows['disk-fill'])).toBeLessThanOrEqual(64);
    expect(rows['output-flood'].status, why(rows['output-flood'])).toBe('output_limit');
    expect(rows.memory.status, why(rows.memory)).toBe('memory');
  }, LONG);

  it('an endless loop times out (its child is killed)', async () => {
    const rows = await runBatch('pyodide', [PY_DOUBLE], [{ name: 'loop', task_id: PY_DOUBLE.taskId, completion: '    while True:\n        pass\n' }, { name: 'after', task_id: PY_DOUBLE.taskId, completion: PY_CORRECT }], { timeoutMs: 2000 });
    expect(rows.loop.status).toBe('timeout');
    expect(rows.after.status).toBe('passed');
  }, LONG);

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
