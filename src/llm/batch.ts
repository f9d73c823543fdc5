import { LlmClient } from './client.js';
import type { ModelSpec } from './model-spec.js';
import { canonicalKey, type LlmStore } from './store.js';
import { LlmError, type ChatRequest, type ChatResult } from './types.js';

/**
 * OpenAI-compatible Batch API (`--batch`) for large judge runs, without changing a judge: the work runs in rounds.
 * In each round a collecting client answers what the response cache holds and defers every other request (the
 * sample stops at its first unanswered step, a failure that is thrown away); the deferred requests are written as
 * one JSONL batch file, uploaded (/v1/files), submitted (/v1/batches), polled, and the results matched back by
 * custom id (the request's cache key) into the same cache. The next round gets further; the run ends when a round
 * defers nothing, so its result is built from cached answers only, exactly as an interactive run would build it
 * (and a later interactive run reuses every answer).
 *
 * Restarts resume: the batch id of each round is kept in the run store (keyed by the set of requests), so a
 * rerun polls the batch already submitted instead of paying for it twice. A request the batch reports as failed
 * is a failure of its sample (not resubmitted); requests left unanswered by an expired batch are submitted again
 * (at most `resubmits` times).
 */
export interface BatchOptions {
  /** The OpenAI-compatible base URL (`.../v1`). */
  baseUrl: string;
  apiKey?: string;
  store: LlmStore;
  /** Poll interval (ms); default 10 s. */
  pollMs?: number;
  /** Give up waiting for one batch after this long (ms); default 25 h (the API's window is 24 h). */
  waitMs?: number;
  /** Submissions of a request left unanswered by expired batches before it counts as failed; default 2. */
  resubmits?: number;
  completionWindow?: string;
  log?: (line: string) => void;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

export interface BatchStats {
  rounds: number;
  batches: number;
  requests: number;
  failed: number;
  expired: number;
}

class Deferred extends LlmError {
  override name = 'Deferred';
  constructor() {
    super('deferred to a batch');
  }
}

interface PendingRequest {
  key: string;
  spec: ModelSpec;
  request: ChatRequest;
  canonical: object;
}

/** Answers from the cache, defers everything else (and fails what a batch failed). */
class CollectingClient extends LlmClient {
  readonly pending = new Map<string, PendingRequest>();
  constructor(
    private readonly cache: LlmStore,
    private readonly failed: Map<string, string>,
  ) {
    super({ store: cache, baseUrls: [] });
  }

  override async chat(spec: ModelSpec, request: ChatRequest): Promise<ChatResult> {
    // The same canonical request, so the same cache key, as LlmClient.chat.
    const canonical = { kind: spec.kind, model: spec.model, ...request, temperature: request.temperature ?? 0 };
    const key = canonicalKey(canonical);
    const hit = this.cache.cachedResponse<Omit<ChatResult, 'cached'>>(key);
    if (hit) {
      this.usage.cacheHits++;
      return { ...hit, cached: true };
    }
    const failure = this.failed.get(key);
    if (failure !== undefined) throw new LlmError(failure);
    if (spec.kind !== 'openai') throw new LlmError(`--batch needs an OpenAI-compatible model (openai:MODEL), got ${spec.kind}:${spec.model}`);
    if (request.topLogprobs !== undefined) throw new LlmError('--batch cannot ask for log-probabilities (--logprobs)');
    this.pending.set(key, { key, spec, request, canonical });
    throw new Deferred();
  }
}

/** The /v1/chat/completions body of a request, as the interactive provider sends it. */
export function batchBody(spec: ModelSpec, request: ChatRequest): Record<string, unknown> {
  return {
    model: spec.model,
    messages: request.messages,
    temperature: request.temperature ?? 0,
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(request.schema
      ? { response_format: { type: 'json_schema', json_schema: { name: request.schema.name, schema: request.schema.schema, strict: true } } }
      : request.json
        ? { response_format: { type: 'json_object' } }
        : {}),
  };
}

class BatchApi {
  private readonly fetch: typeof fetch;
  constructor(private readonly options: BatchOptions) {
    const raw = options.fetch ?? fetch;
    // A network failure (while polling for hours) is the server's, not a bug: one line, exit 1, and the batch id
    // is in the store, so the same command resumes it.
    this.fetch = (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
      try {
        return await raw(input, init);
      } catch (e) {
        throw new LlmError(`${options.baseUrl}: ${(e as Error).message}${(e as { cause?: Error }).cause?.message ? ` (${(e as { cause?: Error }).cause!.message})` : ''}; rerun the same command to resume`);
      }
    }) as typeof fetch;
  }
  private url(path: string) {
    return this.options.baseUrl.replace(/\/+$/, '') + path;
  }
  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.options.apiKey || 'not-needed'}` };
  }
  private async json(response: Response, what: string): Promise<any> {
    const text = await response.text();
    if (!response.ok) throw new LlmError(`${this.options.baseUrl}: ${what}: HTTP ${response.status} ${text.slice(0, 200)}`, response.status);
    try {
      return JSON.parse(text);
    } catch {
      throw new LlmError(`${this.options.baseUrl}: ${what}: malformed reply`);
    }
  }
  async upload(jsonl: string): Promise<string> {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([jsonl], { type: 'application/jsonl' }), 'codegauge-batch.jsonl');
    const body = await this.json(await this.fetch(this.url('/files'), { method: 'POST', headers: this.headers(), body: form }), 'file upload');
    if (typeof body.id !== 'string') throw new LlmError(`${this.options.baseUrl}: file upload: no file id`);
    return body.id;
  }
  async create(fileId: string): Promise<string> {
    const body = await this.json(
      await this.fetch(this.url('/batches'), {
        method: 'POST',
        headers: { ...this.headers(), 'content-type': 'application/json' },
        body: JSON.stringify({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: this.options.completionWindow ?? '24h', metadata: { source: 'codegauge' } }),
      }),
      'batch creation',
    );
    if (typeof body.id !== 'string') throw new LlmError(`${this.options.baseUrl}: batch creation: no batch id`);
    return body.id;
  }
  async get(id: string): Promise<any> {
    return this.json(await this.fetch(this.url(`/batches/${encodeURIComponent(id)}`), { headers: this.headers() }), `batch ${id}`);
  }
  async content(fileId: string): Promise<string> {
    const response = await this.fetch(this.url(`/files/${encodeURIComponent(fileId)}/content`), { headers: this.headers() });
    const text = await response.text();
    if (!response.ok) throw new LlmError(`${this.options.baseUrl}: file ${fileId}: HTTP ${response.status}`, response.status);
    return text;
  }
}

const DONE = new Set(['completed', 'failed', 'expired', 'cancelled']);

/**
 * Runs `work` in rounds until it needs no request the cache cannot answer; every round's missing answers go
 * through one batch. Returns the last round's result (built from cached answers only) and what the batches did.
 */
export async function runBatched<T>(work: (client: LlmClient) => Promise<T>, options: BatchOptions): Promise<{ result: T; stats: BatchStats; client: LlmClient }> {
  const api = new BatchApi(options);
  const failed = new Map<string, string>();
  const submissions = new Map<string, number>();
  const stats: BatchStats = { rounds: 0, batches: 0, requests: 0, failed: 0, expired: 0 };
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const log = options.log ?? (() => {});
  for (;;) {
    stats.rounds++;
    const client = new CollectingClient(options.store, failed);
    const result = await work(client);
    if (client.pending.size === 0) return { result, stats, client };
    const pending = [...client.pending.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
    // Resume: the same set of requests was submitted before (a restart): poll that batch.
    const roundKey = canonicalKey(pending.map((p) => p.key));
    const known = options.store.finished<{ id: string }>('batch', roundKey);
    let id = known?.id;
    if (id) log(`batch ${id}: resuming (${pending.length} request(s))`);
    else {
      const jsonl = pending.map((p) => JSON.stringify({ custom_id: p.key, method: 'POST', url: '/v1/chat/completions', body: batchBody(p.spec, p.request) })).join('\n') + '\n';
      const fileId = await api.upload(jsonl);
      id = await api.create(fileId);
      options.store.finish('batch', roundKey, { id, requests: pending.length, created: new Date().toISOString() });
      stats.batches++;
      stats.requests += pending.length;
      log(`batch ${id}: ${pending.length} request(s) submitted`);
    }
    for (const p of pending) submissions.set(p.key, (submissions.get(p.key) ?? 0) + 1);
    const started = Date.now();
    let batch = await api.get(id);
    while (!DONE.has(batch.status)) {
      if (Date.now() - started > (options.waitMs ?? 25 * 3600_000)) throw new LlmError(`batch ${id}: still ${batch.status} after ${Math.round((Date.now() - started) / 1000)} s; rerun the same command later to resume it`);
      await sleep(options.pollMs ?? 10_000);
      batch = await api.get(id);
    }
    const byKey = new Map(pending.map((p) => [p.key, p]));
    const answered = new Set<string>();
    if (batch.output_file_id) {
      for (const line of (await api.content(batch.output_file_id)).split('\n')) {
        if (!line.trim()) continue;
        let row: any;
        try {
          row = JSON.parse(line);
        } catch {
          continue;
        }
        const p = byKey.get(row.custom_id);
        if (!p) continue;
        answered.add(p.key);
        const body = row.response?.body;
        const text = body?.choices?.[0]?.message?.content;
        if (row.error || (row.response?.status_code ?? 200) >= 400 || typeof text !== 'string') {
          failed.set(p.key, `batch ${id}: ${row.error?.message ?? body?.error?.message ?? `status ${row.response?.status_code ?? 'unknown'}`}`);
          continue;
        }
        const value: Omit<ChatResult, 'cached'> = {
          text,
          promptTokens: body.usage?.prompt_tokens ?? 0,
          completionTokens: body.usage?.completion_tokens ?? 0,
          ...(p.request.schema ? { format: 'schema' as const } : {}),
        };
        options.store.cacheResponse(p.key, p.canonical, value);
        client.usage.promptTokens += value.promptTokens;
        client.usage.completionTokens += value.completionTokens;
      }
    }
    if (batch.error_file_id) {
      for (const line of (await api.content(batch.error_file_id)).split('\n')) {
        if (!line.trim()) continue;
        try {
          const row = JSON.parse(line);
          const p = byKey.get(row.custom_id);
          if (!p || answered.has(p.key)) continue;
          answered.add(p.key);
          failed.set(p.key, `batch ${id}: ${row.error?.message ?? row.response?.body?.error?.message ?? 'failed'}`);
        } catch {
          continue;
        }
      }
    }
    for (const p of pending) {
      if (answered.has(p.key)) continue;
      // Unanswered: an expired (or cancelled, or failed) batch. Submit again, within limits.
      if (batch.status === 'expired') stats.expired++;
      if (batch.status !== 'expired' || (submissions.get(p.key) ?? 0) > (options.resubmits ?? 2)) failed.set(p.key, `batch ${id}: ${batch.status}${batch.errors?.data?.[0]?.message ? ` (${batch.errors.data[0].message})` : ''}`);
    }
    stats.failed = failed.size;
    // Forget the round: a rerun with the same unanswered set must submit again, not re-read this batch.
    if (batch.status === 'expired' || batch.status === 'cancelled' || batch.status === 'failed') options.store.finish('batch', roundKey, { id: null, status: batch.status });
    log(`batch ${id}: ${batch.status}; ${answered.size} of ${pending.length} answered`);
  }
}
