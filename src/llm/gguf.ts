import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { UsageError } from '../errors.js';

/**
 * What codegauge reads from a GGUF file's header before any runtime is loaded: enough to refuse a file that is not
 * GGUF with one line, and to name the model in cache keys and signatures (architecture, quantisation, the context
 * length it declares, the pooling an embedding model declares). Large arrays (the vocabulary) are skipped, not read.
 */
export interface GgufHeader {
  version: number;
  architecture: string;
  name?: string;
  /** llama.cpp's file type, e.g. 15 for Q4_K_M; undefined when the file does not say. */
  fileType?: number;
  /** The file type's name: `Q4_K_M`, `F16`, `F32`..., or `unknown`. */
  quantisation: string;
  /** `<arch>.context_length`: the context the model was trained for. */
  contextLength?: number;
  /** `<arch>.pooling_type` (0 none, 1 mean, 2 cls, 3 last, 4 rank), declared by embedding models. */
  poolingType?: number;
  tensorCount: number;
  /** What the KV cache's size follows from (absent for architectures that do not declare them). */
  blockCount?: number;
  embeddingLength?: number;
  headCount?: number;
  headCountKv?: number;
  keyLength?: number;
  valueLength?: number;
}

/** llama.cpp's `llama_ftype` values and their names (llama.h). */
const FILE_TYPES: Record<number, string> = {
  0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 7: 'Q8_0', 8: 'Q5_0', 9: 'Q5_1', 10: 'Q2_K', 11: 'Q3_K_S', 12: 'Q3_K_M',
  13: 'Q3_K_L', 14: 'Q4_K_S', 15: 'Q4_K_M', 16: 'Q5_K_S', 17: 'Q5_K_M', 18: 'Q6_K', 19: 'IQ2_XXS', 20: 'IQ2_XS',
  21: 'Q2_K_S', 22: 'IQ3_XS', 23: 'IQ3_XXS', 24: 'IQ1_S', 25: 'IQ4_NL', 26: 'IQ3_S', 27: 'IQ3_M', 28: 'IQ2_S',
  29: 'IQ2_M', 30: 'IQ4_XS', 31: 'IQ1_M', 32: 'BF16', 36: 'TQ1_0', 37: 'TQ2_0', 38: 'MXFP4_MOE',
};

export function quantisationName(fileType: number | undefined): string {
  return fileType === undefined ? 'unknown' : (FILE_TYPES[fileType] ?? `ftype-${fileType}`);
}

// GGUF value types.
const UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12;
const SCALAR_SIZE: Record<number, number> = { [UINT8]: 1, [INT8]: 1, [UINT16]: 2, [INT16]: 2, [UINT32]: 4, [INT32]: 4, [FLOAT32]: 4, [BOOL]: 1, [UINT64]: 8, [INT64]: 8, [FLOAT64]: 8 };
/** More metadata entries or longer strings than any real model has: a corrupt header, not a model. */
const MAX_ENTRIES = 1_000_000;
const MAX_STRING = 64 * 1024 * 1024;

/** Reads a file forwards in chunks, so a header of a 40 GB model costs a few reads. */
class Reader {
  private buffer = Buffer.alloc(0);
  private start = 0; // file offset of buffer[0]
  private at = 0; // offset in buffer

  constructor(
    private readonly fd: number,
    private readonly path: string,
  ) {}

  private need(n: number): void {
    if (this.at + n <= this.buffer.length) return;
    const keep = this.buffer.subarray(this.at);
    const chunk = Buffer.alloc(Math.max(n - keep.length, 1 << 20));
    const read = readSync(this.fd, chunk, 0, chunk.length, this.start + this.buffer.length);
    this.start += this.at;
    this.buffer = Buffer.concat([keep, chunk.subarray(0, read)]);
    this.at = 0;
    if (this.buffer.length < n) throw new UsageError(`${this.path}: the file ends inside its GGUF header (an interrupted download?)`);
  }

  bytes(n: number): Buffer {
    this.need(n);
    const out = this.buffer.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  skip(n: number): void {
    // Skipping a large array moves the file offset without reading it.
    const inBuffer = this.buffer.length - this.at;
    if (n <= inBuffer) {
      this.at += n;
      return;
    }
    this.start += this.buffer.length + (n - inBuffer);
    this.buffer = Buffer.alloc(0);
    this.at = 0;
  }

  u32(): number {
    return this.bytes(4).readUInt32LE(0);
  }

  u64(): number {
    const v = this.bytes(8).readBigUInt64LE(0);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new UsageError(`${this.path}: a GGUF header field is out of range (a corrupt file?)`);
    return Number(v);
  }

  string(): string {
    const n = this.u64();
    if (n > MAX_STRING) throw new UsageError(`${this.path}: a GGUF header string of ${n} bytes (a corrupt file?)`);
    return this.bytes(n).toString('utf8');
  }

  scalar(type: number): number | bigint | boolean {
    const size = SCALAR_SIZE[type];
    if (size === undefined) throw new UsageError(`${this.path}: unknown GGUF value type ${type} (a corrupt file?)`);
    const b = this.bytes(size);
    switch (type) {
      case UINT8: return b.readUInt8(0);
      case INT8: return b.readInt8(0);
      case UINT16: return b.readUInt16LE(0);
      case INT16: return b.readInt16LE(0);
      case UINT32: return b.readUInt32LE(0);
      case INT32: return b.readInt32LE(0);
      case FLOAT32: return b.readFloatLE(0);
      case BOOL: return b.readUInt8(0) !== 0;
      case UINT64: return b.readBigUInt64LE(0);
      case INT64: return b.readBigInt64LE(0);
      default: return b.readDoubleLE(0);
    }
  }
}

/** Reads a GGUF file's header; a file that is not GGUF (or is cut short inside its header) is a UsageError. */
export function readGgufHeader(path: string): GgufHeader {
  let fd: number;
  try {
    if (statSync(path).isDirectory()) throw new UsageError(`${path} is a folder, not a GGUF model file`);
    fd = openSync(path, 'r');
  } catch (e) {
    if (e instanceof UsageError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `${path}: no such file` : `${path}: cannot be read (${code ?? (e as Error).message})`);
  }
  try {
    const r = new Reader(fd, path);
    let magic: Buffer;
    try {
      magic = r.bytes(4);
    } catch {
      throw new UsageError(`${path} is not a GGUF model file (it is shorter than a GGUF header)`);
    }
    if (magic.toString('latin1') !== 'GGUF') {
      throw new UsageError(`${path} is not a GGUF model file (it starts with ${JSON.stringify(magic.toString('latin1'))}, not "GGUF"); llama: and hf: models must be GGUF files, as llama.cpp's convert_hf_to_gguf.py writes them`);
    }
    const version = r.u32();
    if (version < 2 || version > 3) throw new UsageError(`${path}: GGUF version ${version} is not supported (llama.cpp reads versions 2 and 3)`);
    const tensorCount = r.u64();
    const entries = r.u64();
    if (entries > MAX_ENTRIES) throw new UsageError(`${path}: ${entries} GGUF metadata entries (a corrupt file?)`);
    const metadata = new Map<string, unknown>();
    for (let i = 0; i < entries; i++) {
      const key = r.string();
      const type = r.u32();
      if (type === STRING) metadata.set(key, r.string());
      else if (type === ARRAY) {
        const itemType = r.u32();
        const count = r.u64();
        if (itemType === STRING) for (let j = 0; j < count; j++) r.skip(r.u64());
        else if (SCALAR_SIZE[itemType] !== undefined) r.skip(count * SCALAR_SIZE[itemType]);
        else throw new UsageError(`${path}: GGUF metadata "${key}" is an array of type ${itemType} (a corrupt file?)`);
      } else metadata.set(key, r.scalar(type));
    }
    const architecture = metadata.get('general.architecture');
    if (typeof architecture !== 'string' || !architecture) throw new UsageError(`${path}: the GGUF header names no architecture (general.architecture)`);
    const number = (key: string) => {
      const v = metadata.get(key);
      return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
    };
    const fileType = number('general.file_type');
    return {
      version,
      architecture,
      name: typeof metadata.get('general.name') === 'string' ? (metadata.get('general.name') as string) : undefined,
      fileType,
      quantisation: quantisationName(fileType),
      contextLength: number(`${architecture}.context_length`),
      poolingType: number(`${architecture}.pooling_type`),
      tensorCount,
      blockCount: number(`${architecture}.block_count`),
      embeddingLength: number(`${architecture}.embedding_length`),
      headCount: number(`${architecture}.attention.head_count`),
      headCountKv: number(`${architecture}.attention.head_count_kv`),
      keyLength: number(`${architecture}.attention.key_length`),
      valueLength: number(`${architecture}.attention.value_length`),
    };
  } finally {
    closeSync(fd);
  }
}
