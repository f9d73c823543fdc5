// Labels under load (part of `npm run bench`; issue 22): ICE-Score's 3,220 Codex samples of HumanEval run by
// `codegauge exec` (bwrap, --jobs 2, 3 s, the default --timeout-retry starved) on an idle machine and again beside
// N busy processes (default 6: three times the cores of a 2-core machine), and the two label sets compared. A label
// may differ only for a sample that never finishes (a timeout in either run).
//   node bench/exec-load.js [--busy 6] [--every N] [--lang python|js]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bwrapAvailable } from '../dist/exec/sandbox/bwrap.js';
import { humanevalProblems } from './humaneval-data.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const busy = Number(option('--busy', '6'));
const every = Number(option('--every', '1'));
const lang = option('--lang', 'python');
const work = mkdtempSync(join(tmpdir(), 'codegauge-bench-load-'));

function samples() {
  const out = [];
  for (const p of humanevalProblems(lang)) {
    const keys = Object.keys(p).filter((k) => /^\d+$/.test(k) && p[`grade-${k}`]).sort((a, b) => Number(a) - Number(b));
    for (const k of keys) out.push({ task_id: `HumanEval/${p.task_id}`, prompt: p.intent, completion: p[k] });
  }
  return out.filter((_, i) => i % every === 0);
}

function run(file, out) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [join(root, 'bin/codegauge.js'), 'exec', '--benchmark', lang === 'js' ? 'humaneval-js' : 'humaneval', '--samples', file, '--out', out, '--jobs', '2', '--timeout', '3', '--k', '1'], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(`exec exited ${code}`))));
  });
}

function burners(n) {
  return Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

if (!bwrapAvailable()) {
  console.log('exec load bench: bubblewrap is not available here; skipped');
} else {
  try {
    const list = samples();
    const file = join(work, 'samples.jsonl');
    writeFileSync(file, list.map((s) => JSON.stringify(s) + '\n').join(''));
    const read = (dir) => readFileSync(join(dir, 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const idleLoad = loadavg()[0];
    const idleSeconds = await run(file, join(work, 'idle'));
    const load = burners(busy);
    let busySeconds;
    try {
      busySeconds = await run(file, join(work, 'busy'));
    } finally {
      for (const b of load) b.kill('SIGKILL');
    }
    const idle = read(join(work, 'idle'));
    const loaded = read(join(work, 'busy'));
    const differ = idle.filter((r, i) => r.status !== loaded[i].status);
    const neverFinish = differ.filter((r, i) => r.status === 'timeout' || loaded[idle.indexOf(r)].status === 'timeout');
    const labels = idle.filter((r, i) => r.passed !== loaded[i].passed);
    console.log(`exec under load (${lang}, ${list.length} ICE-Score samples, --jobs 2, 3 s, --timeout-retry starved):`);
    console.log(`  idle (load ${idleLoad.toFixed(2)}): ${idleSeconds.toFixed(1)} s; beside ${busy} busy processes: ${busySeconds.toFixed(1)} s`);
    console.log(`  labels (passed or not) differ on ${labels.length} of ${list.length}; statuses differ on ${differ.length}, of which ${neverFinish.length} are a timeout in one run`);
    for (const r of differ.slice(0, 20)) console.log(`    ${r.task_id} #${r.index}: idle ${r.status}, loaded ${loaded[idle.indexOf(r)].status} (${loaded[idle.indexOf(r)].attempts.map((a) => `${a.status} ${a.cpu_ms ?? '?'}ms CPU of ${a.timeout_ms}`).join(', ')})`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
