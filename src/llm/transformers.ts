import { UsageError } from '../errors.js';

/**
 * transformers.js (local embeddings, CodeBERTScore) is an optional install: its ONNX runtimes weigh about 350 MB and
 * most users never load a local model. The commands that need it say the one line to run.
 */
export const TRANSFORMERS_PACKAGE = '@huggingface/transformers';
const INSTALL_HINT = `npm install ${TRANSFORMERS_PACKAGE}@3`;

export async function loadTransformers(purpose: string): Promise<typeof import('@huggingface/transformers')> {
  try {
    return await import('@huggingface/transformers');
  } catch (e) {
    if (isMissingModule(e)) throw new UsageError(`${purpose} needs the optional package ${TRANSFORMERS_PACKAGE}: ${INSTALL_HINT}`);
    throw e;
  }
}

/** The package's entry file, for a worker thread that loads it itself. */
export function resolveTransformers(purpose: string, resolve: (id: string) => string): string {
  try {
    return resolve(TRANSFORMERS_PACKAGE);
  } catch (e) {
    if (isMissingModule(e)) throw new UsageError(`${purpose} needs the optional package ${TRANSFORMERS_PACKAGE}: ${INSTALL_HINT}`);
    throw e;
  }
}

function isMissingModule(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}
