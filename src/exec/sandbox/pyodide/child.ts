/**
 * The programs of the pyodide sandbox (see package.ts): the script its child node processes run, and the Python that
 * script runs in the interpreter. Kept as text: the child is started from a file of its own, with the permission model
 * allowing it to read only that file, the pyodide package and the snapshot. No backquote or dollar-brace may appear
 * in them (they are raw template strings).
 */

export const PYODIDE_CHILD_SCRIPT = String.raw`// codegauge's pyodide child: one Python-in-WebAssembly interpreter. Started with --disallow-code-generation-from-
// strings and the permission model (reads of the pyodide folder, this file and the snapshot only; no writes but the
// snapshot's when making it; no child processes, workers or addons). Role 'candidate': one job (a program, or a
// program serving calls), then the child ends: the next job gets a fresh interpreter. Role 'harness': the tests of
// job after job. Role 'snapshot': loads the interpreter, writes its memory snapshot (which the others load in a
// fraction of the time) and ends. Jobs and replies are JSON lines on fd 3 (as the other job servers'); a job's calls
// and replies go through /dev/codegauge-data, read and written synchronously on fd 4.
const proc = globalThis.process;
const [dir, memoryArg, role, snapshotPath, filesArg] = proc.argv.slice(2);
const CONTROL = 3;
const DATA = 4;
async function main() {
  const { constants: fsConstants, readSync, writeSync, readFileSync, writeFileSync } = await import('node:fs');
  const { pathToFileURL } = await import('node:url');
  const { Socket } = await import('node:net');
  const writeLine = (fd, text) => {
    const data = Buffer.from(text + '\n', 'utf8');
    let off = 0;
    while (off < data.length) {
      try {
        off += writeSync(fd, data, off);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
      }
    }
  };
  const send = (message) => writeLine(CONTROL, JSON.stringify(message));
  const fail = (e) => {
    try {
      send({ lost: 'the pyodide ' + role + ' stopped: ' + String(e?.stack ?? e).slice(0, 2000), dirty: true });
    } catch {}
    proc.exit(70);
  };
  proc.on('uncaughtException', fail);
  proc.on('unhandledRejection', fail);

  // The permission model forbids process.binding; emscripten's NODEFS only reads the open() flags from it.
  proc.binding = (name) => {
    if (name === 'constants') return { fs: fsConstants };
    throw new Error('process.binding is not available');
  };
  // Node 20's permission model has no network switch: every TCP, IPC and UDP route of this process fails here instead.
  const refuse = (what) => function () {
    throw new Error('codegauge: ' + what + ' is disabled in the pyodide sandbox');
  };
  {
    const net = await import('node:net');
    const dgram = await import('node:dgram');
    net.Socket.prototype.connect = refuse('net.connect');
    net.Server.prototype.listen = refuse('net.listen');
    dgram.Socket.prototype.bind = refuse('dgram');
    dgram.Socket.prototype.send = refuse('dgram');
    dgram.Socket.prototype.connect = refuse('dgram');
  }

  // Memory: the interpreter's linear memory may not grow past the limit; a failed growth is Python's MemoryError.
  let memoryFull = false;
  const memoryPages = Math.max(1, Math.min(65536, Math.floor((Number(memoryArg) * 1024 * 1024) / 65536)));
  {
    const RealMemory = WebAssembly.Memory;
    const Memory = function Memory(descriptor) {
      if (descriptor && !descriptor.shared) descriptor = { ...descriptor, maximum: Math.min(descriptor.maximum ?? memoryPages, memoryPages) };
      return new RealMemory(descriptor);
    };
    Memory.prototype = RealMemory.prototype;
    WebAssembly.Memory = Memory;
    const grow = RealMemory.prototype.grow;
    RealMemory.prototype.grow = function (delta) {
      try {
        return grow.call(this, delta);
      } catch (e) {
        memoryFull = true;
        throw e;
      }
    };
  }

  // The gate: while a program runs, the interpreter may call only the imports plain Python needs (system calls on its
  // in-memory file system, clocks, randomness, memory growth, function trampolines). Everything that touches a
  // JavaScript object (the FFI: import js, pyodide_js, JsProxy), sockets, dlopen, ctypes' libffi, system() is
  // refused there, whatever Python does to hide or restore those modules. Calls that change state a later program would
  // see (files, the working folder, descriptors, timers, signals) mark the interpreter dirty: it is not reused.
  let gateClosed = false;
  let job;
  const outputError = new Error('codegauge: output limit exceeded');
  const dirty = new Set();
  let blocked;
  let exitStatus;
  const ALLOWED_WHILE_CLOSED = /^(__syscall_|fd_|clock_|environ_|random_get$|emscripten_get_now$|emscripten_date_now$|emscripten_get_heap_max$|emscripten_resize_heap$|_PyEM_|_Py_|_tzset_js$|_localtime_js$|_gmtime_js$|_mktime_js$|_timegm_js$|_emscripten_get_progname$|can_run_sync_js$|JsvNoValue_Check$|_abort_js$|__assert_fail$|emscripten_runtime_keepalive_|_emscripten_runtime_keepalive_clear$|proc_exit$|exit$|_munmap_js$|__call_sighandler$|_setitimer_js$|capture_stderr$|restore_stderr$)/;
  const REFUSED_SYSCALLS = /^__syscall_(socket|connect|bind|listen|accept4|sendto|sendmsg|recvfrom|recvmsg|getsockopt|getsockname|getpeername)$/;
  const MUTATING = /^(__syscall_(mkdirat|mknodat|unlinkat|rmdir|renameat|symlinkat|chmod|fchmod|fchmodat2|fchownat|fchown32|truncate64|ftruncate64|utimensat|chdir|fchdir|pipe|dup|dup3|fallocate)|_setitimer_js|__call_sighandler|_munmap_js)$/;
  const O_WRITE = 1 | 2 | 64 | 512 | 1024; // O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND (emscripten's values)
  const EACCES = 2;
  const REFUSED_LOOKUPS = { getaddrinfo: -2, getnameinfo: -2, _emscripten_lookup_name: 0, getprotobyname: 0 };
  let pyModule; // emscripten's Module, for reading a path argument
  const DEVICES = new Set(['/dev/codegauge', '/dev/codegauge-data']);

  function gateImports(env) {
    for (const name of Object.keys(env)) {
      const original = env[name];
      if (typeof original !== 'function') continue;
      let wrapper;
      if (REFUSED_SYSCALLS.test(name)) {
        wrapper = function (...args) {
          if (gateClosed) return -EACCES;
          return original.apply(this, args);
        };
      } else if (name in REFUSED_LOOKUPS) {
        // name lookups fail as the C library would (EAI_NONAME, or no result)
        wrapper = function (...args) {
          if (gateClosed) return REFUSED_LOOKUPS[name];
          return original.apply(this, args);
        };
      } else if (name === '__syscall_openat') {
        wrapper = function (...args) {
          if (gateClosed && (args[2] & O_WRITE) && !DEVICES.has(pyModule?.UTF8ToString(args[1]))) dirty.add('a file was opened for writing');
          return original.apply(this, args);
        };
      } else if (name === 'fd_write') {
        // a program past the output cap is stopped at its next write, even one that catches the error
        wrapper = function (...args) {
          if (job && job.outputExceeded) throw outputError;
          return original.apply(this, args);
        };
      } else if (name === 'fd_close') {
        wrapper = function (...args) {
          if (gateClosed && args[0] <= 2) dirty.add('a standard stream was closed');
          return original.apply(this, args);
        };
      } else if (name === 'proc_exit' || name === 'exit') {
        wrapper = function (...args) {
          if (exitStatus === undefined) exitStatus = args[0];
          return original.apply(this, args);
        };
      } else if (MUTATING.test(name)) {
        wrapper = function (...args) {
          if (gateClosed) dirty.add('state a later program would see was changed (' + name + ')');
          return original.apply(this, args);
        };
      } else if (!ALLOWED_WHILE_CLOSED.test(name)) {
        wrapper = function (...args) {
          if (gateClosed) {
            blocked ??= name;
            throw new Error('codegauge: the program reached past Python (' + name + '); refused');
          }
          return original.apply(this, args);
        };
      } else continue;
      // emscripten reads the signature and other properties off the import functions
      for (const key of Object.keys(original)) wrapper[key] = original[key];
      if (original.sig !== undefined) wrapper.sig = original.sig;
      env[name] = wrapper;
    }
  }
  {
    const realInstantiate = WebAssembly.instantiate;
    WebAssembly.instantiate = function (source, imports) {
      if (imports && imports.env && !imports.env.__codegaugeGated) {
        gateImports(imports.env);
        Object.defineProperty(imports.env, '__codegaugeGated', { value: true });
      }
      return realInstantiate.call(WebAssembly, source, imports);
    };
  }

  // A program's files: counted against --memory and the disk limit together (the in-memory file system's bytes live
  // outside the WebAssembly memory that --memory caps); past it, writes fail with ENOSPC as on a full disk.
  const filesCap = Math.max(1, Number(filesArg) || 64) * 1024 * 1024;
  let filesBytes = 0;

  const started = performance.now();
  const { loadPyodide } = await import(pathToFileURL(dir + 'pyodide.mjs').href);
  const py = await loadPyodide({
    indexURL: dir,
    jsglobals: {},
    env: { HOME: '/home/pyodide', LANG: 'C.UTF-8' },
    stdout: () => {},
    stderr: () => {},
    ...(role === 'snapshot' ? { _makeSnapshot: true } : snapshotPath ? { _loadSnapshot: readFileSync(snapshotPath) } : {}),
  });
  pyModule = py._module;
  if (role === 'snapshot') {
    py.runPython(PRELOAD);
    writeFileSync(snapshotPath, py.makeMemorySnapshot());
    send({ ready: 1, snapshot: true });
    proc.exit(0);
  }
  for (const name of ['js', 'pyodide_js']) py.unregisterJsModule(name);

  // Nothing reachable from globalThis opens the network or the host any more.
  for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'Request', 'Response', 'Headers', 'FormData', 'require', 'module']) {
    try {
      delete globalThis[name];
    } catch {
      // not configurable
    }
  }
  for (const name of ['kill', 'dlopen', 'getBuiltinModule', '_linkedBinding', 'binding', 'chdir', 'setuid', 'setgid', 'seteuid', 'setegid', 'setgroups', 'initgroups', '_debugProcess', '_kill', 'abort', 'openStdin']) {
    try {
      if (name in proc) proc[name] = refuse('process.' + name);
    } catch {
      // read-only
    }
  }

  {
    const FS = py.FS;
    const MEMFS = FS.filesystems.MEMFS;
    const ENOSPC = py._module.ERRNO_CODES?.ENOSPC ?? 51;
    const used = (node) => (node && typeof node.usedBytes === 'number' ? node.usedBytes : 0);
    const grow = (node, size) => {
      const growth = size - used(node);
      if (growth > 0 && filesBytes + growth > filesCap) throw new FS.ErrnoError(ENOSPC);
    };
    // MEMFS hands its operations to each node from a table made at start: the table's entries are wrapped
    const table = MEMFS.ops_table ?? {};
    const wrap = (holders, name, wrapper) => {
      for (const holder of holders) if (holder && typeof holder[name] === 'function' && !holder[name].codegauge) {
        const original = holder[name];
        holder[name] = wrapper(original);
        holder[name].codegauge = true;
      }
    };
    wrap([MEMFS.stream_ops, table.file?.stream], 'write', (write) => function (stream, buffer, offset, length, position, canOwn) {
      const node = stream.node;
      const before = used(node);
      grow(node, position + length);
      const r = write.call(this, stream, buffer, offset, length, position, canOwn);
      filesBytes += used(node) - before;
      return r;
    });
    wrap([MEMFS.node_ops, table.file?.node], 'setattr', (setattr) => function (node, attr) {
      const before = used(node);
      if (attr && attr.size !== undefined) grow(node, attr.size);
      const r = setattr.call(this, node, attr);
      filesBytes += used(node) - before;
      return r;
    });
    wrap([MEMFS.node_ops, table.dir?.node], 'unlink', (unlink) => function (parent, name) {
      let node;
      try {
        node = FS.lookupNode(parent, name);
      } catch {}
      const r = unlink.call(this, parent, name);
      if (node && !node.nlink) filesBytes -= used(node);
      return r;
    });
  }

  // Output: stdout kept up to the cap (a program writing more is stopped), stderr's tail.
  py.setStdout({
    write(bytes) {
      if (!job) return bytes.length;
      job.stdoutBytes += bytes.length;
      if (job.stdoutBytes > job.outputBytes) {
        job.outputExceeded = true;
        throw outputError;
      }
      job.stdout.push(Buffer.from(bytes));
      return bytes.length;
    },
  });
  py.setStderr({
    write(bytes) {
      if (!job) return bytes.length;
      job.stderr = Buffer.concat([job.stderr, bytes]);
      if (job.stderr.length > 131072) job.stderr = job.stderr.subarray(job.stderr.length - 65536);
      return bytes.length;
    },
  });
  // /dev/codegauge: the Python side's reports (exit status, the harness's result), a line each.
  // /dev/codegauge-data: the job's calls and replies, read and written synchronously on fd 4.
  let deviceLine = '';
  const deviceLines = [];
  {
    const FS = py.FS;
    const report = FS.makedev(64, 0);
    FS.registerDevice(report, {
      open() {},
      close() {},
      read() {
        return 0;
      },
      write(stream, buffer, offset, length) {
        deviceLine += Buffer.from(buffer.subarray(offset, offset + length)).toString('utf8');
        let nl;
        while ((nl = deviceLine.indexOf('\n')) >= 0) {
          deviceLines.push(deviceLine.slice(0, nl));
          deviceLine = deviceLine.slice(nl + 1);
        }
        return length;
      },
    });
    FS.mkdev('/dev/codegauge', report);
    const data = FS.makedev(64, 1);
    FS.registerDevice(data, {
      open() {},
      close() {},
      read(stream, buffer, offset, length) {
        for (;;) {
          try {
            return readSync(DATA, buffer, offset, length, null);
          } catch (e) {
            if (e.code !== 'EAGAIN') return 0;
          }
        }
      },
      write(stream, buffer, offset, length) {
        let done = 0;
        while (done < length) {
          try {
            done += writeSync(DATA, buffer, offset + done, length - done);
          } catch (e) {
            if (e.code !== 'EAGAIN') throw new FS.ErrnoError(32);
          }
        }
        return length;
      },
    });
    FS.mkdev('/dev/codegauge-data', data);
  }

  const harnessGlobals = py.toPy({});
  py.runPython(PRELOAD + '\n' + BOUNDARY + '\n' + HARNESS, { globals: harnessGlobals, filename: '<codegauge>' });
  const runJob = harnessGlobals.get('run_job');
  const jobData = harnessGlobals.get('JOB');
  const python = harnessGlobals.get('PYTHON_VERSION');

  function runOne(message) {
    job = { stdout: [], stdoutBytes: 0, stderr: Buffer.alloc(0), outputBytes: message.limits?.output ?? 1048576, outputExceeded: false };
    py.setStdin({ stdin: () => null, autoEOF: true });
    jobData.clear();
    for (const key of ['kind', 'code', 'file', 'token', 'line_cap', 'prompt', 'tests', 'entry', 'call_check', 'returns']) if (message[key] !== undefined) jobData.set(key, message[key]);
    if (message.names !== undefined) jobData.set('names', py.toPy(message.names));
    deviceLines.length = 0;
    deviceLine = '';
    exitStatus = undefined;
    blocked = undefined;
    let failure;
    const t0 = performance.now();
    const cpu0 = proc.cpuUsage();
    gateClosed = true;
    try {
      runJob();
    } catch (e) {
      failure = e;
    } finally {
      gateClosed = false;
    }
    const ms = performance.now() - t0;
    const used = proc.cpuUsage(cpu0);
    let exit = null;
    let result = null;
    for (const line of deviceLines) {
      if (line.startsWith('exit ')) exit = Number(line.slice(5));
      else if (line.startsWith('result ')) result = JSON.parse(line.slice(7));
    }
    let dead = false;
    let stderrText = job.stderr.toString('utf8');
    if (failure !== undefined) {
      // os._exit, a refused import, an overflowing stack, output past the cap: this interpreter is finished
      dead = true;
      if (job.outputExceeded) exit = 1;
      else if (exitStatus !== undefined) exit = exitStatus & 0xff;
      else {
        exit = 1;
        const what = blocked ? 'codegauge: refused: the program reached past Python (' + blocked + ')' : String(failure?.message ?? failure).split('\n')[0];
        stderrText += (stderrText.endsWith('\n') || !stderrText ? '' : '\n') + (/Maximum call stack size exceeded/.test(what) ? 'RecursionError: the WebAssembly stack overflowed (maximum recursion depth exceeded)' : what) + '\n';
      }
    }
    // a program that filled the memory leaves it allocated (WebAssembly memory never shrinks): start afresh
    if (memoryFull) dead = true;
    memoryFull = false;
    let stdout = Buffer.concat(job.stdout);
    // the proof that a program's tests returned: printed here, after them; the program never held it
    if (message.kind === 'program' && failure === undefined && exit === 0 && typeof message.nonce === 'string') stdout = Buffer.concat([stdout, Buffer.from('\n' + message.nonce + '\n')]);
    const reply = {
      id: message.id, exit, signal: null, timed_out: false, ms, cpu: (used.user + used.system) / 1000,
      stdout: stdout.toString('base64'), stdout_size: job.stdoutBytes + (job.outputExceeded ? 1 : 0), stderr: Buffer.from(stderrText.slice(-65536)).toString('base64'),
      result, dirty: dead || dirty.size > 0 || role === 'candidate',
    };
    job = undefined;
    return reply;
  }

  send({ ready: 1, python, loadMs: Math.round(performance.now() - started) });
  const control = new Socket({ fd: CONTROL, readable: true, writable: false });
  control.setEncoding('utf8');
  let pending = '';
  control.on('data', (chunk) => {
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const reply = runOne(JSON.parse(line));
      send(reply);
      if (reply.dirty) proc.exit(0);
    }
  });
  control.on('end', () => proc.exit(0));
}
main().catch((e) => {
  try {
    process.stderr.write(String(e?.stack ?? e) + '\n');
  } catch {}
  process.exit(70);
});
`;

export const PYODIDE_HARNESS = String.raw`# codegauge's side of a pyodide interpreter: run_job() runs the job the child put in JOB (a program as __main__,
# a program serving calls, or the tests' harness), with the gate closed: nothing that runs from here reaches
# JavaScript. The boundary's codec, serve() and harness() are defined before this (the fork server's code).
import builtins, io, json, os, sys, traceback

PYTHON_VERSION = '%d.%d.%d' % sys.version_info[:3]

# import js and import pyodide_js are gone (the gate refuses any JavaScript object anyway)
from pyodide.ffi import JsProxy as _JsProxy
for _name in [n for n, m in sys.modules.items() if isinstance(m, _JsProxy) or n in ('js', 'pyodide_js') or n.startswith(('js.', 'pyodide_js.'))]:
    del sys.modules[_name]
JOB = {}
_REPORT = '/dev/codegauge'
_DATA = '/dev/codegauge-data'


def _report(line):
    fd = os.open(_REPORT, os.O_WRONLY)
    try:
        os.write(fd, (line + '\n').encode('utf-8', 'backslashreplace'))
    finally:
        os.close(fd)


def _fresh_std():
    std = (
        io.TextIOWrapper(io.BufferedReader(io.FileIO(0, 'r', closefd=False)), encoding='utf-8'),
        io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, 'w', closefd=False)), encoding='utf-8', errors='backslashreplace'),
        io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, 'w', closefd=False)), encoding='utf-8', errors='backslashreplace', line_buffering=True),
    )
    sys.stdin, sys.stdout, sys.stderr = std
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = std


def _exit_code(e):
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xff
    try:
        sys.stderr.write(str(code) + '\n')
    except Exception:
        pass
    return 1


def _run_main(namespace):
    # the program as __main__, as python3 program.py would run it; an error or an exit ends the job here
    source, filename = JOB['code'], JOB.get('file', 'program.py')
    try:
        compiled = compile(source, filename, 'exec')
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
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass


def run_job():
    code = 0
    _fresh_std()
    kind = JOB['kind']
    sys.argv = [JOB.get('file', 'program.py')]
    namespace = {'__name__': '__main__', '__file__': sys.argv[0], '__builtins__': builtins, '__doc__': None, '__package__': None, '__spec__': None, '__loader__': None}
    job = dict(JOB)
    if 'names' in job:
        job['names'] = list(job['names'])
    try:
        if kind == 'program':
            _run_main(namespace)
        elif kind == 'serve':
            serve(job, os.open(_DATA, os.O_RDWR), namespace, _run_main)
        else:
            harness(job, os.open(_DATA, os.O_RDWR), lambda result: _report('result ' + json.dumps(result)))
    except SystemExit as e:
        code = _exit_code(e)
    except BaseException as e:
        try:
            traceback.print_exception(type(e), e, e.__traceback__)
        except BaseException:
            sys.stderr.write(type(e).__name__ + '\n')
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    _report('exit %d' % code)
`;

export const PYODIDE_PRELOAD = String.raw`# Modules a program often imports, loaded once (into the snapshot every interpreter starts from).
for _name in ('abc', 'array', 'bisect', 'cmath', 'collections', 'collections.abc', 'copy', 'dataclasses', 'datetime',
              'decimal', 'enum', 'fractions', 'functools', 'hashlib', 'heapq', 'itertools', 'json', 'math', 'numbers',
              'operator', 'random', 're', 'statistics', 'string', 'struct', 'textwrap', 'time', 'typing', 'unicodedata',
              'linecache', 'tokenize', 'traceback', 'io', 'base64'):
    try:
        __import__(_name)
    except ImportError:
        pass
`;
