#!/usr/bin/env node
// Parity of `codegauge exec` with ICE-Score's recorded execution labels (data/ice-humaneval: Codex samples run
// by Cassano et al.). Each sample is run as `intent + completion` (ICE's intent is the prompt the model saw) with the
// tests: Python against HumanEval's (data/humaneval), JavaScript against the bundled JavaScript tests
// (data/humaneval-js); passed = the tests ran to the end. Targets: >= 99% of the 3,220 Python samples, >= 99.5% of
// the 3,160 JavaScript ones. Run after `npm run build`:
//   node scripts/exec-parity.mjs [--lang python|js|both] [--every N] [--jobs N] [--sandbox bwrap|process]
//                                [--timeout S] [--fixed-51]
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { execSystems } = await import(join(root, 'dist/exec/run.js'));
const { readBenchmark, benchmarkPath } = await import(join(root, 'dist/exec/benchmarks/bundled.js'));
const { readProblems } = await import(join(root, 'dist/exec/benchmarks/problems.js'));

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const langs = opt('--lang', 'both') === 'both' ? ['python', 'js'] : [opt('--lang')];
const every = Number(opt('--every', '1'));
const jobs = Number(opt('--jobs', String(availableParallelism())));
const sandbox = opt('--sandbox', 'bwrap');
const timeoutMs = Number(opt('--timeout', '3')) * 1000;
// MultiPL-E's JavaScript test of HumanEval_51 has a raw newline inside a string literal (so every sample of it is
// labelled failed); the bundled tests write it as \n. --as-labelled (default) runs the test as it was labelled.
const asLabelled = !args.includes('--fixed-51');

function jsProblems(dir) {
  if (!asLabelled) return readBenchmark('humaneval-js');
  const rows = gunzipSync(readFileSync(benchmarkPath('humaneval-js'))).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
  for (const row of rows) if (row.name === 'HumanEval_51_remove_vowels') row.tests = row.tests.replace('"abcdef\\nghijklm"', '"abcdef\nghijklm"');
  const file = join(dir, 'humaneval-js-as-labelled.jsonl');
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return readProblems(file, 'js');
}

/** ICE's samples of one language: [{task_id, completion, prompt?, label}], in a fixed order; every N-th kept. */
export function iceSamples(lang, step = 1) {
  const data = JSON.parse(gunzipSync(readFileSync(join(root, `data/ice-humaneval/humaneval_${lang}_grade.json.gz`))).toString('utf8'));
  const samples = [];
  for (const problem of data) {
    const keys = Object.keys(problem).filter((k) => /^\d+$/.test(k) && problem[`grade-${k}`]).sort((a, b) => Number(a) - Number(b));
    for (const k of keys) {
      const sample = { task_id: `HumanEval/${problem.task_id}`, completion: problem[k], label: problem[`grade-${k}`].execution === 1 };
      sample.prompt = problem.intent; // what the model saw (MultiPL-E's prompt: typed, with its imports)
      samples.push(sample);
    }
  }
  return samples.filter((_, i) => i % step === 0);
}

let failed = false;
for (const lang of langs) {
  const samples = iceSamples(lang, every);
  const dir = mkdtempSync(join(tmpdir(), 'codegauge-parity-'));
  try {
    const file = join(dir, `ice-${lang}.jsonl`);
    writeFileSync(file, samples.map(({ label, ...s }) => JSON.stringify(s)).join('\n') + '\n');
    const problems = lang === 'js' ? jsProblems(dir) : readBenchmark('humaneval');
    const started = performance.now();
    const { rows, summary } = await execSystems({ problems, samples: [file], ks: [1], timeoutMs, memoryMb: 1024, jobs, sandbox, outDir: join(dir, 'out') });
    const seconds = (performance.now() - started) / 1000;
    let agree = 0;
    const disagreements = [];
    rows.forEach((row, i) => {
      if (row.passed === samples[i].label) agree++;
      else disagreements.push(`${row.task_id} #${row.index}: label ${samples[i].label ? 'passed' : 'failed'}, exec ${row.status}${row.note ? ` (${row.note})` : ''}`);
    });
    const pct = (100 * agree) / rows.length;
    console.log(`${lang}${lang === 'js' && asLabelled ? ' (HumanEval_51 as labelled)' : ''}: ${agree} of ${rows.length} agree (${pct.toFixed(2)}%), ${(rows.length / seconds).toFixed(1)} samples/s (${seconds.toFixed(1)} s, ${jobs} jobs, sandbox ${sandbox}); statuses ${JSON.stringify(summary.systems[0].statuses)}`);
    for (const d of disagreements.slice(0, 60)) console.log(`  ${d}`);
    const target = lang === 'js' ? 99.5 : 99;
    if (pct < target) failed = true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
process.exit(failed ? 1 : 0);
