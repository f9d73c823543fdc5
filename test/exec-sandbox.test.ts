import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addExecCommand } from '../src/cli/exec.js';
import { exitRequest } from '../src/cli/io.js';
import { UsageError } from '../src/errors.js';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { readProblems } from '../src/exec/benchmarks/problems.js';
import { execSystems } from '../src/exec/run.js';
import { checkJavaProblems } from '../src/exec/runners/java.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { findExecutable } from '../src/exec/sandbox/paths.js';
import { JS_DOUBLE, PY_DOUBLE } from './exec-attacks.js';
import { hostBait, runBatch, tempDir, why } from './exec-fixtures.js';
import { cli } from './helpers.js';

/**
 * The sandbox against the host, the bundled benchmarks through it, and the exec command around it: resume, output,
 * errors, self-test, shards. Untrusted code runs only inside the sandbox, aims only at files and a 127.0.0.1 server
 * this test makes, and is bounded in time.
 */
const hasBwrap = bwrapAvailable();
const tmp = () => tempDir('codegauge-exec-test-');

describe.skipIf(!hasBwrap)('the host is out of reach (bwrap)', () => {
  const { secret, planted, target, port, connections } = hostBait();

  it('no write outside the sandbox, no read of a planted file, no connection to 127.0.0.1: Python and JavaScript', async () => {
    const repoFile = join(process.cwd(), `codegauge-attack-${process.pid}.txt`);
    const paths = JSON.stringify([target, repoFile, '/usr/codegauge-attack', '/etc/codegauge-attack']);
    const rows = await runBatch('bwrap', [PY_DOUBLE, JS_DOUBLE], [
      { name: 'py-write', task_id: PY_DOUBLE.taskId, completion: `    for path in ${paths}:
        try:
            open(path, 'w').write('pwned')
        except OSError:
            pass
    return 2 * x
` },
      { name: 'py-read', task_id: PY_DOUBLE.taskId, completion: `    try:
        data = open(${JSON.stringify(planted)}).read()
    except OSError:
        data = ''
    return 2 * x if ${JSON.stringify(secret)} not in data else x
` },
      { name: 'py-connect', task_id: PY_DOUBLE.taskId, completion: `    import socket
    try:
        socket.create_connection(('127.0.0.1', ${port()}), timeout=1)
        return x
    except OSError:
        return 2 * x
` },
      { name: 'js-write', task_id: JS_DOUBLE.taskId, completion: `  for (const p of ${paths}) { try { require('fs').writeFileSync(p, 'pwned'); } catch (e) {} }
  return 2 * x;
}
` },
      { name: 'js-read', task_id: JS_DOUBLE.taskId, completion: `  let data = '';
  try { data = require('fs').readFileSync(${JSON.stringify(planted)}, 'utf8'); } catch (e) {}
  return data.includes(${JSON.stringify(secret)}) ? x : 2 * x;
}
` },
      { name: 'js-connect', task_id: JS_DOUBLE.taskId, completion: `  try { require('net').connect(${port()}, '127.0.0.1'); } catch (e) {}
  return 2 * x;
}
` },
    ]);
    for (const [name, row] of Object.entries(rows)) expect(row.status, `${name}: ${why(row)}`).toBe('passed');
    for (const path of JSON.parse(paths) as string[]) expect(existsSync(path), path).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
    expect(connections()).toBe(0);
  }, 60_000);
});

describe('whole languages missing a dependency', () => {
  it('Java problems that import javatuples without its jar: one usage error naming the package, before any sample', () => {
    const problem = { ...readProblems(join(new URL('./fixtures/exec/', import.meta.url).pathname, 'humaneval-java-sample.jsonl')).problems[0] };
    expect(problem.prompt + problem.tests).toMatch(/org\.javatuples/);
    expect(() => checkJavaProblems([problem], '/nonexistent/javatuples.jar')).toThrow(UsageError);
    expect(() => checkJavaProblems([problem], '/nonexistent/javatuples.jar')).toThrow(/apt-get install libjavatuples-java/);
    expect(() => checkJavaProblems([{ ...problem, prompt: 'class Problem {', tests: '}' }], '/nonexistent/javatuples.jar')).not.toThrow();
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
    expect(summary.systems[0].signature).toMatch(/^exec\|runner:python-\d+\.\d+\.\d+\|sandbox:bwrap\|timeout:10s\|timeout-retry:starved\|memory:1024MB\|problems:[0-9a-f]{12}\|version:/);
    expect(summary.systems[0].isolation).toEqual({ boundary: 164, in_process: 0, fallbacks: 0 });
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
    expect(rows[1]).toMatchObject({ system: 'sys', index: 1, task_id: 'HumanEval/1', status: 'failed', passed: false, isolation: 'boundary' });
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

describe.skipIf(!hasBwrap)('exec --self-test, --exclude-broken, --shard and merge', () => {
  it('self-test runs the references of a benchmark and lists quarantined tasks with their reasons', async () => {
    const r = await cli('exec', '--self-test', '--benchmark', 'humaneval', '--benchmark', 'humaneval-php', '--format', 'json', '--jobs', '2', '--timeout', '10');
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out) as { benchmarks: { benchmark: string; references: number; passed: number; failed: unknown[]; quarantined: { task_id: string; reason: string }[]; runner?: string; missing?: string }[] };
    const he = report.benchmarks.find((b) => b.benchmark === 'humaneval')!;
    expect(he).toMatchObject({ references: 164, passed: 164, failed: [] });
    const php = report.benchmarks.find((b) => b.benchmark === 'humaneval-php')!;
    expect(php.quarantined.map((q) => q.task_id)).toEqual(['HumanEval_23_strlen']);
    expect(php.quarantined[0].reason).toMatch(/strlen/);
    if (php.runner) expect(php.references).toBe(0);
    else expect(php.missing).toMatch(/apt-get install php-cli/);
  }, 120_000);

  it('shards split by problem; merge of their folders equals one run; --exclude-broken leaves quarantined tasks out', async () => {
    const dir = tmp();
    const set = readBenchmark('humaneval');
    const samples = join(dir, 'sys.jsonl');
    writeFileSync(samples, set.problems.slice(0, 12).flatMap((p, i) => [{ task_id: p.taskId, completion: p.canonicalSolution }, { task_id: String(i), completion: '    return None\n' }]).map((s) => JSON.stringify(s) + '\n').join(''));
    const whole = await cli('exec', '--benchmark', 'humaneval', '--samples', samples, '--out', join(dir, 'whole'), '--k', '1,2', '--jobs', '2', '--format', 'json');
    expect(whole.code, whole.err).toBe(0);
    for (const i of [1, 2, 3]) {
      const r = await cli('exec', '--benchmark', 'humaneval', '--samples', samples, '--out', join(dir, `s${i}`), '--k', '1,2', '--jobs', '2', '--shard', `${i}/3`);
      expect(r.code, r.err).toBe(0);
    }
    const merged = await cli('merge', join(dir, 's1'), join(dir, 's2'), join(dir, 's3'), '--out', join(dir, 'merged'), '--format', 'json');
    expect(merged.code, merged.err).toBe(0);
    const a = JSON.parse(whole.out).systems[0];
    const b = JSON.parse(merged.out).systems[0];
    for (const key of ['pass_at', 'pass_hat', 'n', 'problems', 'statuses', 'per_problem', 'signature', 'isolation']) expect(b[key], key).toEqual(a[key]);
    const strip = (text: string) => text.trim().split('\n').map((l) => { const { duration_ms: _d, attempts: _a, ...rest } = JSON.parse(l); return rest; });
    expect(strip(readFileSync(join(dir, 'merged', 'results.jsonl'), 'utf8'))).toEqual(strip(readFileSync(join(dir, 'whole', 'results.jsonl'), 'utf8')));
    const missing = await cli('merge', join(dir, 's1'), join(dir, 's3'));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/shard\(s\) 2\/3 missing/);
    // a quarantined task (PHP's HumanEval 23) is left out and listed
    const php = join(dir, 'php.jsonl');
    writeFileSync(php, JSON.stringify({ task_id: 'HumanEval_23_strlen', completion: '}' }) + '\n' + JSON.stringify({ task_id: 'HumanEval_2_truncate_number', completion: '}' }) + '\n');
    if (findExecutable('php')) {
      const r = await cli('exec', '--benchmark', 'humaneval-php', '--samples', php, '--out', join(dir, 'php'), '--exclude-broken', '--k', '1', '--format', 'json');
      expect(r.code, r.err).toBe(0);
      const s = JSON.parse(r.out);
      expect(s.systems[0].n).toBe(1);
      expect(s.excluded.map((e: { task_id: string }) => e.task_id)).toEqual(['HumanEval_23_strlen']);
    }
  }, 180_000);

  it('--out under /proc is one line and exit 2, not an endless loop', async () => {
    const dir = tmp();
    const samples = join(dir, 's.jsonl');
    writeFileSync(samples, '{"task_id": "HumanEval/0", "completion": "    return True\\n"}\n');
    const r = await cli('exec', '--benchmark', 'humaneval', '--samples', samples, '--out', '/proc/codegauge-nope/out');
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/\/proc\/codegauge-nope\/out: cannot write/);
  });
});
