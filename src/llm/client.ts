import { OllamaProvider, OpenAIProvider } from './providers.js';
import { canonicalKey, type LlmStore } from './store.js';
import { LlmError, type ChatRequest, type ChatResult, type Provider } from './types.js';
import type { ModelSpec } from './model-spec.js';

/**
 * The LLM runtime: a pool of servers for each API kind (requests go to the least busy one, so one run can use a
 * cluster), a concurrency limit, per-request timeouts, retries with exponential backoff and full jitter on 429, 5xx
 * and network errors (a server's Retry-After wins), the content-addressed response cache, and token accounting.
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
}

export interface Usage {
  requests: number;
  cacheHits: number;
  retries: number;
  failures: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

class Slot {
  inFlight = 0;
  constructor(readonly provider: Provider) {}
}

export class LlmClient {
  private readonly pools: Record<'openai' | 'ollama', Slot[]>;
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  readonly usage: Usage = { requests: 0, cacheHits: 0, retries: 0, failures: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 };
  private readonly options: Required<Omit<LlmClientOptions, 'store' | 'prices' | 'apiKey' | 'baseUrls' | 'ollamaHosts'>> & LlmClientOptions;

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

  private pick(kind: 'openai' | 'ollama'): Slot {
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
  private async withRetries<T>(attempt: (slot: Slot, signal: AbortSignal) => Promise<T>, kind: 'openai' | 'ollama'): Promise<T> {
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

  /**
   * A chat completion, from the cache when an identical request was answered before; an identical request that is
   * still in flight is shared rather than sent again.
   */
  async chat(spec: ModelSpec, request: ChatRequest): Promise<ChatResult> {
    const canonical = { kind: spec.kind, model: spec.model, ...request, temperature: request.temperature ?? 0 };
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
      const result = await this.withRetries((slot, signal) => slot.provider.chat(spec.model, request, signal), spec.kind);
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

  async embed(spec: ModelSpec, texts: string[]): Promise<number[][]> {
    const key = canonicalKey({ kind: spec.kind, model: spec.model, embed: texts });
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
      const vectors = await this.withRetries((slot, signal) => slot.provider.embed(spec.model, texts, signal), spec.kind);
      this.usage.requests++;
      store?.cacheResponse(key, { kind: spec.kind, model: spec.model, embed: texts }, vectors);
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

  summary(): string {
    const u = this.usage;
    const cost = u.costUsd > 0 ? `, cost $${u.costUsd.toFixed(4)}` : '';
    return `${u.requests} requests, ${u.cacheHits} cache hits, ${u.retries} retries, ${u.failures} failures, ${u.promptTokens} prompt + ${u.completionTokens} completion tokens${cost}`;
  }
}
