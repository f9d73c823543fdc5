import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rm, rmSync } from 'node:fs';
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
  /**
   * CPU time (user + system, ms) the program used, its processes and threads together, where the runner could
   * measure it: cold runs when they time out (read from /proc just before the kill), the warm runners always.
   * Absent when unknown. A timeout whose program had less than half a core is retried under `--timeout-retry starved`.
   */
  cpuMs?: number;
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

let trash: string | undefined;
let trashed = 0;

/**
 * Removes a used work folder without making the event loop wait: on some file systems removing a folder waits
 * milliseconds for the disk (ext4 mounted with `discard`: ~3 ms a folder), during which no other worker's verdict
 * could be taken in. The folder is first moved (atomic and cheap) into a private folder of this process that no
 * sandbox shows, so nothing that might still run in a sandbox can reach it while it is removed in the background.
 * Call it only once nothing runs in the folder's sandbox any more.
 */
export function discardWorkDir(dir: string): void {
  try {
    if (!trash) {
      trash = mkdtempSync(join(tmpdir(), 'codegauge-trash-'));
      const made = trash;
      process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    }
    const target = join(trash, String(trashed++));
    renameSync(dir, target);
    rm(target, { recursive: true, force: true }, () => undefined);
  } catch {
    // another file system (or no trash): the plain way
    removeWorkDir(dir);
  }
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
      let cpuMs: number | undefined;
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
        // what the program had of the CPU: a starved one may be retried (--timeout-retry starved)
        if (child.pid !== undefined) cpuMs = treeCpuMs(child.pid);
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
        resolve({ exitCode, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: err, timedOut, outputExceeded, durationMs, ...(cpuMs !== undefined ? { cpuMs } : {}), sandboxError });
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

// ---------------------------------------------------------------- CPU time of process trees, from /proc

/** /proc's clock ticks (USER_HZ, 100 on every Linux architecture node runs on). */
const TICK_MS = 10;

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  /** Start time after boot, in ticks. */
  start: number;
  /** utime + stime + cutime + cstime (its own CPU and that of the children it has reaped), in ticks. */
  ticks: number;
}

function parseStat(pid: number, text: string): ProcEntry | undefined {
  // the command name (field 2) may hold spaces and parentheses: the fields after it start at the last ')'
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = text.slice(close + 2).split(' ');
  // f[0] is field 3 (state): ppid 4, pgrp 5, utime 14, stime 15, cutime 16, cstime 17, starttime 22
  const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  const entry = { pid, ppid: Number(f[1]), pgrp: Number(f[2]), start: Number(f[19]), ticks };
  return Number.isFinite(ticks) && Number.isFinite(entry.ppid) ? entry : undefined;
}

/** Every process of the host (as this process sees /proc), or undefined where there is no /proc. */
function processTable(): ProcEntry[] | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const table: ProcEntry[] = [];
  for (const name of names) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    try {
      const entry = parseStat(Number(name), readFileSync(`/proc/${name}/stat`, 'latin1'));
      if (entry) table.push(entry);
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** The CPU time of one process (its threads and reaped children included), ms; undefined when it cannot be read. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const entry = parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'latin1'));
    return entry ? entry.ticks * TICK_MS : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The CPU time (ms) of a process tree: `root`, everything below it, and what is left in its process group (an orphan
 * of `process` mode), each with the children it has reaped. `skip` leaves out processes (a warm runner's server)
 * without leaving out what runs below them. Undefined when /proc cannot be read or `root` is gone.
 */
export function treeCpuMs(root: number, skip?: (entry: ProcEntry, children: Map<number, ProcEntry[]>) => boolean): number | undefined {
  const table = processTable();
  if (!table) return undefined;
  const children = new Map<number, ProcEntry[]>();
  let top: ProcEntry | undefined;
  for (const e of table) {
    if (e.pid === root) top = e;
    const list = children.get(e.ppid);
    if (list) list.push(e);
    else children.set(e.ppid, [e]);
  }
  if (!top) return undefined;
  const seen = new Set<number>();
  let ticks = 0;
  const visit = (e: ProcEntry) => {
    if (seen.has(e.pid)) return;
    seen.add(e.pid);
    if (!skip?.(e, children)) ticks += e.ticks;
    for (const c of children.get(e.pid) ?? []) visit(c);
  };
  visit(top);
  for (const e of table) if (e.pgrp === root) visit(e);
  return ticks * TICK_MS;
}

/**
 * The CPU time (ms) of what a warm server inside a bwrap sandbox started: everything in the sandbox but bwrap's two
 * processes (the outer one, `bwrapPid`, and the namespace's init) and the server (init's first child), whose own
 * counters hold earlier programs' time. Processes reaped by init meanwhile are not counted (an underestimate: such a
 * program is more often retried, never less).
 */
export function warmProgramCpuMs(bwrapPid: number): number | undefined {
  let init: number | undefined;
  let server: number | undefined;
  return treeCpuMs(bwrapPid, (e, children) => {
    if (e.pid === bwrapPid) {
      init = children.get(e.pid)?.[0]?.pid;
      const servers = init === undefined ? [] : [...(children.get(init) ?? [])].sort((a, b) => a.start - b.start || a.pid - b.pid);
      server = servers[0]?.pid;
      return true;
    }
    return e.pid === init || e.pid === server;
  });
}

/** bwrap's own failure (before the program ran): exit code 1 and a `bwrap:` message. */
export function isBwrapFailure(result: RunResult): boolean {
  return result.exitCode === 1 && /^bwrap: /m.test(result.stderr) && !result.stdout;
}
