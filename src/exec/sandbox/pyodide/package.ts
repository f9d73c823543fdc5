import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { UsageError } from '../../../errors.js';

/**
 * `--sandbox pyodide`: Python programs run in CPython compiled to WebAssembly (the optional npm package pyodide),
 * for hosts without bubblewrap (macOS, Windows). Standard-library programs only; the signature says so.
 *
 * One child `node` process per worker slot holds one interpreter. It starts with
 * `--disallow-code-generation-from-strings` and the permission model: it may read the pyodide package and its own
 * script, and nothing else; it may not write files, start processes or workers, or load addons. Node 20's permission
 * model has no network switch, so the child refuses sockets itself and drops fetch, WebSocket and `process` from its
 * globals. Inside it, while a program runs, the interpreter's calls out of WebAssembly pass a gate: the FFI (`import
 * js`, `pyodide_js`, JsProxy), sockets, dlopen, libffi and system() are refused however Python reaches them, and calls
 * that change state a later program would see (file writes, the working folder, descriptors, timers, signals) mark
 * the interpreter as not reusable. See pyodide-child.ts.
 *
 * Reuse (loading the interpreter takes seconds): each program runs in a fresh `__main__` namespace with fresh
 * standard streams. Afterwards its objects are collected, every module namespace is put back as it was (rebinding
 * `math.sqrt` or `builtins.len` is undone), and what lies within three steps of every module (class attributes,
 * module-level containers, singletons' attributes), the environment, signal handlers, ABC registries and exit
 * functions are compared with the baseline; any difference, an audit event that grants reach into the interpreter
 * (frames, gc.get_objects, tracing, new code or defaults for a library function, ctypes), os._exit, a refused call,
 * a full memory or a timeout means the child is replaced. Limits: the interpreter's linear memory may not grow past --memory (Python's
 * MemoryError), the child's V8 heap is capped, stdout is capped (the program is stopped at its next write), and a
 * program past its time has its whole child killed.
 */
export const PYODIDE_PACKAGE = 'pyodide';
const INSTALL_HINT = 'npm install pyodide@0.28';
const SUPPORTED = /^0\.28\./;

export interface PyodidePackage {
  /** The package folder, with a trailing separator. */
  dir: string;
  version: string;
  /** CPython's version inside it. */
  python: string;
}

let found: PyodidePackage | undefined;

/** The installed pyodide package, or a usage error naming the one command to run. */
export function pyodidePackage(resolve?: (id: string) => string): PyodidePackage {
  if (found && !resolve) return found;
  let manifest: string;
  try {
    manifest = (resolve ?? createRequire(import.meta.url).resolve)(`${PYODIDE_PACKAGE}/package.json`);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND' || code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
      throw new UsageError(`--sandbox pyodide needs the optional package ${PYODIDE_PACKAGE}: ${INSTALL_HINT}`);
    }
    throw e;
  }
  const dir = realpathSync(dirname(manifest));
  const version = String((JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version);
  if (!SUPPORTED.test(version)) throw new UsageError(`--sandbox pyodide needs ${PYODIDE_PACKAGE} 0.28 (found ${version}): ${INSTALL_HINT}`);
  let python = 'unknown';
  try {
    python = (JSON.parse(readFileSync(join(dir, 'pyodide-lock.json'), 'utf8')) as { info?: { python?: string } }).info?.python ?? python;
  } catch {
    // an unusual install: the version stays unknown in the signature
  }
  const pkg = { dir: dir + sep, version, python };
  if (!resolve) found = pkg;
  return pkg;
}

