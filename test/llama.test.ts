import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIFFERENCES_SCHEMA, SEMANTICS_SCHEMA, STORAGE_UPDATE_SCHEMA, UNIT_SUMMARY_SCHEMA } from '../src/judges/dsa.js';
import { EVALUATED_GRADE_SCHEMA, GRADE_SCHEMA } from '../src/judges/judge.js';
import { LlmClient, withoutBounds } from '../src/llm/client.js';
import { readGgufHeader } from '../src/llm/gguf.js';
import { HfDownloader, chooseGguf, modelsDir } from '../src/llm/hf-download.js';
import { checkJsonSchema, readSchemaReply } from '../src/llm/json-schema-check.js';
import { loadNodeLlamaCpp } from '../src/llm/llama-runtime.js';
import { contextSizeFor } from '../src/llm/local-model.js';
import { parseModelSpec } from '../src/llm/model-spec.js';
import { defaultThreads, physicalCoresOf } from '../src/llm/threads.js';
import { startFakeLlmServer } from './fixtures/fake-llm-server.js';
import { cli, ROOT } from './helpers.js';

/**
 * The embedded llama.cpp runtime (issue 24) on a tiny GGUF model with random weights, written by the committed,
 * seeded scripts/tiny-gguf.mjs: real inference through node-llama-cpp (a devDependency), with one thread so the
 * tests stay fast and steady on a loaded 2-core machine. Nothing here asserts a speed or a particular grade: the
 * model's replies are noise, and what is checked is what codegauge makes of them (schemas, cache, signatures,
 * failures).
 */
type TinyGguf = { tinyGguf(options?: { seed?: number; variant?: string }): Buffer; writeTinyGguf(path: string, options?: { seed?: number; variant?: string }): string };

let dir: string;
let tiny: TinyGguf;
let chat: string; // the chat model
let sha: string;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-llama-'));
  tiny = (await import(pathToFileURL(join(ROOT, 'scripts/tiny-gguf.mjs')).href)) as TinyGguf;
  chat = tiny.writeTinyGguf(join(dir, 'tiny.gguf'));
  sha = sha256(readFileSync(chat));
});
afterAll(async () => {
  await Promise.all(closers.map((c) => c()));
});

const jsonl = (name: string, rows: unknown[]) => {
  const path = join(dir, name);
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
};
const readJsonl = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

describe('model specs, threads, GGUF headers and schema checks (no inference)', () => {
  it('parses llama: and hf: specs and refuses malformed ones with the forms it takes', () => {
    expect(parseModelSpec('llama:models/q.gguf')).toEqual({ kind: 'llama', model: 'models/q.gguf' });
    expect(parseModelSpec('hf:Qwen/Qwen2.5-Coder-7B-Instruct-GGUF:qwen2.5-coder-7b-instruct-q4_k_m.gguf')).toEqual({ kind: 'hf', model: 'Qwen/Qwen2.5-Coder-7B-Instruct-GGUF:qwen2.5-coder-7b-instruct-q4_k_m.gguf' });
    expect(() => parseModelSpec('hf:just-a-name')).toThrow(/hf:OWNER\/REPO/);
    expect(() => parseModelSpec('hf:o/r:weights.bin')).toThrow(/must be a \.gguf file/);
    expect(() => parseModelSpec('hf:o/r:../../etc/x.gguf')).toThrow(/must be a \.gguf file/);
    expect(() => parseModelSpec('gguf:x.gguf')).toThrow(/llama:PATH\.gguf/);
  });

  it('chooses threads from the physical cores this process may use, not the logical ones', () => {
    const cpuinfo = (cores: number, threadsPerCore: number) =>
      Array.from({ length: cores * threadsPerCore }, (_, p) => `processor\t: ${p}\nphysical id\t: 0\ncore id\t\t: ${p % cores}\n`).join('\n');
    expect(physicalCoresOf(cpuinfo(2, 1))).toBe(2);
    expect(defaultThreads({ cpuinfo: cpuinfo(2, 1), available: 2, logical: 2 })).toBe(2); // this machine
    expect(defaultThreads({ cpuinfo: cpuinfo(8, 2), available: 16, logical: 16 })).toBe(8); // SMT: one thread per core
    expect(defaultThreads({ cpuinfo: cpuinfo(8, 2), available: 4, logical: 16 })).toBe(2); // taskset to 4 logical CPUs
    expect(defaultThreads({ cpuinfo: cpuinfo(8, 2), available: 16, logical: 16, quota: 1.5 })).toBe(2); // cgroup quota
    expect(defaultThreads({ available: 6, logical: 6 })).toBe(6); // no /proc/cpuinfo (macOS, Windows)
    expect(defaultThreads({ cpuinfo: cpuinfo(1, 1), available: 1, logical: 1, quota: 0.2 })).toBe(1);
  });

  it('writes the same tiny model for the same seed, and reads its header without loading it', () => {
    expect(sha256(tiny.tinyGguf())).toBe(sha);
    expect(sha256(tiny.tinyGguf({ seed: 25 }))).not.toBe(sha);
    const header = readGgufHeader(chat);
    expect(header).toMatchObject({ version: 3, architecture: 'llama', fileType: 0, quantisation: 'F32', contextLength: 8192, tensorCount: 21 });
    expect(header.poolingType).toBeUndefined();
    expect(readGgufHeader(tiny.writeTinyGguf(join(dir, 'e.gguf'), { variant: 'embedding' })).poolingType).toBe(1);
    writeFileSync(join(dir, 'text.gguf'), 'hello, not a model\n');
    expect(() => readGgufHeader(join(dir, 'text.gguf'))).toThrow(/is not a GGUF model file \(it starts with "hell"/);
    writeFileSync(join(dir, 'cut.gguf'), tiny.tinyGguf().subarray(0, 3000));
    expect(() => readGgufHeader(join(dir, 'cut.gguf'))).toThrow(/ends inside its GGUF header/);
  });

  it('sizes contexts within what the model declares', () => {
    expect(contextSizeFor({ contextLength: 32768 }, undefined, 'm')).toBe(8192);
    expect(contextSizeFor({ contextLength: 2048 }, undefined, 'm')).toBe(2048);
    expect(contextSizeFor({ contextLength: 32768 }, 1000, 'm')).toBe(1024); // llama.cpp's multiple of 256
    expect(contextSizeFor({ contextLength: 1000 }, 1000, 'm')).toBe(1000);
    expect(() => contextSizeFor({ contextLength: 2048 }, 4096, 'llama:m.gguf')).toThrow('--context-size 4096 is more than llama:m.gguf declares (2048 tokens)');
  });

  it('bounds every judge schema: grades as enums, every string a maxLength, every array a maxItems', () => {
    const unbounded: string[] = [];
    const walk = (s: Record<string, unknown>, path: string) => {
      if (s.type === 'string' && typeof s.maxLength !== 'number') unbounded.push(path);
      if (s.type === 'array' && typeof s.maxItems !== 'number') unbounded.push(path);
      if (s.type === 'integer' && !Array.isArray(s.enum)) unbounded.push(path);
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Record<string, unknown>>)) walk(v, `${path}.${k}`);
      if (s.items) walk(s.items as Record<string, unknown>, `${path}[]`);
    };
    for (const schema of [GRADE_SCHEMA, EVALUATED_GRADE_SCHEMA, UNIT_SUMMARY_SCHEMA, STORAGE_UPDATE_SCHEMA, SEMANTICS_SCHEMA, DIFFERENCES_SCHEMA]) walk(schema.schema, schema.name);
    expect(unbounded).toEqual([]);
    // Servers that refuse the bounds (OpenAI's strict mode) are asked without them.
    expect(JSON.stringify(withoutBounds(DIFFERENCES_SCHEMA.schema))).not.toMatch(/maxItems|maxLength/);
  });

  it('checks replies itself: JSON, enums, bounds, required and extra properties', () => {
    const schema = GRADE_SCHEMA.schema;
    expect(readSchemaReply(schema, '{"score": 3, "reason": "ok"}')).toEqual({ value: { score: 3, reason: 'ok' } });
    expect(readSchemaReply(schema, '{"score": 9E204817, "reason": "x"}')).toEqual({ error: expect.stringContaining('$.score') });
    expect(readSchemaReply(schema, '{"score": 3, "reason": "' + 'x'.repeat(301) + '"}')).toEqual({ error: '$.reason: a string of 301 characters, more than maxLength 300' });
    expect(readSchemaReply(schema, '{"score": 3, "reason": "cut')).toEqual({ error: expect.stringMatching(/^not JSON/) });
    expect(readSchemaReply(schema, '{"score": 3}')).toEqual({ error: '$: missing property "reason"' });
    expect(readSchemaReply(schema, '{"score": 3, "reason": "", "x": 1}')).toEqual({ error: '$: unexpected property "x"' });
    // U+FFFD (bytes that were not UTF-8) does not count towards maxLength; the grammar counted them otherwise.
    expect(checkJsonSchema({ type: 'string', maxLength: 3 }, 'ab\uFFFD\uFFFD\uFFFDc')).toBeNull();
    expect(checkJsonSchema(DIFFERENCES_SCHEMA.schema, { differences: Array(11).fill('d') })).toEqual({ path: '$.differences', reason: '11 items, more than maxItems 10' });
  });

  it('a server that refuses the length bounds (OpenAI\'s strict mode) is asked with the schema without them', async () => {
    // OpenAI's wording for a keyword its strict mode does not take.
    const refuse = (body: any) => (JSON.stringify(body.response_format ?? {}).includes('maxLength') ? "Invalid schema for response_format 'grade': In context=('properties', 'reason'), 'maxLength' is not permitted." : undefined);
    const s = await startFakeLlmServer({ reply: () => '{"score": 3, "reason": "close"}', refuse });
    closers.push(() => s.close());
    const client = new LlmClient({ baseUrls: [s.url] });
    const ask = () => client.chat(parseModelSpec('openai:j'), { messages: [{ role: 'user', content: 'grade' }], schema: GRADE_SCHEMA, json: true });
    expect((await ask()).text).toBe('{"score": 3, "reason": "close"}');
    await ask(); // remembered: sent without the bounds at once
    const sent = s.requests.map((q) => q.body.response_format);
    expect(sent.map((f) => f.type)).toEqual(['json_schema', 'json_schema', 'json_schema']);
    expect(sent[1].json_schema.schema).toEqual(withoutBounds(GRADE_SCHEMA.schema));
    expect(sent[1].json_schema.schema.properties.score.enum).toEqual([0, 1, 2, 3, 4]);
    expect(client.refusals()).toEqual([{ kind: 'openai', endpoint: s.url, model: 'j', refused: ['schema-bounds'] }]);
  });

  it('names the one command that installs node-llama-cpp when it is missing', async () => {
    const missing = () => Promise.reject(Object.assign(new Error("Cannot find package 'node-llama-cpp' imported from x.js"), { code: 'ERR_MODULE_NOT_FOUND' }));
    await expect(loadNodeLlamaCpp('llama: models', missing)).rejects.toThrow('llama: models needs the optional package node-llama-cpp: npm install node-llama-cpp@3.21.1');
  });
});

describe('judges on the tiny model (real llama.cpp inference)', () => {
  const problems = ['Return the sum of a and b.', 'Return the largest element of xs.'];
  const refs = ['def add(a, b):\n    return a + b\n', 'def largest(xs):\n    return max(xs)\n'];
  const hyps = ['def add(a, b):\n    return a - b\n', 'def largest(xs):\n    return sorted(xs)[-1]\n'];
  const files = () => ['--refs', jsonl('refs.py.jsonl', refs), '--hyps', jsonl('hyps.py.jsonl', hyps), '--problems', jsonl('problems.jsonl', problems)];

  it('ice: a grade for every segment, the re-asks decoded under the schema, and a rerun served from the cache', async () => {
    const explain = join(dir, 'ice-explain');
    const args = ['judge', '--method', 'ice', '--model', `llama:${chat}`, ...files(), '--threads', '1', '--concurrency', '2', '--cache-file', join(dir, 'ice.sqlite'), '--format', 'json'];
    const r = await cli(...args, '--explain', explain);
    expect(r.code, r.err).toBe(0);
    const score = JSON.parse(r.out).systems[0].scores[0];
    expect(score.details).toEqual({ graded: 2, failures: 0 });
    for (const s of score.segments) expect([0, 25, 50, 75, 100]).toContain(s);
    expect(score.signature).toContain(`ice|model:llama:${chat}@gguf(sha256=${sha.slice(0, 16)},quant=F32,ctx=8192)|grammar:json-schema|temp:0|`);
    let reasked = 0;
    for (const segment of [1, 2]) {
      const [run] = JSON.parse(readFileSync(join(explain, 'hyps', `${segment}.json`), 'utf8')).runs;
      if (run.replies.length === 1) continue; // a grade read from the free text, as ICE-Score reads it
      reasked++;
      const last = readSchemaReply(EVALUATED_GRADE_SCHEMA.schema, run.replies.at(-1));
      expect(last).toEqual({ value: expect.objectContaining({ score: run.grade }) });
    }
    expect(reasked).toBeGreaterThan(0); // the random model's free text is unreadable: the schema path ran
    expect(r.err).toMatch(/llama\.cpp: \d+ prompt \+ \d+ generated tokens in [\d.]+ s of inference; generation [\d.]+ tokens\/s \(1 thread\(s\), cpu\)/);

    // The rerun, in a process where node-llama-cpp cannot even be imported: every answer comes from the cache.
    const rerun = spawnSync(process.execPath, ['--import', join(ROOT, 'test/fixtures/hide-node-llama-cpp.mjs'), join(ROOT, 'bin/codegauge.js'), ...args], { encoding: 'utf8', cwd: dir });
    expect(rerun.status, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout)).toEqual(JSON.parse(r.out));
    expect(rerun.stderr).toMatch(/^0 requests, \d+ cache hits/);
    expect(rerun.stderr).not.toContain('llama.cpp:');
  });

  it('dsa: every step\'s reply follows its schema and the segment gets a grade', async () => {
    const explain = join(dir, 'dsa-explain');
    const r = await cli('judge', '--method', 'dsa', '--model', `llama:${chat}`, '--refs', jsonl('r1.py.jsonl', refs.slice(0, 1)), '--hyps', jsonl('h1.py.jsonl', hyps.slice(0, 1)), '--problems', jsonl('p1.jsonl', problems.slice(0, 1)), '--threads', '1', '--cache-file', join(dir, 'dsa.sqlite'), '--explain', explain, '--format', 'json');
    expect(r.code, r.err).toBe(0);
    const score = JSON.parse(r.out).systems[0].scores[0];
    expect(score.details).toEqual({ graded: 1, failures: 0 });
    expect([0, 25, 50, 75, 100]).toContain(score.segments[0]);
    const [run] = JSON.parse(readFileSync(join(explain, 'h1', '1.json'), 'utf8')).runs;
    const byKey: Record<string, Record<string, unknown>> = { summary: UNIT_SUMMARY_SCHEMA.schema, entities: STORAGE_UPDATE_SCHEMA.schema, semantics: SEMANTICS_SCHEMA.schema, differences: DIFFERENCES_SCHEMA.schema, score: GRADE_SCHEMA.schema };
    const steps = run.replies.map((reply: string) => {
      const key = Object.keys(JSON.parse(reply))[0];
      expect(readSchemaReply(byKey[key], reply)).toHaveProperty('value');
      return key;
    });
    // One unit per program (the function): its analysis and storage update, the program's semantics; then the
    // comparison and the grade.
    expect(steps).toEqual(['summary', 'entities', 'semantics', 'summary', 'entities', 'semantics', 'differences', 'score']);
    expect(JSON.parse(run.replies.at(-1)).score).toBe(run.grade);
  });

  it('a reply cut at --max-tokens before its JSON closed is a judge failure (exit 1), with the reason', async () => {
    const r = await cli('judge', '--method', 'dsa-simple', '--model', `llama:${chat}`, ...files(), '--threads', '1', '--max-tokens', '4', '--cache-file', join(dir, 'cut.sqlite'), '--format', 'json');
    expect(r.code).toBe(1);
    const score = JSON.parse(r.out).systems[0].scores[0];
    expect(score.details.failures).toBe(2);
    expect(score.errors[0]).toMatch(/the reply does not follow the JSON schema "program_semantics" \(cut at --max-tokens 4\): not JSON/);
    expect(r.err).toContain('the judge failed on 2 sample(s)');
  });
});

describe('generation on the tiny model', () => {
  it('the same seed gives the same bytes; another seed other bytes', async () => {
    const ask = (seed: number) => {
      const client = new LlmClient({ local: { threads: 1 } }); // no store: nothing cached
      return client.chat(parseModelSpec(`llama:${chat}`), { messages: [{ role: 'user', content: 'Write a Python function.' }], temperature: 0.9, seed, maxTokens: 24 });
    };
    const [a, b, c] = await Promise.all([ask(7), ask(7), ask(8)]);
    expect(a.completionTokens).toBeGreaterThan(0);
    expect(b.text).toBe(a.text);
    expect(c.text).not.toBe(a.text);
  });

  it('eval --benchmark humaneval --limit 2: generates, extracts and executes; the rerun asks nothing', async () => {
    const out = join(dir, 'eval');
    const args = ['eval', '--benchmark', 'humaneval', '--limit', '2', '--model', `llama:${chat}`, '--max-tokens', '32', '--threads', '1', '--out', out, '--cache-file', join(dir, 'eval.sqlite'), '--format', 'json'];
    const r = await cli(...args);
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.generation).toEqual({ requests: 2, cache_hits: 0, reused: 0 });
    const generations = readJsonl(join(out, 'generations.jsonl'));
    expect(generations.map((g) => g.task_id).sort()).toEqual(['HumanEval/0', 'HumanEval/1']); // in the order they finished
    for (const g of generations) expect(g.reply.length).toBeGreaterThan(0);
    const samples = readJsonl(report.files.samples);
    for (const s of samples) expect(Array.isArray(s.extraction) && typeof s.code === 'string').toBe(true);
    const results = readJsonl(join(out, 'results.jsonl'));
    expect(results).toHaveLength(2);
    for (const row of results) expect(['passed', 'failed', 'compile_error', 'runtime_error', 'timeout']).toContain(row.status); // run by the sandbox
    const again = await cli(...args);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out).generation).toEqual({ requests: 0, cache_hits: 0, reused: 2 });
  });

  it('run: a config\'s exec system generated by a llama: model', async () => {
    const config = join(dir, 'codegauge.config.json');
    writeFileSync(config, JSON.stringify({ out: 'run-out', store: 'run.sqlite', llm: { threads: 1, context_size: 512 }, exec: { benchmark: 'humaneval', limit: 1, systems: { tiny: { model: `llama:${chat}`, max_tokens: 16 } } } }));
    const r = await cli('run', '--config', config);
    expect(r.code, r.err).toBe(0);
    // the tokens/s line, with the config's threads
    expect(r.err).toMatch(/llama\.cpp: \d+ prompt \+ \d+ generated tokens in [\d.]+ s of inference; generation [\d.]+ tokens\/s \(1 thread\(s\), cpu\)/);
    const run = JSON.parse(readFileSync(join(dir, 'run-out', 'run.json'), 'utf8'));
    expect(run.generation).toEqual([expect.objectContaining({ system: 'tiny', model: `llama:${chat}`, asked: 1 })]);
    expect(run.exec.rows).toHaveLength(1);
    expect(run.llm.local).toMatchObject({ requests: 1 });
    expect(run.llm.local.completion_tokens).toBeGreaterThan(0);
    expect(run.llm.local.generation_tokens_per_s).toBeGreaterThan(0);
  });
});

describe('embeddings for SBC', () => {
  it('--embed llama:PATH.gguf: pooled as declared, L2-normalised, named by the file in the signature', async () => {
    const emb = tiny.writeTinyGguf(join(dir, 'emb.gguf'), { variant: 'embedding' });
    const client = new LlmClient({ local: { threads: 1 } });
    const [v1, v2, v3] = await client.embed(parseModelSpec(`llama:${emb}`), ['The user logs in.', 'The user logs in.', 'Sort a list.']);
    expect(v1).toHaveLength(64);
    expect(Math.hypot(...v1)).toBeCloseTo(1, 6);
    expect(v2).toEqual(v1);
    expect(v3).not.toEqual(v1);
    const pairs = jsonl('pairs.jsonl', [{ input_requirement: 'The user logs in with a password.', reverse_generated_requirement: 'A login form checks the password.' }]);
    const r = await cli('sbc', 'score', '--input', pairs, '--embed', `llama:${emb}`, '--threads', '1', '--out', join(dir, 'sbc-out'), '--cache-file', join(dir, 'sbc.sqlite'));
    expect(r.code, r.err).toBe(0);
    const [row] = readJsonl(join(dir, 'sbc-out', 'results.jsonl'));
    expect(row.semantic_similarity).toBeGreaterThanOrEqual(-1);
    expect(row.semantic_similarity).toBeLessThanOrEqual(1);
    expect(row.signature).toContain(`sbc|embed:llama:${emb}@gguf(sha256=${sha256(readFileSync(emb)).slice(0, 16)},quant=F32,ctx=8192)|`);
  });
});

describe('honest failures: one line, exit 2 (1 for a failure of the model mid-run)', () => {
  const judge = (model: string, ...extra: string[]) =>
    cli('judge', '--method', 'dsa-simple', '--model', model, '--refs', jsonl('fr.py.jsonl', ['def f(x):\n    return x\n']), '--hyps', jsonl('fh.py.jsonl', ['def f(x):\n    return x + 1\n']), '--threads', '1', '--cache-file', join(dir, 'fail.sqlite'), ...extra);
  const oneLine = (err: string) => err.trim().split('\n');

  it('a file that is not GGUF', async () => {
    writeFileSync(join(dir, 'notes.gguf'), 'these are my notes\n');
    const r = await judge(`llama:${join(dir, 'notes.gguf')}`);
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toEqual([expect.stringContaining('notes.gguf is not a GGUF model file (it starts with "thes", not "GGUF")')]);
  });

  it('a missing file', async () => {
    const r = await judge(`llama:${join(dir, 'absent.gguf')}`);
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toEqual([expect.stringContaining('absent.gguf: no such file')]);
  });

  it('an architecture llama.cpp cannot load', async () => {
    const r = await judge(`llama:${tiny.writeTinyGguf(join(dir, 'arch.gguf'), { variant: 'unknown-arch' })}`);
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toEqual([expect.stringMatching(/arch\.gguf: llama\.cpp cannot load this model \(codegauge-unknown-arch architecture\): .*unknown model architecture: 'codegauge-unknown-arch'/)]);
  });

  it('a context too small for the prompt', async () => {
    const r = await judge(`llama:${tiny.writeTinyGguf(join(dir, 'short.gguf'), { variant: 'short-context' })}`);
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toEqual([expect.stringMatching(/short\.gguf: a prompt of \d+ tokens does not fit its context of 256 tokens \(all the model declares\)/)]);
    const beyond = await judge(`llama:${join(dir, 'short.gguf')}`, '--context-size', '512');
    expect(beyond.code).toBe(2);
    expect(oneLine(beyond.err)).toEqual([expect.stringContaining('--context-size 512 is more than llama:')]);
  });

  it('a machine without enough memory for the context', async () => {
    const r = await judge(`llama:${tiny.writeTinyGguf(join(dir, 'long.gguf'), { variant: 'long-context' })}`, '--context-size', '8000000', '--concurrency', '256');
    expect(r.code).toBe(2);
    // Refused from the KV cache's size before llama.cpp allocates anything (2 layers x 8,000,000 tokens x 256
    // sequences x 64 values x 2 bytes = 488 GiB); node-llama-cpp's own check let this through to the OOM killer.
    expect(oneLine(r.err)).toEqual([expect.stringMatching(/long\.gguf: not enough memory for a context of 8000000 tokens x 256 sequence\(s\) \(its KV cache needs 488\.3 GiB, [\d.]+ GiB is available\); give a smaller --context-size or --concurrency/)]);
  });

  it('a machine without node-llama-cpp', () => {
    const r = spawnSync(process.execPath, ['--import', join(ROOT, 'test/fixtures/hide-node-llama-cpp.mjs'), join(ROOT, 'bin/codegauge.js'), 'judge', '--method', 'ice', '--model', `llama:${chat}`, '--refs', jsonl('m.py.jsonl', ['x = 1']), '--hyps', jsonl('mh.py.jsonl', ['x = 2']), '--cache-file', join(dir, 'missing.sqlite')], { encoding: 'utf8', cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('codegauge: error: llama: and hf: models (llama.cpp in this process) needs the optional package node-llama-cpp: npm install node-llama-cpp@3.21.1');
  });
});

describe('hf: downloads (a local hub on 127.0.0.1)', () => {
  /** A hub serving one repository; the first transfer of a file breaks off after `cutAt` bytes. */
  async function startHub(files: Record<string, Buffer>, options: { listedSha?: string; cutAt?: number } = {}) {
    const requests: { url: string; range?: string }[] = [];
    let cut = options.cutAt !== undefined;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      requests.push({ url: req.url!, range: req.headers.range });
      if (req.url === '/api/models/test/tiny-GGUF/tree/main?recursive=true') {
        const listing = Object.entries(files).map(([path, bytes]) => ({ type: 'file', path, size: bytes.length, lfs: { oid: options.listedSha ?? sha256(bytes), size: bytes.length } }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ type: 'file', path: 'README.md', size: 5 }, ...listing]));
        return;
      }
      const m = /^\/test\/tiny-GGUF\/resolve\/main\/(.+)$/.exec(req.url!);
      const bytes = m && files[decodeURIComponent(m[1])];
      if (!bytes) return void res.writeHead(404).end();
      const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
      const body = bytes.subarray(from);
      res.writeHead(from ? 206 : 200, { 'content-length': body.length, ...(from ? { 'content-range': `bytes ${from}-${bytes.length - 1}/${bytes.length}` } : {}) });
      if (cut) {
        cut = false;
        res.write(body.subarray(0, options.cutAt!), () => res.socket?.end()); // the connection drops mid-transfer
      } else res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
  }

  it('resumes an interrupted transfer with a Range request, checks the SHA-256, and then needs no network', async () => {
    const bytes = tiny.tinyGguf();
    const hub = await startHub({ 'tiny-f32.gguf': bytes }, { cutAt: 100_000 });
    const cache = join(dir, 'models-resume');
    const downloader = new HfDownloader({ dir: cache, endpoint: hub.url, sleep: async () => {} });
    const file = await downloader.resolve({ repo: 'test/tiny-GGUF' }); // the only GGUF file of the repository
    expect(file).toMatchObject({ file: 'tiny-f32.gguf', size: bytes.length, sha256: sha256(bytes) });
    expect(sha256(readFileSync(file.path))).toBe(sha256(bytes));
    // The second request asks only for what the .part file lacked (what arrived of the first 100,000 bytes).
    const ranges = hub.requests.filter((q) => q.url.includes('/resolve/')).map((q) => q.range);
    expect(ranges).toEqual([undefined, expect.stringMatching(/^bytes=\d+-$/)]);
    const resumedAt = Number(/\d+/.exec(ranges[1]!)![0]);
    expect(resumedAt).toBeGreaterThan(0);
    expect(resumedAt).toBeLessThanOrEqual(100_000);
    expect(existsSync(`${file.path}.part`)).toBe(false);
    const before = hub.requests.length;
    expect(await new HfDownloader({ dir: cache, endpoint: hub.url }).resolve({ repo: 'test/tiny-GGUF' })).toEqual(file);
    expect(hub.requests.length).toBe(before); // the manifest and the remembered choice: no request at all
  });

  it('refuses a download whose SHA-256 differs from the hub\'s, and keeps nothing of it', async () => {
    const hub = await startHub({ 'tiny-f32.gguf': tiny.tinyGguf() }, { listedSha: 'a'.repeat(64) });
    const cache = join(dir, 'models-mismatch');
    await expect(new HfDownloader({ dir: cache, endpoint: hub.url }).resolve({ repo: 'test/tiny-GGUF', file: 'tiny-f32.gguf' })).rejects.toThrow(/SHA-256 mismatch \(the hub lists a{64}, the download is [0-9a-f]{64}\); the download was removed/);
    const path = join(cache, 'hf', 'test', 'tiny-GGUF', 'main', 'tiny-f32.gguf');
    expect(existsSync(path) || existsSync(`${path}.part`)).toBe(false);
  });

  it('asks which file when a repository has several, and says where models go', () => {
    expect(chooseGguf('o/r', ['a-Q8_0.gguf', 'a-Q4_K_M.gguf', 'README.md'])).toBe('a-Q4_K_M.gguf');
    expect(() => chooseGguf('o/r', ['a-Q8_0.gguf', 'a-Q6_K.gguf'])).toThrow('hf:o/r has 2 GGUF files; name one as hf:o/r:FILE.gguf: a-Q8_0.gguf, a-Q6_K.gguf');
    expect(() => chooseGguf('o/r', ['README.md'])).toThrow(/has no \.gguf file/);
    expect(modelsDir({ CODEGAUGE_MODELS: '/m' }, 'linux', '/h')).toBe('/m');
    expect(modelsDir({}, 'linux', '/h')).toBe('/h/.cache/codegauge/models');
    expect(modelsDir({ XDG_CACHE_HOME: '/x' }, 'linux', '/h')).toBe('/x/codegauge/models');
    expect(modelsDir({}, 'darwin', '/h')).toBe('/h/Library/Caches/codegauge/models');
  });

  it('--embed hf:OWNER/REPO:FILE.gguf downloads into CODEGAUGE_MODELS once and scores with it', async () => {
    const emb = tiny.tinyGguf({ variant: 'embedding' });
    const hub = await startHub({ 'tiny-embedding.gguf': emb });
    const pairs = jsonl('hf-pairs.jsonl', [{ input_requirement: 'Log the user in.', reverse_generated_requirement: 'The user logs in.' }]);
    const env = { CODEGAUGE_MODELS: process.env.CODEGAUGE_MODELS, HF_ENDPOINT: process.env.HF_ENDPOINT };
    process.env.CODEGAUGE_MODELS = join(dir, 'models-env');
    process.env.HF_ENDPOINT = hub.url;
    try {
      const r = await cli('sbc', 'score', '--input', pairs, '--embed', 'hf:test/tiny-GGUF:tiny-embedding.gguf', '--threads', '1', '--out', join(dir, 'hf-out'), '--cache-file', join(dir, 'hf.sqlite'));
      expect(r.code, r.err).toBe(0);
      expect(readFileSync(join(dir, 'models-env', 'hf', 'test', 'tiny-GGUF', 'main', 'tiny-embedding.gguf'))).toEqual(emb);
      expect(readJsonl(join(dir, 'hf-out', 'results.jsonl'))[0].signature).toContain(`embed:hf:test/tiny-GGUF:tiny-embedding.gguf@gguf(sha256=${sha256(emb).slice(0, 16)},quant=F32,ctx=8192)`);
    } finally {
      for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
});
