// CrystalBLEU throughput on the HumanEval pairs of `npm run bench` (Codex sample vs reference, both directions):
// `npm run build && node bench/crystalbleu.js`. The bar is 20,000 pairs/s. Also times NLTK-style BLEU
// (nltk-bleu:tok=code) on the same tokens, the metric CrystalBLEU is built on.
import { humanevalProblems, referenceOf } from './humaneval-data.js';
import { CrystalBleu } from '../dist/metrics/crystalbleu.js';
import { NltkBleu } from '../dist/metrics/nltk-bleu.js';
import { scoreCorpus } from '../dist/metrics/metric.js';

const pairs = [];
for (const lang of ['python', 'js']) {
  for (const p of humanevalProblems(lang)) {
    const ref = referenceOf(p.snippet);
    for (const key of Object.keys(p)) if (/^\d+$/.test(key)) pairs.push([p[key], ref]);
  }
}
const all = [...pairs, ...pairs.map(([h, r]) => [r, h])];
const hyps = all.map((p) => p[0]);
const refs = all.map((p) => [p[1]]);
console.log(`corpus: ${all.length} HumanEval code pairs (both directions)`);

function time(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

// The ignored set of the references, written once, for the "fixed set" rows (what two runs comparing on one set do).
const fixed = new CrystalBleu({ k: 500 });
fixed.fitReferences(refs);
const ngrams = fixed.ignoredNgrams();
const wsSet = new CrystalBleu({ k: 500, tokenize: 'ws' });
wsSet.fitReferences(refs);
const wsNgrams = wsSet.ignoredNgrams();

const cases = [
  ['CrystalBLEU k=500, corpus=references (counting included)', () => scoreCorpus(new CrystalBleu({ k: 500 }), hyps, refs)],
  ['CrystalBLEU k=500, fixed n-gram set', () => scoreCorpus(new CrystalBleu({ ngrams }), hyps, refs)],
  ['CrystalBLEU k=500, fixed set, tok=ws', () => scoreCorpus(new CrystalBleu({ ngrams: wsNgrams, tokenize: 'ws' }), hyps, refs)],
  ['NLTK BLEU (tok=code), for comparison', () => scoreCorpus(new NltkBleu('code'), hyps, refs)],
];

const rows = [];
for (const [name, fn] of process.argv.includes('--meta') ? [] : cases) {
  fn(); // warm-up (JIT)
  const runs = [time(fn), time(fn), time(fn), time(fn), time(fn)].sort((a, b) => a - b);
  rows.push([name, all.length / runs[2]]);
}
const w = Math.max(...rows.map((r) => r[0].length));
console.log(`${'metric'.padEnd(w)}  ${'pairs/s'.padStart(10)}`);
for (const [name, rate] of rows) console.log(`${name.padEnd(w)}  ${rate.toFixed(0).padStart(10)}`);
const worst = Math.min(...rows.slice(0, 3).map((r) => r[1]));
if (rows.length) console.log(worst >= 20000 ? `OK: every CrystalBLEU row >= 20,000 pairs/s` : `BELOW the 20,000 pairs/s bar: ${worst.toFixed(0)}`);

// `node bench/crystalbleu.js --meta`: the paper's own argument, on the bundled data. Sentence-level BLEU (NLTK,
// tok=code: CrystalBLEU with k=0; and sacrebleu's default BLEU) against CrystalBLEU (k=500 and k=50, the
// references of each data set as corpus), correlated by codegauge's `meta` (metaEvaluate) with the human grades of
// CoNaLa ("Out of the BLEU", 5 systems x 472 intents) and the execution labels of ICE-Score's HumanEval samples.
if (process.argv.includes('--meta')) {
  const { metaEvaluate } = await import('../dist/api/meta.js');
  const { Bleu } = await import('../dist/metrics/bleu.js');
  const { scoreSentence, prepareAll } = await import('../dist/metrics/metric.js');
  const { readFileSync } = await import('node:fs');
  const { gunzipSync } = await import('node:zlib');
  const metrics = () => [
    ['BLEU (sacrebleu default)', new Bleu()],
    ['BLEU (NLTK, tok=code)', new NltkBleu('code')],
    ['CrystalBLEU k=50', new CrystalBleu({ k: 50 })],
    ['CrystalBLEU k=500', new CrystalBleu({ k: 500 })],
  ];
  function evaluate(title, rows) {
    const refs = rows.map((r) => r.refs);
    const columns = metrics().map(([name, metric]) => {
      const infos = prepareAll(metric, refs); // counts every reference before the first score
      const out = new Float64Array(metric.statsSize);
      const values = rows.map((r, i) => {
        out.fill(0);
        metric.segmentStatistics(r.hyp, infos[i], out, 0);
        return metric.scoreFromStatistics(out);
      });
      return { name, values };
    });
    const report = metaEvaluate({ truthName: title, truth: rows.map((r) => r.truth), metrics: columns, groups: rows.map((r) => r.group) });
    console.log(`\n${title}: ${rows.length} rows, ${new Set(rows.map((r) => r.group)).size} groups`);
    console.log('| metric | corpus Kendall tau-b | corpus Spearman | corpus Pearson | example Kendall tau-b | example Spearman |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const m of report.metrics) {
      const f = (x) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
      console.log(`| ${m.metric} | ${f(m.corpus.kendall_b.tau)} | ${f(m.corpus.spearman.r)} | ${f(m.corpus.pearson.r)} | ${f(m.example.kendall_b.tau)} | ${f(m.example.spearman.r)} |`);
    }
  }
  const conala = JSON.parse(gunzipSync(readFileSync(new URL('../data/codegen-metrics/conala-all-grades.json.gz', import.meta.url))));
  const MODELS = ['baseline', 'tranx-annot', 'best-tranx', 'best-tranx-rerank', 'codex'];
  evaluate('CoNaLa human grades (M-MSR)', conala.flatMap((x, i) => MODELS.map((m) => ({ hyp: x[m], refs: x.snippet, truth: x[`grade-${m}`], group: String(i) }))));
  for (const lang of ['python', 'js']) {
    const rows = [];
    for (const p of humanevalProblems(lang)) {
      const ref = referenceOf(p.snippet);
      for (const key of Object.keys(p)) if (/^\d+$/.test(key) && p[`grade-${key}`]) rows.push({ hyp: p[key], refs: [ref], truth: p[`grade-${key}`].execution, group: p.task_id });
    }
    evaluate(`HumanEval-${lang} execution labels (ICE-Score)`, rows);
  }
}
