#!/usr/bin/env node
// Parity of `codegauge exec` on MBPP and on EvalPlus' plus sets with their reference harnesses, on published model
// samples: EvalPlus' own `evaluate` results (`<model>_eval_results.json[.gz]`: `{eval: {task_id: [{solution,
// base_status, plus_status}]}}`), one greedy sample a task. Nothing here is bundled: the sample files, the EvalPlus
// release files and bigcode-evaluation-harness are the user's copies, named on the command line. Run after
// `npm run build`:
//
//   MBPP (bundled, test split 11-510) against bigcode-evaluation-harness' execution of the same programs:
//     node scripts/mbpp-parity.mjs mbpp --reference BIGCODE/bigcode_eval/tasks/custom_metrics/execute.py RESULTS...
//   HumanEval+ / MBPP+ (a release file) against the verdicts EvalPlus recorded in the results files:
//     node scripts/mbpp-parity.mjs plus --problems HumanEvalPlus-v0.1.10.jsonl.gz RESULTS...
//   options: --jobs N (default 2, as the reference), --sandbox bwrap|process, --timeout S (default 3; EvalPlus' own
//   limit is per input, see docs/execution.md)
//
// Target (issue 25): >= 99% of labels agree. Every disagreement is printed with both verdicts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { execSystems } = await import(join(root, 'dist/exec/run.js'));
const { readBenchmark } = await import(join(root, 'dist/exec/benchmarks/bundled.js'));
const { readProblems, problemKey } = await import(join(root, 'dist/exec/benchmarks/problems.js'));

const [mode, ...rest] = process.argv.slice(2);
const files = [];
const options = {};
for (let i = 0; i < rest.length; i++) {
  if (rest[i].startsWith('--')) options[rest[i].slice(2)] = rest[++i];
  else files.push(rest[i]);
}
if (!['mbpp', 'plus'].includes(mode) || files.length === 0 || (mode === 'mbpp' && !options.reference) || (mode === 'plus' && !options.problems)) {
  console.error('usage: node scripts/mbpp-parity.mjs mbpp --reference EXECUTE_PY RESULTS... | plus --problems FILE RESULTS...');
  process.exit(2);
}
const jobs = Number(options.jobs ?? 2);
const sandbox = options.sandbox ?? 'bwrap';
const timeoutMs = Number(options.timeout ?? 3) * 1000;

const readJson = (path) => JSON.parse((path.endsWith('.gz') ? gunzipSync(readFileSync(path)) : readFileSync(path)).toString('utf8'));
const label = (path) => basename(path).replace(/(_eval_results)?\.json(\.gz)?$/, '');

const problems = mode === 'mbpp' ? readBenchmark('mbpp') : readProblems(options.problems);
const dir = mkdtempSync(join(tmpdir(), 'codegauge-mbpp-parity-'));
let total = 0;
let agreeing = 0;
try {
  for (const path of files) {
    const results = readJson(path).eval;
    const samples = [];
    for (const [taskId, entries] of Object.entries(results)) {
      const problem = problems.byKey.get(problemKey(taskId));
      if (!problem) continue; // MBPP+ tasks outside MBPP's test split
      const entry = entries[0];
      samples.push({ task_id: problem.taskId, solution: entry.solution, evalplus: entry.base_status === 'pass' && entry.plus_status === 'pass', evalplusBase: entry.base_status });
    }
    const file = join(dir, `${label(path)}.jsonl`);
    writeFileSync(file, samples.map((s) => JSON.stringify({ task_id: s.task_id, solution: s.solution })).join('\n') + '\n');
    let started = performance.now();
    const { rows } = await execSystems({ problems, samples: [file], ks: [1], timeoutMs, memoryMb: 1024, jobs, sandbox, outDir: join(dir, `${label(path)}-out`) });
    const ours = (performance.now() - started) / 1000;

    let reference;
    let theirs = NaN;
    if (mode === 'mbpp') {
      // bigcode's program: the generation, a newline, the test list (no setup code, no challenge tests)
      const programs = join(dir, `${label(path)}-programs.jsonl`);
      writeFileSync(programs, samples.map((s) => JSON.stringify({ key: s.task_id, program: s.solution + '\n' + problems.byKey.get(problemKey(s.task_id)).tests.replace(/\n$/, '') })).join('\n') + '\n');
      started = performance.now();
      const run = spawnSync('python3', [join(root, 'scripts/mbpp-parity-reference.py'), options.reference, programs, String(jobs)], { encoding: 'utf8', maxBuffer: 1 << 28 });
      theirs = (performance.now() - started) / 1000;
      if (run.status !== 0) throw new Error(`the reference harness failed: ${run.stderr}`);
      reference = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    } else {
      reference = samples.map((s) => ({ passed: s.evalplus, result: `base ${s.evalplusBase}` }));
    }

    let agree = 0;
    const disagreements = [];
    rows.forEach((row, i) => {
      if (row.passed === reference[i].passed) agree++;
      else disagreements.push(`${row.task_id}: reference ${reference[i].passed ? 'passed' : `failed (${reference[i].result})`}, codegauge ${row.status}${row.note ? ` (${row.note.slice(0, 160)})` : ''}`);
    });
    const passAt1 = (n) => ((100 * n) / rows.length).toFixed(1);
    total += rows.length;
    agreeing += agree;
    console.log(`${label(path)}: ${agree} of ${rows.length} labels agree; pass@1 codegauge ${passAt1(rows.filter((r) => r.passed).length)}, reference ${passAt1(reference.filter((r) => r.passed).length)}; ${ours.toFixed(1)} s${Number.isFinite(theirs) ? ` (reference ${theirs.toFixed(1)} s)` : ''}`);
    for (const d of disagreements) console.log(`  ${d}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const pct = (100 * agreeing) / total;
console.log(`all: ${agreeing} of ${total} labels agree (${pct.toFixed(2)}%)`);
process.exit(pct >= 99 ? 0 : 1);
