import { join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { integerIn, numberIn, urlList } from './options.js';
import { terminalProgress } from './progress.js';
// The LLM client, store and embedders are loaded when a command builds its runtime, not at CLI start-up.
import type { LlmClient } from '../llm/client.js';
import type { Embedder } from '../llm/embeddings.js';
import type { LlmStore } from '../llm/store.js';

/** The options every LLM-backed command shares, and building the runtime from them. */
export interface LlmCliOptions {
  baseUrl?: string[];
  apiKey?: string;
  ollamaHost?: string[];
  /** Absent for commands without embeddings. */
  embed?: string;
  embedModelDir?: string;
  embedBaseUrl?: string[];
  concurrency: number;
  timeout: number;
  retries: number;
  cache: boolean;
  cacheFile: string;
  temperature: number;
  seed?: number;
  maxTokens?: number;
  price?: Record<string, { prompt: number; completion: number }>;
  /** llama: and hf: models. */
  threads?: number;
  contextSize?: number;
}

/** `--price MODEL=IN/OUT`: USD per 1M prompt and completion tokens, e.g. openai:gpt-4o-mini=0.15/0.60. */
const price = (value: string, previous: Record<string, { prompt: number; completion: number }> | undefined) => {
  const m = /^(.+)=([0-9.]+)\/([0-9.]+)$/.exec(value.trim());
  if (!m || !Number.isFinite(Number(m[2])) || !Number.isFinite(Number(m[3]))) {
    throw new InvalidArgumentError(`--price: expected MODEL=PROMPT_USD/COMPLETION_USD per 1M tokens (e.g. openai:gpt-4o-mini=0.15/0.60), got "${value}"`);
  }
  return { ...previous, [m[1]]: { prompt: Number(m[2]), completion: Number(m[3]) } };
};

export function addLlmOptions(command: Command, options: { embeddings?: boolean } = {}): Command {
  command
    .option('--base-url <url>', 'OpenAI-compatible server(s) for openai: models; repeat or comma-separate to spread load (default OPENAI_BASE_URL)', urlList('--base-url'))
    .option('--api-key <key>', 'API key for OpenAI-compatible servers (default OPENAI_API_KEY)')
    .option('--ollama-host <url>', 'Ollama host(s) for ollama: models (default OLLAMA_HOST or http://127.0.0.1:11434)', urlList('--ollama-host'))
    .option('--concurrency <n>', 'requests in flight at once (llama:/hf: models: parallel sequences of one context)', integerIn('--concurrency', 1, 4096), 4)
    .option('--timeout <seconds>', 'per-request timeout of model servers', numberIn('--timeout', 0.001, 86_400), 120)
    .option('--retries <n>', 'retries on 429/5xx/network errors', integerIn('--retries', 0, 100), 4)
    .option('--no-cache', 'do not answer from the response cache')
    .option('--cache-file <file>', 'SQLite response cache and run store', join('.codegauge', 'cache.sqlite'))
    .option('--temperature <t>', 'sampling temperature', numberIn('--temperature', 0, 10), 0)
    .option('--seed <n>', 'sampling seed (where the server supports it)', integerIn('--seed', Number.MIN_SAFE_INTEGER))
    .option('--price <model=in/out>', 'USD per 1M prompt/completion tokens for the cost line; repeat per model', price)
    .addOption(new Option('--max-tokens <n>', 'maximum tokens per reply').argParser(integerIn('--max-tokens', 1, 10_000_000)))
    .option('--threads <n>', 'llama:/hf: models: llama.cpp threads (default: the physical cores)', integerIn('--threads', 1, 1024))
    .option('--context-size <n>', 'llama:/hf: models: tokens of context per sequence (default 8192, at most what the model declares)', integerIn('--context-size', 64, 10_000_000));
  if (options.embeddings === false) return command;
  return command
    .option('--embed <spec>', 'embedding model: local (all-MiniLM-L6-v2 via transformers.js), ollama:MODEL, openai:MODEL, or a GGUF embedding model run by llama.cpp: llama:PATH.gguf or hf:OWNER/REPO[:FILE.gguf]', 'local')
    .option('--embed-model-dir <dir>', 'offline folder of a transformers.js embedding model (no download)')
    .option('--embed-base-url <url>', 'OpenAI-compatible server for openai: embeddings (default: --base-url)', urlList('--embed-base-url'));
}

/**
 * An openai: model with no server to send it to is a usage error (exit 2), found before any work rather than at the
 * first request. `flag` names the option that gave the model.
 */
export function checkServers(o: Pick<LlmCliOptions, 'baseUrl'>, models: readonly { flag: string; spec: string }[]): void {
  const hasServer = (o.baseUrl?.length ?? 0) > 0 || Boolean(process.env.OPENAI_BASE_URL);
  const orphan = models.find((m) => m.spec.startsWith('openai:'));
  if (orphan && !hasServer) throw new UsageError(`${orphan.flag} ${orphan.spec}: an openai: model needs an OpenAI-compatible server; give --base-url URL or set OPENAI_BASE_URL`);
}

/** A progress bar per hf: file downloaded, in MB (on a terminal; nothing in pipes and CI). */
function downloadProgress(): (done: number, total: number, file: string) => void {
  const bars = new Map<string, (done: number, total: number) => void>();
  return (done, total, file) => {
    let bar = bars.get(file);
    if (!bar) bars.set(file, (bar = terminalProgress(`download ${file} (MB)`)));
    bar(Math.round(done / 1e6), total > 0 ? Math.round(total / 1e6) : 0);
  };
}

export interface LlmRuntime {
  client: LlmClient;
  store: LlmStore;
  /** Present when the command takes --embed. */
  embed: Embedder | null;
  close(): void;
}

export async function buildRuntime(o: LlmCliOptions): Promise<LlmRuntime> {
  const env = process.env;
  const baseUrls = o.baseUrl?.length ? o.baseUrl : env.OPENAI_BASE_URL ? env.OPENAI_BASE_URL.split(',') : [];
  const ollamaHosts = o.ollamaHost?.length ? o.ollamaHost : [env.OLLAMA_HOST || 'http://127.0.0.1:11434'];
  const [{ LlmClient }, { createEmbedder }, { LlmStore }] = await Promise.all([import('../llm/client.js'), import('../llm/embeddings.js'), import('../llm/store.js')]);
  const store = new LlmStore(o.cacheFile);
  const local = { threads: o.threads, contextSize: o.contextSize, download: { onProgress: downloadProgress() } };
  const common = { apiKey: o.apiKey ?? env.OPENAI_API_KEY, ollamaHosts, concurrency: o.concurrency, timeoutMs: o.timeout * 1000, retries: o.retries, store, noCache: !o.cache, prices: o.price, local };
  const client = new LlmClient({ ...common, baseUrls });
  const embedClient = o.embedBaseUrl?.length ? new LlmClient({ ...common, baseUrls: o.embedBaseUrl }) : client;
  const embed = o.embed === undefined ? null : await createEmbedder({ spec: o.embed, modelDir: o.embedModelDir, client: embedClient });
  return { client, store, embed, close: () => store.close() };
}
