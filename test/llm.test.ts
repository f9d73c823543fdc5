import { afterEach, describe, expect, it } from 'vitest';
import { LlmClient } from '../src/llm/client.js';
import { parseModelSpec } from '../src/llm/model-spec.js';
import { LlmStore } from '../src/llm/store.js';
import { LlmError } from '../src/llm/types.js';
import { gradeLogprobs, refuseSchemas, startFakeLlmServer, type FakeServer } from './fixtures/fake-llm-server.js';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function server(options: Parameters<typeof startFakeLlmServer>[0] = {}) {
  const s = await startFakeLlmServer(options);
  servers.push(s);
  return s;
}
const model = parseModelSpec('openai:test-model');
const noSleep = { sleep: async () => {}, random: () => 0.5 };
const ask = (text: string) => ({ messages: [{ role: 'user' as const, content: text }] });

describe('LLM runtime', () => {
  it('sends temperature 0 by default, counts tokens and caches identical requests', async () => {
    const s = await server({ reply: (body) => `echo ${body.messages[0].content}` });
    const store = new LlmStore(':memory:');
    const client = new LlmClient({ baseUrls: [s.url], store, ...noSleep });
    const a = await client.chat(model, ask('hello'));
    const b = await client.chat(model, ask('hello'));
    expect(a).toEqual({ text: 'echo hello', promptTokens: 10, completionTokens: 5, cached: false });
    expect(b.cached).toBe(true);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0].body.temperature).toBe(0);
    expect(client.usage).toMatchObject({ requests: 1, cacheHits: 1, promptTokens: 10, completionTokens: 5 });
    const fresh = new LlmClient({ baseUrls: [s.url], store, noCache: true, ...noSleep });
    await fresh.chat(model, ask('hello'));
    expect(s.requests).toHaveLength(2);
    store.close();
  });

  it('retries 429 (Retry-After), 500, malformed replies, dropped connections and timeouts', async () => {
    const faults = ['429', '500', 'malformed', 'drop', { slowMs: 400 }] as const;
    const s = await server({ fault: (i) => (i < faults.length ? faults[i] : 'none'), reply: () => 'finally' });
    const slept: number[] = [];
    const client = new LlmClient({ baseUrls: [s.url], retries: 5, timeoutMs: 200, sleep: async (ms) => void slept.push(ms), random: () => 0.5 });
    const r = await client.chat(model, ask('x'));
    expect(r.text).toBe('finally');
    expect(s.requests).toHaveLength(6);
    expect(client.usage.retries).toBe(5);
    expect(slept[0]).toBe(0); // Retry-After: 0 wins over backoff
    expect(slept[1]).toBe(500); // then exponential backoff with jitter: 500 * 2^1 * 0.5
  });

  it('gives up after the retries and does not retry a 4xx client error', async () => {
    const s = await server({ fault: () => '500' });
    const client = new LlmClient({ baseUrls: [s.url], retries: 2, ...noSleep });
    await expect(client.chat(model, ask('x'))).rejects.toThrow(/HTTP 500/);
    expect(s.requests).toHaveLength(3);
    const refused = new LlmClient({ baseUrls: ['http://127.0.0.1:9/v1'], retries: 1, ...noSleep });
    await expect(refused.chat(model, ask('x'))).rejects.toBeInstanceOf(LlmError);
    expect(refused.usage.failures).toBe(1);
  });

  it('spreads requests over several servers and respects the concurrency limit', async () => {
    const a = await server({ fault: () => ({ slowMs: 30 }) });
    const b = await server({ fault: () => ({ slowMs: 30 }) });
    const client = new LlmClient({ baseUrls: [a.url, b.url], concurrency: 3, ...noSleep });
    await Promise.all(Array.from({ length: 12 }, (_, i) => client.chat(model, ask(`q${i}`))));
    expect(a.requests.length + b.requests.length).toBe(12);
    expect(a.requests.length).toBeGreaterThan(2);
    expect(b.requests.length).toBeGreaterThan(2);
    expect(a.maxConcurrent + b.maxConcurrent).toBeLessThanOrEqual(3 * 2);
    expect(Math.max(a.maxConcurrent, b.maxConcurrent)).toBeLessThanOrEqual(3);
  });

  it('embeds through an OpenAI-compatible server', async () => {
    const s = await server({ embed: (t) => [t.length, 2] });
    const client = new LlmClient({ baseUrls: [s.url], ...noSleep });
    expect(await client.embed(parseModelSpec('openai:emb'), ['ab', 'abc'])).toEqual([[2, 2], [3, 2]]);
  });

  it('talks to Ollama\'s native API: options.temperature/seed/num_predict, tokens, embeddings, unknown models', async () => {
    const s = await server({ models: ['qwen2.5-coder:14b', 'all-minilm'], reply: (body) => `native ${body.messages[0].content}`, embed: (t) => [t.length] });
    const host = s.url.replace(/\/v1$/, '');
    const client = new LlmClient({ ollamaHosts: [host], ...noSleep });
    const reply = await client.chat(parseModelSpec('ollama:qwen2.5-coder:14b'), { ...ask('hi'), seed: 7, maxTokens: 64 });
    expect(reply).toEqual({ text: 'native hi', promptTokens: 10, completionTokens: 5, cached: false });
    expect(s.requests[0].path).toBe('/api/chat');
    expect(s.requests[0].body.options).toEqual({ temperature: 0, seed: 7, num_predict: 64 });
    expect(await client.embed(parseModelSpec('ollama:all-minilm'), ['abc', 'a'])).toEqual([[3], [1]]);
    const missing = client.chat(parseModelSpec('ollama:nope'), ask('hi'));
    await expect(missing).rejects.toThrow(/HTTP 404.*not found/);
    expect(s.requests).toHaveLength(3); // a 404 is not retried
  });

  it('sends two identical requests in flight at the same time once', async () => {
    const s = await server({ reply: () => 'shared', fault: () => ({ slowMs: 100 }) });
    const client = new LlmClient({ baseUrls: [s.url], ...noSleep });
    const [a, b] = await Promise.all([client.chat(model, ask('same')), client.chat(model, ask('same'))]);
    expect([a.text, b.text]).toEqual(['shared', 'shared']);
    expect(s.requests).toHaveLength(1);
    expect(client.usage).toMatchObject({ requests: 1, cacheHits: 1 });
  });

  it('rejects bad model specs and a missing server', async () => {
    expect(() => parseModelSpec('gpt-4')).toThrow(/expected openai:MODEL/);
    await expect(new LlmClient({}).chat(model, ask('x'))).rejects.toThrow(/--base-url/);
  });

  it('keeps finished run items so that a run resumes', () => {
    const store = new LlmStore(':memory:');
    store.finish('run1', 'q1', { score: 1 });
    expect(store.finished('run1', 'q1')).toEqual({ score: 1 });
    expect(store.finished('run1', 'q2')).toBeUndefined();
    expect(store.items('run1')).toEqual([{ item: 'q1', result: { score: 1 } }]);
  });
});

describe('structured replies and log-probabilities', () => {
  const schema = { name: 'grade', schema: { type: 'object', properties: { score: { type: 'integer', enum: [0, 1, 2, 3, 4] } }, required: ['score'], additionalProperties: false } };
  const askSchema = (text: string) => ({ ...ask(text), json: true, schema });

  it('asks OpenAI-compatible servers for a strict JSON schema', async () => {
    const s = await server({ reply: () => '{"score": 3}' });
    const client = new LlmClient({ baseUrls: [s.url], ...noSleep });
    const r = await client.chat(model, askSchema('grade'));
    expect(r).toMatchObject({ text: '{"score": 3}', format: 'schema' });
    expect(s.requests[0].body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'grade', schema: schema.schema, strict: true } });
    expect(client.refusals()).toEqual([]);
    // Without a schema, JSON mode and no `format` in the result, as before.
    expect(await client.chat(model, { ...ask('json'), json: true })).not.toHaveProperty('format');
    expect(s.requests[1].body.response_format).toEqual({ type: 'json_object' });
  });

  it('falls back to JSON mode when a server refuses the schema, and remembers it per server and model', async () => {
    const refusing = await server({ refuse: refuseSchemas, reply: () => '{"score": 2}' });
    const store = new LlmStore(':memory:');
    const client = new LlmClient({ baseUrls: [refusing.url], store, ...noSleep });
    const r = await client.chat(model, askSchema('one'));
    expect(r).toMatchObject({ text: '{"score": 2}', format: 'json' });
    expect(refusing.requests.map((q) => q.body.response_format.type)).toEqual(['json_schema', 'json_object']);
    // Later schema requests to the same server and model go in JSON mode at once.
    await client.chat(model, askSchema('two'));
    expect(refusing.requests.map((q) => q.body.response_format.type)).toEqual(['json_schema', 'json_object', 'json_object']);
    expect(client.usage).toMatchObject({ requests: 2, refusals: 1, failures: 0, retries: 0 });
    expect(client.refusals()).toEqual([{ kind: 'openai', endpoint: refusing.url, model: 'test-model', refused: ['schema'] }]);
    // Another model on the same server is asked for the schema again (it may be served by another backend).
    await client.chat(parseModelSpec('openai:other'), askSchema('three'));
    expect(refusing.requests.slice(3).map((q) => q.body.response_format.type)).toEqual(['json_schema', 'json_object']);
    // The reply is cached under the request as made: asking again sends nothing.
    expect((await client.chat(model, askSchema('one'))).cached).toBe(true);
    expect(refusing.requests).toHaveLength(5);
    store.close();
  });

  it('remembers refusals per server in a pool', async () => {
    const refusing = await server({ refuse: refuseSchemas, reply: () => '{"score": 1}', fault: () => ({ slowMs: 20 }) });
    const accepting = await server({ reply: () => '{"score": 1}', fault: () => ({ slowMs: 20 }) });
    const client = new LlmClient({ baseUrls: [refusing.url, accepting.url], concurrency: 2, ...noSleep });
    await Promise.all(Array.from({ length: 8 }, (_, i) => client.chat(model, askSchema(`q${i}`))));
    expect(accepting.requests.every((q) => q.body.response_format.type === 'json_schema')).toBe(true);
    expect(refusing.requests.filter((q) => q.body.response_format.type === 'json_schema')).toHaveLength(1);
    expect(client.refusals().map((r) => r.endpoint)).toEqual([refusing.url]);
  });

  it('does not take other client errors for a refusal', async () => {
    const s = await server({ refuse: () => "This model's maximum context length is 4096 tokens" });
    const client = new LlmClient({ baseUrls: [s.url], ...noSleep });
    await expect(client.chat(model, askSchema('long'))).rejects.toThrow(/HTTP 400.*maximum context length/);
    expect(s.requests).toHaveLength(1);
    expect(client.refusals()).toEqual([]);
  });

  it('asks Ollama for a schema with `format` and falls back to format "json" on an old server', async () => {
    const s = await server({ reply: () => '{"score": 4}' });
    const host = s.url.replace(/\/v1$/, '');
    const client = new LlmClient({ ollamaHosts: [host], ...noSleep });
    const qwen = parseModelSpec('ollama:qwen2.5-coder:14b');
    expect(await client.chat(qwen, askSchema('a'))).toMatchObject({ text: '{"score": 4}', format: 'schema' });
    expect(s.requests[0].body.format).toEqual(schema.schema);
    const old = await server({ refuse: refuseSchemas, reply: () => '{"score": 4}' });
    const oldClient = new LlmClient({ ollamaHosts: [old.url.replace(/\/v1$/, '')], ...noSleep });
    expect(await oldClient.chat(qwen, askSchema('a'))).toMatchObject({ format: 'json' });
    expect(old.requests.map((q) => q.body.format)).toEqual([schema.schema, 'json']);
    expect(oldClient.refusals()[0]).toMatchObject({ kind: 'ollama', refused: ['schema'] });
  });

  it('returns the top log-probabilities of the reply tokens (OpenAI and Ollama), or drops them where refused', async () => {
    const reply = () => 'Score: 3';
    const logprobs = (_: any, text: string) => gradeLogprobs(text, 'Score: ', { 3: 0.7, 2: 0.2, 4: 0.1 });
    const s = await server({ reply, logprobs });
    const client = new LlmClient({ baseUrls: [s.url], ollamaHosts: [s.url.replace(/\/v1$/, '')], ...noSleep });
    for (const spec of [model, parseModelSpec('ollama:llama3')]) {
      const r = await client.chat(spec, { ...ask('grade'), topLogprobs: 5 });
      expect(r.logprobs!.map((t) => t.token).join('')).toBe('Score: 3');
      const grade = r.logprobs!.at(-1)!;
      expect(grade.token).toBe(' 3');
      expect(grade.logprob).toBeCloseTo(Math.log(0.7), 12);
      expect(grade.top.map((t) => t.token)).toEqual([' 3', ' 2', ' 4']);
    }
    expect(s.requests[0].body).toMatchObject({ logprobs: true, top_logprobs: 5 });
    expect(s.requests[1].body).toMatchObject({ logprobs: true, top_logprobs: 5 });
    // Not asked for: not sent, not returned.
    expect(await client.chat(model, ask('plain'))).not.toHaveProperty('logprobs');
    expect(s.requests[2].body).not.toHaveProperty('logprobs');
    const refusing = await server({ reply, logprobs, refuse: (body) => (body.logprobs ? 'logprobs is not supported for this model' : undefined) });
    const other = new LlmClient({ baseUrls: [refusing.url], ...noSleep });
    const r = await other.chat(model, { ...ask('grade'), topLogprobs: 5 });
    expect(r.text).toBe('Score: 3');
    expect(r).not.toHaveProperty('logprobs');
    expect(other.refusals()[0].refused).toEqual(['logprobs']);
    expect(refusing.requests.map((q) => q.body.logprobs ?? false)).toEqual([true, false]);
  });
});

