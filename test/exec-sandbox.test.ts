import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addExecCommand } from '../src/cli/exec.js';
import { exitRequest } from '../src/cli/io.js';
import { readBenchmark, readProblems, type Problem } from '../src/exec/problems.js';
import { execSystems, runSample } from '../src/exec/run.js';
import { runnerFor } from '../src/exec/runners.js';
import { bwrapAvailable, findExecutable, Sandbox, type SandboxMode } from '../src/exec/sandbox.js';
import { WarmNodePool } from '../src/exec/warm-node.js';
import { WarmPythonPool } from '../src/exec/warm-python.js';
import { hostBait, javascriptProblem, processesWith, PY_OK, pythonProblem, tempDir } from './exec-fixtures.js';

/**
 * Real attacks, each of which must fail safe and leave the host untouched. They run untrusted code only inside the
 * sandbox, target only files and a 127.0.0.1 server this test makes, and are bounded in time.
 */
const hasBwrap = bwrapAvailable();
const tmp = () => tempDir('codegauge-exec-test-');

const pyProblem = pythonProblem('attack/0');
const jsProblem = javascriptProblem('attack/1');

async function attack(mode: SandboxMode, code: string, opts: { timeoutMs?: number; memoryMb?: number; problem?: Problem; warm?: boolean } = {}) {
  const problem = opts.problem ?? pyProblem;
  const sandbox = new Sandbox(mode);
  const warm = opts.warm ? new WarmPythonPool(sandbox) : undefined;
  // JavaScript's attacks in full, fresh and warm: test/exec-warm-node.test.ts
  const warmNode = opts.warm ? new WarmNodePool(sandbox) : undefined;
  try {
    return await runSample(sandbox, { problem, runner: runnerFor(problem.language), code }, { timeoutMs: opts.timeoutMs ?? 3000, memoryMb: opts.memoryMb ?? 512 }, 0, warm, undefined, warmNode);
  } finally {
    warm?.close();
    warmNode?.close();
  }
}


describe.skipIf(!hasBwrap).each([{ python: 'a fresh interpreter per program', warm: false }, { python: 'the warm runner (fork server)', warm: true }])('sandbox (bwrap), Python through $python: attacks fail safe', ({ warm }) => {
  const attackBwrap = (_mode: SandboxMode, code: string, opts: Parameters<typeof attack>[2] = {}) => attack('bwrap', code, { ...opts, warm });
  const { secret, planted, target, port, connections } = hostBait();

  it('writing outside the temp folder changes nothing on the host', async () => {
    const repoFile = join(process.cwd(), `codegauge-attack-${process.pid}.txt`);
    const code = `${PY_OK}
for path in [${JSON.stringify(target)}, ${JSON.stringify(repoFile)}, '/usr/codegauge-attack', '/etc/codegauge-attack']:
    try:
        with open(path, 'w') as fh:
            fh.write('pwned')
        print('WROTE', path)
    except OSError as e:
        print('blocked', path, e)
`;
    const { verdict } = await attackBwrap('bwrap', code);
    expect(verdict.status).toBe('passed'); // the program ran; its writes went nowhere
    expect(existsSync(target)).toBe(false);
    expect(existsSync(repoFile)).toBe(false);
    expect(existsSync('/usr/codegauge-attack')).toBe(false);
    expect(existsSync('/etc/codegauge-attack')).toBe(false);
  });

  it('a file planted outside the temp folder cannot be read', async () => {
    const code = `${PY_OK}
import sys
try:
    data = open(${JSON.stringify(planted)}).read()
except OSError:
    data = ''
assert ${JSON.stringify(secret)} not in data, 'read the planted file'
`;
    const { verdict } = await attackBwrap('bwrap', code);
    expect(verdict.status).toBe('passed');
    expect(verdict.stderr).not.toContain(secret);
  });

  it('cannot connect to a TCP server on the host 127.0.0.1', async () => {
    const code = `${PY_OK}
import socket
try:
    s = socket.create_connection(('127.0.0.1', ${port()}), timeout=1)
    print('CONNECTED', s.recv(10))
    raise SystemExit(3)
except OSError as e:
    print('refused', e)
`;
    const { verdict } = await attackBwrap('bwrap', code);
    expect(verdict.status).toBe('passed');
    expect(connections()).toBe(0);
    const js = await attackBwrap('bwrap', `function f(){ return 1; }\nconst net = require('net'); const s = net.connect(${port()}, '127.0.0.1'); s.on('connect', () => { console.log('CONNECTED'); process.exit(3); }); s.on('error', () => {});\n`, { problem: jsProblem });
    expect(js.verdict.status).not.toBe('sandbox_error');
    expect(connections()).toBe(0);
  });

  it('a fork bomb is contained and leaves nothing running', async () => {
    const marker = `cgforkbomb${Date.now()}`;
    const code = `${PY_OK}
import os, time
for i in range(10000):
    try:
        if os.fork() == 0:
            os.execv('/bin/sleep', ['/bin/sleep', '30', '${marker}'])
    except OSError:
        break
time.sleep(30)
`;
    const started = Date.now();
    const { verdict, attempts } = await attackBwrap('bwrap', code, { timeoutMs: 1000 });
    expect(verdict.status).toBe('timeout');
    expect(attempts).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(15_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(processesWith(marker)).toEqual([]);
  });

  it('an infinite loop times out, is retried once with twice the time, both attempts recorded', async () => {
    const { verdict, attempts } = await attackBwrap('bwrap', `${PY_OK}\nwhile True:\n    pass\n`, { timeoutMs: 500 });
    expect(verdict.status).toBe('timeout');
    expect(attempts.map((a) => [a.status, a.timeout_ms])).toEqual([['timeout', 500], ['timeout', 1000]]);
  });

  it('allocating 10 GB fails with status memory', async () => {
    const { verdict } = await attackBwrap('bwrap', `${PY_OK}\nx = bytearray(10 * 1024 ** 3)\n`);
    expect(verdict.status).toBe('memory');
    const js = await attackBwrap('bwrap', `function f(){ return 1; }\nconst a = []; for (let i = 0; i < 100; i++) a.push(Buffer.alloc(100 * 1024 * 1024, 1));\n`, { problem: jsProblem });
    expect(js.verdict.status).toBe('memory');
  });

  it('printing 1 GB is cut off quickly', async () => {
    const started = Date.now();
    const { verdict } = await attackBwrap('bwrap', `${PY_OK}\nimport sys\nchunk = 'x' * (1 << 20)\nfor i in range(1024):\n    sys.stdout.write(chunk)\n`, { timeoutMs: 10_000 });
    expect(verdict.status).toBe('runtime_error');
    expect(verdict.note).toBe('output limit exceeded');
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('a child left running after the program exits is killed', async () => {
    const marker = `cgorphan${Date.now()}`;
    const code = `${PY_OK}
import os, subprocess
if os.fork() == 0:
    os.setsid()
    os.execv('/bin/sleep', ['/bin/sleep', '60', '${marker}'])
subprocess.Popen(['/bin/sleep', '60', '${marker}'], start_new_session=True)
`;
    const { verdict } = await attackBwrap('bwrap', code);
    expect(verdict.status).toBe('passed');
    await new Promise((r) => setTimeout(r, 300));
    expect(processesWith(marker)).toEqual([]);
  });

  it.runIf(warm)('what one program leaves (files, unreadable folders, links) the next one does not see', async () => {
    const sandbox = new Sandbox('bwrap');
    const pool = new WarmPythonPool(sandbox);
    const run = (code: string) => runSample(sandbox, { problem: pyProblem, runner: runnerFor('python'), code }, { timeoutMs: 5000, memoryMb: 512 }, 0, pool);
    try {
      const dirty = `${PY_OK}
import os
for base in ['.', '/tmp', '/sandbox']:
    os.makedirs(base + '/left/deep', exist_ok=True)
    open(base + '/left/deep/file.txt', 'w').write('x')
    open(base + '/left-behind.txt', 'w').write('x')
    os.chmod(base + '/left/deep', 0)
    os.chmod(base + '/left', 0)
for name in ['stdin.txt', 'program.py']:
    os.symlink('/sandbox/.codegauge-server.py', '/tmp/' + name)
os.symlink('/etc', '/sandbox/.codegauge-stdout-link')
`;
      expect((await run(dirty)).verdict.status).toBe('passed');
      const check = `def f():
    import os
    seen = [p for p in ['left', 'left-behind.txt', '/tmp/left', '/tmp/left-behind.txt', '/sandbox/left', '/sandbox/left-behind.txt', '/tmp/stdin.txt', '/tmp/program.py', '/sandbox/.codegauge-stdout-link'] if os.path.lexists(p)]
    return 1 if not seen and not os.listdir('/tmp')[1:] else seen
`;
      expect((await run(check)).verdict.status).toBe('passed');
      expect((await run('def f():\n    return 2\n')).verdict.status).toBe('failed');
    } finally {
      pool.close();
    }
  });

  it('exiting 0 before the tests is not a pass', async () => {
    for (const exit of ['import sys\nsys.exit(0)', 'import os\nos._exit(0)', 'raise SystemExit']) {
      const { verdict } = await attackBwrap('bwrap', `def f():\n    return 2\n${exit}\n`);
      expect(verdict.status, exit).toBe('failed');
      expect(verdict.note).toBe('exited before the tests finished');
    }
    const js = await attackBwrap('bwrap', 'function f(){ return 2; }\nprocess.exit(0);\n', { problem: jsProblem });
    expect(js.verdict.status).toBe('failed');
    // the nonce is not in the program: printing a guess does not help
    const guess = await attackBwrap('bwrap', `def f():\n    return 2\nprint('0' * 32)\nimport os\nos._exit(0)\n`);
    expect(guess.verdict.status).toBe('failed');
  });
});

describe('sandbox (process mode): the same limits without isolation', () => {
  it('times out, caps memory and output, kills what the program leaves running', async () => {
    expect((await attack('process', `${PY_OK}\nwhile True:\n    pass\n`, { timeoutMs: 300 })).verdict.status).toBe('timeout');
    expect((await attack('process', `${PY_OK}\nx = bytearray(10 * 1024 ** 3)\n`)).verdict.status).toBe('memory');
    expect((await attack('process', `${PY_OK}\nimport sys\nfor i in range(1024):\n    sys.stdout.write('x' * (1 << 20))\n`)).verdict.note).toBe('output limit exceeded');
    const marker = `cgorphanp${Date.now()}`;
    const { verdict } = await attack('process', `${PY_OK}\nimport subprocess\nsubprocess.Popen(['/bin/sleep', '60', '${marker}'])\n`);
    expect(verdict.status).toBe('passed');
    await new Promise((r) => setTimeout(r, 300));
    expect(processesWith(marker)).toEqual([]);
    expect((await attack('process', 'def f():\n    return 2\nimport os\nos._exit(0)\n')).verdict.status).toBe('failed');
  });
});

describe.skipIf(!hasBwrap)('runners and benchmarks (bwrap)', () => {
  it("HumanEval's 164 canonical solutions all pass", async () => {
    const set = readBenchmark('humaneval');
    const dir = tmp();
    const samples = join(dir, 'canonical.jsonl');
    writeFileSync(samples, set.problems.map((p) => JSON.stringify({ task_id: p.taskId, completion: p.canonicalSolution })).join('\n') + '\n');
    const { summary, rows } = await execSystems({ problems: set, samples: [samples], ks: [1], timeoutMs: 10_000, memoryMb: 1024, jobs: 2, sandbox: 'bwrap', outDir: join(dir, 'out') });
    expect(rows.filter((r) => !r.passed).map((r) => `${r.task_id}: ${r.status} ${r.stderr}`)).toEqual([]);
    expect(summary.systems[0]).toMatchObject({ n: 164, problems: 164, pass_at: { '1': 1 } });
    expect(summary.systems[0].signature).toMatch(/^exec\|runner:python-\d+\.\d+\.\d+\|sandbox:bwrap\|timeout:10s\|memory:1024MB\|problems:[0-9a-f]{12}\|version:/);
  }, 240_000);

  const toolchains: Record<string, boolean> = {
    ts: true,
    cpp: !!findExecutable('g++'),
    java: !!findExecutable('javac') && existsSync('/usr/share/java/javatuples.jar'),
  };
  it.each(['ts', 'cpp', 'java'])('%s: MultiPL-E problems run (right, wrong, not compiling, exiting early)', async (lang) => {
    if (!toolchains[lang]) return; // .ci/run installs g++, openjdk-17-jdk-headless and libjavatuples-java
    const dir = tmp();
    const fixtures = new URL('./fixtures/exec/', import.meta.url).pathname;
    // the same file twice: the second system's identical programs are compiled once (same verdicts)
    const samples = join(fixtures, `samples-${lang}.jsonl`);
    const { rows, summary } = await execSystems({ problems: readProblems(join(fixtures, `humaneval-${lang}-sample.jsonl`)), samples: [samples, samples], ks: [1], timeoutMs: 10_000, memoryMb: 1024, jobs: 2, sandbox: 'bwrap', outDir: dir });
    expect(rows.map((r) => r.status)).toEqual(['passed', 'failed', 'compile_error', 'failed', 'passed', 'failed', 'compile_error', 'failed']);
    expect(summary.systems.map((s) => s.name)).toEqual([`samples-${lang}`, `samples-${lang}#2`]);
    expect(rows[3].note).toBe('exited before the tests finished');
    expect(summary.systems[0].signature).toMatch(lang === 'java' ? /runner:java-/ : lang === 'cpp' ? /runner:g\+\+-/ : /runner:node-[\d.]+,typescript-/);
  }, 120_000);

  it.each(['python', 'cpp', 'java'])('HumanEval-X (%s): prompt + completion + test', async (lang) => {
    if (lang !== 'python' && !toolchains[lang]) return;
    const fixtures = new URL('./fixtures/exec/', import.meta.url).pathname;
    const { rows } = await execSystems({ problems: readProblems(join(fixtures, `humaneval-x-${lang}.jsonl`)), samples: [join(fixtures, `samples-x-${lang}.jsonl`)], ks: [1], timeoutMs: 10_000, memoryMb: 1024, jobs: 2, sandbox: 'bwrap', outDir: tmp() });
    expect(rows.map((r) => r.passed)).toEqual(lang === 'python' ? [true, true, false] : [true, false]);
  }, 120_000);

  it('a program that kills the warm runner is run again on its own, not called a sandbox error', async () => {
    const { verdict } = await attack('bwrap', `${PY_OK}\nimport os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept OSError:\n    pass\n`, { warm: true });
    expect(verdict.status).toBe('passed');
  });

  it('every bundled JavaScript prompt, closed, parses together with its tests', () => {
    const rows = gunzipSync(readFileSync('data/humaneval-js/humaneval-js.jsonl.gz')).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as { name: string; prompt: string; tests: string });
    expect(rows).toHaveLength(161);
    const broken = rows.filter((r) => {
      try {
        new Script(`${r.prompt}}\n${r.tests}`); // compiled, never run
        return false;
      } catch {
        return true;
      }
    });
    expect(broken.map((r) => r.name)).toEqual([]);
  });

  it("agrees with ICE-Score's recorded execution labels on a deterministic subset (every 20th sample)", async () => {
    for (const lang of ['python', 'js'] as const) {
      const ice = JSON.parse(gunzipSync(readFileSync(`data/ice-humaneval/humaneval_${lang}_grade.json.gz`)).toString('utf8')) as Record<string, unknown>[];
      const all: { task_id: string; prompt: string; completion: string; label: boolean }[] = [];
      for (const p of ice) {
        const keys = Object.keys(p).filter((k) => /^\d+$/.test(k) && p[`grade-${k}`]).sort((a, b) => Number(a) - Number(b));
        for (const k of keys) all.push({ task_id: `HumanEval/${p.task_id}`, prompt: p.intent as string, completion: p[k] as string, label: (p[`grade-${k}`] as { execution: number }).execution === 1 });
      }
      // HumanEval_51's recorded JavaScript labels come from a test with a raw newline in a string literal
      const subset = all.filter((s, i) => i % 20 === 0 && !(lang === 'js' && s.task_id === 'HumanEval/51'));
      const dir = tmp();
      const samples = join(dir, `ice-${lang}.jsonl`);
      writeFileSync(samples, subset.map(({ label: _label, ...s }) => JSON.stringify(s)).join('\n') + '\n');
      const { rows } = await execSystems({ problems: readBenchmark(lang === 'js' ? 'humaneval-js' : 'humaneval'), samples: [samples], ks: [1], timeoutMs: 3000, memoryMb: 1024, jobs: 2, sandbox: 'bwrap', outDir: join(dir, 'out') });
      const agree = rows.filter((r, i) => r.passed === subset[i].label).length;
      expect(agree / rows.length, `${lang}: ${agree} of ${rows.length}`).toBeGreaterThanOrEqual(lang === 'js' ? 0.995 : 0.985);
    }
  }, 400_000);

  it('resumes after a kill: only what is missing runs, no duplicate rows, input order', async () => {
    const dir = tmp();
    const set = readBenchmark('humaneval');
    const samples = join(dir, 'sys.jsonl');
    const lines = [0, 1, 2, 3, 4].map((i) => JSON.stringify({ task_id: `HumanEval/${i}`, completion: i % 2 ? '    return None\n' : set.problems[i].canonicalSolution }));
    writeFileSync(samples, lines.join('\n') + '\n');
    const out = join(dir, 'out');
    const options = { problems: set, samples: [samples], ks: [1], timeoutMs: 5000, memoryMb: 512, jobs: 2, sandbox: 'bwrap' as const, outDir: out };
    const first = await execSystems(options);
    const results = join(out, 'results.jsonl');
    const kept = readFileSync(results, 'utf8').split('\n').slice(0, 2);
    writeFileSync(results, kept.join('\n') + '\n{"system": "sys", "ind'); // killed mid-write
    let startedAt = -1;
    const second = await execSystems({ ...options, onProgress: (done) => (startedAt = startedAt < 0 ? done : startedAt) });
    expect(startedAt).toBe(2);
    const rows = readFileSync(results, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(rows.map((r) => r.passed)).toEqual([true, false, true, false, true]);
    expect(second.summary.systems[0].per_problem).toEqual(first.summary.systems[0].per_problem);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ kind: 'exec', systems: [{ name: 'sys', n: 5, problems: 5, statuses: { passed: 3, runtime_error: 0 } }] });
    expect(rows[1]).toMatchObject({ system: 'sys', index: 1, task_id: 'HumanEval/1', status: 'failed', passed: false, exit_code: 1 });
    expect(rows[1].attempts).toHaveLength(1);
    // other settings on the same folder: an error, never a mix of verdicts
    await expect(execSystems({ ...options, timeoutMs: 7000 })).rejects.toThrow(/holds a run of "sys" with other settings/);
  }, 120_000);

  it('the exec command writes results and summary; bad samples are an input error naming file and line', async () => {
    const dir = tmp();
    const samples = join(dir, 'model-a.jsonl');
    writeFileSync(samples, ['{"task_id": "HumanEval_53_add", "completion": "    return x + y\\n"}', '{"task_id": "53", "completion": "    return x - y\\n"}'].join('\n') + '\n');
    const out: string[] = [];
    const run = async (args: string[]) => {
      const program = new Command().exitOverride();
      addExecCommand(program, { out: (s) => out.push(s), err: () => {} });
      await program.parseAsync(['node', 'codegauge', 'exec', ...args]);
    };
    exitRequest.code = 0;
    await run(['--benchmark', 'humaneval', '--samples', samples, '--k', '1,2,10', '--out', join(dir, 'out'), '--format', 'json', '--jobs', '2']);
    const summary = JSON.parse(out.join(''));
    expect(summary.systems[0]).toMatchObject({ name: 'model-a', n: 2, problems: 1, pass_at: { '1': 0.5, '2': 1, '10': null }, per_problem: { 'HumanEval/53': { n: 2, c: 1 } } });
    expect(summary.systems[0].notes[0]).toMatch(/pass@10/);
    expect(exitRequest.code).toBe(0);
    mkdirSync(join(dir, 'bad'));
    writeFileSync(join(dir, 'bad', 'b.jsonl'), '{"task_id": "HumanEval/0", "completion": "x"}\n{"completion": "y"}\n');
    await expect(run(['--benchmark', 'humaneval', '--samples', join(dir, 'bad', 'b.jsonl'), '--out', join(dir, 'out2')])).rejects.toThrow(/b\.jsonl:2: missing field "task_id"/);
  }, 60_000);
});
