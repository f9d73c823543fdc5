import { UsageError } from '../errors.js';
/**
 * Model specs:
 * - `openai:MODEL`: any OpenAI-compatible server; `ollama:MODEL`: Ollama's native API;
 * - `llama:PATH.gguf`: a local GGUF file run in this process by llama.cpp (node-llama-cpp);
 * - `hf:OWNER/REPO[:FILE.gguf]`: a GGUF file of a Hugging Face repository, downloaded once into the model cache and
 *   then run as `llama:` runs it.
 */
export type ModelKind = 'openai' | 'ollama' | 'llama' | 'hf';

export interface ModelSpec {
  kind: ModelKind;
  /** The server's model name, the GGUF path (`llama`), or `OWNER/REPO[:FILE.gguf]` (`hf`). */
  model: string;
}

/** The kinds served by a server, and the ones this process runs itself. */
export type ServerKind = 'openai' | 'ollama';
export type LocalKind = 'llama' | 'hf';

export function isLocalSpec(spec: ModelSpec): spec is ModelSpec & { kind: LocalKind } {
  return spec.kind === 'llama' || spec.kind === 'hf';
}

export class ModelSpecError extends UsageError {
  override name = 'ModelSpecError';
}

const KINDS: readonly string[] = ['openai', 'ollama', 'llama', 'hf'];
const HF_REPO = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;

/** `OWNER/REPO[:FILE.gguf]` as its parts; the FILE may sit in a folder of the repository. */
export function parseHfModel(model: string): { repo: string; file?: string } {
  const colon = model.indexOf(':');
  const repo = colon < 0 ? model : model.slice(0, colon);
  const file = colon < 0 ? undefined : model.slice(colon + 1);
  if (!HF_REPO.test(repo) || repo.includes('..')) throw new ModelSpecError(`invalid model "hf:${model}": expected hf:OWNER/REPO or hf:OWNER/REPO:FILE.gguf, e.g. hf:Qwen/Qwen2.5-Coder-7B-Instruct-GGUF:qwen2.5-coder-7b-instruct-q4_k_m.gguf`);
  if (file !== undefined && (!/\.gguf$/i.test(file) || file.startsWith('/') || file.split('/').includes('..'))) {
    throw new ModelSpecError(`invalid model "hf:${model}": the file after the repository must be a .gguf file of it, e.g. hf:${repo}:model-q4_k_m.gguf`);
  }
  return { repo, file };
}

export function parseModelSpec(spec: string): ModelSpec {
  const colon = spec.indexOf(':');
  const kind = colon < 0 ? '' : spec.slice(0, colon);
  const model = colon < 0 ? '' : spec.slice(colon + 1);
  if (!KINDS.includes(kind) || model.trim() === '') {
    throw new ModelSpecError(
      `invalid model "${spec}"; expected openai:MODEL (with --base-url or OPENAI_BASE_URL), ollama:MODEL, llama:PATH.gguf (a local GGUF file) or hf:OWNER/REPO[:FILE.gguf], e.g. ollama:qwen2.5-coder:14b`,
    );
  }
  if (kind === 'hf') parseHfModel(model);
  return { kind: kind as ModelKind, model };
}
