import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DsaJudge } from '../src/judges/dsa.js';
import { IceJudge } from '../src/judges/ice.js';
import type { Judge } from '../src/judges/judge.js';
import { judgeSystems } from '../src/api/judge.js';
import { runBatched } from '../src/llm/batch.js';
import { LlmClient } from '../src/llm/client.js';
import { parseModelSpec } from '../src/llm/model-spec.js';
import { LlmStore } from '../src/llm/store.js';
import { startFakeBatchServer, type FakeBatchServer } from './fixtures/fake-batch-server.js';

/** --batch: the OpenAI Batch API with the response cache, resumable, with partial failures and expiry. */
let dir: string;
let servers: FakeBatchServer[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-batch-'));
});
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
async function server(options: Parameters<typeof startFakeBatchServer>[0]) {
  const s = await startFakeBatchServer(options);
  servers.push(s);
  return s;
}

const N = 8;
const references = Array.from({ length: N }, (_, i) => [`x = ${i}`]);
const systems = [{ name: 'sys', hypotheses: references.map((r, i) => (i % 2 ? r[0] : `y = ${i}`)) }];
const iceReply = (body: any) => (/\by = \d/.test(body.messages.at(-1).content) ? 'Functional correctness: 1' : 'Functional correctness: 4');
const model = parseModelSpec('openai:judge');
const judgeWith = (client: LlmClient, judge: Judge = new IceJudge({})) => judgeSystems({ judge, modelName: 'openai:judge', context: { client, model, temperature: 0 }, references, systems, language: 'python' });
const fast = { pollMs: 1 };

describe('runBatched', () => {
  it('one batch answers an ICE run; an interactive run afterwards sends nothing (the same cache)', async () => {
    const s = await server({ reply: iceReply });
    const store = new LlmStore(join(dir, 'all.sqlite'));
    const { result, stats } = await runBatched((client) => judgeWith(client), { baseUrl: s.url, store, ...fast });
    expect(stats).toMatchObject({ rounds: 2, batches: 1, requests: N, failed: 0 });
    expect(s.batches[0].bodies[0]).toMatchObject({ model: 'judge', temperature: 0 });
    expect(result.systems[0].scores[0].segments).toEqual(references.map((_, i) => (i % 2 ? 100 : 25)));
    const interactive = new LlmClient({ baseUrls: ['http://127.0.0.1:9/v1'], store, retries: 0 });
    const again = await judgeWith(interactive);
    expect(interactive.usage.requests).toBe(0);
    expect(again.systems[0].scores[0].segments).toEqual(result.systems[0].scores[0].segments);
    store.close();
  });

  it('a batch that partly fails: those samples are judge failures, the others are graded, nothing is resubmitted', async () => {
    const s = await server({ reply: iceReply, fail: (_, i) => (i < 3 ? 'invalid request' : undefined) });
    const store = new LlmStore(join(dir, 'partial.sqlite'));
    const { result, stats } = await runBatched((client) => judgeWith(client), { baseUrl: s.url, store, ...fast });
    expect(s.batches.length).toBe(1);
    expect(stats.failed).toBe(3);
    const entry = result.systems[0].scores[0];
    expect(entry.details).toMatchObject({ graded: N - 3, failures: 3 });
    expect((entry as any).errors[0]).toContain('invalid request');
    store.close();
  });

  it('an expired batch: its answers are kept and the rest submitted again', async () => {
    const s = await server({ reply: iceReply, expireAfter: (b) => (b === 0 ? 3 : undefined) });
    const store = new LlmStore(join(dir, 'expired.sqlite'));
    const { result, stats } = await runBatched((client) => judgeWith(client), { baseUrl: s.url, store, ...fast });
    expect(s.batches.map((b) => b.bodies.length)).toEqual([N, N - 3]);
    expect(stats.expired).toBe(N - 3);
    expect(result.systems[0].scores[0].details).toMatchObject({ graded: N, failures: 0 });
    store.close();
  });

  it('resumes after a restart: the batch id is in the run store, so the batch is polled, not submitted again', async () => {
    const s = await server({ reply: iceReply });
    const path = join(dir, 'resume.sqlite');
    let store = new LlmStore(path);
    await expect(runBatched((client) => judgeWith(client), { baseUrl: s.url, store, pollMs: 1, waitMs: -1 })).rejects.toThrow(/still in_progress .* rerun the same command later to resume it/);
    store.close();
    store = new LlmStore(path); // a new process
    const logs: string[] = [];
    const { result } = await runBatched((client) => judgeWith(client), { baseUrl: s.url, store, ...fast, log: (l) => logs.push(l) });
    expect(s.batches.length).toBe(1);
    expect(logs[0]).toMatch(/batch batch-\d+: resuming/);
    expect(result.systems[0].scores[0].details).toMatchObject({ graded: N });
    store.close();
  });

  it('multi-step judges take one batch per step (dsa-simple: semantics, differences, grade)', async () => {
    const s = await server({
      reply: (body) => {
        const user: string = body.messages.at(-1).content;
        if (user.startsWith('Describe the semantics')) return JSON.stringify({ semantics: /y = /.test(user) ? 'sets y' : 'sets x' });
        if (user.includes('List every behavioural difference')) return JSON.stringify({ differences: /sets y/.test(user) ? ['sets y instead of x'] : [] });
        return user.includes('(none)') ? '{"score": 4, "reason": "same"}' : '{"score": 1, "reason": "different"}';
      },
    });
    const store = new LlmStore(join(dir, 'dsa.sqlite'));
    const { result, stats } = await runBatched((client) => judgeWith(client, new DsaJudge({ simplified: true })), { baseUrl: s.url, store, ...fast });
    expect(stats.batches).toBeGreaterThanOrEqual(3);
    expect(result.systems[0].scores[0].segments).toEqual(references.map((_, i) => (i % 2 ? 100 : 25)));
    store.close();
  });
});

describe('codegauge run --batch', () => {
  it('judges through batches; the next interactive run sends no request', async () => {
    const { writeFileSync } = await import('node:fs');
    const { cli } = await import('./helpers.js');
    const s = await server({ reply: iceReply });
    const refs = join(dir, 'refs.jsonl');
    const hyps = join(dir, 'sys.jsonl');
    writeFileSync(refs, references.map((r) => JSON.stringify(r[0])).join('\n') + '\n');
    writeFileSync(hyps, systems[0].hypotheses.map((h) => JSON.stringify(h)).join('\n') + '\n');
    const config = join(dir, 'batch.yaml');
    writeFileSync(config, `out: batch-out\nstore: batch-store.sqlite\ndata:\n  refs: refs.jsonl\n  lang: python\n  systems:\n    sys: sys.jsonl\nmodels:\n  judge:\n    model: openai:judge\n    base_url: ${s.url}\nllm:\n  batch_poll: 0\n  retries: 0\njudges:\n  - method: ice\n    model: judge\n`);
    const first = await cli('run', '--config', config, '--batch', '--format', 'json');
    expect(first.err).not.toContain('error');
    expect(first.code).toBe(0);
    const run = JSON.parse(first.out);
    expect(run.llm).toMatchObject({ requests: 0, batches: 1 });
    expect(run.scores[0]).toMatchObject({ kind: 'judge', score: 62.5 });
    const before = s.paths.length;
    const second = await cli('run', '--config', config, '--format', 'json');
    expect(second.code).toBe(0);
    expect(JSON.parse(second.out).llm).toMatchObject({ requests: 0, cache_hits: N });
    expect(s.paths.length).toBe(before);
  });
});

describe('codegauge run --batch: generated exec systems', () => {
  it('generates through a batch (seed + s per sample); the next interactive run sends no request', async () => {
    const { writeFileSync } = await import('node:fs');
    const { cli } = await import('./helpers.js');
    const { readBenchmark } = await import('../src/exec/benchmarks/bundled.js');
    const { scriptedReply } = await import('./fixtures/scripted-coder.js');
    const chosen = ['HumanEval/53', 'HumanEval/10'].map((id) => readBenchmark('humaneval').problems.find((p) => p.taskId === id)!);
    const s = await server({ reply: (body) => scriptedReply(chosen, body) });
    writeFileSync(join(dir, 'gen-problems.jsonl'), chosen.map((p) => JSON.stringify({ task_id: p.taskId, prompt: p.prompt, entry_point: p.entryPoint, canonical_solution: p.canonicalSolution, test: p.tests })).join('\n') + '\n');
    const config = join(dir, 'gen-batch.yaml');
    writeFileSync(config, `out: gen-batch-out\nstore: gen-batch.sqlite\nexec:\n  problems: gen-problems.jsonl\n  systems:\n    coder: {model: coder, n: 2, temperature: 0.8}\n  k: [1, 2]\nmodels:\n  coder:\n    model: openai:coder\n    base_url: ${s.url}\nllm:\n  batch_poll: 0\n  retries: 0\n`);
    const first = await cli('run', '--config', config, '--batch', '--format', 'json');
    expect(first.err).not.toMatch(/error/);
    expect(first.code).toBe(0);
    const run = JSON.parse(first.out);
    expect(run.llm).toMatchObject({ requests: 0, batches: 1 });
    expect(s.batches.length).toBe(1);
    expect(s.batches[0].bodies.map((b) => b.seed).sort()).toEqual([0, 0, 1, 1]);
    expect(s.batches[0].bodies[0]).toMatchObject({ model: 'coder', temperature: 0.8 });
    // HumanEval/53 always right, HumanEval/10 for the even seed: pass@1 = (1 + 0.5) / 2
    expect(run.scores.find((x: any) => x.metric === 'pass@1').score).toBeCloseTo(75, 10);
    expect(run.generation[0]).toMatchObject({ system: 'coder', asked: 4, reused: 0 });
    const before = s.paths.length;
    const second = await cli('run', '--config', config, '--format', 'json');
    expect(second.code).toBe(0);
    expect(JSON.parse(second.out).llm).toMatchObject({ requests: 0 });
    expect(s.paths.length).toBe(before);
  });
});

describe('codegauge run --batch: a model the Batch API cannot serve', () => {
  it('is a config error at the model, before any request', async () => {
    const { writeFileSync } = await import('node:fs');
    const { cli } = await import('./helpers.js');
    const config = join(dir, 'gen-ollama.yaml');
    writeFileSync(config, `out: gen-ollama-out\nstore: gen-ollama.sqlite\nexec:\n  benchmark: humaneval\n  limit: 1\n  systems:\n    coder: {model: "ollama:coder"}\n`);
    const r = await cli('run', '--config', config, '--batch');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/gen-ollama\.yaml:7: exec\.systems\.coder\.model: --batch \(llm\.batch\) needs an openai: model with a base_url/);
  });
});

describe('codegauge judge --batch', () => {
  const files = async () => {
    const { writeFileSync } = await import('node:fs');
    const refs = join(dir, 'judge-refs.py.jsonl');
    const hyps = join(dir, 'judge-sys.py.jsonl');
    writeFileSync(refs, references.map((r) => JSON.stringify(r[0])).join('\n') + '\n');
    writeFileSync(hyps, systems[0].hypotheses.map((h) => JSON.stringify(h)).join('\n') + '\n');
    return { refs, hyps };
  };
  const expected = references.map((_, i) => (i % 2 ? 100 : 25));

  it('grades through a batch; an interactive judge run afterwards sends nothing (the same cache)', async () => {
    const { cli } = await import('./helpers.js');
    const s = await server({ reply: iceReply });
    const { refs, hyps } = await files();
    const args = ['judge', '--method', 'ice', '--model', 'openai:judge', '--base-url', s.url, '--refs', refs, '--hyps', hyps, '--cache-file', join(dir, 'judge-batch.sqlite'), '--retries', '0', '--format', 'json'];
    const first = await cli(...args, '--batch', '--batch-poll', '0');
    expect(first.err).not.toMatch(/error/);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out).systems[0].scores[0].segments).toEqual(expected);
    expect(first.err).toMatch(/batch: 1 batch\(es\) submitted, 8 request\(s\), 0 failed/);
    expect(s.batches.length).toBe(1);
    const before = s.paths.length;
    const again = await cli(...args);
    expect(again.code).toBe(0);
    expect(s.paths.length).toBe(before);
    expect(JSON.parse(again.out).systems[0].scores[0].segments).toEqual(expected);
  });

  it('resumes after a restart: the batch id kept in --cache-file is polled again, not submitted twice', async () => {
    const { createServer } = await import('node:http');
    const { cli } = await import('./helpers.js');
    const s = await server({ reply: iceReply });
    // A proxy that is down for polls (the first process dies while it waits for its batch).
    let down = true;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        if (down && req.method === 'GET' && req.url?.startsWith('/v1/batches/')) {
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end('{"error": {"message": "unavailable"}}');
          return;
        }
        const r = await fetch(s.url.replace(/\/v1$/, '') + req.url, { method: req.method, headers: { 'content-type': req.headers['content-type'] ?? 'application/json' }, body: req.method === 'GET' ? undefined : Buffer.concat(chunks) });
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await r.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/v1`;
      const { refs, hyps } = await files();
      const args = ['judge', '--method', 'ice', '--model', 'openai:judge', '--base-url', url, '--refs', refs, '--hyps', hyps, '--cache-file', join(dir, 'judge-resume.sqlite'), '--batch', '--batch-poll', '0', '--format', 'json'];
      const first = await cli(...args);
      expect(first.code).toBe(1);
      expect(first.err).toMatch(/HTTP 503/);
      expect(first.err).not.toMatch(/internal error/);
      expect(s.batches.length).toBe(1);
      down = false;
      const second = await cli(...args);
      expect(second.err).toMatch(/batch batch-\d+: resuming \(8 request\(s\)\)/);
      expect(second.code).toBe(0);
      expect(s.batches.length).toBe(1);
      expect(JSON.parse(second.out).systems[0].scores[0].segments).toEqual(expected);
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('usage errors name the option: an Ollama model, --logprobs, --no-cache, no server, --batch-poll alone', async () => {
    const { cli } = await import('./helpers.js');
    const { refs, hyps } = await files();
    const base = ['judge', '--method', 'ice', '--refs', refs, '--hyps', hyps, '--cache-file', join(dir, 'judge-usage.sqlite')];
    const cases: [string[], RegExp][] = [
      [['--model', 'ollama:j', '--batch'], /--batch needs openai: models .*--model ollama:j/],
      [['--model', 'openai:j', '--base-url', 'http://127.0.0.1:9/v1', '--batch', '--logprobs'], /--batch cannot ask for log-probabilities/],
      [['--model', 'openai:j', '--base-url', 'http://127.0.0.1:9/v1', '--batch', '--no-cache'], /--batch keeps the answers and the batch ids in the cache/],
      [['--model', 'openai:j', '--batch'], /--batch needs --base-url \(or OPENAI_BASE_URL\)/],
      [['--model', 'openai:j', '--base-url', 'http://127.0.0.1:9/v1', '--batch-poll', '5'], /--batch-poll does nothing without --batch/],
    ];
    const saved = process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_BASE_URL;
    try {
      for (const [args, message] of cases) {
        const r = await cli(...base, ...args);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.err.trim().split('\n')).toHaveLength(1);
        expect(r.err).toMatch(message);
      }
    } finally {
      if (saved !== undefined) process.env.OPENAI_BASE_URL = saved;
    }
  });
});
