#!/usr/bin/env node
// Writes the ICE-Score HumanEval samples (data/ice-humaneval) as codegauge inputs for a judge study:
// OUT/refs.py.jsonl, OUT/hyps.py.jsonl, OUT/problems.jsonl (one line per sample) and OUT/labels.jsonl
// (system, segment, problem, passed), so that `codegauge judge` + `codegauge meta --join` reproduce the DSA-CQE study.
// Usage: node scripts/humaneval-study.mjs [python|js] OUT_DIR
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

const [language = 'python', out = 'humaneval-study'] = process.argv.slice(2);
if (!['python', 'js'].includes(language)) {
  console.error('usage: node scripts/humaneval-study.mjs [python|js] OUT_DIR');
  process.exit(2);
}
const ext = language === 'python' ? 'py' : 'js';
const problems = JSON.parse(gunzipSync(readFileSync(new URL(`../data/ice-humaneval/humaneval_${language}_grade.json.gz`, import.meta.url))).toString());
const refs = [];
const hyps = [];
const intents = [];
const labels = [];
for (const p of problems) {
  for (const key of Object.keys(p).filter((k) => k.startsWith('grade-')).map((k) => k.slice(6))) {
    // Samples and reference solutions are function bodies; prefixing the signature and docstring makes them programs.
    refs.push(p.intent + p.snippet[0]);
    // Codex samples begin right after the docstring, their first line without its indentation.
    const sample = language === 'python' && !/^\s/.test(p[key]) ? '    ' + p[key] : p[key];
    hyps.push(p.intent + sample);
    intents.push(p.simplified ?? p.intent);
    labels.push({ system: 'hyps', segment: hyps.length, problem: p.task_id, passed: p[`grade-${key}`].execution });
  }
}
mkdirSync(out, { recursive: true });
const lines = (xs) => xs.map((x) => JSON.stringify(x)).join('\n') + '\n';
writeFileSync(join(out, `refs.${ext}.jsonl`), lines(refs));
writeFileSync(join(out, `hyps.${ext}.jsonl`), lines(hyps));
writeFileSync(join(out, 'problems.jsonl'), lines(intents));
writeFileSync(join(out, 'labels.jsonl'), lines(labels));
console.log(`${hyps.length} samples of ${problems.length} problems written to ${out}/`);
