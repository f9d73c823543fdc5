/**
 * What a sandbox is asked to run and what it reports. Three modes:
 * - `bwrap`: bubblewrap (own mount, pid, network, IPC and UTS namespaces; read-only system folders; sized tmpfs
 *   for /tmp, /dev/shm and the program's folder; an unprivileged uid of this process's own as root).
 * - `process`: the same resource limits (prlimit) on plain child processes; as root, an unprivileged uid of this
 *   process's own, so that programs cannot read codegauge's environment, signal it or escape the process limit.
 * - `pyodide`: Python in WebAssembly inside restricted child node processes (pyodide/), for hosts without bwrap.
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
  /** All the program may write (its /tmp, /dev/shm and folder are tmpfs of this size each), MiB. */
  diskMb?: number;
  openFiles?: number;
  /** CPU seconds (default: the timeout's seconds + 1). */
  cpuSeconds?: number | 'unlimited';
  /** stdout kept; a program writing more is stopped (`output_limit`). */
  outputBytes?: number;
}

export const DEFAULT_OUTPUT_BYTES = 1024 * 1024;
export const DEFAULT_DISK_MB = 64;
export const STDERR_KEEP = 64 * 1024;

export interface RunRequest {
  /** Program and arguments; relative file names are resolved in the work folder. */
  argv: string[];
  /** The work folder on the host (from `makeWorkDir`), writable in the sandbox (a compile step). */
  workDir: string;
  /**
   * Run the program on a copy-free view of the work folder: its files read-only, in a fresh tmpfs of `diskMb` that
   * the program may write to (bwrap), so that what a program writes is bounded and never reaches the host.
   */
  readOnlyWork?: boolean;
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
   * measure it. Absent when unknown. A timeout whose program had less than half a core is retried under
   * `--timeout-retry starved`.
   */
  cpuMs?: number;
  /** The sandbox itself could not start the program. */
  sandboxError?: string;
}
