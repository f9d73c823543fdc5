// How big is codegauge for a team that adds it to a project? Packs this checkout (`npm pack`), installs the tarball
// into an empty project from the npm registry, prints the size of node_modules, and checks that every metric runs
// from the installed package and that the optional local-model packages are asked for by name (transformers.js for
// --embed local, node-llama-cpp for llama: models).
//   node scripts/install-size.mjs [--json]   (needs the npm registry; about 2 minutes; test/install-size.test.ts runs it)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'codegauge-install-'));
execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: root, stdio: 'ignore' });
const tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz')));
const project = join(work, 'project');
execFileSync('mkdir', ['-p', project]);
writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty', version: '1.0.0', private: true }));
const started = Date.now();
const json = process.argv.includes('--json');
execFileSync('npm', ['install', tarball, '--no-audit', '--no-fund'], { cwd: project, stdio: json ? 'ignore' : 'inherit' });
const seconds = (Date.now() - started) / 1000;
const mb = Number(execFileSync('du', ['-sm', join(project, 'node_modules')], { encoding: 'utf8' }).split('\t')[0]);
const conala = join(project, 'node_modules', 'codegauge', 'data', 'conala');
const metrics = ['bleu', 'chrf', 'rougeL', 'meteor', 'codebleu:lang=python', 'ruby:lang=python', 'crystalbleu:k=50', 'nltk-bleu', 'codebleu-cgm'];
const score = spawnSync('npx', ['codegauge', 'score', '--refs', join(conala, 'refs.jsonl'), '--hyps', join(conala, 'codex.jsonl'), ...metrics.flatMap((m) => ['--metric', m]), '--format', 'json'], { cwd: project, encoding: 'utf8' });
const scores = JSON.parse(score.stdout).systems[0].scores.map((s) => ({ metric: s.metric, score: s.score }));
writeFileSync(join(work, 'app.py'), 'def f():\n    pass\n');
const local = spawnSync('npx', ['codegauge', 'sbc', 'check', '--requirement-text', 'x', '--code', join(work, 'app.py'), '--model', 'openai:m', '--base-url', 'http://127.0.0.1:9/v1'], { cwd: project, encoding: 'utf8' });
// A llama: model without node-llama-cpp: a real GGUF file (the tests' tiny one), so that only the package is missing.
const { writeTinyGguf } = await import(new URL('./tiny-gguf.mjs', import.meta.url).href);
writeTinyGguf(join(work, 'tiny.gguf'));
writeFileSync(join(work, 'refs.py.jsonl'), '"x = 1"\n');
const llama = spawnSync('npx', ['codegauge', 'judge', '--method', 'ice', '--model', `llama:${join(work, 'tiny.gguf')}`, '--refs', join(work, 'refs.py.jsonl'), '--hyps', join(work, 'refs.py.jsonl'), '--cache-file', join(work, 'c.sqlite')], { cwd: project, encoding: 'utf8' });
if (json) {
  console.log(JSON.stringify({ seconds, mb, scores, local: { status: local.status, stderr: local.stderr.trim() }, llama: { status: llama.status, stderr: llama.stderr.trim() } }));
} else {
  console.log(`installed in ${seconds.toFixed(0)} s: node_modules ${mb} MB (target <= 300 MB)`);
  console.log(`every metric from the installed package: ${scores.map((s) => `${s.metric} ${s.score.toFixed(2)}`).join(', ')}`);
  console.log(`--embed local without the optional package (exit ${local.status}): ${local.stderr.trim()}`);
  console.log(`a llama: model without the optional package (exit ${llama.status}): ${llama.stderr.trim()}`);
}
execFileSync('rm', ['-rf', work]);
