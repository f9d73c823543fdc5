// Throughput benchmark (`npm run bench`): codegauge beside the Python reference implementations, measured here.
//
//   node bench/run.js [--python PATH] [--rounds N] [--runs N] [--only job,job] [--no-whole] [--no-jobs] [--jobs-cpus 0,1]
//
// The references (sacrebleu, rouge-score, NLTK with WordNet 3.0, codebleu) are the user's installs, run by
// bench/reference.py under PATH (or $CODEGAUGE_BENCH_PYTHON; their import path from $PYTHONPATH). Each job runs in
// fresh processes, codegauge and Python interleaved round by round (the order alternating), on the same 12,760
// HumanEval pairs written to JSONL files: in-process (warm: untimed warm-up, then timed runs; median and min-max
// over all rounds) and as whole processes (the CLI against a Python process that imports the reference and scores
// once). Both sides' scores are compared. No reference figure is stored here: without the references, codegauge's
// absolute figures are printed and no ratio is claimed. See bench/README.md for setting the references up.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { humanevalProblems, referenceOf } from './humaneval-data.js';

const { values: args } = parseArgs({
  options: {
    python: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '3' },
    only: { type: 'string' },
    'no-whole': { type: 'boolean', default: false },
    'no-inprocess': { type: 'boolean', default: false },
    'no-jobs': { type: 'boolean', default: false },
    'jobs-pairs': { type: 'string', default: '100000' },
    'jobs-cpus': { type: 'string' },
    'whole-rounds': { type: 'string' },
  },
});
const root = new URL('..', import.meta.url).pathname;
const dir = join(root, 'test-output', 'bench');
mkdirSync(dir, { recursive: true });
const rounds = Number(args.rounds);
const wholeRounds = Number(args['whole-rounds'] ?? args.rounds);
const runs = Number(args.runs);
const python = args.python ?? process.env.CODEGAUGE_BENCH_PYTHON;
const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

// ---- the data: every Codex sample of the ICE-Score HumanEval problems against its reference, both directions ----
function loadPairs(langs) {
  const pairs = [];
  for (const lang of langs) {
    for (const p of humanevalProblems(lang)) {
      const ref = referenceOf(p.snippet);
      for (const key of Object.keys(p)) if (/^\d+$/.test(key)) pairs.push([p[key], ref]);
    }
  }
  return [...pairs, ...pairs.map(([h, r]) => [r, h])];
}
const writeJsonl = (file, list) => {
  const path = join(dir, file);
  writeFileSync(path, list.map((s) => JSON.stringify(s)).join('\n') + '\n');
  return path;
};
const pairs = loadPairs(['python', 'js']);
const files = { refs: writeJsonl('refs.jsonl', pairs.map((p) => p[1])), hyps: writeJsonl('hyps.jsonl', pairs.map((p) => p[0])) };
// Paired bootstrap as bench/significance.js: each problem's samples in key order (a) and rotated by one (b).
{
  const refs = [], a = [], b = [];
  for (const lang of ['python', 'js']) {
    for (const p of humanevalProblems(lang)) {
      const samples = Object.keys(p).filter((k) => /^\d+$/.test(k)).map((k) => p[k]);
      samples.forEach((s, i) => { refs.push(referenceOf(p.snippet)); a.push(s); b.push(samples[(i + 1) % samples.length]); });
    }
  }
  files.bsRefs = writeJsonl('bs-refs.jsonl', refs);
  files.bsA = writeJsonl('bs-a.jsonl', a);
  files.bsB = writeJsonl('bs-b.jsonl', b);
  files.bsSegments = refs.length;
}
for (const [lang, ext] of [['python', 'py'], ['js', 'js']]) {
  const p = loadPairs([lang]);
  files[`${ext}Refs`] = writeJsonl(`refs.${ext}.jsonl`, p.map((x) => x[1]));
  files[`${ext}Hyps`] = writeJsonl(`hyps.${ext}.jsonl`, p.map((x) => x[0]));
  files[`${ext}Pairs`] = p.length;
}

// ---- the jobs: [key, label, target ratio, reference module, units, codegauge CLI args, input files] ----
const io = { refs: files.refs, hyps: files.hyps, n: pairs.length };
const JOBS = [
  { key: 'bleu', label: 'corpus BLEU', target: 15, needs: 'sacrebleu', ...io, cli: ['--metric', 'bleu'] },
  { key: 'chrf', label: 'corpus chrF', target: 15, needs: 'sacrebleu', ...io, cli: ['--metric', 'chrf'] },
  { key: 'sbleu', label: 'sentence BLEU (eff)', target: 15, needs: 'sacrebleu', ...io, cli: ['--metric', 'bleu', '--segments'] },
  { key: 'schrf', label: 'sentence chrF', target: 15, needs: 'sacrebleu', ...io, cli: ['--metric', 'chrf', '--segments'] },
  { key: 'rougeL', label: 'ROUGE-L', target: 20, needs: 'rouge_score', ...io, cli: ['--metric', 'rougeL'] },
  { key: 'meteor', label: 'METEOR', target: 25, needs: 'nltk', ...io, cli: ['--metric', 'meteor'] },
  { key: 'bootstrap', label: `paired bootstrap (BLEU+chrF, ${files.bsSegments} segs, 1000 samples)`, target: 20, wholeTarget: 10, needs: 'sacrebleu', refs: files.bsRefs, hyps: files.bsA, hyps2: files.bsB, n: 0, cli: ['--metric', 'bleu', '--metric', 'chrf', '--paired-bs'] },
  { key: 'codebleu-python', label: 'CodeBLEU (Python)', target: 10, needs: 'codebleu', refs: files.pyRefs, hyps: files.pyHyps, n: files.pyPairs, cli: ['--metric', 'codebleu:lang=python'] },
  { key: 'codebleu-javascript', label: 'CodeBLEU (JavaScript)', target: 10, needs: 'codebleu', refs: files.jsRefs, hyps: files.jsHyps, n: files.jsPairs, cli: ['--metric', 'codebleu:lang=javascript'] },
].filter((j) => !args.only || args.only.split(',').includes(j.key));

// ---- helpers ----
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const fmt = (x, d = 0) => (x == null || Number.isNaN(x) ? '-' : x.toLocaleString('en', { maximumFractionDigits: d, minimumFractionDigits: d }));

function runJson(command, argv, env) {
  const r = spawnSync(command, argv, { encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${command} ${argv.join(' ')} failed (${r.status}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

/** A whole process, timed from spawn to exit, with its peak RSS and CPU time from /usr/bin/time when present. */
function runWhole(command, argv) {
  const rssFile = join(dir, 'rss.txt');
  const full = timeBin ? [timeBin, ['-f', '%M %U %S', '-o', rssFile, command, ...argv]] : [command, argv];
  const start = process.hrtime.bigint();
  const r = spawnSync(full[0], full[1], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (r.status !== 0) throw new Error(`${command} ${argv.join(' ')} failed (${r.status}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const [kib, user, system] = timeBin ? readFileSync(rssFile, 'utf8').trim().split('\n').pop().split(' ').map(Number) : [NaN, NaN, NaN];
  return { seconds, rss: kib / 1024, cpu: user + system, stdout: r.stdout };
}

const jobArgs = (j) => [j.key, '--refs', j.refs, '--hyps', j.hyps, ...(j.hyps2 ? ['--hyps2', j.hyps2] : [])];
const referencePy = join(root, 'bench', 'reference.py');

/** Largest absolute difference between the two sides' scores (sentence lists, corpus scores, paired results). */
function difference(a, b) {
  if (a.scores && b.scores) return a.scores.length !== b.scores.length ? Infinity : Math.max(...a.scores.map((x, i) => Math.abs(x - b.scores[i])));
  if (a.paired && b.paired) {
    // Scores and p-values must be equal; bootstrap means and CIs are float32 arithmetic whose rounding depends on
    // the reference's NumPy (codegauge matches NumPy 2; NumPy 1 differs by up to ~3e-6), so they are checked apart.
    let d = 0, dMean = 0;
    for (const m of Object.keys(b.paired)) {
      for (const k of ['score', 'p_value']) d = Math.max(d, Math.abs(a.paired[m]?.[k] - b.paired[m][k]));
      for (const k of ['mean', 'ci']) dMean = Math.max(dMean, Math.abs(a.paired[m]?.[k] - b.paired[m][k]));
    }
    if (Number.isNaN(d) || Number.isNaN(dMean)) return Infinity;
    const numpy1 = /^1\./.test(versions?.numpy ?? '');
    return dMean <= (numpy1 ? 5e-6 : 1e-9) ? Object.assign(new Number(d), { note: dMean > 1e-9 ? `mean/CI within ${dMean.toExponential(1)} (NumPy 1)` : '' }) : Math.max(d, dMean);
  }
  return Math.abs(a.score - b.score);
}

const sameText = (d) => (d <= 1e-9 ? `yes${d.note ? `; ${d.note}` : ''}` : `NO (${Number(d).toExponential(1)})`);

// ---- which references are there ----
let versions = null;
if (python) {
  try {
    versions = runJson(python, [referencePy, 'probe']);
  } catch (e) {
    console.log(`reference python ${python}: ${e.message}`);
  }
}
const available = (j) => versions && versions[j.needs] != null;
console.log(`corpus: ${pairs.length.toLocaleString('en')} HumanEval code pairs (Codex sample vs reference, both directions); node ${process.version}, ${availableParallelism()} cores, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
if (versions) console.log(`references: ${Object.entries(versions).map(([k, v]) => `${k} ${v}`).join(', ')}`);
else console.log('references: none (no --python PATH or CODEGAUGE_BENCH_PYTHON): codegauge figures only, no ratio is claimed');
console.log(`in-process: ${rounds} rounds x (1 warm-up + ${runs} timed runs) per side, interleaved; whole-process: ${wholeRounds} runs per side, interleaved; load = 1-minute load average at a job's start-end\n`);

// ---- in-process ----
const results = [];
for (const j of args['no-inprocess'] ? [] : JOBS) {
  const cg = { times: [], cpu: [], rss: [] };
  const py = available(j) ? { times: [], cpu: [], rss: [] } : null;
  let diff = null;
  let cgOut, pyOut;
  const load = [loadavg()[0]];
  try {
    for (let r = 0; r < rounds; r++) {
      const sides = [['cg', () => runJson(process.execPath, [join(root, 'bench', 'codegauge-job.js'), ...jobArgs(j), '--runs', String(runs)])]];
      if (py) sides.push(['py', () => runJson(python, [referencePy, ...jobArgs(j), '--runs', String(runs)])]);
      if (r % 2) sides.reverse();
      for (const [side, fn] of sides) {
        const out = fn();
        const acc = side === 'cg' ? cg : py;
        acc.times.push(...out.times);
        acc.cpu.push(...out.cpu);
        acc.rss.push(out.max_rss_mib);
        if (side === 'cg') cgOut = out;
        else pyOut = out;
      }
    }
  } catch (e) {
    console.log(`  ${j.label}: failed: ${e.message}`);
    continue;
  }
  if (py) diff = difference(cgOut, pyOut);
  load.push(loadavg()[0]);
  results.push({ j, cg, py, diff, load });
  const line = (x) => `${fmt(median(x.times), 3)} s (${fmt(Math.min(...x.times), 3)}-${fmt(Math.max(...x.times), 3)}; CPU ${fmt(median(x.cpu), 3)} s), peak RSS ${fmt(Math.max(...x.rss))} MiB`;
  console.log(`  ${j.label}: codegauge ${line(cg)}${py ? `; python ${line(py)}; max score difference ${Number(diff).toExponential(1)}` : ''}`);
}

/** The 1-minute load average at a job's start and end: on a shared machine, the figures are only as good as the cores were free. */
const loadText = ([before, after]) => `${before.toFixed(1)}-${after.toFixed(1)}`;

function table(title, rows) {
  console.log(`\n${title}`);
  const head = ['job', 'Python', 'codegauge', 'ratio', 'CPU-time ratio', 'target', 'RSS py / cg (MiB)', 'load', 'same scores'];
  const all = [head, ...rows];
  const widths = head.map((_, c) => Math.max(...all.map((r) => String(r[c]).length)));
  for (const r of all) console.log('  ' + r.map((x, c) => (c === 0 ? String(x).padEnd(widths[c]) : String(x).padStart(widths[c]))).join('  '));
}
const rate = (j, seconds) => (j.n ? `${fmt(j.n / seconds)}/s` : `${fmt(seconds, 2)} s`);
const range = (j, times) => (j.n ? `${fmt(j.n / Math.max(...times))}-${fmt(j.n / Math.min(...times))}` : `${fmt(Math.min(...times), 2)}-${fmt(Math.max(...times), 2)}`);
if (results.length) table(
  `in-process, warm (pairs/s or seconds: median [min-max]); ratio = Python time / codegauge time (wall clock; the CPU-time ratio, all threads counted, is steadier on a loaded machine)`,
  results.map(({ j, cg, py, diff, load }) => [
    j.label,
    py ? `${rate(j, median(py.times))} [${range(j, py.times)}]` : 'n/a',
    `${rate(j, median(cg.times))} [${range(j, cg.times)}]`,
    py ? `${(median(py.times) / median(cg.times)).toFixed(1)}x` : 'no ratio claimed',
    py ? `${(median(py.cpu) / median(cg.cpu)).toFixed(1)}x` : '-',
    `>= ${j.target}x`,
    `${py ? fmt(Math.max(...py.rss)) : '-'} / ${fmt(Math.max(...cg.rss))}`,
    loadText(load),
    py ? sameText(diff) : '-',
  ]),
);

// ---- whole processes ----
if (!args['no-whole']) {
  const cli = join(root, 'bin', 'codegauge.js');
  const rows = [];
  for (const j of JOBS) {
    const cgArgs = j.key === 'bootstrap'
      ? [cli, 'compare', '--refs', j.refs, '--hyps', j.hyps, '--hyps', j.hyps2, ...j.cli, '--format', 'json']
      : [cli, 'score', '--refs', j.refs, '--hyps', j.hyps, ...j.cli, '--format', 'json'];
    const cg = [], py = [];
    let same = '-';
    const load = [loadavg()[0]];
    try {
      for (let r = 0; r < wholeRounds; r++) {
        const sides = [['cg', () => runWhole(process.execPath, cgArgs)]];
        if (available(j)) sides.push(['py', () => runWhole(python, [referencePy, ...jobArgs(j), '--once'])]);
        if (r % 2) sides.reverse();
        const outs = {};
        for (const [side, fn] of sides) {
          outs[side] = fn();
          (side === 'cg' ? cg : py).push(outs[side]);
        }
        if (outs.py && r === 0) {
          const report = JSON.parse(outs.cg.stdout);
          const pyOut = JSON.parse(outs.py.stdout.trim().split('\n').pop());
          let cgOut;
          if (j.key === 'bootstrap') {
            cgOut = { paired: {} };
            for (const s of report.systems[1].scores) cgOut.paired[s.name === 'chrF2' ? 'chrF' : s.name] = s;
          } else {
            const s = report.systems[0].scores[0];
            cgOut = s.segments && pyOut.scores ? { scores: s.segments } : { score: s.score };
          }
          same = sameText(difference(cgOut, pyOut));
        }
      }
    } catch (e) {
      console.log(`  ${j.label} (whole process): failed: ${e.message}`);
      continue;
    }
    const t = (xs) => xs.map((x) => x.seconds);
    rows.push([
      j.label,
      py.length ? `${fmt(median(t(py)), 2)} s [${fmt(Math.min(...t(py)), 2)}-${fmt(Math.max(...t(py)), 2)}]` : 'n/a',
      `${fmt(median(t(cg)), 2)} s [${fmt(Math.min(...t(cg)), 2)}-${fmt(Math.max(...t(cg)), 2)}]`,
      py.length ? `${(median(t(py)) / median(t(cg))).toFixed(1)}x` : 'no ratio claimed',
      py.length && timeBin ? `${(median(py.map((x) => x.cpu)) / median(cg.map((x) => x.cpu))).toFixed(1)}x` : '-',
      `>= ${j.wholeTarget ?? 8}x`,
      `${py.length ? fmt(Math.max(...py.map((x) => x.rss))) : '-'} / ${fmt(Math.max(...cg.map((x) => x.rss)))}`,
      loadText([...load, loadavg()[0]]),
      same,
    ]);
  }
  table(`whole processes (\`codegauge score\`/\`compare\` against bench/reference.py --once: start-up, imports, reading, one cold run; seconds: median [min-max])`, rows);
}

// ---- worker threads: --jobs 2 against --jobs 1 on large input ----
// Whole processes, alternating, with their CPU time (all threads; from /usr/bin/time). --jobs-cpus pins them to those
// CPUs (taskset), e.g. two cores of a larger machine: `--jobs 2` against `--jobs 1` on two cores, as on a 2-core one.
if (!args['no-jobs']) {
  const n = Number(args['jobs-pairs']);
  const refs = join(dir, 'jobs-refs.jsonl');
  const hyps = join(dir, 'jobs-hyps.jsonl');
  // Each pair made unique by a trailing comment so that no cache can hide the work.
  writeFileSync(refs, Array.from({ length: n }, (_, i) => JSON.stringify(`${pairs[i % pairs.length][1]}\n# pair ${i}`)).join('\n') + '\n');
  writeFileSync(hyps, Array.from({ length: n }, (_, i) => JSON.stringify(`${pairs[i % pairs.length][0]}\n# pair ${i}`)).join('\n') + '\n');
  const cli = join(root, 'bin', 'codegauge.js');
  const cpus = args['jobs-cpus'];
  const pinned = cpus && spawnSync('taskset', ['-c', cpus, 'true']).status === 0;
  if (cpus && !pinned) console.log(`\nworker threads: taskset -c ${cpus} is not available here; not pinned`);
  const byJobs = { 1: [], 2: [] };
  const outputs = {};
  const loadBefore = loadavg()[0];
  for (let r = 0; r < wholeRounds; r++) {
    for (const jobs of r % 2 ? [2, 1] : [1, 2]) {
      const argv = [cli, 'score', '--refs', refs, '--hyps', hyps, '--metric', 'bleu', '--metric', 'chrf', '--jobs', String(jobs), '--format', 'json'];
      const w = pinned ? runWhole('taskset', ['-c', cpus, process.execPath, ...argv]) : runWhole(process.execPath, argv);
      byJobs[jobs].push(w);
      outputs[jobs] = w.stdout;
    }
  }
  const loadAfter = loadavg()[0];
  const t = (jobs) => byJobs[jobs].map((w) => w.seconds);
  const cpu = (jobs) => median(byJobs[jobs].map((w) => w.cpu));
  const line = (jobs) => `--jobs ${jobs} ${fmt(median(t(jobs)), 2)} s [${fmt(Math.min(...t(jobs)), 2)}-${fmt(Math.max(...t(jobs)), 2)}] (CPU ${fmt(cpu(jobs), 2)} s)`;
  const cores = pinned ? `pinned to CPUs ${cpus}` : `on ${availableParallelism()} cores`;
  console.log(`\nworker threads: score BLEU+chrF, ${n.toLocaleString('en')} pairs, whole process, ${wholeRounds} runs each, median [min-max]: ${line(1)}, ${line(2)}: ${(median(t(1)) / median(t(2))).toFixed(2)}x (target >= 1.7x on 2 idle cores); CPU of --jobs 2 / --jobs 1: ${(cpu(2) / cpu(1)).toFixed(2)}; identical output: ${outputs[1] === outputs[2] ? 'yes' : 'NO'}; load average (1 min) ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after, ${cores}`);
  rmSync(refs);
  rmSync(hyps);
}
