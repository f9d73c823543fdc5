// Significance benchmark (`npm run bench`): paired bootstrap as sacrebleu runs it, and resampling at scale.
import { humanevalProblems, referenceOf } from './humaneval-data.js';
import { compareSystems } from '../dist/api/compare.js';
import { Bleu, Chrf, CodeBleu, Meteor, Rouge, Ruby, corpusStatistics, prepareAll } from '../dist/index.js';
import { bootstrapDraws, resampledScoresMany } from '../dist/stats/resampling.js';

// Two systems over every HumanEval sample of the ICE-Score data (Python and JavaScript): each problem's samples
// in key order, and the same samples rotated by one, both against the problem's reference solution.
const refs = [];
const sysA = [];
const sysB = [];
for (const lang of ['python', 'js']) {
  for (const p of humanevalProblems(lang)) {
    const samples = Object.keys(p).filter((k) => /^\d+$/.test(k)).map((k) => p[k]);
    samples.forEach((s, i) => {
      refs.push([referenceOf(p.snippet)]);
      sysA.push(s);
      sysB.push(samples[(i + 1) % samples.length]);
    });
  }
}
const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;

const runs = [];
for (let i = 0; i < 3; i++) {
  const start = process.hrtime.bigint();
  await compareSystems({ references: refs, systems: [{ name: 'a', hypotheses: sysA }, { name: 'b', hypotheses: sysB }], metrics: ['bleu', 'chrf'], test: 'bs' });
  runs.push(seconds(start));
}
const job = runs.sort((x, y) => x - y)[1];
// No reference figure here: bench/run.js runs sacrebleu's paired bootstrap on the same segments beside this one.
console.log(`median of 3 runs, paired bootstrap, 2 systems x BLEU+chrF x ${refs.length} code segments x 1000 samples: ${job.toFixed(2)} s (the ratio to sacrebleu, measured side by side, is in bench/run.js's table)`);

// 3 systems x 6 metrics x 10,000 segments x 1000 resamples: the resampling stage, statistics precomputed.
const n = 10_000;
const systems = [sysA, sysB, sysA.map((_, i) => sysA[(i + 7) % sysA.length])].map((s) => s.slice(0, n));
const references = refs.slice(0, n);
const metrics = [new Bleu(), new Chrf(), new Rouge('rougeL'), new Meteor(), new CodeBleu('python'), new Ruby('python')];
for (const m of metrics) await m.ready?.();
let start = process.hrtime.bigint();
const matrices = [];
for (const m of metrics) {
  const refInfos = prepareAll(m, references);
  for (const s of systems) matrices.push([m, corpusStatistics(m, s, refInfos)]);
}
const statsTime = seconds(start);
start = process.hrtime.bigint();
const draws = bootstrapDraws(n, 1000);
resampledScoresMany(matrices.map(([metric, matrix]) => ({ metric, matrix })), draws, 1000);
const resampleTime = seconds(start);
console.log(`resampling 3 systems x 6 metrics (BLEU, chrF, ROUGE-L, METEOR, CodeBLEU, RUBY) x ${n} segments x 1000 samples: ${resampleTime.toFixed(2)} s (target < 5 s); computing their statistics first: ${statsTime.toFixed(1)} s`);
console.log(`peak memory (max RSS): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
