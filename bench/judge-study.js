// The DSA-CQE study on HumanEval in one command: ICE-Score's Codex samples of HumanEval (data/ice-humaneval: 3,220
// Python samples of 161 problems, each with its execution label) judged by DSA-CQE, simplified DSA-CQE and the
// single-step baseline with one named model, and each judge's grades correlated with execution (Pearson, Spearman,
// Kendall tau-b; corpus level over all samples, and example level: inside each problem, averaged over problems, as
// ICE-Score computes it), printed next to the paper's GPT-3.5 figures.
//
//   npm run build
//   node bench/judge-study.js --model hf:Qwen/Qwen2.5-Coder-7B-Instruct-GGUF:qwen2.5-coder-7b-instruct-q4_k_m.gguf
//   node bench/judge-study.js --model llama:models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf --limit 200
//   node bench/judge-study.js --model openai:gpt-3.5-turbo --base-url https://api.openai.com/v1   (the paper's judge)
//
// Options: --model SPEC (required), --limit N (N samples spread evenly over the 3,220; default all),
// --methods dsa,dsa-simple,ice, --lang python|js, --threads N, --context-size N, --concurrency N (parallel
// sequences of a local model, or requests in flight to a server), --max-tokens N, --base-url URL, --out DIR
// (default test-output/judge-study; the grades, the correlations and the SQLite cache: a rerun asks nothing).
// A tiny random model (scripts/tiny-gguf.mjs) runs it end to end in a few minutes with --limit; its figures mean
// nothing, and the script says so.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { DsaJudge, IceJudge, LlmClient, LlmStore, judgeFailures, judgeSystems, metaEvaluate, parseModelSpec } from '../dist/index.js';
import { readGgufHeader } from '../dist/llm/gguf.js';

const ROOT = new URL('..', import.meta.url).pathname;
/** Pearson correlation with execution that the DSA-CQE paper reports for GPT-3.5 on HumanEval (as README cites it). */
const PAPER = { dsa: 0.594, 'dsa-simple': 0.512, ice: 0.106 };
const NAMES = { dsa: 'DSA-CQE', 'dsa-simple': 'simplified DSA-CQE', ice: 'single-step (ICE-Score style)' };

function options(argv) {
  const o = { methods: ['dsa', 'dsa-simple', 'ice'], lang: 'python', concurrency: 4, out: join(ROOT, 'test-output', 'judge-study') };
  for (let i = 0; i < argv.length; i++) {
    const [key, value] = [argv[i], argv[i + 1]];
    const number = () => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) throw new Error(`${key} needs a positive integer, got ${value}`);
      i++;
      return n;
    };
    if (key === '--model') (o.model = value), i++;
    else if (key === '--limit') o.limit = number();
    else if (key === '--methods') (o.methods = value.split(',')), i++;
    else if (key === '--lang') (o.lang = value), i++;
    else if (key === '--threads') o.threads = number();
    else if (key === '--context-size') o.contextSize = number();
    else if (key === '--concurrency') o.concurrency = number();
    else if (key === '--max-tokens') o.maxTokens = number();
    else if (key === '--base-url') (o.baseUrl = value), i++;
    else if (key === '--out') (o.out = value), i++;
    else throw new Error(`unknown option ${key}`);
  }
  if (!o.model) throw new Error('give --model SPEC (llama:PATH.gguf, hf:OWNER/REPO[:FILE.gguf], openai:MODEL with --base-url, ollama:MODEL)');
  for (const m of o.methods) if (!(m in PAPER)) throw new Error(`--methods: ${m} is not one of ${Object.keys(PAPER).join(', ')}`);
  if (!['python', 'js'].includes(o.lang)) throw new Error('--lang is python or js');
  return o;
}

/** Why a model's figures cannot mean anything, or null when it may be a real model. */
function notARealModel(spec, path) {
  if (!path) return null; // a server's model: nothing to look at
  const header = readGgufHeader(path);
  const mb = statSync(path).size / 1e6;
  if (/random/i.test(header.name ?? '')) return `${spec} is "${header.name}": random weights`;
  // The smallest instruction-tuned code models (Qwen2.5-Coder-0.5B at 4 bits) weigh about 400 MB.
  if (mb < 100) return `${spec} is a ${mb.toFixed(1)} MB file, far smaller than any language model that can judge code`;
  return null;
}

const o = options(process.argv.slice(2));
const ext = o.lang === 'python' ? 'py' : 'js';
mkdirSync(o.out, { recursive: true });
const study = join(o.out, 'inputs');
const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'humaneval-study.mjs'), o.lang, study], { encoding: 'utf8' });
if (built.status !== 0) throw new Error(built.stderr);
const read = (name) => readFileSync(join(study, name), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const [allRefs, allHyps, allProblems, allLabels] = [`refs.${ext}.jsonl`, `hyps.${ext}.jsonl`, 'problems.jsonl', 'labels.jsonl'].map(read);
const total = allHyps.length;
const n = Math.min(o.limit ?? total, total);
// Evenly spread over the passing and over the failing samples (they are grouped by problem), in their share of the
// whole and at least one of each, so that a small run sees many problems and a correlation is defined.
const spread = (indices, k) => Array.from({ length: k }, (_, i) => indices[Math.floor((i * indices.length) / k)]);
const passing = allLabels.flatMap((l, i) => (l.passed === 1 ? [i] : []));
const failing = allLabels.flatMap((l, i) => (l.passed === 1 ? [] : [i]));
const nPassing = n === total ? passing.length : Math.min(passing.length, Math.max(1, Math.round((n * passing.length) / total)), n - 1);
const picked = [...spread(passing, nPassing), ...spread(failing, n - nPassing)].sort((a, b) => a - b);
const refs = picked.map((i) => [allRefs[i]]);
const hyps = picked.map((i) => allHyps[i]);
const problems = picked.map((i) => allProblems[i]);
const labels = picked.map((i) => allLabels[i]);

const spec = parseModelSpec(o.model);
const store = new LlmStore(join(o.out, 'cache.sqlite'));
const client = new LlmClient({
  baseUrls: o.baseUrl ? [o.baseUrl] : process.env.OPENAI_BASE_URL ? process.env.OPENAI_BASE_URL.split(',') : [],
  apiKey: process.env.OPENAI_API_KEY,
  ollamaHosts: [process.env.OLLAMA_HOST || 'http://127.0.0.1:11434'],
  concurrency: o.concurrency,
  store,
  local: { threads: o.threads, contextSize: o.contextSize },
});
const local = spec.kind === 'llama' || spec.kind === 'hf' ? await client.localModels().resolve(spec) : undefined;
const fake = notARealModel(o.model, local?.file.path);

console.log(`DSA-CQE study on HumanEval (${o.lang}): ${n} of ${total} Codex samples (ICE-Score), ${labels.filter((l) => l.passed === 1).length} passing their tests`);
console.log(`judge: ${o.model}${local ? ` (${local.file.header.architecture}, ${local.identity.quantisation}, context ${local.identity.contextSize}, ${client.localModels().threads} thread(s))` : ''}; load average ${loadavg()[0].toFixed(2)}`);
if (fake) console.log(`\n  NOTE: ${fake}. The figures below are meaningless; the run only shows the study works end to end.\n`);

const rows = [];
const started = Date.now();
for (const method of o.methods) {
  const judge = method === 'ice' ? new IceJudge({ aspect: 'functional-correctness', withReference: true, chainOfThought: true }) : new DsaJudge({ simplified: method === 'dsa-simple' });
  let last = 0;
  const t = Date.now();
  const report = await judgeSystems({
    judge,
    modelName: o.model,
    context: { client, model: spec, temperature: 0, maxTokens: o.maxTokens },
    references: refs,
    systems: [{ name: `hyps.${ext}`, hypotheses: hyps }],
    problems,
    language: o.lang === 'python' ? 'python' : 'javascript',
    onProgress: (done, all) => {
      if (Date.now() - last > 10_000 || done === all) {
        last = Date.now();
        process.stderr.write(`  ${method}: ${done}/${all} graded (${client.counters()})\n`);
      }
    },
  });
  writeFileSync(join(o.out, `${method}.json`), JSON.stringify(report, null, 2) + '\n');
  const score = report.systems[0].scores[0];
  const grades = score.segments.map((g) => (Number.isFinite(g) ? g : null));
  const meta = metaEvaluate({ truthName: 'passed', truth: labels.map((l) => l.passed), metrics: [{ name: method, values: grades }], groups: labels.map((l) => l.problem), samples: 0 });
  writeFileSync(join(o.out, `${method}.meta.json`), JSON.stringify(meta, null, 2) + '\n');
  rows.push({ method, graded: score.details.graded, failures: judgeFailures(report), meta: meta.metrics[0], seconds: (Date.now() - t) / 1000, signature: score.signature });
}

const f = (x) => (x === null || x === undefined || Number.isNaN(x) ? '   n/a' : x.toFixed(3).padStart(6));
console.log('\nCorrelation with execution (1 = the sample passes its tests)');
console.log(`${'method'.padEnd(30)} ${'graded'.padStart(6)}  ${'level'.padEnd(7)} pearson spearman kendall_b   paper (GPT-3.5, Pearson)`);
for (const r of rows) {
  for (const level of ['corpus', 'example']) {
    const c = r.meta[level];
    const paper = level === 'corpus' ? PAPER[r.method].toFixed(3) : '';
    console.log(`${(level === 'corpus' ? NAMES[r.method] : '').padEnd(30)} ${(level === 'corpus' ? String(r.graded) : '').padStart(6)}  ${level.padEnd(7)} ${f(c?.pearson.r)}  ${f(c?.spearman.r)}    ${f(c?.kendall_b.tau)}     ${paper}`);
  }
}
for (const r of rows) {
  if (r.failures) console.log(`${NAMES[r.method]}: ${r.failures} sample(s) the judge could not grade (left out; see ${join(o.out, `${r.method}.json`)})`);
  if (r.meta.notes) console.log(`${NAMES[r.method]}: ${r.meta.notes.join('; ')}`);
}
console.log(`\n${client.summary()}`);
console.log(`${((Date.now() - started) / 1000).toFixed(0)} s; load average ${loadavg()[0].toFixed(2)}; grades, correlations and the cache in ${o.out}`);
for (const r of rows) console.log(`  ${r.signature}`);
if (fake) console.log(`\nNOTE: ${fake}: these figures are meaningless.`);
store.close();
