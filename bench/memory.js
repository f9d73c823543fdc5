// Peak memory of whole `codegauge score` processes on large inputs (`npm run bench`): the files are streamed, so
// peak RSS should stay flat as the input grows. Inputs cycle through the HumanEval pairs, each made unique by a
// trailing comment so that no cache can hide the growth. Target: <= 500 MB for 1M pairs of BLEU + chrF and for
// 250k pairs of CodeBLEU and of METEOR (whose word table is bounded: the numbered comments add a word per pair).
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { humanevalProblems, referenceOf } from './humaneval-data.js';

const root = new URL('..', import.meta.url).pathname;
const dir = join(root, 'test-output', 'bench-memory');
mkdirSync(dir, { recursive: true });

const base = humanevalProblems('python').flatMap((p) => {
  const ref = referenceOf(p.snippet);
  return Object.keys(p).filter((k) => /^\d+$/.test(k)).map((k) => [p[k], ref]);
});

async function writePairs(n) {
  const refs = join(dir, `refs-${n}.py.jsonl`);
  const hyps = join(dir, `hyps-${n}.py.jsonl`);
  const r = createWriteStream(refs);
  const h = createWriteStream(hyps);
  for (let i = 0; i < n; i++) {
    const [hyp, ref] = base[i % base.length];
    const waits = [];
    if (!r.write(JSON.stringify(`${ref}\n# pair ${i}`) + '\n')) waits.push(once(r, 'drain'));
    if (!h.write(JSON.stringify(`${hyp}\n# pair ${i}`) + '\n')) waits.push(once(h, 'drain'));
    if (waits.length) await Promise.all(waits);
  }
  r.end();
  h.end();
  await Promise.all([once(r, 'close'), once(h, 'close')]);
  return { refs, hyps, bytes: statSync(refs).size + statSync(hyps).size };
}

// The CLI in a child process that reports its own peak RSS (maxRSS is in KiB).
const child = `import { runCli } from ${JSON.stringify(join(root, 'dist', 'cli', 'main.js'))};
let out = '';
const code = await runCli(process.argv.slice(1), { out: (s) => void (out += s), err: (s) => process.stderr.write(s) });
process.stdout.write(JSON.stringify({ code, maxRssMiB: process.resourceUsage().maxRSS / 1024, out }));`;

const cases = [
  { n: 1_000_000, metrics: ['bleu', 'chrf'] },
  { n: 250_000, metrics: ['codebleu:lang=python'] },
  { n: 250_000, metrics: ['meteor'] },
];
console.log('\npeak memory of whole score processes (streamed input, target <= 500 MB)');
for (const c of cases) {
  const { refs, hyps, bytes } = await writePairs(c.n);
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', child, 'score', '--refs', refs, '--hyps', hyps, ...c.metrics.flatMap((m) => ['--metric', m]), '--format', 'json'], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const seconds = (Date.now() - started) / 1000;
  const result = JSON.parse(r.stdout || '{}');
  const scores = result.out ? JSON.parse(result.out).systems[0].scores.map((s) => `${s.metric} ${s.score.toFixed(2)}`).join(', ') : r.stderr.trim();
  console.log(`  ${c.n.toLocaleString('en')} pairs (${(bytes / 2 ** 20).toFixed(0)} MiB of input), ${c.metrics.join(' + ')}: peak RSS ${result.maxRssMiB?.toFixed(0)} MiB, ${seconds.toFixed(1)} s (${scores})`);
  rmSync(refs);
  rmSync(hyps);
}
