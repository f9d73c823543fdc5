import type { ExecLanguage } from '../benchmarks/problems.js';
import type { SandboxMode } from '../sandbox/types.js';
import { cppRunner } from './cpp.js';
import { csharpRunner } from './csharp.js';
import { goRunner } from './go.js';
import { javaRunner } from './java.js';
import { javascriptRunner, typescriptRunner } from './javascript.js';
import type { Runner } from './kit.js';
import { phpRunner } from './php.js';
import { pyodideRunnerFor } from './pyodide.js';
import { pythonRunner } from './python.js';
import { rubyRunner } from './ruby.js';
import { rustRunner } from './rust.js';

/** The runners by language: a new language is a file of its own here and one line below (see ARCHITECTURE.md). */
const FACTORIES: Record<ExecLanguage, () => Runner> = {
  python: pythonRunner,
  javascript: javascriptRunner,
  typescript: typescriptRunner,
  java: javaRunner,
  cpp: cppRunner,
  rust: rustRunner,
  php: phpRunner,
  ruby: rubyRunner,
  go: goRunner,
  csharp: csharpRunner,
};

const cache = new Map<ExecLanguage, Runner>();

/** The runner of a language (its toolchain probed once per process). */
export function runnerFor(language: ExecLanguage): Runner {
  let r = cache.get(language);
  if (!r) {
    r = FACTORIES[language]();
    cache.set(language, r);
  }
  return r;
}

/** The runner of a language in a sandbox mode: pyodide runs Python in WebAssembly (no python3 needed) and nothing else. */
export function runnerIn(sandbox: SandboxMode, language: ExecLanguage): Runner {
  return sandbox === 'pyodide' ? pyodideRunnerFor(language) : runnerFor(language);
}
