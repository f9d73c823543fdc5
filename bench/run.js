// Throughput benchmark for the text metrics (`npm run bench`). Prints pairs/s per metric next to the reference
// Python implementations measured on this machine type, and the peak resident memory.
import { humanevalProblems, referenceOf } from './humaneval-data.js';
import { Bleu, Chrf, CodeBleu, Meteor, Rouge, Ruby, scoreCorpus, scoreSentence } from '../dist/index.js';

function loadPairs(only) {
  const pairs = [];
  for (const lang of only ?? ['python', 'js']) {
    const problems = humanevalProblems(lang);
    for (const p of problems) {
      const ref = referenceOf(p.snippet);
      for (const key of Object.keys(p)) if (/^\d+$/.test(key)) pairs.push([p[key], ref]);
    }
  }
  // Both directions, so the corpus has the size of the reference measurement (about 12.8k pairs).
  return [...pairs, ...pairs.map(([h, r]) => [r, h])];
}

const pairs = loadPairs();
const hyps = pairs.map((p) => p[0]);
const refs = pairs.map((p) => [p[1]]);
const avgChars = Math.round(pairs.reduce((s, [h, r]) => s + h.length + r.length, 0) / (2 * pairs.length));
console.log(`corpus: ${pairs.length} HumanEval code pairs (Codex sample vs reference, both directions), average ${avgChars} characters`);

function time(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

// Fresh metric objects per run so that no memoised tokenisation from an earlier run is reused.
const cases = [
  ['corpus BLEU (13a)', 2868, () => scoreCorpus(new Bleu(), hyps, refs)],
  ['corpus chrF', 2132, () => scoreCorpus(new Chrf(), hyps, refs)],
  ['sentence BLEU (13a, eff)', 4434, () => { const m = new Bleu({ effectiveOrder: true }); for (let i = 0; i < hyps.length; i++) scoreSentence(m, hyps[i], refs[i]); }],
  ['sentence chrF', 3945, () => { const m = new Chrf(); for (let i = 0; i < hyps.length; i++) scoreSentence(m, hyps[i], refs[i]); }],
  ['ROUGE-L (rouge-score tokenizer)', 3978, () => scoreCorpus(new Rouge('rougeL'), hyps, refs)],
  ['METEOR (NLTK, WordNet 3.0)', 820, () => scoreCorpus(new Meteor(), hyps, refs)],
];

// WordNet is loaded once per process (about 0.3 s); load it before timing, as NLTK's is loaded before its timing.
new Meteor().align(['warm'], ['up']);

const rows = [];
for (const [name, reference, fn] of cases) {
  fn(); // warm-up (JIT)
  const runs = [time(fn), time(fn), time(fn), time(fn), time(fn)].sort((a, b) => a - b);
  const rate = pairs.length / runs[2]; // median of 5
  rows.push([name, rate, reference, rate / reference]);
}
const w = Math.max(...rows.map((r) => r[0].length));
console.log(`${'metric'.padEnd(w)}  ${'pairs/s'.padStart(10)}  ${'reference'.padStart(10)}  speed-up`);
for (const [name, rate, reference, ratio] of rows) {
  console.log(`${name.padEnd(w)}  ${rate.toFixed(0).padStart(10)}  ${String(reference).padStart(10)}  ${ratio.toFixed(1)}x`);
}

// Code-aware metrics: each language scored with its own grammar; every distinct segment is parsed once per run.
const byLanguage = { python: loadPairs(['python']), javascript: loadPairs(['js']) };
const codeCases = [
  ['CodeBLEU (codebleu 0.7.1)', 2000, CodeBleu],
  ['RUBY (graph/tree/string)', 500, Ruby],
];
console.log(`\n${'metric'.padEnd(w)}  ${'pairs/s'.padStart(10)}  ${'target'.padStart(10)}  (first run, grammar load included; ${pairs.length} pairs)`);
for (const [name, target, Metric] of codeCases) {
  let n = 0;
  const start = process.hrtime.bigint();
  for (const [lang, langPairs] of Object.entries(byLanguage)) {
    const metric = new Metric(lang);
    await metric.ready();
    scoreCorpus(metric, langPairs.map((p) => p[0]), langPairs.map((p) => [p[1]]));
    n += langPairs.length;
  }
  const rate = n / (Number(process.hrtime.bigint() - start) / 1e9);
  console.log(`${name.padEnd(w)}  ${rate.toFixed(0).padStart(10)}  ${String(target).padStart(10)}  ${rate >= target ? 'ok' : 'BELOW TARGET'}`);
}
console.log(`peak memory (max RSS): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
