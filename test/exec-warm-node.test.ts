import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../src/exec/problems.js';
import { runSample } from '../src/exec/run.js';
import { runnerFor } from '../src/exec/runners.js';
import { bwrapAvailable, Sandbox } from '../src/exec/sandbox.js';
import { WarmNodePool } from '../src/exec/warm-node.js';
import { WarmPythonPool } from '../src/exec/warm-python.js';
import { hostBait, javascriptProblem, JS_OK, processesWith } from './exec-fixtures.js';

/**
 * The warm JavaScript runner (one node per worker slot, a fresh Worker per program): the attacks of
 * test/exec-sandbox.test.ts in JavaScript, run both through a fresh node per program and through the warm runner,
 * and what only a warm runner can get wrong (one program affecting the next, a program that kills the server, a
 * timeout followed by an ordinary program). Untrusted code runs only inside the sandbox and is bounded in time.
 */
const hasBwrap = bwrapAvailable();

const problem = javascriptProblem('warm/1');
const OK = JS_OK;
const WRONG = 'function f(){ return 2; }\n';

describe.skipIf(!hasBwrap).each([{ node: 'a fresh node per program', warm: false }, { node: 'the warm runner (a Worker per program)', warm: true }])('sandbox (bwrap), JavaScript through $node: attacks fail safe', ({ warm }) => {
  const sandbox = hasBwrap ? new Sandbox('bwrap') : undefined;
  const pool = warm && sandbox ? new WarmNodePool(sandbox) : undefined;
  const attack = (code: string, opts: { timeoutMs?: number; memoryMb?: number } = {}) =>
    runSample(sandbox!, { problem, runner: runnerFor('javascript'), code }, { timeoutMs: opts.timeoutMs ?? 3000, memoryMb: opts.memoryMb ?? 512 }, 0, undefined, undefined, pool);
  const { secret, planted, target, port, connections } = hostBait();
  afterAll(() => pool?.close());

  it('writing outside the temp folder changes nothing on the host', async () => {
    const repoFile = join(process.cwd(), `codegauge-attack-js-${process.pid}.txt`);
    const paths = [target, repoFile, '/usr/codegauge-attack-js', '/etc/codegauge-attack-js'];
    const { verdict } = await attack(`${OK}const fs = require('fs');\nfor (const p of ${JSON.stringify(paths)}) { try { fs.writeFileSync(p, 'pwned'); console.log('WROTE', p); } catch (e) { console.log('blocked', p, e.code); } }\n`);
    expect(verdict.status).toBe('passed');
    for (const p of paths) expect(existsSync(p), p).toBe(false);
  });

  it('a file planted outside the temp folder cannot be read', async () => {
    const { verdict } = await attack(`${OK}let data = ''; try { data = require('fs').readFileSync(${JSON.stringify(planted)}, 'utf8'); } catch {}\nif (data.includes(${JSON.stringify(secret)})) throw new Error('read the planted file');\n`);
    expect(verdict.status).toBe('passed');
    expect(verdict.stderr).not.toContain(secret);
  });

  it('cannot connect to a TCP server on the host 127.0.0.1', async () => {
    const { verdict } = await attack(`${OK}const s = require('net').connect(${port()}, '127.0.0.1'); s.on('connect', () => { console.log('CONNECTED'); process.exit(3); }); s.on('error', () => {});\n`);
    expect(verdict.status).toBe('passed');
    expect(connections()).toBe(0);
  });

  it('a fork bomb is contained and leaves nothing running', async () => {
    const marker = `cgjsforkbomb${Date.now()}`;
    const started = Date.now();
    const { verdict, attempts } = await attack(`${OK}const cp = require('child_process');\nfor (let i = 0; i < 10000; i++) { try { cp.spawn('/bin/sleep', ['30', '${marker}'], { detached: true, stdio: 'ignore' }).on('error', () => {}); } catch { break; } }\nsetTimeout(() => {}, 30000);\n`, { timeoutMs: 1000 });
    expect(verdict.status).toBe('timeout');
    expect(attempts).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(20_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(processesWith(marker)).toEqual([]);
  });

  it('infinite loops, synchronous and asynchronous, time out and are retried once with twice the time', async () => {
    for (const loop of ['while (true) {}', '(async () => { for (;;) await null; })();', 'setInterval(() => {}, 1);', 'const spin = () => Promise.resolve().then(spin); spin();']) {
      const { verdict, attempts } = await attack(`${OK}${loop}\n`, { timeoutMs: 500 });
      expect(verdict.status, loop).toBe('timeout');
      expect(attempts.map((a) => [a.status, a.timeout_ms]), loop).toEqual([['timeout', 500], ['timeout', 1000]]);
    }
  });

  it('allocating 10 GB fails with status memory, in the V8 heap or outside it (Buffers)', async () => {
    const programs = [
      'const a = []; for (let i = 0; i < 100; i++) a.push(Buffer.alloc(100 * 1024 * 1024, 1));',
      'const b = new ArrayBuffer(10 * 1024 ** 3);',
      "const a = []; for (;;) a.push('x'.repeat(1 << 20).split(''));",
    ];
    for (const code of programs) {
      const { verdict } = await attack(`${OK}${code}\n`, { timeoutMs: 10_000 });
      expect(verdict.status, code).toBe('memory');
    }
  });

  it('printing 1 GB is cut off quickly, whichever way it is printed', async () => {
    for (const how of ['process.stdout.write(chunk)', 'console.log(chunk)', "require('fs').writeSync(1, chunk)"]) {
      const started = Date.now();
      const { verdict } = await attack(`${OK}const chunk = 'x'.repeat(1 << 20);\nfor (let i = 0; i < 1024; i++) ${how};\n`, { timeoutMs: 10_000 });
      expect(verdict.status, how).toBe('runtime_error');
      expect(verdict.note, how).toBe('output limit exceeded');
      expect(Date.now() - started, how).toBeLessThan(8000);
    }
  });

  it('a child left running after the program exits is killed', async () => {
    const marker = `cgjsorphan${Date.now()}`;
    const { verdict } = await attack(`${OK}const cp = require('child_process');\ncp.spawn('/bin/sleep', ['60', '${marker}'], { detached: true, stdio: 'ignore' }).unref();\ncp.spawn('/bin/sh', ['-c', 'sleep 60 ${marker}-sh & exit 0'], { stdio: 'ignore' });\n`);
    expect(verdict.status).toBe('passed');
    await new Promise((r) => setTimeout(r, 300));
    expect(processesWith(marker)).toEqual([]);
  });

  it('exiting 0 before the tests is not a pass', async () => {
    for (const exit of ['process.exit(0);', 'process.exitCode = 0; process.exit();', "require('fs').writeSync(1, '0'.repeat(32) + '\\n'); process.exit(0);"]) {
      const { verdict } = await attack(`${WRONG}${exit}\n`);
      expect(verdict.status, exit).toBe('failed');
      expect(verdict.note, exit).toBe('exited before the tests finished');
    }
  });

  it('asserts run by a timer are still judged; uncaught errors and unhandled rejections fail', async () => {
    const late = (code: string) => `${code}setTimeout(() => { require('node:assert').deepEqual(f(), 1); }, 50);\n`;
    expect((await attack(late(OK))).verdict.status).toBe('passed');
    expect((await attack(late(WRONG))).verdict.status).toBe('failed');
    expect((await attack(`${OK}Promise.reject(new Error('nope'));\n`)).verdict.status).toBe('runtime_error');
    expect((await attack(`${OK}setTimeout(() => { throw new TypeError('late'); }, 20);\n`)).verdict).toMatchObject({ status: 'runtime_error', note: expect.stringContaining('TypeError') });
    expect((await attack(`${OK}(async () => { require('node:assert').strictEqual(f(), 2); })();\n`)).verdict.status).toBe('failed');
    expect((await attack('function f(){ return 1;\n')).verdict.status).toBe('compile_error');
  });
});

describe.skipIf(!hasBwrap)('the warm JavaScript runner', () => {
  const sandbox = hasBwrap ? new Sandbox('bwrap') : undefined;
  const node = runnerFor('javascript');
  const nodeBinary = () => node.program(problem, OK).run[0];
  const limits = { timeoutMs: 3000, memoryMb: 512, memoryKind: 'data' as const, processes: 64 };

  it('one program does not affect the next (globals, built-in prototypes, require cache, env, files)', async () => {
    const pool = new WarmNodePool(sandbox!);
    try {
      const run = (code: string, timeoutMs = 3000) => runSample(sandbox!, { problem, runner: node, code }, { timeoutMs, memoryMb: 512 }, 0, undefined, undefined, pool);
      const dirty = `${OK}
globalThis.leaked = 42;
Array.prototype.includes = () => true;
Object.prototype.polluted = 'yes';
JSON.parse = () => ({});
require('node:assert').deepEqual = () => undefined;
require.cache[require.resolve('node:assert')] = { exports: {} };
require('fs').writeFileSync('/tmp/left-behind', 'x');
require('fs').writeFileSync('left-behind.txt', 'x');
process.env.LEFT_BEHIND = '1';
process.exitCode = 0;
`;
      expect((await run(dirty)).verdict.status).toBe('passed');
      const check = `function f(){
  const fs = require('fs');
  const seen = [typeof globalThis.leaked !== 'undefined', [].includes(1), ({}).polluted === 'yes', JSON.parse('{"a":1}').a !== 1,
    fs.existsSync('/tmp/left-behind'), fs.existsSync('left-behind.txt'), process.env.LEFT_BEHIND !== undefined];
  return seen.some(Boolean) ? JSON.stringify(seen) : 1;
}
`;
      expect((await run(check)).verdict.status).toBe('passed');
      // the assert module is the next program's own
      expect((await run(WRONG)).verdict.status).toBe('failed');
    } finally {
      pool.close();
    }
  });

  it('a program that kills the server is run again on its own; the next program gets a fresh server', async () => {
    const pool = new WarmNodePool(sandbox!);
    try {
      const run = (code: string) => runSample(sandbox!, { problem, runner: node, code }, { timeoutMs: 3000, memoryMb: 512 }, 0, undefined, undefined, pool);
      // only where it is a Worker: on its own it passes
      for (const kill of ["process.kill(process.pid, 'SIGKILL')", 'process.abort()', 'require("fs").closeSync(3)']) {
        const { verdict } = await run(`${OK}if (!require('worker_threads').isMainThread) ${kill};\n`);
        expect(verdict.status, kill).toBe('passed');
        expect((await run(WRONG)).verdict.status, kill).toBe('failed');
        expect((await run(OK)).verdict.status, kill).toBe('passed');
      }
    } finally {
      pool.close();
    }
  });

  it('a timeout, then an ordinary program; a Worker that cannot be terminated takes the sandbox with it', async () => {
    const pool = new WarmNodePool(sandbox!);
    try {
      const run = (code: string, timeoutMs: number) => runSample(sandbox!, { problem, runner: node, code }, { timeoutMs, memoryMb: 512 }, 0, undefined, undefined, pool);
      expect((await run(`${OK}while (true) {}\n`, 400)).verdict.status).toBe('timeout');
      expect((await run(OK, 3000)).verdict.status).toBe('passed');
      // blocked in open() of a FIFO nobody writes: terminate() cannot interrupt a system call
      const stuck = `${OK}require('child_process').execFileSync('/usr/bin/mkfifo', ['/tmp/fifo']);\nrequire('fs').openSync('/tmp/fifo', 'r');\n`;
      const started = Date.now();
      expect((await run(stuck, 400)).verdict.status).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await run(OK, 3000)).verdict.status).toBe('passed');
      expect((await run(WRONG, 3000)).verdict.status).toBe('failed');
    } finally {
      pool.close();
    }
  });

  it('stdin, stdout and stderr as a process has them', async () => {
    const pool = new WarmNodePool(sandbox!);
    try {
      const program = `const fs = require('fs');
console.log('log');
process.stdout.write('write\\n');
fs.writeSync(1, 'fd1\\n');
fs.writeFileSync('/dev/stdout', 'devstdout\\n');
console.error('error');
fs.writeSync(2, 'fd2\\n');
const line = fs.readFileSync(0, 'utf8').trim();
console.log('stdin=' + line);
`;
      const r = await pool.run(nodeBinary(), { 'program.js': program }, 'program.js', 'the-nonce\n', limits, 0);
      expect(r.exitCode).toBe(0);
      expect(r.stdout.split('\n').filter(Boolean)).toEqual(['log', 'write', 'fd1', 'devstdout', 'stdin=the-nonce']);
      expect(r.stderr).toBe('error\nfd2\n');
      const streamed = await pool.run(nodeBinary(), { 'program.js': "let s = ''; process.stdin.on('data', (d) => (s += d)); process.stdin.on('end', () => console.log('got ' + s.trim()));\n" }, 'program.js', 'abc\n', limits, 0);
      expect(streamed.stdout).toBe('got abc\n');
      // the first program's output is not the second's
      expect(streamed.stderr).toBe('');
    } finally {
      pool.close();
    }
  });

  it('what a Worker cannot do (process.chdir) is run on its own', async () => {
    const pool = new WarmNodePool(sandbox!);
    try {
      const { verdict } = await runSample(sandbox!, { problem, runner: node, code: `${OK}process.chdir('/tmp');\n` }, { timeoutMs: 3000, memoryMb: 512 }, 0, undefined, undefined, pool);
      expect(verdict.status).toBe('passed');
    } finally {
      pool.close();
    }
  });
});

describe.skipIf(!hasBwrap)('warm runners: a program cannot trap what the host does next', () => {
  const sandbox = hasBwrap ? new Sandbox('bwrap') : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'codegauge-exec-test-'));
  const secret = `codegauge-secret-${process.pid}-${Date.now()}`;
  const planted = join(dir, 'planted.txt');
  const trapDir = join(dir, 'job');
  beforeAll(() => {
    writeFileSync(planted, secret, { mode: 0o666 });
    // what the host would read, were it to follow a link put in place of a job's folder
    mkdirSync(trapDir);
    writeFileSync(join(trapDir, 'stderr.txt'), secret);
    writeFileSync(join(trapDir, 'stdout.txt'), secret);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('JavaScript: links in place of its output files or of the next program are not followed', async () => {
    const pool = new WarmNodePool(sandbox!);
    try {
      const run = (code: string) => runSample(sandbox!, { problem, runner: runnerFor('javascript'), code }, { timeoutMs: 3000, memoryMb: 512 }, 0, undefined, undefined, pool);
      const trap = `${OK}const fs = require('fs');
for (const name of ['.codegauge-stdout', '.codegauge-stderr', 'program.js', '.codegauge-stdin']) { try { fs.unlinkSync('/sandbox/' + name); } catch {} fs.symlinkSync(${JSON.stringify(planted)}, '/sandbox/' + name); }
fs.mkdirSync('/sandbox/sub'); fs.symlinkSync('/etc', '/sandbox/sub/etc');
`;
      const { verdict } = await run(trap);
      expect(verdict.status).toBe('failed'); // its stdout (with the nonce) is a link now: read as empty
      expect(verdict.stderr).not.toContain(secret);
      expect((await run(OK)).verdict.status).toBe('passed');
      expect(readFileSync(planted, 'utf8')).toBe(secret);
    } finally {
      pool.close();
    }
  });

  it("Python: the next job's folder made in advance, or its own folder swapped for a link", async () => {
    const pool = new WarmPythonPool(sandbox!);
    const py: Problem = { taskId: 'warm/2', key: 'warm/2', language: 'python', format: 'human-eval', line: 1, prompt: 'def f():\n', tests: 'def check(candidate):\n    assert candidate() == 1\n', entryPoint: 'f' };
    try {
      const run = (code: string) => runSample(sandbox!, { problem: py, runner: runnerFor('python'), code }, { timeoutMs: 3000, memoryMb: 512 }, 0, pool);
      const trap = `def f():\n    return 1\nimport os\nfor i in range(50):\n    os.makedirs('/sandbox/j%d' % i, exist_ok=True)\nhere = os.getcwd()\nos.rename(here, here + '-moved')\nos.symlink(${JSON.stringify(trapDir)}, here)\n`;
      const { verdict } = await run(trap);
      expect(verdict.stderr).not.toContain(secret);
      for (let i = 0; i < 3; i++) expect((await run('def f():\n    return 1\n')).verdict.status).toBe('passed');
      expect(readFileSync(join(trapDir, 'stderr.txt'), 'utf8')).toBe(secret);
    } finally {
      pool.close();
    }
  });
});
