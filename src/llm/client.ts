import { LOCAL_SAMPLER, LocalModels, type LocalRuntimeOptions, type LocalUsage } from './llama-runtime.js';
import { identitySignature } from './local-model.js';
import { OllamaProvider, OpenAIProvider } from './providers.js';
import { canonicalKey, type LlmStore } from './store.js';
import { LlmError, type ChatRequest, type ChatResult, type Provider } from './types.js';
import { isLocalSpec, type LocalKind, type ModelSpec, type ServerKind } from './model-spec.js';

/**
 * The LLM runtime: a pool of servers for each API kind (requests go to the least busy one, so one run can use a
 * cluster), a concurrency limit, per-request timeouts, retries with exponential backoff and full jitter on 429, 5xx
 * and network errors (a server's Retry-After wins), the content-addressed response cache, and token accounting.
 *
 * Structured replies degrade per server: a server (endpoint + model) that refuses a JSON schema (an HTTP 400 about
 * response_format/json_schema/format) is asked again at once in JSON mode, and every later schema request to it
 * goes in JSON mode for the rest of the run; one that refuses log-probabilities is asked without them. The cache key
 * is the request as codegauge made it, so a cached reply does not depend on which server answered it.
 *
 * `llama:` and `hf:` models run in this process (llama-runtime.ts): no pool, retries or timeout (a local failure is
 * not transient), `concurrency` parallel sequences, and a cache key that names the GGUF file by its SHA-256 with its
 * quantisation, context size and sampler instead of a model name, so a rerun needs neither the model nor a server.
 */
export interface LlmClientOptions {
  /** OpenAI-compatible base URLs (several spread the load). */
  baseUrls?: string[];
  apiKey?: string;
  /** Ollama hosts. */
  ollamaHosts?: string[];
  concurrency?: number;
  timeoutMs?: number;
  retries?: number;
  /** First backoff delay; doubles per attempt up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  store?: LlmStore | null;
  /** Bypass the cache (still records fresh answers). */
  noCache?: boolean;
  /** USD per 1M prompt / completion tokens, for the cost line. */
  prices?: Record<string, { prompt: number; completion: number }>;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** llama: and hf: models: threads, context size, downloads (sequences default to `concurrency`). */
  local?: LocalRuntimeOptions;
}

export interface Usage {
  requests: number;
  cacheHits: number;
  retries: number;
  failures: number;
  /** Requests a server refused for a feature (a JSON schema, log-probabilities) and that were sent again without it. */
  refusals: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

/**
 * What a server refused: the length bounds of JSON schemas (then schemas without them: OpenAI's strict mode does
 * not take maxLength), JSON schemas (then JSON mode) or log-probabilities (then none).
 */
export type Refusal = 'schema-bounds' | 'schema' | 'logprobs';

const BOUND_KEYWORDS = ['maxLength', 'minLength', 'maxItems', 'minItems'];

/** A JSON schema without its length bounds (a property may still be called maxLength). */
export function withoutBounds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutBounds);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k]) => !BOUND_KEYWORDS.includes(k))
      .map(([k, v]) => [k, k === 'properties' && v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([name, p]) => [name, withoutBounds(p)])) : withoutBounds(v)]),
  );
}

const hasBounds = (schema: unknown): boolean => JSON.stringify(schema) !== JSON.stringify(withoutBounds(schema));

/** Whether an error is a server refusing a request feature rather than failing: an HTTP 4xx (or a 500/501 naming
 * the feature, as some llama.cpp builds answer a schema they cannot compile) whose message names it. */
export function refusedFeature(error: unknown, request: ChatRequest): Refusal | null {
  if (!(error instanceof LlmError) || error.status === undefined) return null;
  const status = error.status;
  const message = error.message;
  const clientError = status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429;
  if (!clientError && status !== 500 && status !== 501) return null;
  if (request.topLogprobs !== undefined && /logprob/i.test(message)) return 'logprobs';
  if (request.schema) {
    if (clientError && /maxLength|minLength|maxItems|minItems/.test(message) && hasBounds(request.schema.schema)) return 'schema-bounds';
    if (clientError && /response_format|json_schema|schema|grammar|structured|\bformat\b/i.test(message)) return 'schema';
    if (!clientError && /json_schema|schema|grammar/i.test(message)) return 'schema';
  }
  return null;
}

class Slot {
  inFlight = 0;
  constructor(readonly provider: Provider) {}
}

export class LlmClient {
  private readonly pools: Record<ServerKind, Slot[]>;
  private local: LocalModels | undefined;
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  readonly usage: Usage = { requests: 0, cacheHits: 0, retries: 0, failures: 0, refusals: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 };
  private readonly options: Required<Omit<LlmClientOptions, 'store' | 'prices' | 'apiKey' | 'baseUrls' | 'ollamaHosts' | 'local'>> & LlmClientOptions;

  constructor(options: LlmClientOptions = {}) {
    this.options = {
      concurrency: 4,
      timeoutMs: 120_000,
      retries: 4,
      baseDelayMs: 500,
      maxDelayMs: 30_000,
      noCache: false,
      random: Math.random,
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      ...options,
    };
    const timeout = this.options.timeoutMs;
    this.pools = {
      openai: (options.baseUrls ?? []).map((u) => new Slot(new OpenAIProvider(u, options.apiKey, timeout))),
      ollama: (options.ollamaHosts ?? []).map((h) => new Slot(new OllamaProvider(h, timeout))),
    };
  }

  /** The process's local models as this client runs them (its concurrency as sequences, its store as hash memo). */
  localModels(): LocalModels {
    const local = this.options.local ?? {};
    this.local ??= new LocalModels({ ...local, sequences: local.sequences ?? this.options.concurrency, memo: local.memo !== undefined ? local.memo : (this.options.store ?? null) });
    return this.local;
  }

  /**
   * What a signature adds to a model's name: for llama: and hf: models `gguf(sha256=...,quant=...,ctx=...)` (the file
   * is resolved, and an hf: file downloaded, but no model is loaded); nothing for servers.
   */
  async modelSignature(spec: ModelSpec): Promise<string | undefined> {
    return isLocalSpec(spec) ? identitySignature((await this.localModels().resolve(spec)).identity) : undefined;
  }

  /** Tokens and inference time of the local models, or undefined when none ran. */
  localUsage(): LocalUsage | undefined {
    return this.local?.usage();
  }

  /** The request as the cache key sees it: a local model by its file's identity, a server's by kind and name. */
  private async canonical(spec: ModelSpec, request: ChatRequest | { embed: string[] }): Promise<object> {
    const sent = 'embed' in request ? request : { ...request, temperature: request.temperature ?? 0 };
    if (!isLocalSpec(spec)) return { kind: spec.kind, model: spec.model, ...sent };
    const { identity } = await this.localModels().resolve(spec);
    return { kind: 'gguf', model: identity.sha256, quantisation: identity.quantisation, context_size: identity.contextSize, ...('embed' in request ? {} : { sampler: LOCAL_SAMPLER }), ...sent };
  }

  private pick(kind: ServerKind): Slot {
    const pool = this.pools[kind];
    if (pool.length === 0) {
      throw new LlmError(kind === 'openai' ? 'no OpenAI-compatible server: give --base-url or set OPENAI_BASE_URL' : 'no Ollama host configured');
    }
    return pool.reduce((best, s) => (s.inFlight < best.inFlight ? s : best));
  }

  private async acquire(): Promise<void> {
    if (this.active < this.options.concurrency) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  /** Runs `attempt` with retries: exponential backoff with full jitter, or the server's Retry-After. */
  private async withRetries<T>(attempt: (slot: Slot, signal: AbortSignal) => Promise<T>, kind: ServerKind): Promise<T> {
    let lastError: unknown;
    for (let i = 0; i <= this.options.retries; i++) {
      const slot = this.pick(kind);
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
      slot.inFlight++;
      try {
        return await attempt(slot, controller.signal);
      } catch (e) {
        lastError = e;
        const err = e instanceof LlmError ? e : new LlmError(String(e), undefined, undefined, true);
        if (!err.retryable || i === this.options.retries) break;
        this.usage.retries++;
        const backoff = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** i) * this.options.random();
        await this.options.sleep(err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : backoff);
      } finally {
        clearTimeout(timer);
        slot.inFlight--;
      }
    }
    this.usage.failures++;
    throw lastError;
  }

  private readonly inFlight = new Map<string, Promise<ChatResult>>();
  /** Per server (kind, endpoint, model): what it refused, for the rest of the run. */
  private readonly refused = new Map<string, Set<Refusal>>();

  /** The servers that refused a feature, e.g. `openai http://host/v1 model-x: schema`, for a note to the user. */
  refusals(): { kind: string; endpoint: string; model: string; refused: Refusal[] }[] {
    return [...this.refused.entries()].map(([key, set]) => {
      const [kind, model, endpoint] = JSON.parse(key) as string[];
      return { kind, endpoint, model, refused: [...set] };
    });
  }

  /** The request as this server can take it: without what it refused before. */
  private adapt(request: ChatRequest, refused: Set<Refusal> | undefined): ChatRequest {
    if (!refused) return request;
    let adapted = request;
    if (refused.has('schema') && adapted.schema) adapted = { ...adapted, schema: undefined, json: true };
    else if (refused.has('schema-bounds') && adapted.schema) adapted = { ...adapted, schema: { ...adapted.schema, schema: withoutBounds(adapted.schema.schema) as Record<string, unknown> } };
    if (refused.has('logprobs') && adapted.topLogprobs !== undefined) adapted = { ...adapted, topLogprobs: undefined };
    return adapted;
  }

  /** One request to one server; a refused feature is dropped, remembered, and the request sent again at once. */
  private async send(slot: Slot, spec: ModelSpec, request: ChatRequest, signal: AbortSignal): Promise<Omit<ChatResult, 'cached'>> {
    const server = JSON.stringify([slot.provider.kind, spec.model, slot.provider.endpoint]);
    for (;;) {
      const sent = this.adapt(request, this.refused.get(server));
      try {
        const result = await slot.provider.chat(spec.model, sent, signal);
        return request.schema ? { ...result, format: sent.schema ? 'schema' : 'json' } : result;
      } catch (e) {
        const feature = refusedFeature(e, sent);
        if (!feature) throw e;
        const set = this.refused.get(server) ?? new Set<Refusal>();
        set.add(feature);
        this.refused.set(server, set);
        this.usage.refusals++;
      }
    }
  }

  /**
   * A chat completion, from the cache when an identical request was answered before; an identical request that is
   * still in flight is shared rather than sent again.
   */
  async chat(spec: ModelSpec, request: ChatRequest): Promise<ChatResult> {
    const canonical = await this.canonical(spec, request);
    const key = canonicalKey(canonical);
    const pending = this.inFlight.get(key);
    if (pending) {
      const shared = await pending;
      this.usage.cacheHits++;
      return { ...shared, cached: true };
    }
    const promise = this.chatOnce(spec, request, canonical, key);
    this.inFlight.set(key, promise);
    try {
      return await promise;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async chatOnce(spec: ModelSpec, request: ChatRequest, canonical: object, key: string): Promise<ChatResult> {
    const store = this.options.store;
    if (store && !this.options.noCache) {
      const hit = store.cachedResponse<Omit<ChatResult, 'cached'>>(key);
      if (hit) {
        this.usage.cacheHits++;
        return { ...hit, cached: true };
      }
    }
    await this.acquire();
    try {
      const result = isLocalSpec(spec) ? await this.runLocal(() => this.localModels().chat(spec, request)) : await this.withRetries((slot, signal) => this.send(slot, spec, request, signal), spec.kind as ServerKind);
      this.usage.requests++;
      this.usage.promptTokens += result.promptTokens;
      this.usage.completionTokens += result.completionTokens;
      const price = this.options.prices?.[`${spec.kind}:${spec.model}`];
      if (price) this.usage.costUsd += (result.promptTokens * price.prompt + result.completionTokens * price.completion) / 1e6;
      store?.cacheResponse(key, canonical, result);
      return { ...result, cached: false };
    } finally {
      this.release();
    }
  }

  /** A local request: a failure is counted, never retried (llama.cpp fails the same way again). */
  private async runLocal<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      this.usage.failures++;
      throw e;
    }
  }

  async embed(spec: ModelSpec, texts: string[]): Promise<number[][]> {
    const canonical = await this.canonical(spec, { embed: texts });
    const key = canonicalKey(canonical);
    const store = this.options.store;
    if (store && !this.options.noCache) {
      const hit = store.cachedResponse<number[][]>(key);
      if (hit) {
        this.usage.cacheHits++;
        return hit;
      }
    }
    await this.acquire();
    try {
      const vectors = isLocalSpec(spec)
        ? await this.runLocal(() => this.localModels().embed(spec as ModelSpec & { kind: LocalKind }, texts))
        : await this.withRetries((slot, signal) => slot.provider.embed(spec.model, texts, signal), spec.kind as ServerKind);
      this.usage.requests++;
      store?.cacheResponse(key, canonical, vectors);
      return vectors;
    } finally {
      this.release();
    }
  }

  /** Short live counters for a progress bar. */
  counters(): string {
    const u = this.usage;
    return `${u.requests} req, ${u.cacheHits} cached, ${u.promptTokens + u.completionTokens} tok${u.failures ? `, ${u.failures} failed` : ''}`;
  }

  /** The llama.cpp tokens/s line, or undefined when no local model ran. */
  localSummary(): string | undefined {
    return this.local?.summary();
  }

  summary(): string {
    const u = this.usage;
    const cost = u.costUsd > 0 ? `, cost $${u.costUsd.toFixed(4)}` : '';
    const local = this.local?.summary();
    return `${u.requests} requests, ${u.cacheHits} cache hits, ${u.retries} retries, ${u.failures} failures, ${u.promptTokens} prompt + ${u.completionTokens} completion tokens${cost}${local ? `\n${local}` : ''}`;
  }
}
