import { UsageError } from '../errors.js';
/** Model specs: `openai:MODEL` (any OpenAI-compatible server) or `ollama:MODEL` (Ollama's native API). */
export interface ModelSpec {
  kind: 'openai' | 'ollama';
  model: string;
}

export class ModelSpecError extends UsageError {
  override name = 'ModelSpecError';
}

export function parseModelSpec(spec: string): ModelSpec {
  const colon = spec.indexOf(':');
  const kind = colon < 0 ? '' : spec.slice(0, colon);
  const model = colon < 0 ? '' : spec.slice(colon + 1);
  if ((kind !== 'openai' && kind !== 'ollama') || model.trim() === '') {
    throw new ModelSpecError(`invalid model "${spec}"; expected openai:MODEL (with --base-url or OPENAI_BASE_URL) or ollama:MODEL, e.g. ollama:qwen2.5-coder:14b`);
  }
  return { kind, model };
}
