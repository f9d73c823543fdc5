import type { LoadedConfig } from '../../config/load.js';
import type { CodegaugeConfig } from '../../config/schema.js';
import type { BatchOptions } from '../../llm/batch.js';
import { LlmClient } from '../../llm/client.js';
import { parseModelSpec, type ModelSpec } from '../../llm/model-spec.js';
import { LlmStore } from '../../llm/store.js';
import type { RunResult } from './types.js';

export interface RunModel {
  /** The model spec as written (`openai:MODEL`): names the model in signatures and generations. */
  name: string;
  spec: ModelSpec;
  baseUrls: string[];
  apiKey?: string;
  client: LlmClient;
}

/**
 * The config's models for generation and judges: one client per server set (its pool, retries and the response
 * cache in the store, opened when a model is first needed), and what was sent.
 */
export class LlmModels {
  private store: LlmStore | undefined;
  private readonly clients = new Map<string, LlmClient>();
  private batches = 0;
  private batchCacheHits = 0;

  constructor(
    private readonly config: CodegaugeConfig,
    private readonly storePath: string,
    readonly batch: boolean,
  ) {}

  /** A name in `models` or a model spec; `at` locates it in the config for errors. */
  model(ref: string, at: (string | number)[], loaded: LoadedConfig): RunModel {
    const named = this.config.models[ref];
    const name = named?.model ?? ref;
    const spec = parseModelSpec(name);
    const baseUrls = named?.base_url ? (Array.isArray(named.base_url) ? named.base_url : [named.base_url]) : process.env.OPENAI_BASE_URL ? process.env.OPENAI_BASE_URL.split(',') : [];
    const apiKey = named?.api_key_env ? process.env[named.api_key_env] : process.env.OPENAI_API_KEY;
    if (this.batch && (spec.kind !== 'openai' || baseUrls.length === 0)) throw loaded.error(at, '--batch (llm.batch) needs an openai: model with a base_url (or OPENAI_BASE_URL)');
    // Found here, before any work, rather than at the first request.
    if (spec.kind === 'openai' && baseUrls.length === 0) throw loaded.error(at, `${name}: an openai: model needs an OpenAI-compatible server; give the model a base_url in models (or set OPENAI_BASE_URL)`);
    this.store ??= new LlmStore(this.storePath);
    const key = JSON.stringify([baseUrls, named?.ollama_host, named?.api_key_env]);
    let client = this.clients.get(key);
    if (!client) {
      const llm = this.config.llm;
      client = new LlmClient({
        baseUrls,
        apiKey,
        ollamaHosts: [named?.ollama_host ?? process.env.OLLAMA_HOST ?? 'http://127.0.0.1:11434'],
        concurrency: llm.concurrency,
        timeoutMs: llm.timeout * 1000,
        retries: llm.retries,
        store: this.store,
        local: { threads: llm.threads, contextSize: llm.context_size },
      });
      this.clients.set(key, client);
    }
    return { name, spec, baseUrls, apiKey, client };
  }

  batchOptions(model: RunModel, log: (line: string) => void): BatchOptions {
    // Batches go to the first server of the model's list (a batch is one job on one endpoint).
    return { baseUrl: model.baseUrls[0], apiKey: model.apiKey, store: this.store!, pollMs: this.config.llm.batch_poll * 1000, log };
  }

  /** Counts a batched run's batches and the answers its last round took from the cache. */
  absorb(batched: { stats: { batches: number }; client: LlmClient } | undefined): void {
    if (!batched) return;
    this.batches += batched.stats.batches;
    this.batchCacheHits += batched.client.usage.cacheHits;
  }

  usage(): RunResult['llm'] {
    if (!this.store) return null;
    let requests = 0;
    let cacheHits = this.batchCacheHits;
    const local = { requests: 0, prompt_tokens: 0, completion_tokens: 0, generating_ms: 0 };
    for (const c of this.clients.values()) {
      requests += c.usage.requests;
      cacheHits += c.usage.cacheHits;
      const u = c.localUsage();
      if (u?.requests) {
        local.requests += u.requests;
        local.prompt_tokens += u.promptTokens;
        local.completion_tokens += u.completionTokens;
        local.generating_ms += u.generatingMs;
      }
    }
    const tokensPerS = local.generating_ms > 0 ? Math.round((10 * local.completion_tokens) / (local.generating_ms / 1000)) / 10 : null;
    return {
      requests,
      cache_hits: cacheHits,
      ...(this.batch ? { batches: this.batches } : {}),
      ...(local.requests ? { local: { requests: local.requests, prompt_tokens: local.prompt_tokens, completion_tokens: local.completion_tokens, generation_tokens_per_s: tokensPerS } } : {}),
    };
  }

  /** The llama.cpp tokens/s line of each client that ran a local model (llama:/hf:). */
  localLines(): string[] {
    return [...this.clients.values()].map((c) => c.localSummary()).filter((l): l is string => l !== undefined);
  }

  close(): void {
    this.store?.close();
  }
}
