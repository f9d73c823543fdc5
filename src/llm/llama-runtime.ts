import type * as NodeLlamaCpp from 'node-llama-cpp';
import { resolve as resolvePath } from 'node:path';
import { InputError, UsageError } from '../errors.js';
import type { DownloadOptions } from './hf-download.js';
import { readSchemaReply } from './json-schema-check.js';
import { availableMemory, contextSizeFor, identitySignature, kvCacheBytes, resolveLocalModel, type HashMemo, type LocalModelFile, type LocalModelIdentity } from './local-model.js';
import type { LocalKind, ModelSpec } from './model-spec.js';
import { defaultThreads } from './threads.js';
import { LlmError, type ChatMessage, type ChatRequest, type ChatResult } from './types.js';

/**
 * The embedded llama.cpp runtime (node-llama-cpp, an optional package) for `llama:` and `hf:` models:
 * - one llama.cpp backend per process, each GGUF file loaded once and shared by every client that names it; a model
 *   gets one context per (context size, sequences, threads) with `sequences` parallel sequences, which
 *   node-llama-cpp decodes in shared batches: `--concurrency` is the number of sequences;
 * - GPU offload where node-llama-cpp's prebuilt binaries find CUDA, Vulkan or Metal (NODE_LLAMA_CPP_GPU=false turns
 *   it off), the CPU otherwise, with threads from the physical cores (`--threads` overrides);
 * - replies asked for with a JSON schema are decoded under node-llama-cpp's JSON-schema grammar, then checked with
 *   JSON.parse and codegauge's own schema check (never the grammar's parser: it rejected text it had produced once
 *   bytes that are not UTF-8 became U+FFFD);
 * - bounded: a context never beyond what the model declares; a prompt that does not fit is a ContextTooSmallError
 *   (one line, exit 2), never a silent truncation (the context shift that would drop the prompt's start throws);
 *   replies stop at --max-tokens or when the context is full;
 * - reproducible: temperature and seed (0 when none is given) are honoured, the sampler is fixed (top-k 40, top-p
 *   0.95, min-p 0.05, no repeat penalty), and each request starts from an empty sequence, so its reply does not
 *   depend on what the sequence held before.
 * Local requests are not subject to --timeout: they are bounded by tokens, not by the clock.
 */
export const NODE_LLAMA_CPP = 'node-llama-cpp';
export const NODE_LLAMA_CPP_VERSION = '3.21.1';
export const NODE_LLAMA_CPP_INSTALL = `npm install ${NODE_LLAMA_CPP}@${NODE_LLAMA_CPP_VERSION}`;

/** The fixed sampler of local models; part of every cache key, so a change of it cannot serve stale answers. */
export const LOCAL_SAMPLER = { top_k: 40, top_p: 0.95, min_p: 0.05, repeat_penalty: 'off' } as const;

/** A prompt the context cannot hold: exit 2, since every longer prompt will fail the same way. */
export class ContextTooSmallError extends UsageError {
  override name = 'ContextTooSmallError';
}

export interface LocalRuntimeOptions {
  /** llama.cpp threads (default: the physical cores this process may use). */
  threads?: number;
  /** Tokens of context per sequence (default 8192, never beyond what the model declares). */
  contextSize?: number;
  /** Parallel sequences per model (the client's concurrency). */
  sequences?: number;
  /** Remembers GGUF files' SHA-256 across runs (the LLM store). */
  memo?: HashMemo | null;
  /** hf: downloads: cache folder, hub, progress. */
  download?: DownloadOptions;
  /** The clock for tokens/s (milliseconds). */
  now?: () => number;
  /** Loads node-llama-cpp (tests replace it to check the message of a machine without it). */
  importer?: () => Promise<unknown>;
  /** Bytes of memory available (default: MemAvailable, else the OS's free memory). */
  availableMemory?: () => number;
}

const gb = (bytes: number) => `${(bytes / 2 ** 30).toFixed(bytes < 2 ** 30 ? 3 : 1)} GiB`;

/** Token counts and inference time of this client's local requests, for the tokens/s line. */
export interface LocalUsage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** Wall time during which at least one local request was running (ms). */
  busyMs: number;
  /** Wall time during which at least one local request was generating, after its prompt was evaluated (ms). */
  generatingMs: number;
  threads?: number;
  /** `cpu`, or the GPU type and layers offloaded. */
  backend?: string;
}

type Lib = typeof NodeLlamaCpp;

function isMissingModule(e: unknown): boolean {
  const err = e as NodeJS.ErrnoException | undefined;
  return (err?.code === 'ERR_MODULE_NOT_FOUND' || err?.code === 'MODULE_NOT_FOUND') && String(err.message).includes(NODE_LLAMA_CPP);
}

/**
 * node-llama-cpp, or a UsageError naming the one command that installs it. Typed `unknown` to callers: the published
 * types must compile where the optional package is not installed.
 */
export async function loadNodeLlamaCpp<T = unknown>(purpose: string, importer: () => Promise<unknown> = () => import('node-llama-cpp')): Promise<T> {
  try {
    return (await importer()) as T;
  } catch (e) {
    if (isMissingModule(e)) throw new UsageError(`${purpose} needs the optional package ${NODE_LLAMA_CPP}: ${NODE_LLAMA_CPP_INSTALL}`);
    throw e;
  }
}

/** Recent llama.cpp log lines at warning level and above: the reason behind a load that failed. */
const recentLogs: string[] = [];
function remember(level: string, message: string): void {
  if (level !== 'error' && level !== 'fatal' && level !== 'warn') return;
  recentLogs.push(message.trim());
  if (recentLogs.length > 50) recentLogs.shift();
}

function loadFailureReason(): string | undefined {
  // llama.cpp says why ("error loading model: unknown model architecture: 'x'"), then that it failed.
  const line = recentLogs.find((l) => /error loading model/i.test(l)) ?? recentLogs.find((l) => /unsupported|unknown|invalid|failed/i.test(l));
  return line?.replace(/^\S+:\s*/, '').replace(/^error loading model:\s*/, '');
}

interface Backend {
  lib: Lib;
  llama: NodeLlamaCpp.Llama;
}

let backend: Promise<Backend> | undefined;

function getBackend(importer?: () => Promise<unknown>): Promise<Backend> {
  backend ??= (async () => {
    const lib = await loadNodeLlamaCpp<Lib>('llama: and hf: models (llama.cpp in this process)', importer);
    try {
      // build: 'never': a machine without a prebuilt binary is told so, rather than made to compile llama.cpp.
      // maxThreads 0: a context's thread count is used as given, not shared out among contexts.
      const llama = await lib.getLlama({ build: 'never', maxThreads: 0, logLevel: lib.LlamaLogLevel.warn, logger: (level, message) => remember(level, message), progressLogs: false });
      return { lib, llama };
    } catch (e) {
      throw new UsageError(`${NODE_LLAMA_CPP} found no llama.cpp binary it can run on this machine (${(e as Error).message.split('\n')[0]}); reinstall it with ${NODE_LLAMA_CPP_INSTALL}`);
    }
  })();
  backend.catch(() => (backend = undefined));
  return backend;
}

/** A model file loaded into llama.cpp once per process, with its contexts. */
interface LoadedModel {
  file: LocalModelFile;
  model: NodeLlamaCpp.LlamaModel;
  contexts: Map<string, Promise<ChatContext>>;
  embedding?: Promise<EmbeddingContext>;
}

const loadedModels = new Map<string, Promise<LoadedModel>>();
const resolvedFiles = new Map<string, Promise<LocalModelFile>>();

function memoised<T>(map: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let pending = map.get(key);
  if (!pending) {
    pending = make();
    map.set(key, pending);
    pending.catch(() => map.delete(key)); // a failure is not remembered: the next call tries again
  }
  return pending;
}

function insufficientMemory(lib: Lib, e: unknown): boolean {
  return e instanceof lib.InsufficientMemoryError || /too large for the available (V?RAM|memory)|insufficient memory|out of memory|failed to allocate/i.test((e as Error)?.message ?? '');
}

async function loadModel(file: LocalModelFile, importer?: () => Promise<unknown>): Promise<LoadedModel> {
  const { lib, llama } = await getBackend(importer);
  return memoised(loadedModels, file.sha256, async () => {
    recentLogs.length = 0;
    try {
      const model = await llama.loadModel({ modelPath: file.path });
      return { file, model, contexts: new Map() };
    } catch (e) {
      if (insufficientMemory(lib, e)) throw new UsageError(`${file.spec}: not enough memory to load it (${(e as Error).message}); use a smaller quantisation of the model`);
      const reason = loadFailureReason() ?? (e as Error).message;
      throw new UsageError(`${file.spec}: llama.cpp cannot load this model (${file.header.architecture} architecture): ${reason}`);
    }
  });
}

class SequencePool {
  private readonly free: NodeLlamaCpp.LlamaContextSequence[];
  private readonly waiting: ((s: NodeLlamaCpp.LlamaContextSequence) => void)[] = [];
  constructor(sequences: NodeLlamaCpp.LlamaContextSequence[]) {
    this.free = sequences;
  }
  acquire(): Promise<NodeLlamaCpp.LlamaContextSequence> {
    const s = this.free.pop();
    return s ? Promise.resolve(s) : new Promise((resolve) => this.waiting.push(resolve));
  }
  release(s: NodeLlamaCpp.LlamaContextSequence): void {
    const next = this.waiting.shift();
    if (next) next(s);
    else this.free.push(s);
  }
}

class ContextFull extends Error {}

function toHistory(messages: readonly ChatMessage[]): NodeLlamaCpp.ChatHistoryItem[] {
  const history: NodeLlamaCpp.ChatHistoryItem[] = messages.map((m) =>
    m.role === 'system' ? { type: 'system', text: m.content } : m.role === 'user' ? { type: 'user', text: m.content } : { type: 'model', response: [m.content] },
  );
  history.push({ type: 'model', response: [] });
  return history;
}

/** One context of a model: its sequences, its chat template, its grammars. */
class ChatContext {
  private readonly pool: SequencePool;
  private chatWrapper: NodeLlamaCpp.ChatWrapper | undefined;
  private readonly grammars = new Map<string, Promise<NodeLlamaCpp.LlamaGrammar>>();

  constructor(
    private readonly lib: Lib,
    private readonly llama: NodeLlamaCpp.Llama,
    private readonly loaded: LoadedModel,
    private readonly context: NodeLlamaCpp.LlamaContext,
    sequences: number,
  ) {
    this.pool = new SequencePool(Array.from({ length: sequences }, () => context.getSequence()));
  }

  get contextSize(): number {
    return this.context.contextSize;
  }

  private grammar(schema: Record<string, unknown>): Promise<NodeLlamaCpp.LlamaGrammar> {
    // The schema's own type is checked when the judges build it; node-llama-cpp's generic type wants a literal.
    const create = this.llama.createGrammarForJsonSchema as (schema: unknown) => Promise<NodeLlamaCpp.LlamaGrammar>;
    return memoised(this.grammars, JSON.stringify(schema), () => create.call(this.llama, schema));
  }

  /** One reply; `onFirstToken` marks the end of the prompt's evaluation (for the tokens/s of generation). */
  async generate(request: ChatRequest, onFirstToken: () => void): Promise<{ text: string; promptTokens: number; completionTokens: number }> {
    const spec = this.loaded.file.spec;
    const grammar = request.schema ? await this.grammar(request.schema.schema) : request.json ? await this.llama.getGrammarFor('json') : undefined;
    const sequence = await this.pool.acquire();
    try {
      // An empty sequence: the reply does not depend on what an earlier request left in it.
      await sequence.clearHistory();
      const chat = new this.lib.LlamaChat({ contextSequence: sequence, chatWrapper: this.chatWrapper ?? 'auto', autoDisposeSequence: false });
      this.chatWrapper ??= chat.chatWrapper;
      try {
        const history = toHistory(request.messages);
        const promptTokens = chat.chatWrapper.generateContextState({ chatHistory: history }).contextText.tokenize(this.loaded.model.tokenizer).length;
        const room = this.contextSize - promptTokens - 1;
        if (room < 1) {
          const declared = this.loaded.file.header.contextLength;
          throw new ContextTooSmallError(
            `${spec}: a prompt of ${promptTokens} tokens does not fit its context of ${this.contextSize} tokens` +
              (declared !== undefined && declared > this.contextSize ? `; give --context-size up to ${declared} (what the model declares)` : ' (all the model declares); use a model with a longer context'),
          );
        }
        let completionTokens = 0;
        const response = await chat.generateResponse(history, {
          maxTokens: Math.min(request.maxTokens ?? room, room),
          temperature: request.temperature ?? 0,
          seed: request.seed ?? 0,
          topK: LOCAL_SAMPLER.top_k,
          topP: LOCAL_SAMPLER.top_p,
          minP: LOCAL_SAMPLER.min_p,
          repeatPenalty: false,
          grammar,
          onToken: (tokens) => {
            if (completionTokens === 0) onFirstToken();
            completionTokens += tokens.length;
          },
          contextShift: {
            // Never drop the prompt's start to make room: the reply was bounded to fit, so this is a bug guard.
            strategy: () => {
              throw new ContextFull();
            },
          },
        });
        const text = response.response;
        if (request.schema) {
          const checked = readSchemaReply(request.schema.schema, text);
          if ('error' in checked) {
            const why =
              response.metadata.stopReason === 'maxTokens'
                ? completionTokens >= (request.maxTokens ?? Number.POSITIVE_INFINITY)
                  ? ` (cut at --max-tokens ${request.maxTokens})`
                  : ` (the context of ${this.contextSize} tokens filled; give a larger --context-size)`
                : '';
            throw new LlmError(`${spec}: the reply does not follow the JSON schema "${request.schema.name}"${why}: ${checked.error}`);
          }
        }
        return { text, promptTokens, completionTokens };
      } finally {
        chat.dispose({ disposeSequence: false });
      }
    } catch (e) {
      if (e instanceof InputError || e instanceof LlmError) throw e;
      if (e instanceof ContextFull) throw new LlmError(`${spec}: the context of ${this.contextSize} tokens filled during the reply; give a larger --context-size or a smaller --max-tokens`);
      throw new LlmError(`${spec}: llama.cpp failed: ${(e as Error).message}`);
    } finally {
      this.pool.release(sequence);
    }
  }
}

/** A model's embedding context: one text at a time, vectors L2-normalised. */
class EmbeddingContext {
  private queue: Promise<unknown> = Promise.resolve();
  constructor(
    private readonly loaded: LoadedModel,
    private readonly context: NodeLlamaCpp.LlamaEmbeddingContext,
    readonly contextSize: number,
  ) {}

  embed(texts: readonly string[]): Promise<number[][]> {
    const run = this.queue.then(async () => {
      const vectors: number[][] = [];
      for (const text of texts) {
        const length = this.context.calculateInputLength(text);
        if (length > this.contextSize) throw new ContextTooSmallError(`${this.loaded.file.spec}: a text of ${length} tokens does not fit its embedding context of ${this.contextSize} tokens`);
        const vector = [...(await this.context.getEmbeddingFor(text)).vector];
        const norm = Math.hypot(...vector);
        vectors.push(norm > 0 ? vector.map((x) => x / norm) : vector);
      }
      return vectors;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** Wall time during which at least one of several overlapping intervals was open. */
class Clock {
  private open = 0;
  private since = 0;
  start(now: number): void {
    if (this.open++ === 0) this.since = now;
  }
  /** Closes one interval; returns the time to add (non-zero when the last open one closes). */
  stop(now: number): number {
    return --this.open === 0 ? now - this.since : 0;
  }
}

/**
 * A client's view of the process's local models: resolves specs to files and identities (downloading hf: files
 * once), loads models on the first request that is not cached, and counts tokens and inference time.
 */
export class LocalModels {
  readonly threads: number;
  private readonly files = new Map<string, Promise<{ file: LocalModelFile; identity: LocalModelIdentity }>>();
  private readonly stats: LocalUsage = { requests: 0, promptTokens: 0, completionTokens: 0, busyMs: 0, generatingMs: 0 };
  private readonly busy = new Clock();
  private readonly generating = new Clock();
  private readonly now: () => number;

  constructor(private readonly options: LocalRuntimeOptions = {}) {
    this.threads = options.threads ?? defaultThreads();
    this.now = options.now ?? (() => performance.now());
  }

  /** The model's file and identity (SHA-256, quantisation, context size); no runtime is loaded for it. */
  resolve(spec: ModelSpec & { kind: LocalKind }): Promise<{ file: LocalModelFile; identity: LocalModelIdentity }> {
    const name = `${spec.kind}:${spec.model}`;
    return memoised(this.files, name, async () => {
      const fileKey = spec.kind === 'llama' ? `llama:${resolvePath(spec.model)}` : name;
      const file = await memoised(resolvedFiles, fileKey, () => resolveLocalModel(spec, { memo: this.options.memo, download: this.options.download }));
      const identity: LocalModelIdentity = {
        sha256: file.sha256,
        quantisation: file.header.quantisation,
        architecture: file.header.architecture,
        contextSize: contextSizeFor(file.header, this.options.contextSize, name),
        declaredContext: file.header.contextLength,
      };
      return { file, identity };
    });
  }

  /** `gguf(sha256=...,quant=...,ctx=...)` for signatures. */
  async signature(spec: ModelSpec & { kind: LocalKind }): Promise<string> {
    return identitySignature((await this.resolve(spec)).identity);
  }

  private async chatContext(spec: ModelSpec & { kind: LocalKind }): Promise<ChatContext> {
    const { file, identity } = await this.resolve(spec);
    const loaded = await loadModel(file, this.options.importer);
    const sequences = Math.max(1, this.options.sequences ?? 1);
    const { lib, llama } = await getBackend(this.options.importer);
    this.stats.threads = this.threads;
    this.stats.backend = llama.gpu === false ? 'cpu' : `${llama.gpu}, ${loaded.model.gpuLayers} layers offloaded`;
    return memoised(loaded.contexts, `${identity.contextSize}|${sequences}|${this.threads}`, async () => {
      // On the CPU the KV cache is this process's memory: refuse what cannot fit before llama.cpp allocates it (on a
      // GPU, node-llama-cpp checks the VRAM itself).
      const kv = kvCacheBytes(file.header, identity.contextSize, sequences);
      const available = this.options.availableMemory?.() ?? availableMemory();
      if (llama.gpu === false && kv !== undefined && kv > available) {
        throw new UsageError(
          `${file.spec}: not enough memory for a context of ${identity.contextSize} tokens x ${sequences} sequence(s) (its KV cache needs ${gb(kv)}, ${gb(available)} is available); give a smaller --context-size or --concurrency`,
        );
      }
      try {
        const context = await loaded.model.createContext({ contextSize: identity.contextSize, sequences, threads: this.threads, failedCreationRemedy: false });
        return new ChatContext(lib, llama, loaded, context, sequences);
      } catch (e) {
        if (insufficientMemory(lib, e)) {
          throw new UsageError(`${file.spec}: not enough memory for a context of ${identity.contextSize} tokens x ${sequences} sequence(s) (${(e as Error).message}); give a smaller --context-size or --concurrency`);
        }
        throw new LlmError(`${file.spec}: llama.cpp could not create a context of ${identity.contextSize} tokens x ${sequences} sequence(s): ${(e as Error).message}`);
      }
    });
  }

  async chat(spec: ModelSpec & { kind: LocalKind }, request: ChatRequest): Promise<Omit<ChatResult, 'cached'>> {
    const context = await this.chatContext(spec);
    this.busy.start(this.now());
    let generating = false;
    try {
      const result = await context.generate(request, () => {
        generating = true;
        this.generating.start(this.now());
      });
      this.stats.requests++;
      this.stats.promptTokens += result.promptTokens;
      this.stats.completionTokens += result.completionTokens;
      // A schema is always decoded as a grammar here, never degraded to JSON mode.
      return request.schema ? { ...result, format: 'schema' } : result;
    } finally {
      if (generating) this.stats.generatingMs += this.generating.stop(this.now());
      this.stats.busyMs += this.busy.stop(this.now());
    }
  }

  async embed(spec: ModelSpec & { kind: LocalKind }, texts: string[]): Promise<number[][]> {
    const { file, identity } = await this.resolve(spec);
    const loaded = await loadModel(file, this.options.importer);
    const { lib } = await getBackend(this.options.importer);
    loaded.embedding ??= (async () => {
      const kv = kvCacheBytes(file.header, identity.contextSize, 1);
      const available = this.options.availableMemory?.() ?? availableMemory();
      if (kv !== undefined && kv > available) {
        loaded.embedding = undefined;
        throw new UsageError(`${file.spec}: not enough memory for an embedding context of ${identity.contextSize} tokens (${gb(kv)} needed, ${gb(available)} available); give a smaller --context-size`);
      }
      try {
        const context = await loaded.model.createEmbeddingContext({ contextSize: identity.contextSize, threads: this.threads });
        return new EmbeddingContext(loaded, context, identity.contextSize);
      } catch (e) {
        loaded.embedding = undefined;
        if (insufficientMemory(lib, e)) throw new UsageError(`${file.spec}: not enough memory for an embedding context of ${identity.contextSize} tokens (${(e as Error).message}); give a smaller --context-size`);
        throw new LlmError(`${file.spec}: llama.cpp could not create an embedding context: ${(e as Error).message}`);
      }
    })();
    const context = await loaded.embedding;
    this.busy.start(this.now());
    try {
      const vectors = await context.embed(texts);
      this.stats.requests++;
      return vectors;
    } finally {
      this.stats.busyMs += this.busy.stop(this.now());
    }
  }

  usage(): LocalUsage {
    return { ...this.stats };
  }

  /** The tokens/s line, or undefined when no local request ran. */
  summary(): string | undefined {
    const u = this.stats;
    if (u.requests === 0) return undefined;
    const rate = u.generatingMs > 0 ? (u.completionTokens / (u.generatingMs / 1000)).toFixed(1) : 'n/a';
    return `llama.cpp: ${u.promptTokens} prompt + ${u.completionTokens} generated tokens in ${(u.busyMs / 1000).toFixed(1)} s of inference; generation ${rate} tokens/s (${u.threads ?? this.threads} thread(s), ${u.backend ?? 'cpu'})`;
  }
}

/** Frees every model and context this process loaded (a library user that is done with local models). */
export async function disposeLocalModels(): Promise<void> {
  const models = await Promise.allSettled([...loadedModels.values()]);
  loadedModels.clear();
  resolvedFiles.clear();
  for (const m of models) if (m.status === 'fulfilled') await m.value.model.dispose();
}
