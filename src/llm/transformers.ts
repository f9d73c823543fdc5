import { UsageError } from '../errors.js';

/**
 * transformers.js (local embeddings, CodeBERTScore) is an optional install: its ONNX runtimes weigh about 350 MB and
 * most users never load a local model. The commands that need it say the one line to run.
 */
export const TRANSFORMERS_PACKAGE = '@huggingface/transformers';
/**
 * The install line. onnxruntime-node's install script (pulled in by transformers.js) downloads CUDA libraries on
 * Linux x64, and fails where `nvcc` reports CUDA 13 or there is no network; codegauge runs its models on the CPU,
 * whose runtime ships in the package, so skipping that download loses nothing.
 */
export const TRANSFORMERS_INSTALL = `ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install ${TRANSFORMERS_PACKAGE}@3`;

export async function loadTransformers(purpose: string): Promise<typeof import('@huggingface/transformers')> {
  try {
    return await import('@huggingface/transformers');
  } catch (e) {
    throw transformersLoadError(purpose, e);
  }
}

/** The package's entry file, for a worker thread that loads it itself. */
export function resolveTransformers(purpose: string, resolve: (id: string) => string): string {
  try {
    return resolve(TRANSFORMERS_PACKAGE);
  } catch (e) {
    throw transformersLoadError(purpose, e);
  }
}

/**
 * One line saying what to do: the package is missing, or it is there but does not load (its ONNX runtime missing or
 * broken), which an "install it" message would misdescribe.
 */
export function transformersLoadError(purpose: string, e: unknown): Error {
  const message = e instanceof Error ? e.message : String(e);
  const code = (e as NodeJS.ErrnoException)?.code;
  const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
  if (missing && message.includes(`'${TRANSFORMERS_PACKAGE}'`)) {
    return new UsageError(`${purpose} needs the optional package ${TRANSFORMERS_PACKAGE}; install it with: ${TRANSFORMERS_INSTALL}`);
  }
  const first = message.split('\n')[0].replace(/ imported from .*$/, '');
  return new UsageError(`${purpose}: ${TRANSFORMERS_PACKAGE} is installed but does not load (${first}); reinstall it with: ${TRANSFORMERS_INSTALL}`);
}
