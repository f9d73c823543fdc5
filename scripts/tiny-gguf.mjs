#!/usr/bin/env node
/**
 * Writes a tiny GGUF model with random weights, for tests of the embedded llama.cpp runtime (no real model can be
 * downloaded where the tests run). The same options give the same bytes on every machine: the weights come from a
 * seeded generator (mulberry32) and every float is written as float32.
 *
 *   node scripts/tiny-gguf.mjs OUT.gguf [--seed N] [--variant chat|embedding|short-context|long-context|unknown-arch]
 *
 * The model: llama architecture, 2 layers, 64-wide embeddings, 4 heads (2 KV heads), a SentencePiece vocabulary of
 * 1,069 tokens (the specials, ChatML's <|im_start|>/<|im_end|>, 256 byte-fallback tokens, "▁", the printable ASCII
 * characters, letter pairs and a few longer pieces), ChatML as its chat template, 8,192 tokens of declared context.
 * Its replies are noise; it is real inference all the same (tokenizer, attention, KV cache, sampling, grammars).
 * Variants:
 * - `embedding`: declares mean pooling (`llama.pooling_type` 1), as GGUF embedding models do;
 * - `short-context`: declares 256 tokens of context, too few for a judge's prompt;
 * - `long-context`: declares 2^24 tokens of context, more than any machine has memory for at once;
 * - `unknown-arch`: `general.architecture` names an architecture llama.cpp does not know.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const GGUF_TYPE = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 };
const GGML_F32 = 0;
const ALIGNMENT = 32;

const N_EMBD = 64;
const N_HEAD = 4;
const N_HEAD_KV = 2;
const N_LAYER = 2;
const N_FF = 128;

/** mulberry32: a small seeded generator, the same sequence everywhere. */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** SentencePiece token types as llama.cpp reads them. */
const NORMAL = 1;
const UNKNOWN = 2;
const CONTROL = 3;
const BYTE = 6;

function vocabulary() {
  const tokens = [];
  const add = (text, type, score) => tokens.push({ text, type, score });
  add('<unk>', UNKNOWN, 0);
  add('<s>', CONTROL, 0);
  add('</s>', CONTROL, 0);
  add('<|im_start|>', CONTROL, 0);
  add('<|im_end|>', CONTROL, 0);
  for (let b = 0; b < 256; b++) add(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`, BYTE, 0);
  // SentencePiece merges adjacent pieces whose concatenation is a token, highest score first: the printable ASCII
  // characters, then every pair of lowercase letters and "▁" + a letter (so a token is about two characters, and a
  // judge's prompt or a reply costs half the tokens it would one character a token), then a few longer pieces.
  add('\u2581', NORMAL, -1);
  for (let c = 0x21; c <= 0x7e; c++) add(String.fromCharCode(c), NORMAL, -2);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  for (const a of letters) add(`\u2581${a}`, NORMAL, -3);
  for (const a of letters) for (const b of letters) add(a + b, NORMAL, -4);
  const pieces = ['\u2581\u2581', '\u2581\u2581\u2581\u2581', '\u2581the', 'def', '\u2581def', 'return', '\u2581return', 'self', '\u2581if', '\u2581for', '\u2581in'];
  pieces.forEach((p, i) => add(p, NORMAL, -5 - i / 100));
  return tokens;
}

const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

class Writer {
  chunks = [];
  length = 0;
  push(buffer) {
    this.chunks.push(buffer);
    this.length += buffer.length;
  }
  u32(v) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v) {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v) {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  string(s) {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  pad() {
    const rest = this.length % ALIGNMENT;
    if (rest) this.push(Buffer.alloc(ALIGNMENT - rest));
  }
}

/** One metadata value: [type, value] with type UINT32, INT32, FLOAT32, BOOL, STRING or [ARRAY, elementType]. */
function writeValue(w, type, value) {
  if (Array.isArray(type)) {
    w.u32(GGUF_TYPE.ARRAY);
    w.u32(GGUF_TYPE[type[1]]);
    w.u64(value.length);
    for (const v of value) writeScalar(w, type[1], v);
    return;
  }
  w.u32(GGUF_TYPE[type]);
  writeScalar(w, type, value);
}

function writeScalar(w, type, v) {
  if (type === 'UINT32') w.u32(v);
  else if (type === 'INT32') w.i32(v);
  else if (type === 'FLOAT32') w.f32(v);
  else if (type === 'BOOL') w.push(Buffer.from([v ? 1 : 0]));
  else if (type === 'STRING') w.string(v);
  else throw new Error(`unsupported metadata type ${type}`);
}

/** The GGUF file's bytes. */
export function tinyGguf({ seed = 24, variant = 'chat' } = {}) {
  const random = mulberry32(seed);
  const vocab = vocabulary();
  const nVocab = vocab.length;
  const arch = variant === 'unknown-arch' ? 'codegauge-unknown-arch' : 'llama';
  const contextLength = variant === 'short-context' ? 256 : variant === 'long-context' ? 2 ** 24 : 8192;
  const metadata = [
    ['general.architecture', 'STRING', arch],
    ['general.name', 'STRING', `codegauge tiny random ${variant} (seed ${seed})`],
    ['general.file_type', 'UINT32', 0], // all F32
    ['general.alignment', 'UINT32', ALIGNMENT],
    [`${arch}.context_length`, 'UINT32', contextLength],
    [`${arch}.embedding_length`, 'UINT32', N_EMBD],
    [`${arch}.block_count`, 'UINT32', N_LAYER],
    [`${arch}.feed_forward_length`, 'UINT32', N_FF],
    [`${arch}.attention.head_count`, 'UINT32', N_HEAD],
    [`${arch}.attention.head_count_kv`, 'UINT32', N_HEAD_KV],
    [`${arch}.rope.dimension_count`, 'UINT32', N_EMBD / N_HEAD],
    [`${arch}.rope.freq_base`, 'FLOAT32', 10000],
    [`${arch}.attention.layer_norm_rms_epsilon`, 'FLOAT32', 1e-5],
    [`${arch}.vocab_size`, 'UINT32', nVocab],
    ...(variant === 'embedding' ? [[`${arch}.pooling_type`, 'UINT32', 1]] : []),
    ['tokenizer.ggml.model', 'STRING', 'llama'],
    ['tokenizer.ggml.tokens', ['ARRAY', 'STRING'], vocab.map((t) => t.text)],
    ['tokenizer.ggml.scores', ['ARRAY', 'FLOAT32'], vocab.map((t) => t.score)],
    ['tokenizer.ggml.token_type', ['ARRAY', 'INT32'], vocab.map((t) => t.type)],
    ['tokenizer.ggml.unknown_token_id', 'UINT32', 0],
    ['tokenizer.ggml.bos_token_id', 'UINT32', 1],
    ['tokenizer.ggml.eos_token_id', 'UINT32', 4], // <|im_end|>, as ChatML models declare it
    ['tokenizer.ggml.padding_token_id', 'UINT32', 2],
    ['tokenizer.ggml.add_bos_token', 'BOOL', false],
    ['tokenizer.ggml.add_eos_token', 'BOOL', false],
    ['tokenizer.chat_template', 'STRING', CHATML_TEMPLATE],
  ];
  // Weights uniform in [-scale, scale]; norms 1. Dims are GGUF's: the first is the fastest-moving.
  const tensors = [];
  const matrix = (name, cols, rows, scale) => tensors.push({ name, dims: [cols, rows], data: Float32Array.from({ length: cols * rows }, () => (random() * 2 - 1) * scale) });
  const ones = (name, n) => tensors.push({ name, dims: [n], data: new Float32Array(n).fill(1) });
  const headDim = N_EMBD / N_HEAD;
  matrix('token_embd.weight', N_EMBD, nVocab, 1);
  for (let l = 0; l < N_LAYER; l++) {
    ones(`blk.${l}.attn_norm.weight`, N_EMBD);
    matrix(`blk.${l}.attn_q.weight`, N_EMBD, N_EMBD, 0.3);
    matrix(`blk.${l}.attn_k.weight`, N_EMBD, headDim * N_HEAD_KV, 0.3);
    matrix(`blk.${l}.attn_v.weight`, N_EMBD, headDim * N_HEAD_KV, 0.3);
    matrix(`blk.${l}.attn_output.weight`, N_EMBD, N_EMBD, 0.3);
    ones(`blk.${l}.ffn_norm.weight`, N_EMBD);
    matrix(`blk.${l}.ffn_gate.weight`, N_EMBD, N_FF, 0.3);
    matrix(`blk.${l}.ffn_up.weight`, N_EMBD, N_FF, 0.3);
    matrix(`blk.${l}.ffn_down.weight`, N_FF, N_EMBD, 0.3);
  }
  ones('output_norm.weight', N_EMBD);
  matrix('output.weight', N_EMBD, nVocab, 1);

  const w = new Writer();
  w.push(Buffer.from('GGUF', 'ascii'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, type, value] of metadata) {
    w.string(key);
    writeValue(w, type, value);
  }
  let offset = 0;
  for (const t of tensors) {
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML_F32);
    w.u64(offset);
    offset += Math.ceil((t.data.length * 4) / ALIGNMENT) * ALIGNMENT;
  }
  w.pad();
  for (const t of tensors) {
    const bytes = Buffer.alloc(t.data.length * 4);
    t.data.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
    w.push(bytes);
    w.pad();
  }
  return Buffer.concat(w.chunks);
}

export function writeTinyGguf(path, options = {}) {
  writeFileSync(path, tinyGguf(options));
  return path;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const out = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
  const option = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  if (!out) {
    console.error('usage: node scripts/tiny-gguf.mjs OUT.gguf [--seed N] [--variant chat|embedding|short-context|long-context|unknown-arch]');
    process.exit(2);
  }
  writeTinyGguf(out, { seed: option('--seed') ? Number(option('--seed')) : undefined, variant: option('--variant') ?? 'chat' });
  console.log(out);
}
