// Throughput of `codegauge exec` (part of `npm run bench`): ICE-Score's Codex samples of HumanEval (3,220 Python,
// 3,160 JavaScript) run in the bwrap sandbox with 2 workers and a 3 s timeout, as openai/human-eval is run for the
// reference figure (2 workers, 3 s, no sandbox: 70 s for the 3,220 Python samples = 46 samples/s on this 2-core
// machine type). Python: the warm runner (a fork server per worker) and a fresh interpreter per sample side by side.
//   node bench/exec.js [--every N] (every N-th sample only, for a quick look)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { execSystems } from '../dist/exec/run.js';
import { readBenchmark } from '../dist/exec/problems.js';
import { bwrapAvailable } from '../dist/exec/sandbox.js';

const HUMAN_EVAL_PYTHON = 46; // samples/s, openai/human-eval, 2 workers, 3 s timeout, no sandbox

const args = process.argv.slice(2);
const every = args.includes('--every') ? Number(args[args.indexOf('--every') + 1]) : 1;

function iceSamples(lang) {
  const data = JSON.parse(gunzipSync(readFileSync(new URL(`../data/ice-humaneval/humaneval_${lang}_grade.json.gz`, import.meta.url))).toString('utf8'));
  const samples = [];
  for (const p of data) {
    const keys = Object.keys(p).filter((k) => /^\d+$/.test(k) && p[`grade-${k}`]).sort((a, b) => Number(a) - Number(b));
    for (const k of keys) samples.push({ task_id: `HumanEval/${p.task_id}`, prompt: p.intent, completion: p[k] });
  }
  return samples.filter((_, i) => i % every === 0);
}

async function measure(label, lang, options) {
  const dir = mkdtempSync(join(tmpdir(), 'codegauge-bench-exec-'));
  try {
    const samples = iceSamples(lang);
    const file = join(dir, `${lang}.jsonl`);
    writeFileSync(file, samples.map((s) => JSON.stringify(s)).join('\n') + '\n');
    const problems = readBenchmark(lang === 'js' ? 'humaneval-js' : 'humaneval');
    const started = performance.now();
    const { summary } = await execSystems({ problems, samples: [file], ks: [1], timeoutMs: 3000, memoryMb: 1024, jobs: 2, sandbox: 'bwrap', outDir: join(dir, 'out'), ...options });
    const seconds = (performance.now() - started) / 1000;
    const s = summary.systems[0];
    const timeouts = s.statuses.timeout;
    console.log(`${label.padEnd(44)} ${String(samples.length).padStart(5)} samples  ${seconds.toFixed(1).padStart(6)} s  ${(samples.length / seconds).toFixed(1).padStart(6)} samples/s  (${timeouts} timeouts, each run twice: 3 s + 6 s)`);
    return samples.length / seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (!bwrapAvailable()) {
  console.log('exec bench: bubblewrap is not available here; skipped');
} else {
  console.log(`exec: ICE-Score Codex samples${every > 1 ? ` (every ${every}th)` : ''}, 2 workers, 3 s timeout, bwrap sandbox`);
  const warm = await measure('python, warm runner (fork server per worker)', 'python', { warm: true });
  const cold = await measure('python, fresh interpreter per sample', 'python', { warm: false });
  await measure('javascript, fresh node per sample', 'js', {});
  console.log(`python: warm ${(warm / HUMAN_EVAL_PYTHON).toFixed(2)}x and fresh ${(cold / HUMAN_EVAL_PYTHON).toFixed(2)}x openai/human-eval's ${HUMAN_EVAL_PYTHON} samples/s (no sandbox)`);
}
