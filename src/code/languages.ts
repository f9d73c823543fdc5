import { UsageError } from '../errors.js';
import { fileURLToPath } from 'node:url';
import type { Language, Parser } from 'web-tree-sitter';
import { GRAMMARS, type LanguageId } from './language-names.js';

/**
 * Loading the tree-sitter grammars of the languages codegauge parses (prebuilt WASM from each grammar's npm
 * package). Grammars load lazily, once per process. Versions are pinned in package.json to the 0.23 line, which
 * is what the Python `codebleu` package's tree-sitter bindings (< 0.24) load. The names, aliases and extensions are
 * in language-names.ts, re-exported here; web-tree-sitter itself is imported by the first `loadLanguage`, so that a
 * module that only names languages (the CLI's `--lang`, file names) does not load it.
 */
export { LANGUAGES, UnknownLanguageError, languageOfFile, resolveLanguage, type LanguageId } from './language-names.js';

/** web-tree-sitter, once the first `loadLanguage` has imported it. */
let treeSitter: typeof import('web-tree-sitter') | null = null;

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
    initialised ??= import('web-tree-sitter').then((module) => {
      treeSitter = module;
      return module.Parser.init(treeSitterModule);
    });
    const g = GRAMMARS[id];
    // Grammars ship with codegauge (wasm/grammars, copied from the packages named in GRAMMARS; see its PROVENANCE).
    const path = fileURLToPath(new URL(`../../wasm/grammars/${g.wasm}`, import.meta.url));
    p = initialised.then(() => treeSitter!.Language.load(path)).then((lang) => {
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
    parser = new treeSitter!.Parser();
    parser.setLanguage(lang);
    parsers.set(id, parser);
  }
  return parser;
}
