import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import type { Problem } from '../src/exec/problems.js';
import { readBenchmark } from '../src/exec/problems.js';
import { pyodideNodeFlags, pyodidePackage, pyodideRunnerFor } from '../src/exec/pyodide.js';
import { runSample } from '../src/exec/run.js';
import { resolveSandboxMode, Sandbox } from '../src/exec/sandbox.js';
import { hostBait, PY_OK, pythonProblem } from './exec-fixtures.js';
import { cli } from './helpers.js';

/**
 * `--sandbox pyodide`: Python in WebAssembly inside restricted node children. Real attacks against a file, a folder
 * and a 127.0.0.1 server this test makes; each must fail safe. Loading pyodide takes seconds, and a program that
 * may not leave its interpreter to the next one costs a new child: the tests share one sandbox where they can.
 */
let skipReason = '';
try {
  pyodidePackage();
} catch (e) {
  skipReason = (e as Error).message;
}
if (skipReason) console.warn(`exec-pyodide: skipped: ${skipReason}`);

const tmp = () => mkdtempSync(join(tmpdir(), 'codegauge-pyodide-test-'));
const LONG = 240_000;

const problem = pythonProblem('attack/0');

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
  const sandbox = skipReason ? undefined : new Sandbox('pyodide');
  const runner = skipReason ? undefined : pyodideRunnerFor('python');
  const run = (code: string, opts: { timeoutMs?: number; memoryMb?: number; slot?: number; task?: Problem } = {}) =>
    runSample(sandbox!, { problem: opts.task ?? problem, runner: runner!, code }, { timeoutMs: opts.timeoutMs ?? 5000, memoryMb: opts.memoryMb ?? 512 }, opts.slot ?? 0);

  const { dir, secret, planted, target, port, connections } = hostBait('codegauge-pyodide-test-');
  afterAll(() => sandbox?.close());

  it('resolves only when asked for (auto never picks it) and names pyodide and its CPython in the signature', () => {
    expect(resolveSandboxMode('pyodide')).toBe('pyodide');
    expect(runner!.version).toMatch(/^pyodide-0\.28\.\d+\/python-3\.13\.\d+$/);
    expect(() => pyodideRunnerFor('javascript')).toThrow(/--sandbox pyodide runs Python only; javascript samples need --sandbox bwrap or --sandbox process/);
  });

  it("HumanEval's canonical solutions pass, a wrong one fails, a syntax error is a compile error", async () => {
    const set = readBenchmark('humaneval');
    for (const i of [0, 2, 12, 32, 53, 108, 163]) {
      const p = set.problems[i];
      const { verdict } = await run(runner!.code(p, { index: 0, taskId: p.taskId, line: 1, completion: p.canonicalSolution }), { task: p });
      expect({ task: p.taskId, status: verdict.status, stderr: verdict.stderr }).toEqual({ task: p.taskId, status: 'passed', stderr: '' });
    }
    const p = set.problems[53]; // add(x, y)
    const wrong = await run(runner!.code(p, { index: 0, taskId: p.taskId, line: 1, completion: '    return x - y\n' }), { task: p });
    expect(wrong.verdict.status).toBe('failed');
    expect(wrong.verdict.stderr).toMatch(/AssertionError/);
    expect((await run('def f(:\n    return 1\n')).verdict.status).toBe('compile_error');
  }, LONG);

  it('exiting before the tests (sys.exit(0), os._exit(0)) never passes; exit codes carry through', async () => {
    for (const exit of ['import sys\nsys.exit(0)\n', 'import os\nos._exit(0)\n', 'raise SystemExit\n']) {
      const { verdict } = await run(`${PY_OK}${exit}`);
      expect(verdict.status).toBe('failed');
      expect(verdict.note).toBe('exited before the tests finished');
    }
    const three = await run(`${PY_OK}import sys\nsys.exit(3)\n`);
    expect(three.verdict).toMatchObject({ status: 'runtime_error', exitCode: 3 });
    const seven = await run(`${PY_OK}import os\nos._exit(7)\n`);
    expect(seven.verdict).toMatchObject({ status: 'runtime_error', exitCode: 7 });
  }, LONG);

  it('an endless loop times out (the child is killed) and is retried once with twice the time', async () => {
    const { verdict, attempts } = await run(`${PY_OK}while True:\n    pass\n`, { timeoutMs: 1000 });
    expect(verdict.status).toBe('timeout');
    expect(attempts.map((a) => [a.status, a.timeout_ms])).toEqual([['timeout', 1000], ['timeout', 2000]]);
    expect((await run(PY_OK)).verdict.status).toBe('passed'); // the next program gets a fresh interpreter
  }, LONG);

  it('allocating 10 GB is a memory verdict, within --memory', async () => {
    const gradual = await run(`${PY_OK}chunks = []\nfor _ in range(100):\n    chunks.append(bytearray(100 * 2**20))\n`, { memoryMb: 256 });
    expect(gradual.verdict.status).toBe('memory');
    const once = await run(`${PY_OK}x = bytearray(10 * 2**30)\n`, { memoryMb: 256 });
    expect(once.verdict.status).toBe('memory');
    expect((await run(PY_OK, { memoryMb: 256 })).verdict.status).toBe('passed');
  }, LONG);

  it('printing 1 GB is stopped at the output cap; this process stays small', async () => {
    const before = process.memoryUsage().rss;
    const started = performance.now();
    const loop = await run(`${PY_OK}import sys\nfor _ in range(1024):\n    try:\n        sys.stdout.write('x' * 2**20)\n    except OSError:\n        pass\n`);
    expect(loop.verdict).toMatchObject({ status: 'runtime_error', note: 'output limit exceeded' });
    const once = await run(`${PY_OK}print('x' * 2**30)\n`, { memoryMb: 512 });
    expect(['memory', 'runtime_error']).toContain(once.verdict.status);
    expect(performance.now() - started).toBeLessThan(60_000);
    expect(process.memoryUsage().rss - before).toBeLessThan(256 * 1024 * 1024);
  }, LONG);

  it('a file planted on the host cannot be read: not by open(), not through js, pyodide_js, the FFI or NODEFS', async () => {
    const plain = await run(`${PY_OK}
try:
    data = open(${JSON.stringify(planted)}).read()
except OSError:
    data = ''
assert ${JSON.stringify(secret)} not in data, 'read the planted file'
for name in ('js', 'pyodide_js'):
    try:
        __import__(name)
        raise SystemExit('imported ' + name)
    except ImportError:
        pass
`);
    expect(plain.verdict.status).toBe('passed');
    // every way to a JavaScript object is refused at the boundary of WebAssembly, and the program stops there
    const routes = [
      `import pyodide_js\npyodide_js.FS.mkdir('/host')\npyodide_js.FS.mount(pyodide_js.FS.filesystems.NODEFS, {'root': ${JSON.stringify(dir)}}, '/host')\nprint(open('/host/planted.txt').read())`,
      `from pyodide.ffi import to_js\nfs = to_js({}).constructor.constructor('return process')().mainModule.require('fs')\nprint(fs.readFileSync(${JSON.stringify(planted)}, 'utf8'))`,
      `import gc\nfrom pyodide.ffi import JsProxy\nfor o in gc.get_objects():\n    if isinstance(o, JsProxy):\n        o.FS.mount(o.FS.filesystems.NODEFS, {'root': '/'}, '/mnt')\n        print(open(${JSON.stringify('/mnt' + planted)}).read())\nraise SystemExit('no JavaScript object found')`,
      `import pyodide.code\nprint(pyodide.code.run_js("require('fs').readFileSync(${planted}, 'utf8')"))`,
    ];
    for (const route of routes) {
      const { verdict } = await run(`${PY_OK}${route}\n`);
      expect(verdict.status).not.toBe('passed');
      expect(verdict.stderr).not.toContain(secret);
      if (route.includes('to_js')) expect(verdict.stderr).toMatch(/reached past Python \(\w+\)/);
    }
  }, LONG);

  it('writes stay inside the interpreter: nothing on the host changes', async () => {
    const repoFile = join(process.cwd(), `codegauge-pyodide-attack-${process.pid}.txt`);
    const { verdict } = await run(`${PY_OK}
import os
for path in [${JSON.stringify(target)}, ${JSON.stringify(repoFile)}]:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as fh:
            fh.write('pwned')
    except OSError:
        pass
try:
    print(os.system('touch ${target}'))
except Exception:
    pass
`);
    expect(['passed', 'runtime_error']).toContain(verdict.status);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(repoFile)).toBe(false);
    const reread = await run(`${PY_OK}import os\nassert not os.path.exists(${JSON.stringify(target)}), 'a file from the last program'\n`);
    expect(reread.verdict.status).toBe('passed');
  }, LONG);

  it('cannot reach a TCP server on the host 127.0.0.1: not by sockets, urllib, or any JavaScript route', async () => {
    const python = await run(`${PY_OK}
import socket, urllib.request
try:
    s = socket.create_connection(('127.0.0.1', ${port()}), timeout=1)
    print('CONNECTED', s.recv(10))
except OSError as e:
    print('refused', e)
try:
    urllib.request.urlopen('http://127.0.0.1:${port()}/', timeout=1)
except Exception as e:
    print('refused', e)
`);
    expect(python.verdict.status).toBe('passed');
    for (const route of [
      `from pyodide.http import pyfetch\nimport asyncio\nasyncio.run(pyfetch('http://127.0.0.1:${port()}/'))`,
      `from pyodide.ffi import to_js\nto_js([]).constructor.constructor('return fetch')()('http://127.0.0.1:${port()}/')`,
      `import pyodide_js\npyodide_js._module.SOCKFS`,
    ]) {
      const { verdict } = await run(`${PY_OK}${route}\n`);
      expect(verdict.status).not.toBe('passed');
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(connections()).toBe(0);
  }, LONG);

  it('what one program changes, the next one does not see', async () => {
    const tamper = `${PY_OK}
import builtins, math, json, sys, os, collections.abc, random, string, warnings, logging
builtins.len = lambda x: 42
math.sqrt = lambda x: -1.0
json.JSONEncoder.default = lambda self, o: 'patched'
sys.setrecursionlimit(50)
sys.path.insert(0, '/tmp/evil')
os.environ['CODEGAUGE_LEAK'] = '1'
collections.abc.Sequence.register(int)
random.seed(1234)
string.ascii_letters = 'abc'
warnings.simplefilter('ignore')
logging.basicConfig(level=logging.DEBUG)
open('/tmp/leak.txt', 'w').write('leak')
__builtins__.sorted = lambda *a, **k: []
import textwrap
textwrap.dedent.__code__ = (lambda text: 'patched').__code__
`;
    const check = `${PY_OK}
import builtins, math, json, sys, os, collections.abc, random, string, warnings, logging
assert len([1, 2]) == 2, 'len'
assert math.sqrt(4) == 2.0, 'math.sqrt'
assert json.JSONEncoder.default.__qualname__ == 'JSONEncoder.default', 'class attribute'
assert sys.getrecursionlimit() >= 1000, 'recursion limit'
assert '/tmp/evil' not in sys.path, 'sys.path'
assert 'CODEGAUGE_LEAK' not in os.environ, 'environment'
assert not isinstance(1, collections.abc.Sequence), 'ABC registry'
assert string.ascii_letters.startswith('abcdefghij') and len(string.ascii_letters) == 52, 'module attribute'
assert not logging.getLogger().handlers, 'logging'
assert not os.path.exists('/tmp/leak.txt'), 'file'
assert sorted([2, 1]) == [1, 2], 'builtins through __builtins__'
import textwrap
assert textwrap.dedent('  x') == 'x', 'code of a library function'
`;
    const first = await run(tamper);
    expect(first.verdict.status).toBe('passed');
    const second = await run(check);
    expect(second.verdict).toMatchObject({ status: 'passed', stderr: '' });
    // each deeper change alone (a class attribute, a handler on a module-level logger, an ABC registration) is seen
    for (const [change, check] of [
      ["json.JSONEncoder.default = lambda self, o: 'patched'", "json.JSONEncoder.default.__qualname__ == 'JSONEncoder.default'"],
      ['logging.getLogger().addHandler(logging.NullHandler())', 'not logging.getLogger().handlers'],
      ['collections.abc.Sequence.register(int)', 'not isinstance(1, collections.abc.Sequence)'],
    ]) {
      const imports = 'import json, logging, collections.abc\n';
      expect((await run(`${PY_OK}${imports}${change}\n`)).verdict.status).toBe('passed');
      expect((await run(`${PY_OK}${imports}assert ${check}, ${JSON.stringify(change)}\n`)).verdict).toMatchObject({ status: 'passed', stderr: '' });
    }
    // a rebinding alone is undone without a new interpreter; the next program still starts clean
    for (let i = 0; i < 2; i++) {
      expect((await run(`${PY_OK}import builtins, math\nbuiltins.len = lambda x: 42\nmath.sqrt = None\n`)).verdict.status).toBe('passed');
      expect((await run(`${PY_OK}import math\nassert len([1]) == 1 and math.sqrt(9) == 3.0\n`)).verdict.status).toBe('passed');
    }
  }, LONG);

  it('runs in a node child with no eval, a capped heap and the permission model; those flags alone deny host access', async () => {
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
    if (process.platform === 'linux') {
      // the children running now were started with exactly these flags
      await run(PY_OK);
      const children = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map((e) => { try { return readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0'); } catch { return []; } }).filter((argv) => argv.some((a) => /codegauge-pyodide-[^/]+[/\\]child\.mjs$/.test(a)) && argv[0] === process.execPath);
      expect(children.length).toBeGreaterThan(0);
      for (const argv of children) expect(argv).toEqual(expect.arrayContaining(['--disallow-code-generation-from-strings', '--max-old-space-size=512', expect.stringMatching(/^--(experimental-)?permission$/)]));
    }
  }, LONG);
});

describe.skipIf(!!skipReason)('exec --sandbox pyodide (CLI)', () => {
  it('gives the right pass@1 on a small HumanEval sample file, and the signature says pyodide', async () => {
    const dir = tmp();
    const set = readBenchmark('humaneval');
    const samples = join(dir, 'samples.jsonl');
    const rows = [0, 1, 2, 3].map((i) => ({ task_id: set.problems[i].taskId, completion: i === 3 ? '    return None\n' : set.problems[i].canonicalSolution }));
    writeFileSync(samples, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const r = await cli('exec', '--benchmark', 'humaneval', '--samples', samples, '--out', join(dir, 'out'), '--sandbox', 'pyodide', '--k', '1', '--jobs', '2', '--timeout', '10', '--format', 'json');
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.out) as { systems: { pass_at: Record<string, number>; statuses: Record<string, number>; signature: string }[] };
    expect(summary.systems[0].pass_at['1']).toBeCloseTo(0.75, 12);
    expect(summary.systems[0].statuses).toMatchObject({ passed: 3, failed: 1, sandbox_error: 0 });
    expect(summary.systems[0].signature).toMatch(/^exec\|runner:pyodide-0\.28\.\d+\/python-3\.13\.\d+\|sandbox:pyodide\|timeout:10s\|memory:1024MB\|/);
    rmSync(dir, { recursive: true, force: true });
  }, LONG);

  it('a non-Python benchmark under --sandbox pyodide is a usage error naming the language and the modes that run it', async () => {
    const dir = tmp();
    const samples = join(dir, 'samples.jsonl');
    writeFileSync(samples, JSON.stringify({ task_id: 'HumanEval_0_has_close_elements', completion: '}' }) + '\n');
    const r = await cli('exec', '--benchmark', 'humaneval-js', '--samples', samples, '--out', join(dir, 'out'), '--sandbox', 'pyodide');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--sandbox pyodide runs Python only; javascript samples need --sandbox bwrap or --sandbox process/);
    rmSync(dir, { recursive: true, force: true });
  });
});
