import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { serverJobsCpuMs, treeCpuMs } from './proc.js';
import type { CommandLine, Sandbox } from './sandbox.js';
import type { SandboxRole } from './identity.js';

/**
 * A long-lived server inside one slot's sandbox (the Python fork server, the node servers) that runs one job at a
 * time. Jobs and replies are JSON lines on fd 3 (control); a job's data (the calls between a candidate and the
 * tests' harness) are JSON lines on fd 4, relayed by the host. Neither is the program's stdio. A server that dies,
 * reports itself changed (`dirty`) or does not answer in time is replaced by its pool.
 */
export interface ServerReply {
  id?: number;
  exit?: number | null;
  signal?: number | string | null;
  ms?: number;
  cpu?: number;
  timed_out?: boolean;
  stdout?: string;
  stdout_size?: number;
  stderr?: string;
  result?: Record<string, unknown> | null;
  /** The server is no longer what it was (files it could not remove, its limits or priority changed). */
  dirty?: boolean;
  /** The server stopped, or could not run the job. */
  lost?: string;
  /** The host killed the server: the job ran past its time and the server did not stop it. */
  killed?: boolean;
  /** CPU time of the job's processes measured from /proc when the host had to kill the server, ms. */
  killed_cpu?: number;
}

/** How long past its timeout a job may take to be reported before the host kills the whole sandbox. */
export const KILL_GRACE_MS = 1500;
/** The longest data line relayed (a candidate's reply): more is a flood, and the candidate is stopped. */
export const DATA_LINE_CAP = 16 * 1024 * 1024;

export class JobServer {
  private readonly child: ChildProcess;
  private readonly control: Readable & Writable;
  private readonly data: Readable & Writable;
  private controlBuffer = '';
  private dataChunks: Buffer[] = [];
  private dataBytes = 0;
  private pending?: (reply: ServerReply) => void;
  private serverErr = '';
  private nextId = 0;
  /** Called with each complete data line while a job runs. */
  onData?: (line: Buffer) => void;
  /** Called when a data line exceeds DATA_LINE_CAP. */
  onFlood?: () => void;
  readonly ready: Promise<string | undefined>;
  dead = false;
  jobs = 0;
  /** Run once when the server is killed (its private folder in process mode). */
  dispose?: () => void;

  private readonly graceMs: number;
  private cpuAtStart?: number;

  constructor(
    readonly label: string,
    command: CommandLine,
    readonly inNamespace: boolean,
    options: { readyTimeoutMs?: number; graceMs?: number } = {},
  ) {
    this.graceMs = options.graceMs ?? KILL_GRACE_MS;
    this.child = spawn(command.file, command.args, { cwd: command.cwd, env: command.env, detached: true, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    this.control = this.child.stdio[3] as Readable & Writable;
    this.data = this.child.stdio[4] as Readable & Writable;
    let readyResolve: (why: string | undefined) => void = () => undefined;
    this.ready = new Promise((resolve) => (readyResolve = resolve));
    let started = false;
    if (options.readyTimeoutMs) {
      const timer = setTimeout(() => {
        if (!started) this.lose(`the ${label} did not start within ${options.readyTimeoutMs! / 1000} s`);
      }, options.readyTimeoutMs);
      timer.unref();
    }
    this.control.setEncoding('utf8');
    this.control.on('data', (chunk: string) => {
      this.controlBuffer += chunk;
      let nl: number;
      while ((nl = this.controlBuffer.indexOf('\n')) >= 0) {
        const line = this.controlBuffer.slice(0, nl);
        this.controlBuffer = this.controlBuffer.slice(nl + 1);
        let message: ServerReply & { ready?: number };
        try {
          message = JSON.parse(line);
        } catch {
          this.lose(`the ${label} sent a garbled reply`);
          return;
        }
        if (!started && (message.ready || message.lost)) {
          started = true;
          readyResolve(message.lost);
          continue;
        }
        this.settle(message);
      }
    });
    this.data.on('data', (chunk: Buffer) => this.receiveData(chunk));
    for (const stream of [this.control, this.data]) stream.on('error', () => undefined);
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      this.serverErr = (this.serverErr + chunk).slice(-4000);
    });
    this.child.on('error', (e) => this.lose(`the ${label} could not start: ${e.message}`));
    this.child.on('exit', () => {
      const why = `the ${label} stopped${this.serverErr.trim() ? `: ${lastReadableLine(this.serverErr)}` : ''}`;
      if (!started) readyResolve(why);
      started = true;
      this.lose(why);
    });
    // a server that never became ready also ends the wait for it
    this.ready.then((why) => {
      if (why) started = true;
    });
  }

  private receiveData(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      const line = this.dataChunks.length ? Buffer.concat([...this.dataChunks, piece]) : piece;
      this.dataChunks = [];
      this.dataBytes = 0;
      start = nl + 1;
      this.onData?.(line);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.dataBytes += rest.length;
      if (this.dataBytes > DATA_LINE_CAP) {
        this.dataChunks = [];
        this.dataBytes = 0;
        this.onFlood?.();
        return;
      }
      this.dataChunks.push(Buffer.from(rest));
    }
  }

  /** Drops what arrived on the data channel and is not a complete line (the end of an earlier job). */
  resetData(): void {
    this.dataChunks = [];
    this.dataBytes = 0;
  }

  sendData(line: string): void {
    if (!this.dead) this.data.write(line.endsWith('\n') ? line : line + '\n');
  }

  private settle(reply: ServerReply): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.(reply);
  }

  private lose(why: string): void {
    this.kill();
    this.settle({ lost: why, dirty: true });
  }

  /** Runs one job; `timeoutMs` is the job's own limit (the server enforces it; the host only as a backstop). */
  run(job: Record<string, unknown>, timeoutMs: number): Promise<ServerReply> {
    const id = this.nextId++;
    this.jobs++;
    // a server outside a namespace (process mode, pyodide) runs its job in itself or its children: its CPU time
    // before the job is taken off what it used by the time it has to be killed
    this.cpuAtStart = this.inNamespace || this.child.pid === undefined ? undefined : treeCpuMs(this.child.pid);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // the server did not stop its job in time (starved, or stopped by the job): measure, then kill it all
        const now = this.child.pid === undefined ? undefined : this.inNamespace ? serverJobsCpuMs(this.child.pid) : treeCpuMs(this.child.pid);
        const cpu = now === undefined ? undefined : Math.max(0, now - (this.cpuAtStart ?? 0));
        this.kill();
        this.settle({ id, killed: true, timed_out: true, dirty: true, ...(cpu !== undefined ? { killed_cpu: cpu } : {}) });
      }, timeoutMs + this.graceMs);
      this.pending = (reply) => {
        clearTimeout(timer);
        resolve(reply);
      };
      if (this.dead) this.settle({ lost: `the ${this.label} stopped`, dirty: true });
      else this.control.write(JSON.stringify({ ...job, id }) + '\n');
    });
  }

  kill(): void {
    this.dead = true;
    const dispose = this.dispose;
    this.dispose = undefined;
    if (this.child.pid !== undefined) {
      try {
        // bwrap's own group: when the namespace's init dies, the kernel kills everything in it
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    dispose?.();
  }
}

/** The last line of a server's stderr that is not minified source (node quotes it for errors in pyodide.asm.js). */
function lastReadableLine(text: string): string {
  return text.trim().split('\n').filter((line) => line.length <= 2000).pop() ?? '';
}

/**
 * One server per worker slot and role, started on first use and replaced when it dies, reports itself changed, or no
 * longer fits the limits asked for. `cold`: a server runs one job only (process mode, where nothing cleans between
 * jobs as a pid namespace does).
 */
export class ServerPool {
  private readonly servers = new Map<string, JobServer>();

  constructor(
    readonly sandbox: Sandbox | undefined,
    private readonly start: (slot: number, role: SandboxRole) => JobServer | Promise<JobServer>,
    /** Roles whose servers run one job each. */
    private readonly cold: (role: SandboxRole) => boolean = () => false,
  ) {}

  /** The slot's server for a role (started if there is none, or it cannot take another job). */
  async get(slot: number, role: SandboxRole): Promise<{ server: JobServer } | { error: string }> {
    const id = `${slot}\u0000${role}`;
    let server = this.servers.get(id);
    if (server && (server.dead || (this.cold(role) && server.jobs > 0))) {
      server.kill();
      this.sandbox?.reap(slot, role);
      server = undefined;
    }
    if (!server) {
      server = await this.start(slot, role);
      this.servers.set(id, server);
    }
    const why = await server.ready;
    if (why) {
      this.servers.delete(id);
      server.kill();
      return { error: why };
    }
    return { server };
  }

  /** After a job: a server that died or changed goes (and, in process mode, everything its uid still runs). */
  done(slot: number, role: SandboxRole, reply: ServerReply): void {
    const id = `${slot}\u0000${role}`;
    const server = this.servers.get(id);
    if (!server) return;
    if (reply.dirty || reply.lost || reply.killed || server.dead || this.cold(role)) {
      server.kill();
      this.servers.delete(id);
      this.sandbox?.reap(slot, role);
    }
  }

  close(): void {
    for (const server of this.servers.values()) server.kill();
    this.servers.clear();
  }
}
