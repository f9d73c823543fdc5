import { spawn } from 'node:child_process';
import { chownSync } from 'node:fs';
import { UsageError } from '../../errors.js';
import { bwrapBaseArgs, workFolderArgs } from './bwrap.js';
import { isRoot, sandboxUid, type SandboxRole } from './identity.js';
import { findExecutable, toolchainRoot } from './paths.js';
import { killUid, treeCpuMs } from './proc.js';
import { DEFAULT_DISK_MB, DEFAULT_OUTPUT_BYTES, STDERR_KEEP, type Limits, type RunRequest, type RunResult, type SandboxMode } from './types.js';

export interface CommandLine {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** A long-lived server's sandbox: no host folder (its jobs work in the sandbox's own /tmp). */
export interface ServerRequest {
  argv: string[];
  limits: Limits;
  slot: number;
  role: SandboxRole;
  /** `process` mode only: the server's private folder on the host (its jobs' folders go there). */
  workDir?: string;
}

const MIB = 1024 * 1024;

/**
 * Runs untrusted programs under `bwrap` or `process` (see types.ts), with limits on CPU time, memory (address space,
 * or the data segment for runtimes that reserve large address ranges such as V8 and the JVM), processes, file size,
 * all bytes written (bwrap) and open files; a wall-clock timeout that kills everything the program started; stdout
 * capped. `pyodide` programs are run by the pyodide pools, not here.
 */
export class Sandbox {
  private readonly extraRoots: string[] = [];
  private readonly bwrap?: string;
  private readonly prlimit: string;

  constructor(readonly mode: SandboxMode) {
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
    const cpu = limits.cpuSeconds ?? Math.max(1, Math.ceil(limits.timeoutMs / 1000) + 1);
    const args = [`--nproc=${limits.processes ?? 64}`, `--fsize=${(limits.fileSizeMb ?? 16) * MIB}`, `--nofile=${limits.openFiles ?? 64}`, '--core=0'];
    if (cpu !== 'unlimited') args.unshift(`--cpu=${cpu}`);
    const kind = limits.memoryKind ?? 'as';
    if (kind !== 'none' && limits.memoryMb > 0) args.push(`--${kind}=${limits.memoryMb * MIB}`);
    return args;
  }

  /** As root: the program drops to the slot's unprivileged uid (no capabilities, no new privileges). */
  private dropPrivileges(slot: number, role: SandboxRole): string[] {
    if (!isRoot()) return [];
    const uid = sandboxUid(slot, role);
    return ['/usr/bin/setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs'];
  }

  private wrap(inner: string[], limits: Limits, slot: number, role: SandboxRole, where: string[], cwd: string, env: Record<string, string>): CommandLine {
    const limited = [this.prlimit, ...this.limitArgs(limits), '--', ...this.dropPrivileges(slot, role), ...inner];
    if (this.mode === 'process') {
      return { file: limited[0], args: limited.slice(1), cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LANG: 'C.UTF-8', TMPDIR: cwd, ...env } };
    }
    const args = [...bwrapBaseArgs(this.extraRoots, limits.diskMb ?? DEFAULT_DISK_MB), ...where];
    for (const [k, v] of Object.entries(env)) args.push('--setenv', k, v);
    return { file: this.bwrap!, args: [...args, ...limited], cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } };
  }

  /** The command line that runs `argv` under this sandbox with `limits`. */
  commandLine(request: RunRequest): CommandLine {
    const where = workFolderArgs(request.workDir, request.readOnlyWork === true, request.limits.diskMb ?? DEFAULT_DISK_MB);
    return this.wrap(request.argv, request.limits, request.slot ?? 0, 'candidate', where, request.workDir, request.env ?? {});
  }

  /**
   * The command line of a long-lived server (fork server, node server) in a slot's sandbox for a role. Its jobs'
   * stdout and stderr files go to a tmpfs of their own (/run/codegauge-io), so that a program that fills /tmp does
   * not lose what it printed.
   */
  serverCommandLine(request: ServerRequest): CommandLine {
    const cwd = request.workDir ?? '/';
    const io = String(2 * (request.limits.fileSizeMb ?? 16) * MIB + 4 * MIB);
    const where = ['--perms', '1777', '--size', io, '--tmpfs', '/run/codegauge-io', '--setenv', 'HOME', '/tmp', '--chdir', '/tmp'];
    return this.wrap(request.argv, request.limits, request.slot, request.role, where, cwd, {});
  }

  /** The uid a slot's programs run as in a role, when this process drops privileges (root); else undefined. */
  uidOf(slot: number, role: SandboxRole = 'candidate'): number | undefined {
    return isRoot() ? sandboxUid(slot, role) : undefined;
  }

  /** Gives the sandbox user the work folder (as root the program runs as another uid). */
  prepare(workDir: string, slot = 0, role: SandboxRole = 'candidate'): void {
    const uid = this.uidOf(slot, role);
    if (uid !== undefined) chownSync(workDir, uid, uid);
  }

  /** After a program or server in `process` mode: everything its uid still runs (root), so nothing outlives it. */
  reap(slot: number, role: SandboxRole = 'candidate'): void {
    const uid = this.uidOf(slot, role);
    if (this.mode === 'process' && uid !== undefined) killUid(uid);
  }

  close(): void {
    // nothing is kept running between programs here (servers belong to their pools)
  }

  run(request: RunRequest): Promise<RunResult> {
    const { file, args, cwd, env } = this.commandLine(request);
    const limits = request.limits;
    const outputCap = limits.outputBytes ?? DEFAULT_OUTPUT_BYTES;
    const slot = request.slot ?? 0;
    const started = performance.now();
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
      const killAll = () => {
        if (child.pid !== undefined) {
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        this.reap(slot);
      };
      const finish = (exitCode: number | null, signal: NodeJS.Signals | null, sandboxError?: string) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        killAll(); // whatever the program left running
        const durationMs = Math.round(performance.now() - started);
        const err = stderr.subarray(Math.max(0, stderr.length - STDERR_KEEP)).toString('utf8');
        resolve({ exitCode, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: err, timedOut, outputExceeded, durationMs, ...(cpuMs !== undefined ? { cpuMs } : {}), sandboxError });
      };
      let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        // what the program had of the CPU: a starved one may be retried (--timeout-retry starved)
        if (child.pid !== undefined) cpuMs = treeCpuMs(child.pid);
        killAll();
        // an orphan holding the pipes open never keeps the verdict waiting past the timeout
        if (exited) finish(exited.code, exited.signal);
        else setTimeout(() => finish(null, 'SIGKILL'), 500);
      }, limits.timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => {
        if (outputExceeded) return;
        stdoutBytes += chunk.length;
        if (stdoutBytes > outputCap) {
          outputExceeded = true;
          killAll();
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
      child.on('error', (e) => finish(null, null, e.message));
      child.on('exit', (code, signal) => {
        exited = { code, signal };
        // what the program left holding the pipes is killed with its group (and its uid, as root); the pipes then
        // close at once, else the verdict is taken after a short drain
        killAll();
        const drain = setTimeout(() => finish(code, signal), 300);
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
