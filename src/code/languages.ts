import { UsageError } from '../errors.js';
import { fileURLToPath } from 'node:url';
import { extname } from 'node:path';
import { Language, Parser } from 'web-tree-sitter';

/**
 * The programming languages codegauge parses, each with a prebuilt tree-sitter grammar (WASM) from its npm
 * package. Grammars load lazily, once per process. Versions are pinned in package.json to the 0.23 line, which
 * is what the Python `codebleu` package's tree-sitter bindings (< 0.24) load.
 */
export type LanguageId = 'python' | 'java' | 'javascript' | 'typescript' | 'tsx' | 'c_sharp' | 'c' | 'cpp' | 'go' | 'rust' | 'php' | 'ruby';

const GRAMMARS: Record<LanguageId, { pkg: string; wasm: string; extensions: string[]; aliases: string[] }> = {
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

let initialised: Promise<void> | null = null;

/**
 * The Emscripten module object of web-tree-sitter: `Parser.init(options)` builds the module on the object it is
 * given, so after init it holds the WASM exports (`_ts_*`) and the current `HEAP32`. `syntax-tree.ts` uses them to
 * walk trees without the per-call marshalling of the JavaScript cursor API, and checks them first (see there).
 */
const treeSitterModule: Record<string, unknown> = {};

/** The languages loaded so far, in loading order. */
export function loadedLanguages(): LanguageId[] {
  return [...loaded.keys()];
}

/** The web-tree-sitter module object once a grammar has been loaded (null before). */
export function treeSitterExports(): Record<string, unknown> | null {
  return loaded.size > 0 ? treeSitterModule : null;
}
const loading = new Map<LanguageId, Promise<Language>>();
const loaded = new Map<LanguageId, Language>();

/** Loads a grammar (once); later calls share the same promise. */
export function loadLanguage(id: LanguageId): Promise<Language> {
  let p = loading.get(id);
  if (!p) {
    initialised ??= Parser.init(treeSitterModule);
    const g = GRAMMARS[id];
    // Grammars ship with codegauge (wasm/grammars, copied from the packages named in GRAMMARS; see its PROVENANCE).
    const path = fileURLToPath(new URL(`../../wasm/grammars/${g.wasm}`, import.meta.url));
    p = initialised.then(() => Language.load(path)).then((lang) => {
      loaded.set(id, lang);
      return lang;
    });
    loading.set(id, p);
  }
  return p;
}

const parsers = new Map<LanguageId, Parser>();

/** A parser for an already loaded language (call `loadLanguage` first). */
export function parserFor(id: LanguageId): Parser {
  let parser = parsers.get(id);
  if (!parser) {
    const lang = loaded.get(id);
    if (!lang) throw new UsageError(`language ${id} is not loaded yet; await loadLanguage('${id}') first`);
    parser = new Parser();
    parser.setLanguage(lang);
    parsers.set(id, parser);
  }
  return parser;
}
