import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { UsageError } from '../errors.js';
import type { ExecLanguage } from './problems.js';
import { PYODIDE_CHILD_SCRIPT, PYODIDE_HARNESS } from './pyodide-child.js';
import { pythonCode, pythonErrorVerdict, pythonProgramText, type Runner, type Verdict } from './runners.js';
import { processCpuMs, type RunRequest, type RunResult } from './sandbox.js';

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
const LOAD_TIMEOUT_MS = 180_000;
const STDERR_KEEP = 64 * 1024;
const V8_HEAP_MB = 512;

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

// ---------------------------------------------------------------- the runner

/** The python3 runner's program (runners.ts), run by the pyodide pool instead of a python3 binary. */
export function pyodideRunner(): Runner {
  const pkg = pyodidePackage();
  return {
    language: 'python',
    version: `pyodide-${pkg.version}/python-${pkg.python}`,
    memoryKind: 'none',
    processes: 1,
    code: pythonCode,
    // the same program as the python3 runner's; `pyodide` is a placeholder (the pool runs program.py itself)
    program: (problem, code) => ({ files: { 'program.py': pythonProgramText(problem, code) }, run: ['pyodide', 'program.py'] }),
    classify(result, nonce): Verdict {
      const v = { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
      if (result.sandboxError) return { ...v, status: 'sandbox_error', note: result.sandboxError };
      if (result.timedOut) return { ...v, status: 'timeout' };
      if (result.outputExceeded) return { ...v, status: 'runtime_error', note: 'output limit exceeded' };
      if (result.exitCode === 0) {
        if (result.stdout.includes(nonce)) return { ...v, status: 'passed' };
        return { ...v, status: 'failed', note: 'exited before the tests finished' };
      }
      return pythonErrorVerdict(result, (last, base) => {
        // CPython on 64 bits says MemoryError for these sizes; a 32-bit WebAssembly interpreter cannot even index them
        if (/^OverflowError: cannot fit 'int' into an index-sized integer/.test(last)) return { ...base, status: 'memory', note: 'larger than the 4 GiB WebAssembly address space' };
        if (/JavaScript heap out of memory|Reached heap limit|Array buffer allocation failed/.test(result.stderr)) return { ...base, status: 'memory', note: 'the runner ran out of memory' };
        return undefined;
      });
    },
  };
}

let runner: Runner | undefined;

/** The runner of a language under `--sandbox pyodide`: Python only. */
export function pyodideRunnerFor(language: ExecLanguage): Runner {
  if (language !== 'python') throw new UsageError(`--sandbox pyodide runs Python only; ${language} samples need --sandbox bwrap or --sandbox process`);
  return (runner ??= pyodideRunner());
}

// ---------------------------------------------------------------- the pool

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

  async run(request: RunRequest): Promise<RunResult> {
    const file = request.argv[request.argv.length - 1] ?? '';
    const failed = (sandboxError: string): RunResult => ({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, outputExceeded: false, durationMs: 0, sandboxError });
    if (!file.endsWith('.py')) return failed('the pyodide sandbox runs only Python programs');
    let code: string;
    try {
      code = readFileSync(join(request.workDir, basename(file)), 'utf8');
    } catch (e) {
      return failed(`cannot read ${file}: ${(e as Error).message}`);
    }
    const slot = request.slot ?? 0;
    let worker = this.workers.get(slot);
    if (worker && (worker.dead || worker.memoryMb !== request.limits.memoryMb)) {
      worker.kill();
      worker = undefined;
    }
    if (!worker) {
      worker = new PyodideWorker(this.scriptPath(), this.pkg, request.limits.memoryMb);
      this.workers.set(slot, worker);
    }
    worker.hold(true);
    const notReady = await worker.ready;
    if (notReady) {
      this.workers.delete(slot);
      return failed(notReady);
    }
    const result = await worker.run(code, request.stdin ?? '', request.limits.timeoutMs, request.limits.outputBytes ?? 1024 * 1024);
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
