import { UsageError } from '../../errors.js';
import { bwrapAvailable } from './bwrap.js';
import { isRoot } from './identity.js';
import { findExecutable } from './paths.js';
import { pyodidePackage } from './pyodide/package.js';
import type { SandboxMode } from './types.js';

let warnedProcess = false;

/** `auto` = bwrap where it works, else an error naming what to install (process mode must be chosen explicitly). */
export function resolveSandboxMode(requested: 'auto' | SandboxMode, warn: (message: string) => void = (m) => process.stderr.write(m)): SandboxMode {
  if (requested === 'pyodide') {
    pyodidePackage(); // not installed: one line naming the npm install to run
    return 'pyodide';
  }
  if (requested === 'bwrap' || requested === 'auto') {
    if (bwrapAvailable()) return 'bwrap';
    if (requested === 'bwrap' || process.platform === 'linux') {
      throw new UsageError(
        process.platform === 'linux'
          ? '--sandbox bwrap: bubblewrap is not installed or cannot create namespaces here; install it (apt-get install bubblewrap) or run with --sandbox process (no file-system or network isolation)'
          : `--sandbox ${requested}: bubblewrap needs Linux; run with --sandbox process (no file-system or network isolation)`,
      );
    }
  }
  if (!warnedProcess) {
    warnedProcess = true;
    warn(
      isRoot()
        ? 'codegauge: --sandbox process: programs run as an unprivileged uid of their own, with resource limits but WITHOUT file-system or network isolation\n'
        : "codegauge: --sandbox process: programs run as YOUR user, with resource limits but WITHOUT file-system or network isolation; they can read your files and environment and signal your processes (run as root to give them a uid of their own, or use bwrap)\n",
    );
  }
  if (!findExecutable('prlimit')) throw new UsageError('--sandbox process needs prlimit (util-linux) for the resource limits');
  return 'process';
}
