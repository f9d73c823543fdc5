import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { processCpuMs } from '../proc.js';
import type { Limits, RunResult } from '../types.js';
import { PYODIDE_CHILD_SCRIPT, PYODIDE_HARNESS } from './child.js';
import { pyodidePackage, type PyodidePackage } from './package.js';

/** The pool of pyodide children (see package.ts for what the sandbox is and guarantees). */
const LOAD_TIMEOUT_MS = 180_000;
const STDERR_KEEP = 64 * 1024;
const V8_HEAP_MB = 512;


interface Reply {
  id?: number;
  ready?: boolean;
  fatal?: string;
  python?: string;
  exit?: number | null;
  stdout?: string;
  stderr?: string;
  outputExceeded?: boolean;
  ms?: number;
  dead?: boolean;
  dirty?: string[];
}

/** Node's own complaints, without the minified source lines it quotes from pyodide.asm.js. */
function readable(text: string): string {
  return text
    .split('\n')
    .filter((line) => line.length <= 2000)
    .join('\n')
    .slice(-STDERR_KEEP);
}

function permissionFlag(): string {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 13) ? '--permission' : '--experimental-permission';
}

/**
 * The child's node flags: no eval or new Function (so no JavaScript can be made from strings), a capped V8 heap, and
 * the permission model allowing reads of the pyodide package and the script only (no writes, child processes,
 * workers, addons or WASI).
 */
export function pyodideNodeFlags(pkg: PyodidePackage, script: string): string[] {
  return ['--disallow-code-generation-from-strings', `--max-old-space-size=${V8_HEAP_MB}`, '--no-warnings', permissionFlag(), `--allow-fs-read=${pkg.dir}`, `--allow-fs-read=${script}`];
}

class PyodideWorker {
  /** Resolves to undefined once the interpreter is loaded, or to why it could not be. */
  readonly ready: Promise<string | undefined>;
  dead = false;
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  private lineCap = 64 * 1024 * 1024;
  private overflowed = false;
  private stderr = '';
  private onLine?: (reply: Reply | undefined) => void;
  private nextId = 0;

  constructor(
    script: string,
    pkg: PyodidePackage,
    readonly memoryMb: number,
  ) {
    const args = [...pyodideNodeFlags(pkg, script), script, pkg.dir, String(memoryMb)];
    // nothing of this process's environment (API keys, NODE_OPTIONS) reaches the child
    const env: Record<string, string> = process.platform === 'win32' && process.env.SystemRoot ? { SystemRoot: process.env.SystemRoot } : {};
    this.child = spawn(process.execPath, args, { cwd: dirname(script), env, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.receive(chunk));
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
      if (this.stderr.length > 4 * STDERR_KEEP) this.stderr = this.stderr.slice(-2 * STDERR_KEEP);
    });
    this.child.stdin.on('error', () => undefined);
    this.ready = new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.kill();
        resolve(`pyodide did not start within ${LOAD_TIMEOUT_MS / 1000} s`);
      }, LOAD_TIMEOUT_MS);
      this.onLine = (reply) => {
        clearTimeout(timer);
        if (reply?.ready) return resolve(undefined);
        this.kill();
        resolve(`pyodide did not start: ${reply?.fatal ?? (readable(this.stderr).trim().split('\n').slice(-3).join(' ') || 'its process ended')}`.slice(0, 1000));
      };
    });
    const gone = () => {
      this.dead = true;
      const waiting = this.onLine;
      this.onLine = undefined;
      waiting?.(undefined);
    };
    this.child.on('exit', gone);
    this.child.on('error', gone); // could not be started at all
  }

  private receive(chunk: string): void {
    if (this.overflowed) return;
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      let reply: Reply | undefined;
      try {
        reply = JSON.parse(line) as Reply;
      } catch {
        reply = undefined;
      }
      const waiting = this.onLine;
      this.onLine = undefined;
      waiting?.(reply);
    }
    // the child caps what it sends; this bounds what a misbehaving one could make this process hold
    if (this.buffer.length > this.lineCap) {
      this.overflowed = true;
      this.kill();
    }
  }

  /** An idle child does not keep this process alive (the matchers never close their pool). */
  hold(held: boolean): void {
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as unknown as { ref?: () => void; unref?: () => void }[]) {
      if (held) handle.ref?.();
      else handle.unref?.();
    }
  }

  kill(): void {
    this.dead = true;
    try {
      this.child.kill('SIGKILL');
    } catch {
      // gone
    }
  }

  run(code: string, stdin: string, timeoutMs: number, outputBytes: number): Promise<RunResult> {
    const started = performance.now();
    // JSON may spell a byte of output in up to six characters
    this.lineCap = 6 * outputBytes + 4 * STDERR_KEEP + 1024 * 1024;
    // the child runs one program at a time: its CPU time over the job is the program's (Linux: from /proc)
    const pid = this.child.pid;
    const cpu0 = pid !== undefined && process.platform === 'linux' ? processCpuMs(pid) : undefined;
    const cpuSince = () => {
      const now = cpu0 !== undefined ? processCpuMs(pid!) : undefined;
      return now !== undefined ? { cpuMs: Math.max(0, now - cpu0!) } : {};
    };
    return new Promise((resolve) => {
      let timedOut = false;
      let cpu: { cpuMs?: number } = {};
      const timer = setTimeout(() => {
        timedOut = true;
        cpu = cpuSince();
        this.kill();
      }, timeoutMs);
      const id = this.nextId++;
      this.onLine = (reply) => {
        clearTimeout(timer);
        const durationMs = Math.round(performance.now() - started);
        if (!reply || reply.id !== id) {
          // killed for its time, or the child itself died (V8 out of memory, output past every cap)
          this.kill();
          const why = readable(this.stderr).trim();
          resolve({
            exitCode: null,
            signal: timedOut ? 'SIGKILL' : (this.child.signalCode ?? null),
            stdout: '',
            stderr: timedOut ? '' : `codegauge: the pyodide runner stopped${why ? `: ${why.split('\n').slice(-5).join('\n')}` : ''}\n`,
            timedOut,
            outputExceeded: this.overflowed,
            durationMs,
            ...(timedOut ? cpu : {}),
          });
          return;
        }
        if (reply.dead || reply.dirty?.length) this.dead = true;
        const used = cpuSince();
        resolve({
          exitCode: reply.exit ?? null,
          signal: null,
          stdout: reply.stdout ?? '',
          stderr: reply.stderr ?? '',
          timedOut: false,
          outputExceeded: reply.outputExceeded === true,
          durationMs: reply.ms ?? durationMs,
          ...used,
        });
      };
      this.child.stdin.write(JSON.stringify({ id, code, stdin, file: 'program.py', outputBytes }) + '\n');
    });
  }
}

/** One pyodide child per worker slot, started on first use and replaced whenever it may not be reused. */
export class PyodidePool {
  private readonly workers = new Map<number, PyodideWorker>();
  private readonly pkg = pyodidePackage();
  private scriptDir?: string;
  private script?: string;

  private scriptPath(): string {
    if (!this.script) {
      this.scriptDir = mkdtempSync(join(tmpdir(), 'codegauge-pyodide-'));
      this.script = join(this.scriptDir, 'child.mjs');
      writeFileSync(this.script, `const HARNESS = ${JSON.stringify(PYODIDE_HARNESS)};\n${PYODIDE_CHILD_SCRIPT}`, { mode: 0o600 });
      const dir = this.scriptDir;
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    }
    return this.script;
  }

  /** Runs a Python program's text with `stdin`, in slot `slot`'s interpreter. */
  async runCode(code: string, stdin: string, limits: Limits, slot: number): Promise<RunResult> {
    const failed = (sandboxError: string): RunResult => ({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, outputExceeded: false, durationMs: 0, sandboxError });
    let worker = this.workers.get(slot);
    if (worker && (worker.dead || worker.memoryMb !== limits.memoryMb)) {
      worker.kill();
      worker = undefined;
    }
    if (!worker) {
      worker = new PyodideWorker(this.scriptPath(), this.pkg, limits.memoryMb);
      this.workers.set(slot, worker);
    }
    worker.hold(true);
    const notReady = await worker.ready;
    if (notReady) {
      this.workers.delete(slot);
      return failed(notReady);
    }
    const result = await worker.run(code, stdin, limits.timeoutMs, limits.outputBytes ?? 1024 * 1024);
    worker.hold(false);
    if (worker.dead) {
      worker.kill();
      if (this.workers.get(slot) === worker) this.workers.delete(slot);
    }
    return result;
  }

  close(): void {
    for (const worker of this.workers.values()) worker.kill();
    this.workers.clear();
    if (this.scriptDir) rmSync(this.scriptDir, { recursive: true, force: true });
    this.scriptDir = this.script = undefined;
  }
}
