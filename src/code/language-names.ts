import { extname } from 'node:path';
import { UsageError } from '../errors.js';

/**
 * The programming languages codegauge parses, their aliases and file extensions, and each one's prebuilt
 * tree-sitter grammar (WASM, loaded by languages.ts). Kept apart from the loading so that naming a language (spec
 * validation, `--lang`, a file name) loads neither web-tree-sitter nor a grammar.
 */
export type LanguageId = 'python' | 'java' | 'javascript' | 'typescript' | 'tsx' | 'c_sharp' | 'c' | 'cpp' | 'go' | 'rust' | 'php' | 'ruby';

export const GRAMMARS: Record<LanguageId, { pkg: string; wasm: string; extensions: string[]; aliases: string[] }> = {
  python: { pkg: 'tree-sitter-python', wasm: 'tree-sitter-python.wasm', extensions: ['.py', '.pyi'], aliases: ['py', 'python3'] },
  java: { pkg: 'tree-sitter-java', wasm: 'tree-sitter-java.wasm', extensions: ['.java'], aliases: [] },
  javascript: { pkg: 'tree-sitter-javascript', wasm: 'tree-sitter-javascript.wasm', extensions: ['.js', '.mjs', '.cjs', '.jsx'], aliases: ['js', 'jsx', 'node'] },
  typescript: { pkg: 'tree-sitter-typescript', wasm: 'tree-sitter-typescript.wasm', extensions: ['.ts', '.mts', '.cts'], aliases: ['ts'] },
  tsx: { pkg: 'tree-sitter-typescript', wasm: 'tree-sitter-tsx.wasm', extensions: ['.tsx'], aliases: [] },
  c_sharp: { pkg: 'tree-sitter-c-sharp', wasm: 'tree-sitter-c_sharp.wasm', extensions: ['.cs'], aliases: ['csharp', 'c#', 'cs'] },
  c: { pkg: 'tree-sitter-c', wasm: 'tree-sitter-c.wasm', extensions: ['.c', '.h'], aliases: [] },
  cpp: { pkg: 'tree-sitter-cpp', wasm: 'tree-sitter-cpp.wasm', extensions: ['.cpp', '.cc', '.cxx', '.hpp', '.hh', '.hxx'], aliases: ['c++', 'cxx'] },
  go: { pkg: 'tree-sitter-go', wasm: 'tree-sitter-go.wasm', extensions: ['.go'], aliases: ['golang'] },
  rust: { pkg: 'tree-sitter-rust', wasm: 'tree-sitter-rust.wasm', extensions: ['.rs'], aliases: ['rs'] },
  php: { pkg: 'tree-sitter-php', wasm: 'tree-sitter-php.wasm', extensions: ['.php'], aliases: [] },
  ruby: { pkg: 'tree-sitter-ruby', wasm: 'tree-sitter-ruby.wasm', extensions: ['.rb'], aliases: ['rb'] },
};

export const LANGUAGES = Object.keys(GRAMMARS) as LanguageId[];

export class UnknownLanguageError extends UsageError {
  override name = 'UnknownLanguageError';
}

/** Resolves a language name, alias or file extension (e.g. `ts`, `c#`, `.rs`). */
export function resolveLanguage(nameOrExtension: string): LanguageId {
  const key = nameOrExtension.trim().toLowerCase();
  for (const [id, g] of Object.entries(GRAMMARS) as [LanguageId, (typeof GRAMMARS)[LanguageId]][]) {
    if (id === key || g.aliases.includes(key) || g.extensions.includes(key) || g.extensions.includes(`.${key}`)) return id;
  }
  throw new UnknownLanguageError(`unknown language "${nameOrExtension}"; supported: ${LANGUAGES.join(', ')}`);
}

/** The language of a file from its extension, or null. */
export function languageOfFile(path: string): LanguageId | null {
  const ext = extname(path).toLowerCase();
  for (const [id, g] of Object.entries(GRAMMARS) as [LanguageId, (typeof GRAMMARS)[LanguageId]][]) if (g.extensions.includes(ext)) return id;
  return null;
}
