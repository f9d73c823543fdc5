// Manual parity check of CodeBERTScore against the values ICE-Score recorded for its HumanEval samples
// (data/ice-humaneval: codebertscore_f1/f3 without the problem, codebertscore_s_f1/s_f3 with it as source).
// Needs a real model, which CI does not have (no network, and the per-language models are ~500 MB PyTorch
// checkpoints that must first be exported to ONNX; see docs/score.md, CodeBERTScore):
//
//   npm run build
//   node scripts/codebertscore-parity.mjs --lang python --model-dir models/codebert-python-L11 [--limit 200] [--idf]
//   node scripts/codebertscore-parity.mjs --lang js --model-dir models/codebert-javascript-L10
//
// Prints, for F1 and F3 with and without sources, how many samples agree within 1e-4 / 1e-3 / 1e-2, the largest
// difference and the Pearson correlation with the recorded values.
import { parseArgs } from 'node:util';
import { humanevalProblems, referenceOf } from '../bench/humaneval-data.js';
import { CodeBertScore } from '../dist/metrics/codebertscore.js';
import { prepareAll } from '../dist/metrics/metric.js';

const { values } = parseArgs({
  options: {
    lang: { type: 'string', default: 'python' },
    'model-dir': { type: 'string' },
    limit: { type: 'string' },
    idf: { type: 'boolean', default: false },
  },
});
if (!values['model-dir']) {
  console.error('usage: node scripts/codebertscore-parity.mjs --lang python|js --model-dir DIR [--limit N] [--idf]');
  process.exit(2);
}
const file = values.lang === 'python' ? 'python' : 'js';
const lang = file === 'python' ? 'python' : 'javascript';
const problems = humanevalProblems(file);

const rows = [];
for (const p of problems) {
  for (const key of Object.keys(p)) {
    if (!/^\d+$/.test(key) || p[`codebertscore_f1-${key}`] === undefined) continue;
    rows.push({ hyp: p[key], ref: referenceOf(p.snippet), source: p.intent, recorded: { f1: p[`codebertscore_f1-${key}`], f3: p[`codebertscore_f3-${key}`], s_f1: p[`codebertscore_s_f1-${key}`], s_f3: p[`codebertscore_s_f3-${key}`] } });
  }
}
const limit = values.limit ? Number(values.limit) : rows.length;
const sample = rows.slice(0, limit);
console.log(`${sample.length} ${file} samples of ICE-Score's HumanEval data; model ${values['model-dir']}; idf=${values.idf ? 'yes' : 'no'}`);

function pearson(x, y) {
  const n = x.length;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0, sxx = 0, syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

for (const sources of [false, true]) {
  const bySource = new Map(sample.map((r) => [r.ref, r.source]));
  const metric = new CodeBertScore({ lang, modelDir: values['model-dir'], idf: values.idf, sources, sourceOf: (refs) => bySource.get(refs[0]) });
  await metric.ready();
  const infos = prepareAll(metric, sample.map((r) => [r.ref]));
  const start = Date.now();
  const got = sample.map((r, i) => metric.scores(r.hyp, infos[i]));
  const seconds = (Date.now() - start) / 1000;
  for (const measure of ['f1', 'f3']) {
    const key = sources ? `s_${measure}` : measure;
    const recorded = sample.map((r) => r.recorded[key]);
    const ours = got.map((g) => g[measure]);
    const diffs = ours.map((x, i) => Math.abs(x - recorded[i]));
    const within = (t) => diffs.filter((d) => d <= t).length;
    console.log(
      `codebertscore_${key}: within 1e-4 ${within(1e-4)}/${diffs.length}, within 1e-3 ${within(1e-3)}, within 1e-2 ${within(1e-2)}; max |diff| ${Math.max(...diffs).toFixed(5)}; Pearson r ${pearson(ours, recorded).toFixed(5)}`,
    );
  }
  console.log(`  (${(sample.length / seconds).toFixed(1)} pairs/s with sources=${sources ? 'yes' : 'no'})`);
  await metric.close();
}
