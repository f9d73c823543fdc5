#!/usr/bin/env node
/**
 * Builds data/multipl-e/humaneval-{ts,java,cpp,rs,php,rb,go,cs}.jsonl.gz: MultiPL-E's HumanEval prompts and tests
 * ("reworded" prompts, nuprl/MultiPL-E, BSD-3-Clause with its clause against use as training data) for TypeScript,
 * Java, C++, Rust, PHP, Ruby, Go and C#.
 *
 *   node scripts/exec-build-multipl-e.mjs RAW_DIR [OUT_DIR] [LANG,LANG...]   (default: every language)
 *
 * RAW_DIR holds the downloaded files, for each language either
 *   humaneval-<lang>-reworded.jsonl   (nuprl/MultiPL-E prompts/, as published), or
 *   humaneval-<lang>.jsonl            (the same records as redistributed by deepseek-ai/DeepSeek-Coder,
 *                                      Evaluation/HumanEval/data/, with `task_id` and `test` copies of `name`/`tests`;
 *                                      for C#, DeepSeek-Coder's tests compare lists with `SequenceEqual` where
 *                                      MultiPL-E's use `Equals`, see data/multipl-e/PROVENANCE.md).
 * OUT_DIR defaults to data/multipl-e. The LICENSE and PROVENANCE.md there are written by hand.
 *
 * What is changed (nothing else):
 * - Only MultiPL-E's own fields are kept (name, language, prompt, doctests, original, prompt_terminology, tests,
 *   stop_tokens); `task_id`/`test` (DeepSeek-Coder's copies) are checked equal to `name`/`tests` and dropped.
 * - Doc-comment repair (`repairPrompt`): a prompt is [preamble][doc comment][signature line]. Inside the doc comment
 *   (from its first `//` line up to, not including, the prompt's last line, the signature), a line that does not
 *   start with `//` gets the first comment line's indentation and `// ` put in front of it (an empty one gets `//`);
 *   Rust's doc comments are `///`, Ruby's `#`.
 *   Some published versions (nuprl/MultiPL-E at f9b4ccd0 for cpp/java, 3c9a62a for ts) lost the `//` of the
 *   continuation lines and do not compile; on a sound file the repair changes nothing. The count is printed.
 * - Records are sorted by problem number; written as gzipped JSONL (one record a line, keys in the order above).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const LANGS = ['ts', 'java', 'cpp', 'rs', 'php', 'rb', 'go', 'cs'];
/** The comment marker of each language's doc comments, and its MultiPL-E `language` field where it differs. */
const MARKER = { rs: '///', rb: '#' };
const LANGUAGE_FIELD = { go: 'go_test.go' };
const FIELDS = ['name', 'language', 'prompt', 'doctests', 'original', 'prompt_terminology', 'tests', 'stop_tokens'];
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Puts `//` back in front of doc-comment lines that lost it; returns the prompt and how many lines were repaired. */
export function repairPrompt(prompt, marker = '//') {
  const lines = prompt.split('\n');
  const trailing = lines[lines.length - 1] === '' ? lines.pop() : undefined;
  const first = lines.findIndex((l) => l.trimStart().startsWith(marker));
  let repaired = 0;
  if (first >= 0) {
    const indent = /^\s*/.exec(lines[first])[0];
    let last = lines.length - 1;
    while (last > first && lines[last].trim() === '') last--; // the signature line
    for (let i = first + 1; i < last; i++) {
      if (lines[i].trimStart().startsWith(marker)) continue;
      lines[i] = lines[i] === '' ? `${indent}${marker}` : `${indent}${marker} ${lines[i]}`;
      repaired++;
    }
  }
  if (trailing !== undefined) lines.push(trailing);
  return { prompt: lines.join('\n'), repaired };
}

function problemNumber(name) {
  const m = /^HumanEval_(\d+)_/.exec(name);
  if (!m) throw new Error(`unexpected problem name ${name}`);
  return Number(m[1]);
}

export function buildLanguage(rawDir, lang) {
  const candidates = [`humaneval-${lang}-reworded.jsonl`, `humaneval-${lang}.jsonl`];
  const file = candidates.map((f) => join(rawDir, f)).find((p) => existsSync(p));
  if (!file) throw new Error(`${rawDir}: none of ${candidates.join(', ')}`);
  const bytes = readFileSync(file);
  const records = [];
  let repaired = 0;
  const seen = new Set();
  bytes.toString('utf8').split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const row = JSON.parse(line);
    const where = `${file}:${i + 1}`;
    for (const f of ['name', 'language', 'prompt', 'tests']) if (typeof row[f] !== 'string') throw new Error(`${where}: field ${f}`);
    const language = LANGUAGE_FIELD[lang] ?? lang;
    if (row.language !== language) throw new Error(`${where}: language ${row.language}, expected ${language}`);
    if (row.prompt_terminology !== undefined && row.prompt_terminology !== 'reworded') throw new Error(`${where}: not a reworded prompt`);
    if (row.task_id !== undefined && row.task_id !== row.name) throw new Error(`${where}: task_id differs from name`);
    if (row.test !== undefined && row.test !== row.tests) throw new Error(`${where}: test differs from tests`);
    if (seen.has(row.name)) throw new Error(`${where}: duplicate ${row.name}`);
    seen.add(row.name);
    const fixed = repairPrompt(row.prompt, MARKER[lang]);
    repaired += fixed.repaired;
    const out = {};
    for (const f of FIELDS) if (row[f] !== undefined) out[f] = f === 'prompt' ? fixed.prompt : row[f];
    records.push(out);
  });
  records.sort((a, b) => problemNumber(a.name) - problemNumber(b.name));
  const text = records.map((r) => JSON.stringify(r) + '\n').join('');
  return { file, sha256: createHash('sha256').update(bytes).digest('hex'), records, repaired, text };
}

function main() {
  const [rawDir, outArg, langArg] = process.argv.slice(2);
  if (!rawDir) {
    process.stderr.write('usage: node scripts/exec-build-multipl-e.mjs RAW_DIR [OUT_DIR] [LANG,LANG...]\n');
    process.exit(2);
  }
  const outDir = resolve(outArg ?? join(ROOT, 'data', 'multipl-e'));
  mkdirSync(outDir, { recursive: true });
  const langs = langArg ? langArg.split(',') : LANGS;
  for (const lang of langs) {
    if (!LANGS.includes(lang)) throw new Error(`unknown language ${lang}; known: ${LANGS.join(', ')}`);
    const b = buildLanguage(resolve(rawDir), lang);
    const target = join(outDir, `humaneval-${lang}.jsonl.gz`);
    writeFileSync(target, gzipSync(Buffer.from(b.text, 'utf8'), { level: 9 }));
    const missing = [];
    const have = new Set(b.records.map((r) => problemNumber(r.name)));
    for (let n = 0; n < 164; n++) if (!have.has(n)) missing.push(n);
    process.stdout.write(`${lang}: ${b.records.length} problems (missing ${missing.join(', ')}), ${b.repaired} doc-comment lines repaired; input ${b.file} sha256 ${b.sha256}; output sha256 of JSONL ${createHash('sha256').update(b.text).digest('hex')}\n`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
