import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { loadTransformers } from '../llm/transformers.js';
import { pyStrip } from '../compat/python-strings.js';
import { VERSION } from '../version.js';
import { BoundedCache } from './bounded-cache.js';
import { SyncEncoder } from './codebertscore-worker.js';
import type { Metric } from './metric.js';

/**
 * CodeBERTScore (Zhou et al. 2023; neulab/code-bert-score `score()`), through transformers.js:
 * - each text is stripped and encoded with the model's special tokens, no truncation; texts longer than the
 *   tokenizer's `model_max_length` are encoded in overlapping windows (SLED's `get_window_indices`, overlap 0.5);
 * - the embeddings are the hidden states of the model's last layer: the ONNX export must be the model truncated to
 *   the layer CodeBERTScore uses (python 11, javascript/c/cpp 10, java 7; `num_hidden_layers` in config.json);
 * - with `sources=yes` the problem statement is put before the code (`src.strip() + ' \n'`) and its tokens are
 *   dropped after encoding (the longest prefix of tokens whose decoding is a prefix of the source), keeping the
 *   first special token;
 * - tokens made only of punctuation (Python's `string.punctuation` without `+-*\/&|~`, after stripping the
 *   byte-level `Ġ`, `Ċ`, `ĉ`) are dropped; the special tokens stay as matching targets with weight 0;
 * - greedy cosine matching: precision weights each hypothesis token's best cosine with a reference token, recall
 *   the converse, weighted by IDF over the references (`idf=yes`: log((N+1)/(df+1)) with N the references of the
 *   input, each counted once per segment as the reference flattens them, unseen tokens log(N+1)) or 1 (`idf=no`,
 *   the default, with [CLS]/[SEP] at 0); F1 = 2PR/(P+R), F3 = 10PR/(9P+R); a text left with only its two special
 *   tokens scores P = R = 0; several references: the best of each measure.
 * Statistics: [P, R, F1, F3, 1]; the score is the mean of the chosen measure x 100.
 */
export type CodeBertMeasure = 'f1' | 'f3' | 'p' | 'r';

/** The per-language models of code-bert-score (`lang2model`, `model2layers`). */
export const CODEBERTSCORE_MODELS: Record<string, { model: string; layer: number }> = {
  python: { model: 'neulab/codebert-python', layer: 11 },
  javascript: { model: 'neulab/codebert-javascript', layer: 10 },
  java: { model: 'neulab/codebert-java', layer: 7 },
  c: { model: 'neulab/codebert-c', layer: 10 },
  cpp: { model: 'neulab/codebert-cpp', layer: 10 },
};
export const CODEBERTSCORE_DEFAULT_MODEL = { model: 'microsoft/codebert-base-mlm', layer: 10 };
export const CHUNK_OVERLAP = 0.5;

export interface CodeBertScoreOptions {
  lang: string;
  /** A transformers.js model folder (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx). */
  modelDir?: string;
  /** A hub id to download (an ONNX export of the per-language model) when there is no model folder. */
  model?: string;
  /** The hidden layer the export must end at (default: code-bert-score's for the language). */
  layer?: number;
  idf?: boolean;
  measure?: CodeBertMeasure;
  sources?: boolean;
  /** The problem statement of a segment, by its references (`--problems`); needed with `sources`. */
  sourceOf?: (refs: readonly string[]) => string | undefined;
  cacheDir?: string;
  /** Download progress (a networked first use). */
  onProgress?: (line: string) => void;
}

/** Python's `string.punctuation` less `+-*\/&|~`: a token made only of these is dropped (`mark_all_punc_tokens`). */
const PUNCTUATION = new Set([...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'].filter((c) => !'+-*/&|~'.includes(c)));
const BYTE_LEVEL_SPACE = 'Ġ\u010a\u0109'; // Ġ (space), Ċ (newline), ĉ (tab) of byte-level BPE

/** `mark_all_punc_tokens`: true for the tokens to keep. */
export function keepToken(token: string): boolean {
  let start = 0;
  let end = token.length;
  while (start < end && BYTE_LEVEL_SPACE.includes(token[start])) start++;
  while (end > start && BYTE_LEVEL_SPACE.includes(token[end - 1])) end--;
  for (const c of token.slice(start, end)) if (!PUNCTUATION.has(c)) return true;
  return false; // all punctuation, or empty (Python's all() of nothing is True)
}

/** SLED's `get_window_indices`: [contextStart, contextEnd, updateStart, updateEnd] (update relative to the context). */
export function windowIndices(total: number, maxLength: number, overlap = CHUNK_OVERLAP): [number, number, number, number][] {
  if (total <= maxLength) return [[0, total, 0, total]];
  const margin = Math.trunc((maxLength * overlap) / 2);
  const stride = maxLength - 2 * margin;
  let contextStart = 0;
  let updateStart = 0;
  let contextEnd = maxLength;
  let updateEnd = contextEnd - margin;
  const out: [number, number, number, number][] = [[contextStart, contextEnd, updateStart, updateEnd]];
  while (contextEnd < total) {
    contextEnd = Math.min(total, contextEnd + stride);
    contextStart = contextEnd < total ? contextStart + stride : total - maxLength;
    updateStart = Math.max(updateStart + stride, updateEnd);
    updateEnd = contextEnd < total ? Math.min(total, updateEnd + stride) : total;
    out.push([contextStart, contextEnd, updateStart - contextStart, updateEnd - contextStart]);
  }
  return out;
}

/** One encoded text after source trimming and punctuation removal: unit-length token vectors and token ids. */
export interface EncodedText {
  ids: number[];
  /** Kept tokens x dim, each row L2-normalised (computed in float64, stored in float32 as the reference keeps them). */
  vectors: Float32Array;
  dim: number;
}

/** Greedy cosine matching of one hypothesis with one reference (`greedy_cos_idf` for a batch of one). */
export function greedyMatch(hyp: EncodedText, hypIdf: readonly number[], ref: EncodedText, refIdf: readonly number[]): { p: number; r: number; f1: number; f3: number } {
  const nh = hyp.ids.length;
  const nr = ref.ids.length;
  const d = hyp.dim;
  const bestH = new Float64Array(nh).fill(-Infinity);
  const bestR = new Float64Array(nr).fill(-Infinity);
  for (let i = 0; i < nh; i++) {
    for (let j = 0; j < nr; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += hyp.vectors[i * d + k] * ref.vectors[j * d + k];
      if (s > bestH[i]) bestH[i] = s;
      if (s > bestR[j]) bestR[j] = s;
    }
  }
  const weighted = (best: Float64Array, idf: readonly number[]) => {
    let total = 0;
    for (const w of idf) total += w;
    let sum = 0;
    for (let i = 0; i < best.length; i++) sum += best[i] * (idf[i] / total);
    return sum;
  };
  let p = weighted(bestH, hypIdf);
  let r = weighted(bestR, refIdf);
  let f1 = (2 * p * r) / (p + r);
  let f3 = (10 * p * r) / (9 * p + r);
  if (nh === 2 || nr === 2) p = r = 0; // only the special tokens left: the reference's "empty sentence" rule
  if (Number.isNaN(f1)) f1 = 0;
  if (Number.isNaN(f3)) f3 = 0;
  // A text whose kept tokens all have IDF 0 gives 0/0 in the reference (NaN); codegauge counts it as 0.
  if (Number.isNaN(p)) p = 0;
  if (Number.isNaN(r)) r = 0;
  return { p, r, f1, f3 };
}

interface Tokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
  model: { convert_ids_to_tokens(ids: number[]): string[] };
  model_max_length?: number;
}

interface CodeBertRefInfo {
  refs: string[];
  source: string | undefined;
}

const STATS = 5;

export class CodeBertScore implements Metric<CodeBertRefInfo> {
  readonly name: string;
  readonly statsSize = STATS;
  readonly lang: string;
  readonly layer: number;
  readonly modelId: string;
  readonly idf: boolean;
  readonly measure: CodeBertMeasure;
  readonly sources: boolean;
  private options: CodeBertScoreOptions;
  private tokenizer: Tokenizer | null = null;
  private encoder: SyncEncoder | null = null;
  private modelHash = 'unloaded';
  private maxLength = 512;
  private specialIds: [number, number] = [0, 2];
  // A reference is shared by the consecutive hypotheses of its problem; a code model's encoded text is about
  // 0.5 MB (200 tokens x 768 floats), so the cache stays small.
  private readonly cache = new BoundedCache<EncodedText>(256);
  // IDF over the references (idf=yes): document frequencies and number of references, frozen at the first score.
  private df: Map<number, number> | null = null;
  private nDocs = 0;
  private counted: Set<string> | null = null;
  private frozen = false;

  constructor(options: CodeBertScoreOptions, readonly spec = 'codebertscore') {
    this.options = options;
    this.lang = options.lang;
    const def = CODEBERTSCORE_MODELS[options.lang] ?? CODEBERTSCORE_DEFAULT_MODEL;
    this.modelId = options.model ?? def.model;
    this.layer = options.layer ?? def.layer;
    this.idf = options.idf ?? false;
    this.measure = options.measure ?? 'f1';
    this.sources = options.sources ?? false;
    this.name = `CodeBERTScore-${this.measure.toUpperCase()}`;
    if (this.idf) {
      this.df = new Map();
      this.counted = new Set();
    }
  }

  signature(nrefs: number | 'var'): string {
    const model = this.options.modelDir ? basename(resolve(this.options.modelDir)) : this.modelId;
    return `nrefs:${nrefs}|model:${model}|layer:${this.layer}|onnx:${this.modelHash}|idf:${this.idf ? 'refs' : 'no'}|punc:no|sources:${this.sources ? 'yes' : 'no'}|window:${this.maxLength}/${CHUNK_OVERLAP}|measure:${this.measure}|version:${VERSION}`;
  }

  /** Loads the tokenizer (here) and the model (on the encoder thread); checks the folder and the layer first. */
  async ready(): Promise<void> {
    if (this.tokenizer) return;
    if (!isMainThread) {
      // ONNX Runtime's Node binding is not safe on several threads at once, and the model already runs on a
      // thread of its own: scoring threads would each load a copy.
      throw new UsageError('codebertscore: score on one thread (--jobs 1); the model already runs on a thread of its own');
    }
    if (this.sources && !this.options.sourceOf) throw new UsageError('codebertscore: sources=yes needs the problem statements (--problems FILE)');
    const transformers = await loadTransformers('codebertscore');
    const { env, AutoTokenizer } = transformers;
    let name = this.modelId;
    let localRoot: string | undefined;
    let configPath: string | undefined;
    let onnxPath: string | undefined;
    if (this.options.modelDir) {
      const dir = resolve(this.options.modelDir);
      const where = `codebertscore model-dir=${this.options.modelDir}`;
      if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${where}: no such folder`);
      for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json', join('onnx', 'model.onnx')]) {
        if (!existsSync(join(dir, file))) {
          throw new UsageError(`${where}: no ${file}; expected a transformers.js model folder (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx) exported as docs/score.md (CodeBERTScore) shows`);
        }
      }
      localRoot = dirname(dir) + '/';
      name = basename(dir);
      configPath = join(dir, 'config.json');
      onnxPath = join(dir, 'onnx', 'model.onnx');
      env.localModelPath = localRoot;
      env.allowLocalModels = true;
      env.allowRemoteModels = false;
    } else {
      env.allowRemoteModels = true;
      env.cacheDir = this.cacheDir();
      if (process.env.HF_ENDPOINT) env.remoteHost = process.env.HF_ENDPOINT.replace(/\/?$/, '/');
    }
    const cannot = (what: string, e: unknown) =>
      new UsageError(
        `codebertscore: cannot load the ${what} ${this.options.modelDir ? `from ${this.options.modelDir}` : `${this.modelId} (not in ${env.cacheDir} and not downloadable here)`}: ${String((e as Error)?.message ?? e).split('\n')[0]}; give model-dir=DIR (an ONNX export, see docs/score.md, CodeBERTScore)`,
      );
    let tokenizer: Tokenizer;
    try {
      tokenizer = (await AutoTokenizer.from_pretrained(name, { progress_callback: this.progress() })) as unknown as Tokenizer;
    } catch (e) {
      throw cannot('tokenizer', e);
    }
    const encoder = new SyncEncoder();
    try {
      await encoder.load({ localRoot, name, cacheDir: localRoot ? undefined : (env.cacheDir ?? undefined), remoteHost: localRoot ? undefined : env.remoteHost, progress: this.options.onProgress ? this.progressOf() : undefined });
    } catch (e) {
      await encoder.close();
      throw cannot('model', e);
    }
    if (!configPath) {
      const cached = join(env.cacheDir ?? this.cacheDir(), this.modelId);
      configPath = join(cached, 'config.json');
      onnxPath = join(cached, 'onnx', 'model.onnx');
    }
    try {
      this.checkLayer(configPath);
      this.modelHash = existsSync(onnxPath!) ? await sha256(onnxPath!) : 'unknown';
    } catch (e) {
      await encoder.close();
      throw e;
    }
    const empty = tokenizer.encode('');
    if (empty.length !== 2) throw new UsageError(`codebertscore: the tokenizer of ${name} does not wrap a text in two special tokens ([CLS] ... [SEP] or <s> ... </s>)`);
    this.specialIds = [empty[0], empty[1]];
    const config = JSON.parse(readFileSync(configPath, 'utf8'));
    const m = tokenizer.model_max_length;
    this.maxLength = typeof m === 'number' && Number.isFinite(m) && m > 0 && m < 1e6 ? m : (config.max_position_embeddings ?? 514) - 2;
    this.tokenizer = tokenizer;
    this.encoder = encoder;
  }

  private cacheDir(): string {
    return this.options.cacheDir ?? process.env.CODEGAUGE_MODEL_CACHE ?? join(homedir(), '.cache', 'codegauge', 'models');
  }

  private progressOf(): (p: { status?: string; file?: string; progress?: number }) => void {
    let last = '';
    return (p) => {
      if (p.status !== 'progress' || !p.file) return;
      const line = `downloading ${this.modelId}/${p.file}: ${Math.floor(p.progress ?? 0)}%`;
      if (line !== last) this.options.onProgress!((last = line));
    };
  }

  private progress(): ((p: { status?: string; file?: string; progress?: number }) => void) | undefined {
    return this.options.onProgress ? this.progressOf() : undefined;
  }

  private checkLayer(configPath: string): void {
    let config: { num_hidden_layers?: number };
    try {
      config = JSON.parse(readFileSync(configPath, 'utf8'));
    } catch (e) {
      throw new UsageError(`codebertscore: ${configPath}: not a model config (${(e as Error).message})`);
    }
    if (config.num_hidden_layers !== this.layer) {
      throw new UsageError(
        `codebertscore: the model in ${dirname(configPath)} has ${config.num_hidden_layers ?? 'an unknown number of'} hidden layers, but CodeBERTScore${this.options.layer === undefined ? ` for ${this.lang} (${this.modelId})` : ''} uses layer ${this.layer}: export the model truncated to its first ${this.layer} layers (docs/score.md, CodeBERTScore), or give layer=${config.num_hidden_layers} if that is the layer you mean`,
      );
    }
  }

  /** Gives the problem statements for `sources=yes` after the metric was built from a spec (the CLI's --problems). */
  setSourceOf(sourceOf: (refs: readonly string[]) => string | undefined): void {
    this.options = { ...this.options, sourceOf };
  }

  /** Reports download progress of a first use on a networked machine (set before `ready()`). */
  setProgress(onProgress: (line: string) => void): void {
    this.options = { ...this.options, onProgress };
  }

  /** Counts the references of a whole input for the IDF weights (idf=yes) before scoring a streamed input. */
  fitReferences(references: Iterable<readonly string[]>): void {
    for (const refs of references) this.count(refs);
  }

  private count(refs: readonly string[]): void {
    if (!this.df) return;
    if (this.frozen) {
      if (refs.every((r) => this.counted!.has(r))) return;
      throw new UsageError(
        'codebertscore: idf=yes weighs tokens by every reference of the input, and a new reference came after scoring began (a streamed input); count the references first (fitReferences, or score the input in memory) or use idf=no',
      );
    }
    const tokenizer = this.requireTokenizer();
    for (const ref of refs) {
      this.counted!.add(ref);
      this.nDocs++;
      for (const id of new Set(this.sentEncode(tokenizer, ref))) this.df.set(id, (this.df.get(id) ?? 0) + 1);
    }
  }

  private requireTokenizer(): Tokenizer {
    if (!this.tokenizer) throw new UsageError('codebertscore: the model is not loaded; await metric.ready() (readyMetrics does) before scoring');
    return this.tokenizer;
  }

  /** `sent_encode`: strip, then encode with the special tokens and no truncation. */
  private sentEncode(tokenizer: Tokenizer, text: string): number[] {
    const s = pyStrip(text);
    return s === '' ? [...this.specialIds] : tokenizer.encode(s);
  }

  private idfOf(id: number): number {
    if (!this.df) return id === this.specialIds[0] || id === this.specialIds[1] ? 0 : 1;
    const df = this.df.get(id);
    return Math.log((this.nDocs + 1) / ((df ?? 0) + 1));
  }

  prepareReferences(refs: readonly string[]): CodeBertRefInfo {
    this.count(refs);
    return { refs: refs.slice(), source: this.sources ? this.options.sourceOf!(refs) : undefined };
  }

  /** The embedded text as CodeBERTScore uses it (cached per text and source). */
  encodeText(text: string, source?: string): EncodedText {
    const key = source === undefined ? text : `${source}\u0000${text}`;
    return this.cache.getOrCompute(key, () => this.encodeUncached(text, source));
  }

  private encodeUncached(text: string, source: string | undefined): EncodedText {
    const tokenizer = this.requireTokenizer();
    let sentence = pyStrip(text);
    let src: string | undefined;
    if (source !== undefined) {
      src = `${pyStrip(source)} \n`;
      sentence = pyStrip(src + sentence);
    }
    const ids = this.sentEncode(tokenizer, sentence);
    const { data, dim } = this.embed(ids);
    let keep = Array.from({ length: ids.length }, (_, i) => i);
    let tokens = tokenizer.model.convert_ids_to_tokens(ids);
    if (src !== undefined) {
      // The longest run of leading tokens whose decoding is a prefix of the source (decoded without the first
      // special token: the reference removes the bos token's text from the decoding).
      let sourceLength = 0;
      for (let j = 0; j < ids.length; j++) {
        const prefix = j <= 1 ? '' : tokenizer.decode(ids.slice(1, j), { skip_special_tokens: false });
        if (src.startsWith(prefix)) sourceLength = j;
        else break;
      }
      keep = [0, ...keep.slice(Math.max(sourceLength, 1))];
      tokens = keep.map((i) => tokens[i]);
    }
    const kept = keep.filter((_, k) => keepToken(tokens[k]));
    const vectors = new Float32Array(kept.length * dim);
    kept.forEach((i, row) => {
      let norm = 0;
      for (let k = 0; k < dim; k++) norm += data[i * dim + k] * data[i * dim + k];
      norm = Math.sqrt(norm);
      for (let k = 0; k < dim; k++) vectors[row * dim + k] = data[i * dim + k] / norm;
    });
    return { ids: kept.map((i) => ids[i]), vectors, dim };
  }

  /** Hidden states of every token, window by window (`bert_encode`). */
  private embed(ids: number[]): { data: Float32Array; dim: number } {
    const encoder = this.encoder!;
    const windows = windowIndices(ids.length, this.maxLength);
    if (windows.length === 1) return encoder.encode(ids);
    let dim = 0;
    const parts: Float32Array[] = [];
    for (const [cs, ce, us, ue] of windows) {
      const out = encoder.encode(ids.slice(cs, ce));
      dim = out.dim;
      parts.push(out.data.subarray(us * dim, ue * dim));
    }
    const data = new Float32Array(ids.length * dim);
    let offset = 0;
    for (const part of parts) {
      data.set(part, offset);
      offset += part.length;
    }
    if (offset !== data.length) throw new Error(`codebertscore: windows covered ${offset / dim} of ${ids.length} tokens`);
    return { data, dim };
  }

  /** P, R, F1 and F3 of one hypothesis against its references (the best of each over the references). */
  scores(hyp: string, refs: CodeBertRefInfo): { p: number; r: number; f1: number; f3: number } {
    this.frozen = true;
    const h = this.encodeText(hyp, refs.source);
    const hIdf = h.ids.map((id) => this.idfOf(id));
    const best = { p: -Infinity, r: -Infinity, f1: -Infinity, f3: -Infinity };
    for (const ref of refs.refs) {
      const r = this.encodeText(ref, refs.source);
      const s = greedyMatch(h, hIdf, r, r.ids.map((id) => this.idfOf(id)));
      best.p = Math.max(best.p, s.p);
      best.r = Math.max(best.r, s.r);
      best.f1 = Math.max(best.f1, s.f1);
      best.f3 = Math.max(best.f3, s.f3);
    }
    if (refs.refs.length === 0) return { p: 0, r: 0, f1: 0, f3: 0 };
    return best;
  }

  segmentStatistics(hyp: string, refs: CodeBertRefInfo, out: Float64Array, offset: number): void {
    const s = this.scores(hyp, refs);
    out[offset] = s.p;
    out[offset + 1] = s.r;
    out[offset + 2] = s.f1;
    out[offset + 3] = s.f3;
    out[offset + 4] = 1;
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    const index = { p: 0, r: 1, f1: 2, f3: 3 }[this.measure];
    return stats[4] > 0 ? (100 * stats[index]) / stats[4] : 0;
  }

  components(stats: ArrayLike<number>): Record<string, number> {
    const n = stats[4];
    const mean = (i: number) => (n > 0 ? (100 * stats[i]) / n : 0);
    return { P: mean(0), R: mean(1), F1: mean(2), F3: mean(3) };
  }

  /** Stops the encoder thread (the process can also just exit: the thread does not keep it alive). */
  async close(): Promise<void> {
    await this.encoder?.close();
    this.encoder = null;
    this.tokenizer = null;
  }
}

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex').slice(0, 12);
}
