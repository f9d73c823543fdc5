import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { UsageError } from '../errors.js';
import { loadTransformers } from './transformers.js';
import { basename, dirname, join, resolve } from 'node:path';
import type { LlmClient } from './client.js';
import { signedModelName } from './local-model.js';
import { parseModelSpec } from './model-spec.js';

/**
 * Sentence embeddings for SBC's semantic similarity:
 * - `local`: transformers.js running `Xenova/all-MiniLM-L6-v2` (fp32, mean pooling, L2-normalised — what
 *   sentence-transformers does for all-MiniLM-L6-v2), downloaded once into a cache folder, or read from
 *   `--embed-model-dir` with no network;
 * - `ollama:MODEL` / `openai:MODEL`: through the LLM runtime (cached like chat replies);
 * - `llama:PATH.gguf` / `hf:OWNER/REPO[:FILE.gguf]`: a GGUF embedding model run by llama.cpp in this process, pooled
 *   as the model declares (`<arch>.pooling_type`, e.g. mean) and L2-normalised, as llama.cpp's embedding tool does;
 *   its id names the file's SHA-256, quantisation and context size.
 */
export type Embedder = ((texts: string[]) => Promise<number[][]>) & { id: string };

export const DEFAULT_LOCAL_MODEL = 'Xenova/all-MiniLM-L6-v2';

export interface EmbedderOptions {
  spec: string;
  /** A folder holding one transformers.js model (config.json, tokenizer.json, onnx/model.onnx): no download. */
  modelDir?: string;
  cacheDir?: string;
  client?: LlmClient;
}

export async function createEmbedder(options: EmbedderOptions): Promise<Embedder> {
  if (options.spec === 'local') {
    const transformers = await loadTransformers('--embed local (sentence embeddings on this machine)');
    const { env, pipeline } = transformers;
    let model = DEFAULT_LOCAL_MODEL;
    if (options.modelDir) {
      const dir = resolve(options.modelDir);
      for (const file of ['config.json', 'tokenizer.json']) {
        if (!existsSync(join(dir, file))) throw new UsageError(`--embed-model-dir ${options.modelDir}: no ${file}; expected a transformers.js model folder (config.json, tokenizer.json, onnx/model.onnx)`);
      }
      env.localModelPath = dirname(dir) + '/';
      env.allowLocalModels = true;
      env.allowRemoteModels = false;
      model = basename(dir);
    } else {
      env.cacheDir = options.cacheDir ?? process.env.CODEGAUGE_MODEL_CACHE ?? join(homedir(), '.cache', 'codegauge', 'models');
      // A hub mirror, as the Python libraries read it.
      if (process.env.HF_ENDPOINT) env.remoteHost = process.env.HF_ENDPOINT.replace(/\/?$/, '/');
    }
    // Loaded before any LLM request, so a machine that cannot fetch the model learns it at once.
    const loading = pipeline('feature-extraction', model, { dtype: 'fp32' });
    const extractor = await loading.catch((e: Error) => {
      const where = options.modelDir ? `from ${options.modelDir}` : `(${DEFAULT_LOCAL_MODEL}, not in ${env.cacheDir} and not downloadable here)`;
      throw new UsageError(
        `cannot load the local embedding model ${where}: ${e.message.split('\n')[0]}; use --embed-model-dir DIR (a downloaded copy), --embed ollama:MODEL or --embed openai:MODEL`,
      );
    });
    const embed = async (texts: string[]) => {
      const output = await extractor(texts, { pooling: 'mean', normalize: true });
      return output.tolist() as number[][];
    };
    return Object.assign(embed, { id: options.modelDir ? `local:${basename(resolve(options.modelDir))}` : `local:${DEFAULT_LOCAL_MODEL}` });
  }
  const spec = parseModelSpec(options.spec);
  if (!options.client) throw new Error(`embedding model ${options.spec} needs an LLM client`);
  const client = options.client;
  // A local model's file is resolved (an hf: one downloaded) now, before any request of the run.
  const identity = await client.modelSignature(spec);
  return Object.assign((texts: string[]) => client.embed(spec, texts), { id: signedModelName(options.spec, identity) });
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
