import { readFileSync, statSync } from 'node:fs';
import { freemem } from 'node:os';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { readGgufHeader, type GgufHeader } from './gguf.js';
import { HfDownloader, sha256File, type DownloadOptions } from './hf-download.js';
import { parseHfModel, type LocalKind, type ModelSpec } from './model-spec.js';

/**
 * Which GGUF file a `llama:` or `hf:` spec names, and what identifies a local model in cache keys and signatures:
 * the file's SHA-256 (not its path: the same file under two names shares its answers; a file replaced at the same
 * path does not), its quantisation, and the context size it runs with. None of it needs the runtime: a rerun whose
 * answers are all cached loads no model.
 */
export interface LocalModelFile {
  /** The spec as given, e.g. `llama:models/q.gguf`. */
  spec: string;
  path: string;
  size: number;
  sha256: string;
  header: GgufHeader;
}

export interface LocalModelIdentity {
  sha256: string;
  quantisation: string;
  architecture: string;
  /** Tokens of context per sequence. */
  contextSize: number;
  /** What the model declares (its training context), when it does. */
  declaredContext?: number;
}

/** Remembers files' SHA-256 by path, size and modification time, so a 5 GB model is hashed once, not per run. */
export interface HashMemo {
  fileHash(path: string, size: number, mtimeMs: number): string | undefined;
  rememberFileHash(path: string, size: number, mtimeMs: number, sha256: string): void;
}

/** Context per sequence when --context-size is not given (capped at what the model declares). */
export const DEFAULT_CONTEXT_SIZE = 8192;
/** llama.cpp sizes contexts in multiples of 256 (node-llama-cpp's padSafeContextSize). */
const CONTEXT_PAD = 256;

/**
 * The context size a model runs with: --context-size or 8192, never beyond what the model declares (a longer
 * context than it was trained for degrades it silently), rounded up to llama.cpp's multiple of 256 when that stays
 * within the declared length, as node-llama-cpp rounds it.
 */
export function contextSizeFor(header: Pick<GgufHeader, 'contextLength'>, requested: number | undefined, spec: string): number {
  const declared = header.contextLength;
  if (requested !== undefined && declared !== undefined && requested > declared) {
    throw new UsageError(`--context-size ${requested} is more than ${spec} declares (${declared} tokens); give at most ${declared}`);
  }
  const size = Math.min(requested ?? DEFAULT_CONTEXT_SIZE, declared ?? Number.POSITIVE_INFINITY);
  const padded = Math.ceil(size / CONTEXT_PAD) * CONTEXT_PAD;
  return declared === undefined || padded < declared ? padded : size;
}

/**
 * What a signature adds to a local model's name (`llama:q.gguf@gguf(...)`): `gguf(sha256=<16 hex>,quant=Q4_K_M,ctx=8192)`.
 */
export function identitySignature(identity: LocalModelIdentity): string {
  return `gguf(sha256=${identity.sha256.slice(0, 16)},quant=${identity.quantisation},ctx=${identity.contextSize})`;
}

/** A model's name in a signature: the spec as given, and for a local model `@` and its identity. */
export function signedModelName(name: string, identity: string | undefined): string {
  return identity ? `${name}@${identity}` : name;
}

/**
 * The KV cache a context needs, in bytes (F16 keys and values, llama.cpp's default): layers x tokens x sequences x
 * (key + value width of the KV heads) x 2. Undefined when the header does not declare the dimensions. An estimate
 * to refuse a context that cannot fit before llama.cpp allocates it: node-llama-cpp's own check let a context of
 * 8,000,000 tokens x 256 sequences through on a 24 GB machine, which the kernel then killed.
 */
export function kvCacheBytes(header: GgufHeader, contextSize: number, sequences: number): number | undefined {
  const { blockCount, embeddingLength, headCount } = header;
  if (!blockCount || !embeddingLength || !headCount) return undefined;
  const headDim = embeddingLength / headCount;
  const kvHeads = header.headCountKv ?? headCount;
  const width = kvHeads * ((header.keyLength ?? headDim) + (header.valueLength ?? headDim));
  return blockCount * contextSize * sequences * width * 2;
}

/** Memory the kernel can give this process now: MemAvailable on Linux, else the OS's free memory. */
export function availableMemory(meminfo = readMeminfo()): number {
  const kb = meminfo && /^MemAvailable:\s+(\d+) kB/m.exec(meminfo)?.[1];
  return kb ? Number(kb) * 1024 : freemem();
}

function readMeminfo(): string | undefined {
  try {
    return readFileSync('/proc/meminfo', 'utf8');
  } catch {
    return undefined;
  }
}

export interface ResolveOptions {
  memo?: HashMemo | null;
  download?: DownloadOptions;
}

/** The file of a `llama:PATH` or `hf:REPO[:FILE]` spec, downloaded first for hf: when it is not cached. */
export async function resolveLocalModel(spec: ModelSpec & { kind: LocalKind }, options: ResolveOptions = {}): Promise<LocalModelFile> {
  const name = `${spec.kind}:${spec.model}`;
  if (spec.kind === 'hf') {
    const file = await new HfDownloader(options.download).resolve(parseHfModel(spec.model));
    return { spec: name, path: file.path, size: file.size, sha256: file.sha256, header: readGgufHeader(file.path) };
  }
  const path = resolve(spec.model);
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new UsageError(`${name}: no such file (${path})`);
  }
  const header = readGgufHeader(path); // not GGUF: one line, before any hashing or loading
  let sha256 = options.memo?.fileHash(path, stat.size, stat.mtimeMs);
  if (!sha256) {
    sha256 = await sha256File(path);
    options.memo?.rememberFileHash(path, stat.size, stat.mtimeMs, sha256);
  }
  return { spec: name, path, size: stat.size, sha256, header };
}
