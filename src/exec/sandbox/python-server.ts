/**
 * The Python fork server: one pristine interpreter per slot and role inside the sandbox. The candidate's server forks
 * a child per job (a program, or a candidate serving calls), ahead of the job so that the fork and the child's set-up
 * overlap the host's work, and after each job kills everything else the job started, removes its System V objects,
 * message queues, keyrings and files, and checks that nothing of the server itself was changed (priority, CPU
 * affinity, limits); a server that was is replaced. It is not dumpable, so a job (same uid) can neither trace it nor
 * read its memory. Each child sets its own limits (address space, CPU time, file size, open files); its stdout and
 * stderr go to files of its job folder, which the server returns capped. The tests' server runs harness jobs in
 * itself, without a fork: they are the benchmark's code and take only plain values from a candidate (as pyodide's
 * harness does); the random generator is seeded afresh for each, as after a fork, and a timeout, a memory error or a
 * change to the interpreter (limits, recursion limit, built-ins, folder, threads) makes the server replace itself.
 * Job kinds `serve` and `harness` come from the boundary code placed before this script. Arguments: `ns` when alone
 * in a pid namespace, `uid` when its uid is its own, the folder for job folders, the folder for jobs' output, and the
 * role.
 */
export const PYTHON_FORK_SERVER = String.raw`# ---- the fork server: a pristine interpreter that runs each job in a forked child and cleans up after it
import base64, io, json, os, resource, signal, sys, time, traceback

CONTROL, DATA = 3, 4
ISOLATED = sys.argv[1] == 'ns'       # alone in its own pid namespace (bwrap): every other process is a job's
UNIQUE_UID = sys.argv[2] == 'uid'    # its uid is its own (root made it): kill(-1) reaches only its jobs' processes
ROOT = sys.argv[3]                   # where job folders are made (/tmp in bwrap, a private folder otherwise)
# where a job's stdout and stderr go: a file system of their own in bwrap, so that a program that fills /tmp does
# not lose what it printed
IO_ROOT = sys.argv[4] if len(sys.argv) > 4 else ROOT
# the tests' server runs harness jobs in itself (see run_inline)
INLINE_HARNESS = len(sys.argv) > 5 and sys.argv[5] == 'harness'

# Loaded once here, so that each child starts with them (copy-on-write); a child's changes stay in the child. ast is
# what a traceback imports to place its carets: without it every failing sample's child paid ~6 ms to import it.
for _name in ('typing', 'math', 're', 'collections', 'itertools', 'functools', 'heapq', 'bisect', 'string', 'random', 'copy', 'operator', 'ctypes', 'ast'):
    try:
        __import__(_name)
    except Exception:
        pass

def _libc():
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True)
    except Exception:
        return None

LIBC = _libc()

# not dumpable: a job (same uid) can neither ptrace this server nor open its /proc files (memory, descriptors)
if LIBC is not None:
    LIBC.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0

RESOURCES = [getattr(resource, n) for n in dir(resource) if n.startswith('RLIMIT_')]

def integrity():
    """What a job could change of this server from outside (same uid): its priority, CPU affinity, limits."""
    state = [os.getpriority(os.PRIO_PROCESS, 0)]
    try:
        state.append(sorted(os.sched_getaffinity(0)))
    except Exception:
        pass
    for r in RESOURCES:
        try:
            state.append(resource.getrlimit(r))
        except Exception:
            pass
    return state

BASELINE = integrity()

def kill_others(child):
    if UNIQUE_UID or ISOLATED:
        # every process this server may signal but itself: in its own pid namespace, or of its own uid, only jobs'
        for _ in range(50):
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                break
            except PermissionError:
                break
            if not others():
                break
    else:
        try:
            os.killpg(child, signal.SIGKILL)
        except OSError:
            pass
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break

def others():
    if not ISOLATED:
        return False
    me = os.getpid()
    return any(e.isdigit() and int(e) not in (1, me) for e in os.listdir('/proc'))

IPC_RMID = 0

def ipc_objects(kind):
    """How many System V objects of a kind exist in this IPC namespace, by a syscall (cheaper than /proc); None if
    unknown. SHM_INFO's shm_info.used_ids, MSG_INFO's msginfo.msgpool, SEM_INFO's seminfo.semusz (all C ints)."""
    import ctypes
    buf = (ctypes.c_int * 64)()
    if kind == 'shm':
        r = LIBC.shmctl(0, 14, buf)
        n = buf[0]
    elif kind == 'msg':
        r = LIBC.msgctl(0, 12, buf)
        n = buf[0]
    else:
        r = LIBC.semctl(0, 0, 19, buf)
        n = buf[7]
    return None if r < 0 else n

def clean_ipc():
    """System V objects and POSIX message queues outlive the process that made them: removed after every job."""
    if LIBC is None:
        return
    uid = os.getuid()
    for kind, ctl in (('shm', 'shmctl'), ('msg', 'msgctl'), ('sem', 'semctl')):
        if ISOLATED and ipc_objects(kind) == 0:
            continue
        try:
            with open('/proc/sysvipc/' + kind) as f:
                rows = f.read().split('\n')[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) < 8:
                continue
            ident = int(cols[1])
            owner = int(cols[4] if kind == 'sem' else cols[7])
            if not ISOLATED and owner != uid:
                continue
            if kind == 'sem':
                getattr(LIBC, ctl)(ident, 0, IPC_RMID)
            else:
                getattr(LIBC, ctl)(ident, IPC_RMID, None)
    for folder in ('/dev/mqueue', '/dev/shm'):
        if not ISOLATED:
            break
        try:
            for entry in os.listdir(folder):
                remove(os.path.join(folder, entry))
        except OSError:
            pass
    # the kernel keyrings of this uid (data a job could leave for the next)
    if sys.platform == 'linux':
        import platform
        nr = {'x86_64': 250, 'aarch64': 219}.get(platform.machine())
        if nr is not None:
            for ring in (-4, -5):  # KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING
                LIBC.syscall(nr, 7, ring)  # KEYCTL_CLEAR

def writable(path):
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass

def remove(path):
    import shutil
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            # a job's folder is usually a few plain files: removed one by one; anything else (a folder in it, its
            # permissions taken away) by rmtree
            try:
                for entry in os.listdir(path):
                    os.unlink(os.path.join(path, entry))
                os.rmdir(path)
                return
            except OSError:
                pass
            writable(path)
            shutil.rmtree(path, onerror=lambda f, p, e: (writable(os.path.dirname(p)), writable(p)))
            if os.path.lexists(path):
                shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass

def clean_root():
    left = 0
    for root in {ROOT, IO_ROOT}:
        # a job may have taken the folder's permissions away (its owner can give them back)
        try:
            os.chmod(root, 0o1777 if ISOLATED else 0o700)
        except OSError:
            pass
        for entry in os.listdir(root):
            remove(os.path.join(root, entry))
        left += len(os.listdir(root))
    return left

def make_job_dir(job):
    name = os.urandom(8).hex()
    path = os.path.join(ROOT, name)
    os.mkdir(path, 0o700)
    io = os.path.join(IO_ROOT, name)
    if io != path:
        os.mkdir(io, 0o700)
    for name, data in job['files'].items():
        fd = os.open(os.path.join(path, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, base64.b64decode(data))
        finally:
            os.close(fd)
    return path

def read_capped(path, cap, tail=False):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b'', 0
    try:
        import stat
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b'', 0
        size = st.st_size
        n = min(size, cap)
        if tail:
            os.lseek(fd, size - n, 0)
        return os.read(fd, n), size
    finally:
        os.close(fd)

def run_as_main(job, namespace):
    """The program file as __main__, as "python3 program.py" would run it; an error or exit ends the process."""
    code = 0
    try:
        with open(job['file'], encoding='utf-8') as fh:
            source = fh.read()
        try:
            compiled = compile(source, job['file'], 'exec')
        except (SyntaxError, ValueError) as e:
            sys.stderr.write(''.join(traceback.format_exception_only(type(e), e)))
            raise SystemExit(1)
        try:
            exec(compiled, namespace)
        except SystemExit:
            raise
        except BaseException as e:
            traceback.print_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None)
            raise SystemExit(1)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass

def exit_code(e):
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xff
    try:
        sys.stderr.write(str(e.code) + '\n')
    except BaseException:
        pass
    return 1

def close_all_but(keep):
    low = 3
    for fd in sorted(k for k in keep if k >= 3) + [1 << 20]:
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1

def read_job(job_r):
    data = b''
    while True:
        chunk = os.read(job_r, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(job_r)
    return json.loads(data) if data else None

def child(job_r, result_w):
    """A job's process, forked before its job came (prefork): it sets up what does not depend on the job, then waits
    for the job on job_r; a server that goes away first closes the pipe, and the child ends."""
    os.setpgid(0, 0)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Python ignores SIGXFSZ: a program past its file size limit (its stdout's is the output cap) is stopped, as a
    # process of its own would be, rather than raising an error the tests might take for their own
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    # nothing of the server's (its control channel) reaches a job
    close_all_but({job_r, result_w, DATA})
    job = read_job(job_r)
    if job is None:
        os._exit(0)
    path = job['path']
    os.chdir(path)
    stdin = os.open('stdin.txt' if job['stdin'] else '/dev/null', os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    for fd, name in ((1, '.stdout'), (2, '.stderr')):
        f = os.open(os.path.join(IO_ROOT, os.path.basename(path), name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(f, fd)
        os.close(f)
    if job['kind'] not in ('serve', 'harness'):
        os.close(DATA)
    lim = job['limits']
    for name, value in (('RLIMIT_AS', lim.get('memory')), ('RLIMIT_CPU', lim.get('cpu')), ('RLIMIT_FSIZE', lim.get('fsize')), ('RLIMIT_NOFILE', lim.get('nofile')), ('RLIMIT_CORE', 0)):
        if value is not None and hasattr(resource, name):
            resource.setrlimit(getattr(resource, name), (value, value))
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, 'r', closefd=False)), encoding='utf-8')
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, 'w', closefd=False)), encoding='utf-8', errors='backslashreplace')
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, 'w', closefd=False)), encoding='utf-8', errors='backslashreplace', line_buffering=True)
    sys.argv = [job['file']]
    namespace = {'__name__': '__main__', '__file__': job['file'], '__builtins__': __builtins__}
    code = 0
    try:
        if job['kind'] == 'program':
            # the proof that the tests returned: given to this child only in the job, printed only after them
            nonce = job.pop('nonce', None)
            run_as_main(job, namespace)
            if nonce is not None:
                sys.stdout.write('\n' + nonce + '\n')
                sys.stdout.flush()
        elif job['kind'] == 'serve':
            serve(job, DATA, namespace, lambda ns: run_as_main(job, ns))
        else:
            def report(obj):
                os.write(result_w, (json.dumps(obj) + '\n').encode('utf-8'))
            harness(job, DATA, report)
    except SystemExit as e:
        code = exit_code(e)
    except BaseException:
        try:
            traceback.print_exc()
        except BaseException:
            pass
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)

current = {'pid': 0, 'deadline': 0.0, 'timed_out': False}

class HarnessDeadline(BaseException):
    """Raised in tests that run in this server (run_inline) when their time is up."""

def on_alarm(signum, frame):
    # a SIGALRM a job sent this server (same uid) early is ignored: only the real deadline kills
    if current['pid'] and time.monotonic() >= current['deadline'] - 0.005:
        current['timed_out'] = True
        if current['pid'] == -1:
            raise HarnessDeadline()
        try:
            os.kill(current['pid'], signal.SIGKILL)
        except OSError:
            pass

signal.signal(signal.SIGALRM, on_alarm)

def prefork():
    """The next job's child, forked from the clean server before its job comes: the fork and the child's start-up
    then overlap the host's work between jobs instead of adding to each job's time."""
    job_r, job_w = os.pipe()
    result_r, result_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(job_w)
            os.close(result_r)
            child(job_r, result_w)
        finally:
            os._exit(125)
    os.close(job_r)
    os.close(result_w)
    return pid, job_w, result_r

NEXT = []

def prefork_next():
    # a fork that fails now (the uid's process limit still held by a reaped job's last processes) is tried again
    # when the job comes
    try:
        NEXT.append(prefork())
    except OSError:
        pass

def run_job(job):
    pid, job_w, result_r = NEXT.pop() if NEXT else prefork()
    path = make_job_dir(job)
    # what the child needs (the files are in its folder already)
    payload = {k: v for k, v in job.items() if k not in ('files', 'code')}
    payload.update(path=path, stdin='stdin.txt' in job['files'])
    started = time.monotonic()
    timeout = job['timeout_ms'] / 1000.0
    current.update(pid=pid, deadline=started + timeout, timed_out=False)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        write_all(job_w, json.dumps(payload).encode('utf-8'))
    except OSError:
        pass  # the child is gone: its status says how
    os.close(job_w)
    _, status, usage = os.wait4(pid, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)
    current['pid'] = 0
    ms = (time.monotonic() - started) * 1000
    cpu = (usage.ru_utime + usage.ru_stime) * 1000
    kill_others(pid)
    os.set_blocking(result_r, False)
    result = b''
    try:
        while len(result) < 1 << 20:
            chunk = os.read(result_r, 1 << 16)
            if not chunk:
                break
            result += chunk
    except BlockingIOError:
        pass
    os.close(result_r)
    out_cap = job['limits'].get('output', 1 << 20)
    io = os.path.join(IO_ROOT, os.path.basename(path))
    stdout, out_size = read_capped(os.path.join(io, '.stdout'), out_cap)
    stderr, _ = read_capped(os.path.join(io, '.stderr'), 64 * 1024, tail=True)
    clean_ipc()
    left = clean_root()
    exit_status = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    line = result.split(b'\n', 1)[0]
    reply = {
        'id': job['id'], 'exit': exit_status, 'signal': sig, 'ms': ms, 'cpu': cpu, 'timed_out': current['timed_out'],
        'stdout': base64.b64encode(stdout).decode('ascii'), 'stdout_size': out_size,
        'stderr': base64.b64encode(stderr).decode('ascii'),
        'result': json.loads(line) if line else None,
        'dirty': left > 0 or integrity() != BASELINE,
    }
    return reply

class _CappedSink(io.RawIOBase):
    """What the tests print, kept up to cap bytes (the head, or with tail=True the end); the rest is counted only."""
    def __init__(self, cap, tail=False):
        self.cap, self.tail, self.data, self.size = cap, tail, bytearray(), 0

    def writable(self):
        return True

    def write(self, b):
        n = len(b)
        self.size += n
        if self.tail:
            self.data += bytes(b[-self.cap:])
            del self.data[:-self.cap]
        elif len(self.data) < self.cap:
            self.data += bytes(b[:self.cap - len(self.data)])
        return n

def harness_state():
    """What tests could change of this server and nobody puts back: a change makes the server replace itself."""
    import builtins, threading
    return (integrity(), sys.getrecursionlimit(), getattr(sys, 'get_int_max_str_digits', lambda: 0)(), os.getcwd(),
            threading.active_count(), sorted((name, id(value)) for name, value in builtins.__dict__.items()))

def run_inline(job):
    """A harness job in this process: the tests with fresh globals, their output captured, their time bounded by
    the deadline (an exception raised into them), their memory by this server's address-space limit."""
    memory = job['limits'].get('memory')
    if memory is not None and current.get('memory') != memory:
        # this server's own size comes on top of what the tests may take
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = memory + (64 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
        current['memory'] = memory
        current['state'] = harness_state()
    before = current['state']
    # a fresh seed, as a forked child gets one (random reseeds itself after a fork)
    random = sys.modules.get('random')
    if random is not None:
        random.seed()
    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = _CappedSink(job['limits'].get('output', 1 << 20)), _CappedSink(64 * 1024, tail=True)
    sys.stdin = io.TextIOWrapper(io.BytesIO(), encoding='utf-8')
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(out), encoding='utf-8', errors='backslashreplace')
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(err), encoding='utf-8', errors='backslashreplace', line_buffering=True)
    results = []
    started, cpu0 = time.monotonic(), time.thread_time()
    timeout = job['timeout_ms'] / 1000.0
    # pid -1: the job is this process (on_alarm raises into the tests instead of killing a child)
    current.update(pid=-1, deadline=started + timeout, timed_out=False)
    memory_error = False
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            harness(job, DATA, results.append)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            current['pid'] = 0
    except HarnessDeadline:
        pass
    except MemoryError:
        memory_error = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    sys.stdin, sys.stdout, sys.stderr = saved
    ms, cpu = (time.monotonic() - started) * 1000, (time.thread_time() - cpu0) * 1000
    timed_out = current['timed_out']
    result = None if timed_out or not results else results[0]
    out_of_memory = memory_error or (result or {}).get('result') == 'memory'
    if out_of_memory:
        result = {'result': 'memory'}
    return {
        'id': job['id'], 'exit': 0, 'signal': None, 'ms': ms, 'cpu': cpu, 'timed_out': timed_out,
        'stdout': base64.b64encode(bytes(out.data)).decode('ascii'), 'stdout_size': out.size,
        'stderr': base64.b64encode(bytes(err.data)).decode('ascii'),
        'result': result,
        # after a memory error or a timeout the interpreter may hold what the tests left: a fresh server
        'dirty': out_of_memory or timed_out or harness_state() != before,
    }

def write_all(fd, data):
    while data:
        n = os.write(fd, data)
        data = data[n:]

def main():
    # what the server holds stays in pages its children share (the collector would touch, and so copy, them)
    import gc
    gc.freeze()
    if ISOLATED and os.getpid() != 2:
        sys.stderr.write('codegauge fork server: refusing to run outside its own pid namespace\n')
        sys.exit(70)
    control = os.fdopen(CONTROL, 'rb', buffering=0)
    reader = io.BufferedReader(control)
    if not INLINE_HARNESS:
        prefork_next()
    write_all(CONTROL, b'{"ready":1}\n')
    if INLINE_HARNESS:
        current['state'] = harness_state()
    for line in reader:
        job = json.loads(line)
        try:
            reply = run_inline(job) if INLINE_HARNESS and job.get('kind') == 'harness' else run_job(job)
        except Exception as e:
            reply = {'id': job.get('id'), 'lost': '%s: %s' % (type(e).__name__, e), 'dirty': True}
        write_all(CONTROL, (json.dumps(reply) + '\n').encode('ascii'))
        if reply.get('dirty'):
            break
        if not INLINE_HARNESS and not NEXT:
            prefork_next()

main()
`;
