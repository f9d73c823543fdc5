import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, lstatSync, mkdtempSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from '../errors.js';
import { PyodidePool, pyodidePackage } from './pyodide.js';

/**
 * Runs untrusted programs. Two modes:
 * - `bwrap`: bubblewrap with only the system folders and the toolchains mounted, read-only; a private writable work
 *   folder (mounted at /sandbox), a private /tmp, new pid, network, ipc and uts namespaces, `--die-with-parent`, no
 *   capabilities. As root, the program runs as an unprivileged uid of its own (one per worker slot, so the process
 *   limit counts only that sandbox's processes); otherwise bwrap makes a user namespace.
 * - `process`: the same resource limits (prlimit) on a plain child process group, with no file-system or network
 *   isolation.
 * Both: limits on CPU time, memory (address space, or the data segment for runtimes that reserve large address
 * ranges such as V8 and the JVM), processes, file size and open files; a wall-clock timeout that kills the whole
 * process tree; stdout capped (a program printing without end is killed).
 * A third mode, `pyodide`, runs Python programs in WebAssembly inside restricted child node processes, with no host
 * access at all (pyodide.ts); it is chosen explicitly, never by `auto`.
 */
export type SandboxMode = 'bwrap' | 'process' | 'pyodide';

export interface Limits {
  /** Wall-clock limit. */
  timeoutMs: number;
  /** Memory limit in MiB. */
  memoryMb: number;
  /** Which rlimit bounds memory: `as` (address space) or `data` (for V8 and the JVM, which reserve address space). */
  memoryKind?: 'as' | 'data' | 'none';
  /** Processes and threads of the sandbox's user. */
  processes?: number;
  /** Largest file the program may write, MiB. */
  fileSizeMb?: number;
  openFiles?: number;
  /** CPU seconds (default: the timeout's seconds + 1). */
  cpuSeconds?: number | 'unlimited';
  /** stdout kept; a program writing more is killed. */
  outputBytes?: number;
}

export interface RunRequest {
  /** Program and arguments; relative file names are resolved in the work folder. */
  argv: string[];
  /** The work folder on the host (from `makeWorkDir`). */
  workDir: string;
  stdin?: string;
  limits: Limits;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Worker slot (0-based): picks the sandbox uid when running as root. */
  slot?: number;
}

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  /** The tail of stderr (at most 64 KiB). */
  stderr: string;
  timedOut: boolean;
  outputExceeded: boolean;
  durationMs: number;
  /** The sandbox itself could not start the program. */
  sandboxError?: string;
}

const STDERR_KEEP = 64 * 1024;
const SANDBOX_ROOT_UID = 61000;
/** Folders of the host visible (read-only) in the bwrap sandbox, when they exist. */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
const ETC_ENTRIES = ['alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'java-17-openjdk', 'java-21-openjdk', 'gcc', 'os-release'];

let warnedProcess = false;

/** Whether bubblewrap is installed and can make a sandbox here. */
export function bwrapAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  const bwrap = findExecutable('bwrap');
  if (!bwrap) return false;
  const probe = spawnSync(bwrap, [...baseBwrapArgs([]), '/usr/bin/true'], { timeout: 10_000, stdio: 'ignore' });
  return probe.status === 0;
}

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
    warn(`codegauge: --sandbox process: programs run with resource limits but WITHOUT file-system or network isolation${isRoot() ? ' (and, as root, without a limit on processes)' : ''}\n`);
  }
  if (!findExecutable('prlimit')) throw new UsageError('--sandbox process needs prlimit (util-linux) for the resource limits');
  return 'process';
}

export function findExecutable(name: string): string | undefined {
  if (name.includes('/')) return existsSync(name) ? name : undefined;
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    if (!dir) continue;
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** A fresh private work folder on the host. */
export function makeWorkDir(): string {
  return mkdtempSync(join(tmpdir(), 'codegauge-exec-'));
}

export function removeWorkDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function baseBwrapArgs(extraRoots: string[]): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else args.push('--ro-bind', dir, dir);
  }
  args.push('--perms', '0755', '--dir', '/etc');
  for (const entry of ETC_ENTRIES) {
    const path = `/etc/${entry}`;
    if (existsSync(path)) args.push('--ro-bind', path, path);
  }
  // Toolchains outside /usr (pyenv, nvm, sdkman): their folder, with world-traversable parents made by bwrap.
  const made = new Set<string>();
  for (const root of extraRoots) {
    const parents: string[] = [];
    for (let p = dirname(root); p !== '/' && p !== '.'; p = dirname(p)) parents.unshift(p);
    for (const p of parents) {
      if (made.has(p) || SYSTEM_DIRS.includes(p)) continue;
      made.add(p);
      args.push('--perms', '0755', '--dir', p);
    }
    args.push('--ro-bind', root, root);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp', '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!isRoot()) args.push('--unshare-user', '--cap-drop', 'ALL');
  args.push('--die-with-parent', '--new-session', '--clearenv', '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin', '--setenv', 'HOME', '/sandbox', '--setenv', 'LANG', 'C.UTF-8');
  return args;
}

/** The folder a toolchain binary lives in, when it must be mounted (outside the system folders). */
export function toolchainRoot(binary: string): string | undefined {
  const real = realpathSync(binary);
  if (SYSTEM_DIRS.some((d) => real.startsWith(d + '/'))) return undefined;
  // .../prefix/bin/tool -> .../prefix
  return dirname(dirname(real));
}

export class Sandbox {
  private readonly extraRoots: string[] = [];
  private readonly bwrap?: string;
  private readonly prlimit: string;
  private readonly pyodide?: PyodidePool;

  constructor(readonly mode: SandboxMode) {
    if (mode === 'pyodide') this.pyodide = new PyodidePool();
    if (mode === 'bwrap') {
      this.bwrap = findExecutable('bwrap');
      if (!this.bwrap) throw new UsageError('--sandbox bwrap: bubblewrap is not installed (apt-get install bubblewrap)');
    }
    this.prlimit = findExecutable('prlimit') ?? '/usr/bin/prlimit';
  }

  /** Makes a toolchain installed outside the system folders visible in the sandbox. */
  mount(binary: string): void {
    const root = toolchainRoot(binary);
    if (root && !this.extraRoots.includes(root)) this.extraRoots.push(root);
  }

  private limitArgs(limits: Limits): string[] {
    const mib = 1024 * 1024;
    const cpu = limits.cpuSeconds ?? Math.max(1, Math.ceil(limits.timeoutMs / 1000) + 1);
    const args = [
      `--cpu=${cpu}`,
      `--nproc=${limits.processes ?? 64}`,
      `--fsize=${(limits.fileSizeMb ?? 16) * mib}`,
      `--nofile=${limits.openFiles ?? 64}`,
      '--core=0',
    ];
    const kind = limits.memoryKind ?? 'as';
    if (kind !== 'none') args.push(`--${kind}=${limits.memoryMb * mib}`);
    return args;
  }

  /** The command line that runs `argv` under this sandbox with `limits`. */
  commandLine(request: RunRequest): { file: string; args: string[]; cwd: string } {
    const limited = [this.prlimit, ...this.limitArgs(request.limits), '--', ...request.argv];
    if (this.mode === 'process') return { file: limited[0], args: limited.slice(1), cwd: request.workDir };
    const args = [...baseBwrapArgs(this.extraRoots), '--bind', request.workDir, '/sandbox', '--chdir', '/sandbox'];
    for (const [k, v] of Object.entries(request.env ?? {})) args.push('--setenv', k, v);
    let inner = limited;
    if (isRoot()) {
      const uid = SANDBOX_ROOT_UID + (request.slot ?? 0);
      inner = ['/usr/bin/setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', ...limited];
    }
    return { file: this.bwrap!, args: [...args, ...inner], cwd: request.workDir };
  }

  /** Stops what the sandbox keeps running between programs (pyodide's interpreters). */
  close(): void {
    this.pyodide?.close();
  }

  /** Gives the sandbox user the work folder (as root the program runs as another uid). */
  prepare(workDir: string, slot = 0): void {
    if (this.mode === 'bwrap' && isRoot()) {
      const uid = SANDBOX_ROOT_UID + slot;
      chownSync(workDir, uid, uid);
    }
  }

  run(request: RunRequest): Promise<RunResult> {
    if (this.pyodide) return this.pyodide.run(request);
    const { file, args, cwd } = this.commandLine(request);
    const limits = request.limits;
    const outputCap = limits.outputBytes ?? 1024 * 1024;
    const started = performance.now();
    const env: Record<string, string> =
      this.mode === 'bwrap' ? { PATH: process.env.PATH ?? '/usr/bin:/bin' } : { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LANG: 'C.UTF-8', ...request.env };
    return new Promise((resolve) => {
      let child;
      try {
        child = spawn(file, args, { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      } catch (e) {
        resolve({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, outputExceeded: false, durationMs: 0, sandboxError: (e as Error).message });
        return;
      }
      const stdout: Buffer[] = [];
      let stdoutBytes = 0;
      let stderr = Buffer.alloc(0);
      let timedOut = false;
      let outputExceeded = false;
      let finished = false;
      const killTree = () => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killTree();
      }, limits.timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => {
        if (outputExceeded) return;
        stdoutBytes += chunk.length;
        if (stdoutBytes > outputCap) {
          outputExceeded = true;
          killTree();
          return;
        }
        stdout.push(chunk);
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr = Buffer.concat([stderr, chunk]);
        if (stderr.length > STDERR_KEEP * 2) stderr = stderr.subarray(stderr.length - STDERR_KEEP);
      });
      child.stdin.on('error', () => undefined); // the program may exit without reading its input
      child.stdin.end(request.stdin ?? '');
      const finish = (exitCode: number | null, signal: NodeJS.Signals | null, sandboxError?: string) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        killTree(); // whatever the program left running in its process group
        const durationMs = Math.round(performance.now() - started);
        const err = stderr.subarray(Math.max(0, stderr.length - STDERR_KEEP)).toString('utf8');
        resolve({ exitCode, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: err, timedOut, outputExceeded, durationMs, sandboxError });
      };
      child.on('error', (e) => finish(null, null, e.message));
      // 'close' waits for the pipes: a leftover child holding them open is killed with the group on 'exit'.
      child.on('exit', (code, signal) => {
        if (this.mode === 'process') killTree();
        // give the pipes a moment to drain, then settle even if something still holds them
        const drain = setTimeout(() => finish(code, signal), 2000);
        child.on('close', () => {
          clearTimeout(drain);
          finish(code, signal);
        });
      });
    });
  }
}

/** bwrap's own failure (before the program ran): exit code 1 and a `bwrap:` message. */
export function isBwrapFailure(result: RunResult): boolean {
  return result.exitCode === 1 && /^bwrap: /m.test(result.stderr) && !result.stdout;
}
