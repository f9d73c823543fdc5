import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { discardWorkDir, makeWorkDir, removeWorkDir, warmProgramCpuMs, type Limits, type RunResult, type Sandbox } from './sandbox.js';
import { WarmPool } from './warm-pool.js';

/**
 * A warm Python runner: one long-lived Python process per worker, inside the worker's bwrap sandbox, forks a child
 * per program. The program and its stdin come with the job (over the server's stdin) and are written by the server,
 * inside the sandbox, into a fresh folder of the sandbox's own /tmp (a tmpfs), the program's working folder. The
 * child sets the limits (address space, CPU time, file size, open files; the process limit is the sandbox's), reads
 * its stdin from a file, writes stdout and stderr to files of the work folder (/sandbox, where the host reads them,
 * also after a timeout), and runs the program as `__main__`. After each program the server kills everything else in
 * the sandbox's pid namespace and empties /tmp. A program that runs past its time kills the whole sandbox; the next
 * program starts a fresh one. This saves the interpreter's start-up (tens of milliseconds) per sample, and the host
 * makes and removes no folder per program (on some file systems removing one waits milliseconds for the disk).
 * bwrap only: in `process` mode there is no pid namespace to clean.
 */
const SERVER = String.raw`
import base64, io, json, os, resource, signal, stat, sys, time, traceback, shutil

def kill_others():
    me = os.getpid()
    # again until none is left: a fork bomb forks between the listing and the kills
    for _ in range(50):
        pids = [int(e) for e in os.listdir('/proc') if e.isdigit() and int(e) not in (1, me)]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break

def writable(path):
    # a folder the program made unreadable (its owner may change that) can still be emptied
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass

def clean_tmp():
    for entry in os.listdir('/tmp'):
        path = os.path.join('/tmp', entry)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, onerror=lambda f, p, e: (writable(os.path.dirname(p)), writable(p)))
                if os.path.lexists(path):
                    shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass
    # what could not be removed would be seen by the next program: the host then starts a fresh sandbox
    return len(os.listdir('/tmp'))

def make_job_dir(job):
    # fresh, in the sandbox's own /tmp; not guessable (nothing else runs meanwhile, but cheap to make sure)
    path = '/tmp/' + os.urandom(8).hex()
    os.mkdir(path, 0o700)
    for name, data in list(job['files'].items()) + [('stdin.txt', job['stdin'])]:
        fd = os.open(os.path.join(path, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, base64.b64decode(data))
        finally:
            os.close(fd)
    return path

def child(job, path):
    os.chdir(path)
    os.setpgid(0, 0)
    fd = os.open('stdin.txt', os.O_RDONLY); os.dup2(fd, 0); os.close(fd)
    fd = os.open(job['stdout'], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600); os.dup2(fd, 1); os.close(fd)
    fd = os.open(job['stderr'], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600); os.dup2(fd, 2); os.close(fd)
    os.closerange(3, 4096)
    for name, value in (('RLIMIT_AS', job['memory']), ('RLIMIT_CPU', job['cpu']), ('RLIMIT_FSIZE', job['fsize']), ('RLIMIT_NOFILE', job['nofile']), ('RLIMIT_CORE', 0)):
        resource.setrlimit(getattr(resource, name), (value, value))
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, 'r', closefd=False)), encoding='utf-8')
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, 'w', closefd=False)), encoding='utf-8', errors='backslashreplace')
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, 'w', closefd=False)), encoding='utf-8', errors='backslashreplace', line_buffering=True)
    sys.argv = [job['file']]
    code = 0
    try:
        with open(job['file'], encoding='utf-8') as fh:
            source = fh.read()
        try:
            compiled = compile(source, job['file'], 'exec')
        except (SyntaxError, ValueError) as e:
            sys.stderr.write(''.join(traceback.format_exception_only(type(e), e)))
            code = 1
        else:
            try:
                exec(compiled, {'__name__': '__main__', '__file__': job['file'], '__builtins__': __builtins__})
            except SystemExit as e:
                if e.code is None:
                    code = 0
                elif isinstance(e.code, int):
                    code = e.code & 0xff
                else:
                    sys.stderr.write(str(e.code) + '\n')
                    code = 1
            except BaseException as e:
                traceback.print_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None)
                code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code)

# not dumpable: a program (same uid) cannot ptrace this server to tamper with later verdicts
try:
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
except Exception:
    pass

# kill_others() and clean_tmp() are only safe in the sandbox's own pid namespace (bwrap is pid 1, this server 2):
# anywhere else they would kill the host's processes and empty its /tmp
if os.getpid() != 2:
    sys.stderr.write('codegauge warm runner: refusing to run outside its bwrap pid namespace\n')
    sys.exit(70)
out = os.fdopen(os.dup(1), 'w')
while True:
    line = sys.stdin.readline()
    if not line:
        break
    job = json.loads(line)
    path = make_job_dir(job)
    started = time.monotonic()
    out.flush()
    pid = os.fork()
    if pid == 0:
        try:
            child(job, path)
        finally:
            os._exit(125)
    _, status, usage = os.wait4(pid, 0)
    ms = (time.monotonic() - started) * 1000
    cpu = (usage.ru_utime + usage.ru_stime) * 1000
    kill_others()
    left = clean_tmp()
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    out.write(json.dumps({'id': job['id'], 'exit': exit_code, 'signal': sig, 'ms': ms, 'cpu': cpu, 'dirty': left > 0}) + '\n')
    out.flush()
`;

const SIGNAL_NAMES = new Map(Object.entries(osConstants.signals).map(([name, n]) => [n as number, name]));
const STDERR_KEEP = 64 * 1024;
const SERVER_FILE = '.codegauge-server.py';
/** The program's stdout and stderr, in the work folder (the host's side of /sandbox). */
const STDOUT_FILE = '.codegauge-stdout';
const STDERR_FILE = '.codegauge-stderr';

/**
 * The first (or last) `cap` bytes of a file the sandbox wrote, and its size. Opened without following a symlink and
 * only if it is a regular file: the program could have replaced it by a link to a file of the host.
 */
export function readCapped(path: string, cap: number, tail = false): { text: string; size: number } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return { text: '', size: 0 };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { text: '', size: 0 };
    const size = st.size;
    const length = Math.min(size, cap);
    const buffer = Buffer.alloc(length);
    const read = readSync(fd, buffer, 0, length, tail ? size - length : 0);
    return { text: buffer.subarray(0, read).toString('utf8'), size };
  } finally {
    closeSync(fd);
  }
}

interface ServerReply {
  exit: number | null;
  signal: number | null;
  ms: number;
  /** The child's CPU time (its rusage from wait4: it and what it reaped), ms. */
  cpu?: number;
  /** /tmp could not be emptied: the next program needs a fresh sandbox. */
  dirty?: boolean;
}

interface Pending {
  resolve: (reply: ServerReply) => void;
}

class WarmServer {
  readonly dir = makeWorkDir();
  private child?: ChildProcessWithoutNullStreams;
  private pending?: Pending;
  private buffer = '';
  private nextId = 0;
  dead = false;

  constructor(
    private readonly sandbox: Sandbox,
    python: string,
    slot: number,
  ) {
    this.sandbox.prepare(this.dir, slot);
    writeFileSync(join(this.dir, SERVER_FILE), SERVER);
    const { file, args, cwd } = sandbox.commandLine({
      argv: [python, '-I', '-B', '-u', SERVER_FILE],
      workDir: this.dir,
      slot,
      limits: { timeoutMs: 0, memoryMb: 0, memoryKind: 'none', processes: 64, openFiles: 64, fileSizeMb: 16, cpuSeconds: 'unlimited' },
    });
    this.child = spawn(file, args, { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        const pending = this.pending;
        this.pending = undefined;
        try {
          pending?.resolve(JSON.parse(line));
        } catch {
          pending?.resolve({ exit: null, signal: null, ms: 0 });
        }
      }
    });
    this.child.stderr.on('data', () => {});
    this.child.stdin.on('error', () => {});
    this.child.on('exit', () => {
      this.dead = true;
      const pending = this.pending;
      this.pending = undefined;
      pending?.resolve({ exit: null, signal: -1, ms: 0 });
    });
  }

  kill(): void {
    this.dead = true;
    if (this.child?.pid !== undefined) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }

  close(): void {
    this.kill();
    removeWorkDir(this.dir);
  }

  async run(files: Record<string, string>, file: string, stdin: string, limits: Limits): Promise<RunResult> {
    const id = this.nextId++;
    const outputCap = limits.outputBytes ?? 1024 * 1024;
    const mib = 1024 * 1024;
    // the files travel with the job, as the bytes the host would have written (UTF-8), and the server writes them
    const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
    const job = {
      id,
      files: Object.fromEntries(Object.entries(files).map(([name, text]) => [name, base64(text)])),
      stdin: base64(stdin),
      stdout: `/sandbox/${STDOUT_FILE}`,
      stderr: `/sandbox/${STDERR_FILE}`,
      file,
      memory: limits.memoryMb * mib,
      cpu: Math.max(1, Math.ceil(limits.timeoutMs / 1000) + 1),
      fsize: Math.max(outputCap + 1, (limits.fileSizeMb ?? 16) * mib),
      nofile: limits.openFiles ?? 64,
    };
    const started = performance.now();
    let timedOut = false;
    let timeoutCpuMs: number | undefined;
    const reply = await new Promise<ServerReply>((resolve) => {
      this.pending = { resolve };
      const timer = setTimeout(() => {
        timedOut = true;
        // the program's processes (the server's child and below) just before they go
        if (this.child?.pid !== undefined) timeoutCpuMs = warmProgramCpuMs(this.child.pid);
        this.kill();
      }, limits.timeoutMs);
      const done = this.pending.resolve;
      this.pending.resolve = (r) => {
        clearTimeout(timer);
        done(r);
      };
      this.child!.stdin.write(JSON.stringify(job) + '\n');
    });
    // nothing in the sandbox runs now (readCapped follows no link the program may have left in their place)
    const stdout = readCapped(join(this.dir, STDOUT_FILE), outputCap);
    const stderr = readCapped(join(this.dir, STDERR_FILE), STDERR_KEEP, true);
    // the outputs (files: unlinked at once) and whatever else the program left in the work folder (moved out, then
    // removed in the background: after a timeout the sandbox may still be going away)
    for (const name of readdirSync(this.dir, { withFileTypes: true })) {
      if (name.name === SERVER_FILE) continue;
      if (name.isFile() && (name.name === STDOUT_FILE || name.name === STDERR_FILE)) rmSync(join(this.dir, name.name), { force: true });
      else discardWorkDir(join(this.dir, name.name));
    }
    if (reply.dirty) this.kill();
    const signal = reply.signal && reply.signal > 0 ? SIGNAL_NAMES.get(reply.signal) ?? `SIG${reply.signal}` : null;
    const outputExceeded = stdout.size > outputCap || (signal === 'SIGXFSZ' && stdout.size >= outputCap);
    const serverLost = !timedOut && reply.signal === -1;
    const cpuMs = timedOut ? timeoutCpuMs : serverLost || typeof reply.cpu !== 'number' ? undefined : Math.round(reply.cpu);
    return {
      exitCode: reply.exit,
      signal,
      stdout: stdout.text,
      stderr: stderr.text,
      timedOut,
      outputExceeded,
      durationMs: Math.round(timedOut || serverLost ? performance.now() - started : reply.ms),
      ...(cpuMs !== undefined ? { cpuMs } : {}),
      ...(serverLost ? { sandboxError: 'the warm Python runner stopped' } : {}),
    };
  }
}

/** One warm Python server per worker slot, started on first use and restarted after a timeout. */
export class WarmPythonPool extends WarmPool<WarmServer> {
  constructor(sandbox: Sandbox) {
    super(sandbox, 'Python', (python, slot) => new WarmServer(sandbox, python, slot));
  }
}
