import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { PY_AFTER, PY_CORRECT, PY_DOUBLE, PY_FORGERS, PY_NEIGHBOURS, PY_RESOURCES } from './exec-attacks.js';
import { hostBait, PYODIDE_LONG_MS, pyodideSkipReason, runBatch, why } from './exec-fixtures.js';

/**
 * The attacks of test/exec-pyodide.test.ts (`npm run test:full`: a fresh interpreter per candidate job costs ~0.5 s,
 * and there are some sixty): forgers, routes to the host (files, the FFI, the network), neighbours, resources and
 * timeouts. Real attacks against a file, a folder and a 127.0.0.1 server this test makes; each must fail safe.
 */
const skipReason = pyodideSkipReason();
const LONG = PYODIDE_LONG_MS;

describe.skipIf(!!skipReason)('sandbox (pyodide): attacks', () => {
  const { secret, planted, target, port, connections } = hostBait('codegauge-pyodide-test-');

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

});
