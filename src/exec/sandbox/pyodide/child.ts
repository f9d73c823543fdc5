/**
 * The two programs of the pyodide sandbox (see pyodide.ts): the script its child node processes run, and the Python
 * harness that script loads into the interpreter. Kept as text: the child is started from a file of its own, with
 * the permission model allowing it to read only that file and the pyodide package. No backquote or dollar-brace may
 * appear in either text (they are raw template strings).
 */

export const PYODIDE_CHILD_SCRIPT = String.raw`// codegauge's pyodide child: one Python-in-WebAssembly interpreter that runs the programs the parent sends, one at a
// time. Started with --disallow-code-generation-from-strings and the permission model (reads of the pyodide folder
// and this file only: no writes, no child processes, no workers, no addons). One JSON line each way per program.
const proc = globalThis.process;
const [dir, memoryArg] = proc.argv.slice(2);
const fail = (e) => {
  try {
    proc.stdout.write(JSON.stringify({ fatal: String(e?.stack ?? e).slice(0, 4000) }) + '\n', () => proc.exit(70));
  } catch {
    proc.exit(70);
  }
};
proc.on('uncaughtException', fail);
proc.on('unhandledRejection', fail);
async function main() {
  const { constants: fsConstants } = await import('node:fs');
  const { pathToFileURL } = await import('node:url');
  const { StringDecoder } = await import('node:string_decoder');

  const send = (message) => proc.stdout.write(JSON.stringify(message) + '\n');

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
  const DEVICE = '/dev/codegauge';

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
          if (gateClosed && (args[2] & O_WRITE) && pyModule?.UTF8ToString(args[1]) !== DEVICE) dirty.add('a file was opened for writing');
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

  // stdout is the channel to the parent: nothing else may print there
  console.log = console.info = console.debug = console.error;
  const started = performance.now();
  const { loadPyodide } = await import(pathToFileURL(dir + 'pyodide.mjs').href);
  const py = await loadPyodide({
    indexURL: dir,
    jsglobals: {},
    env: { HOME: '/home/pyodide', LANG: 'C.UTF-8' },
    stdout: () => {},
    stderr: () => {},
  });
  pyModule = py._module;
  for (const name of ['js', 'pyodide_js']) py.unregisterJsModule(name);

  // Nothing reachable from globalThis opens the network or the host any more.
  for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'Request', 'Response', 'Headers', 'FormData', 'require', 'module', 'process']) {
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
  // The harness's channel to this process: result and dirty reports, one line each.
  let deviceLine = '';
  const deviceLines = [];
  {
    const FS = py.FS;
    const id = FS.makedev(64, 0);
    FS.registerDevice(id, {
      open() {},
      close() {},
      read() {
        return 0;
      },
      write(stream, buffer, offset, length) {
        deviceLine += Buffer.from(buffer.subarray(offset, offset + length)).toString('latin1');
        let nl;
        while ((nl = deviceLine.indexOf('\n')) >= 0) {
          deviceLines.push(deviceLine.slice(0, nl));
          deviceLine = deviceLine.slice(nl + 1);
        }
        return length;
      },
    });
    FS.mkdev(DEVICE, id);
  }

  const harnessGlobals = py.toPy({});
  py.runPython(HARNESS, { globals: harnessGlobals, filename: '<codegauge>' });
  const runJob = harnessGlobals.get('run_job');
  const jobData = harnessGlobals.get('JOB');
  const python = harnessGlobals.get('PYTHON_VERSION');
  send({ ready: true, python, loadMs: Math.round(performance.now() - started) });

  function runOne(message) {
    job = { stdout: [], stdoutBytes: 0, stderr: Buffer.alloc(0), outputBytes: message.outputBytes, outputExceeded: false };
    const input = message.stdin;
    let given = false;
    py.setStdin({
      stdin() {
        if (given) return null;
        given = true;
        return input;
      },
      autoEOF: true,
    });
    jobData.set('code', message.code);
    jobData.set('file', message.file);
    deviceLines.length = 0;
    deviceLine = '';
    exitStatus = undefined;
    blocked = undefined;
    let failure;
    const t0 = performance.now();
    gateClosed = true;
    try {
      runJob();
    } catch (e) {
      failure = e;
    } finally {
      gateClosed = false;
    }
    const ms = performance.now() - t0;
    let exit = null;
    for (const line of deviceLines) {
      if (line.startsWith('dirty ')) dirty.add(line.slice(6));
      else if (line.startsWith('exit ')) exit = Number(line.slice(5));
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
    const stdout = Buffer.concat(job.stdout).toString('utf8');
    const outputExceeded = job.outputExceeded;
    job = undefined;
    return { id: message.id, exit, stdout, stderr: stderrText.slice(-65536), outputExceeded, ms: Math.round(ms), dead, dirty: [...dirty] };
  }

  const decoder = new StringDecoder('utf8');
  let pending = '';
  proc.stdin.on('data', (chunk) => {
    pending += decoder.write(chunk);
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const reply = runOne(JSON.parse(line));
      send(reply);
      if (reply.dead || reply.dirty.length) {
        proc.stdin.pause();
        proc.stdout.write('', () => proc.exit(0));
        return;
      }
    }
  });
  proc.stdin.on('end', () => proc.exit(0));
}
main().catch(fail);
`;

export const PYODIDE_HARNESS = String.raw`# codegauge's harness inside the pyodide child. It lives in a private namespace that no module refers to; the child
# script calls run_job() with the gate closed, so nothing that runs from here can reach JavaScript.
import atexit, builtins, gc, io, os, random, sys, traceback, warnings

PYTHON_VERSION = '%d.%d.%d' % sys.version_info[:3]
JOB = {}

# Modules a program often imports, loaded once (importing typing alone takes tens of milliseconds in WebAssembly).
for _name in ('abc', 'array', 'bisect', 'cmath', 'collections', 'collections.abc', 'copy', 'dataclasses', 'datetime',
              'decimal', 'enum', 'fractions', 'functools', 'hashlib', 'heapq', 'itertools', 'json', 'math', 'numbers',
              'operator', 'random', 're', 'statistics', 'string', 'struct', 'textwrap', 'time', 'typing', 'unicodedata',
              'linecache', 'tokenize'):
    try:
        __import__(_name)
    except ImportError:
        pass
import linecache, re, signal

_DEVICE = '/dev/codegauge'
_state = {'fd': -1, 'harness': True}
_write = os.write


def _report(line):
    fd = _state['fd']
    if fd >= 0:
        try:
            _write(fd, (line + '\n').encode('utf-8', 'backslashreplace'))
        except OSError:
            pass


# Events that hand a program the means to change what the next program sees (frames, the garbage collector's view
# of every object, code and class attributes, tracing, other audit hooks) or to leave the interpreter: after one of
# them the interpreter is not reused.
_DIRTY_EVENTS = frozenset((
    'sys._getframe', 'sys._current_frames', 'sys._current_exceptions', 'sys.settrace', 'sys.setprofile',
    'sys.addaudithook', 'sys.monitoring.register_callback', 'gc.get_objects', 'gc.get_referrers', 'gc.get_referents',
    'os.putenv', 'os.unsetenv', 'os.chdir',
    'os.system', 'os.kill', 'os.killpg', 'os.fork', 'os.forkpty', 'os.exec', 'os.posix_spawn', 'os.spawn',
    'subprocess.Popen', 'signal.pthread_kill', 'function.__new__', 'code.__new__',
))
_DIRTY_PREFIXES = ('ctypes.', 'socket.', 'shutil.', 'sys.monitoring.', 'os.exec', 'os.spawn', 'os.posix_spawn', 'cpython.')
_DIRTY_IMPORTS = frozenset(('ctypes', '_ctypes'))


# Reading a frame (tb_frame, gi_frame...) is such a reach; setting __code__ or __defaults__ is one only on a function
# the program did not make itself (namedtuple and dataclasses set them on their own), the ids of which fill _protected.
_protected = set()


def _make_hook(report, state, events, prefixes, imports, protected):
    def hook(event, args):
        if state['harness']:
            return
        if event == 'object.__getattr__':
            if args[1].endswith('frame'):
                report('dirty the program read ' + args[1])
        elif event == 'object.__setattr__' or event == 'object.__delattr__':
            if id(args[0]) in protected:
                report('dirty the program changed ' + args[1] + ' of a function it did not make')
        elif event in events or event.startswith(prefixes) or event == 'import' and args[0] in imports:
            report('dirty the program used ' + (event if event != 'import' else 'import ' + args[0]))
    return hook


sys.addaudithook(_make_hook(_report, _state, _DIRTY_EVENTS, _DIRTY_PREFIXES, _DIRTY_IMPORTS, _protected))
del _make_hook

# What a program may change and is put back after it (rebinding these is ordinary program behaviour).
_modules = sys.modules
_SYS_LISTS = ('path', 'meta_path', 'path_hooks', 'warnoptions')
_sys_lists = {name: (getattr(sys, name), list(getattr(sys, name))) for name in _SYS_LISTS}
_path_cache = (sys.path_importer_cache, dict(sys.path_importer_cache))
_warning_filters = (warnings.filters, list(warnings.filters))
_recursion_limit = sys.getrecursionlimit()
_int_digits = sys.get_int_max_str_digits()
_switch_interval = sys.getswitchinterval()
_gc_threshold = gc.get_threshold()
_std = (sys.stdin, sys.stdout, sys.stderr)
_HEAPTYPE = 1 << 9
_TYPE_SUBCLASS = 1 << 31
# tuples and frozensets cannot change what they hold; import machinery objects are not program state
_MUTABLE_CONTAINERS = frozenset((dict, list, set))
_python_kinds = {}
_js_kinds = {}
_LEAVES = frozenset((str, int, float, bool, bytes, type(None), complex, type(len), type(lambda: 0), type(str.join), type(int.__add__), type(type.__dict__['__name__']), type(type.__dict__['__flags__']), classmethod, staticmethod, property, type(sys)))


def _clear_caches():
    for cache in (getattr(re, '_cache', None), getattr(re, '_cache2', None), linecache.cache, getattr(__import__('encodings'), '_cache', None)):
        if isinstance(cache, dict):
            cache.clear()
    random.seed()


def _inner_kinds(values_or_kinds):
    # the kinds of value worth a look inside; most namespaces hold only functions, descriptors and constants, and
    # this finds that out with C loops (map, set) instead of one Python step per value
    kinds = values_or_kinds if type(values_or_kinds) is set else set(map(type, values_or_kinds))
    kinds -= _LEAVES
    return {k for k in kinds if k in _MUTABLE_CONTAINERS or k.__flags__ & _TYPE_SUBCLASS or k.__flags__ & _HEAPTYPE and k.__dictoffset__ and k not in _METADATA} if kinds else kinds


def _walk(names, labelled):
    """What lies within three steps of every module's namespace: the objects themselves, compared by identity (or
    equality), so that rebinding or mutating any of them shows. Written for pyodide, where every call of a builtin
    function costs a trip through JavaScript: per object only slot operations, per container a few calls."""
    acc = []
    seen = {}
    for name in names:
        module = _modules.get(name)
        acc += ((name, module),) if labelled else (module,)
        if type(module) is not _ModuleType:
            continue
        # the namespace itself is put back after every program (_restore_namespaces): only what it holds is walked
        namespace = module.__dict__
        inner = _inner_kinds(namespace.values())
        if not inner:
            continue
        queue = [(v, 2, (name, k) if labelled else None) for k, v in namespace.items() if type(v) in inner]
        for obj, depth, where in queue:  # the loop also takes what is appended on the way
            kind = type(obj)
            if kind.__flags__ & _TYPE_SUBCLASS:
                if obj in seen or not obj.__flags__ & _HEAPTYPE:  # a class hashes by identity
                    continue
                seen[obj] = True
                obj = obj.__dict__  # its attributes (a fresh proxy each time, never a key of seen)
                kind = dict
            else:
                key = id(obj)
                if key in seen:
                    continue
                seen[key] = True
            if kind is dict:
                values = obj.values()
                if labelled:
                    acc += [((where, k), v) for k, v in obj.items()]
                else:
                    acc += obj
                    acc += values
            elif kind is list or kind is set:
                values = obj
                acc += [((where, '[]'), v) for v in obj] if labelled else obj
            else:
                if kind not in _python_kinds:
                    if kind in _js_kinds or issubclass(kind, _JsProxy):
                        _js_kinds[kind] = True
                        continue
                    _python_kinds[kind] = True
                try:
                    d = object.__getattribute__(obj, '__dict__')
                except Exception:
                    continue
                if type(d) is dict:
                    queue += ((d, depth, (where, '__dict__') if labelled else None),)
                continue
            # (no lengths: a shorter or longer container shifts everything after it)
            if depth > 1:
                kinds = set(map(type, values))
                kinds -= _LEAVES
                if kinds:
                    inner = _inner_kinds(kinds)
                    if inner:
                        queue += [(v, depth - 1, where) for v in values if type(v) in inner]
    extra = (hash(tuple(os.environ.items())), tuple(_handler_key(s) for s in _signals), tuple(len(_abc_dump(c)[0]) for c in _abcs),
             atexit._ncallbacks(), gc.isenabled(), len(gc.callbacks))
    acc += (('process', extra),) if labelled else (extra,)
    return acc


from pyodide.ffi import JsProxy as _JsProxy
_ModuleType = type(sys)
import importlib.machinery as _machinery, zipimport as _zipimport
_METADATA = frozenset((_ModuleType, _machinery.ModuleSpec, _machinery.SourceFileLoader, _machinery.SourcelessFileLoader,
                       _machinery.ExtensionFileLoader, _machinery.FileFinder, _zipimport.zipimporter,
                       getattr(getattr(re, '_constants', None), '_NamedIntConstant', _ModuleType)))
# import js and import pyodide_js are gone (the gate refuses any JavaScript object anyway)
for _name in [n for n, m in _modules.items() if isinstance(m, _JsProxy) or n.startswith(('js.', 'pyodide_js.'))]:
    del _modules[_name]
import _signal
from _abc import _get_dump as _abc_dump


def _handler_key(signum):
    handler = _signal.getsignal(signum)
    return handler if type(handler) is int or handler is None else id(handler)


# the signals a program can deliver to itself here (raise_signal, alarm, setitimer) and would plausibly handle
_signals = [getattr(signal, n) for n in ('SIGINT', 'SIGTERM', 'SIGALRM', 'SIGVTALRM', 'SIGPROF', 'SIGUSR1', 'SIGUSR2', 'SIGHUP', 'SIGCHLD', 'SIGPIPE', 'SIGQUIT', 'SIGABRT', 'SIGSEGV', 'SIGFPE') if hasattr(signal, n)]


def _put_back():
    """Undoes what a program may change in the ordinary course of things; the fingerprint catches the rest."""
    for name in list(_modules):
        if name not in _base_set:
            del _modules[name]
    for name, (lst, saved) in _sys_lists.items():
        if getattr(sys, name, None) is not lst:
            setattr(sys, name, lst)
        if lst != saved:
            lst[:] = saved
    cache, saved = _path_cache
    if sys.path_importer_cache is not cache:
        sys.path_importer_cache = cache
    if len(cache) != len(saved) or any(cache.get(k) is not v for k, v in saved.items()):
        cache.clear()
        cache.update(saved)
    filters, saved = _warning_filters
    if warnings.filters is not filters:
        warnings.filters = filters
    if filters != saved:
        filters[:] = saved
        warnings._filters_mutated()
    sys.stdin, sys.stdout, sys.stderr = _base_std
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = _base_std
    sys.argv = _argv
    _argv[:] = ['']
    sys.setrecursionlimit(_recursion_limit)
    sys.set_int_max_str_digits(_int_digits)
    sys.setswitchinterval(_switch_interval)
    gc.set_threshold(*_gc_threshold)
    if not gc.isenabled():
        gc.enable()
    _clear_caches()


def _restore_namespaces():
    """Module attributes a program rebound (math.sqrt = ..., builtins.len = ...) are put back, builtins first."""
    for name, module, namespace, saved in _base_namespace_items:
        if _modules.get(name) is not module:
            _modules[name] = module
        namespace.clear()
        namespace.update(saved)


def _fresh_std():
    global _std
    _std = (
        io.TextIOWrapper(io.BufferedReader(io.FileIO(0, 'r', closefd=False)), encoding='utf-8'),
        io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, 'w', closefd=False)), encoding='utf-8', errors='backslashreplace'),
        io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, 'w', closefd=False)), encoding='utf-8', errors='backslashreplace', line_buffering=True),
    )


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


def run_job():
    _state['harness'] = True
    _state['fd'] = os.open(_DEVICE, os.O_WRONLY)
    code = 0
    try:
        _fresh_std()
        sys.stdin, sys.stdout, sys.stderr = _std
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = _std
        source = JOB['code']
        filename = JOB['file']
        sys.argv = [filename]
        main = {'__name__': '__main__', '__file__': filename, '__builtins__': builtins, '__doc__': None, '__package__': None, '__spec__': None, '__loader__': None}
        try:
            compiled = compile(source, filename, 'exec')
        except (SyntaxError, ValueError) as e:
            sys.stderr.write(''.join(traceback.format_exception_only(type(e), e)))
            code = 1
        else:
            _state['harness'] = False
            try:
                exec(compiled, main)
            except SystemExit as e:
                _state['harness'] = True
                code = _exit_code(e)
            except BaseException as e:
                _state['harness'] = True
                try:
                    traceback.print_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None)
                except BaseException:
                    sys.stderr.write(type(e).__name__ + '\n')
                code = 1
            _state['harness'] = False
            try:
                atexit._run_exitfuncs()
            except BaseException:
                pass
            _state['harness'] = True
            atexit._clear()
        for stream in (sys.stdout, sys.stderr, _std[1], _std[2]):
            try:
                stream.flush()
            except BaseException:
                pass
        # what the program made goes (its finalizers run here, still behind the gate), then what it changed
        main.clear()
        del main
        _state['harness'] = False
        gc.collect()
        _state['harness'] = True
        _restore_namespaces()
        _put_back()
        if _walk(_base_names, False) != _baseline:
            _report('dirty the program changed interpreter state (%s)' % _first_change())
    finally:
        _state['harness'] = True
        _report('exit %d' % code)
        fd = _state['fd']
        _state['fd'] = -1
        os.close(fd)


# The baseline every program starts from. Exit functions registered so far would run only when the interpreter
# ends, which it never does; a program's own run when it ends, as in CPython.
atexit._clear()
_argv = sys.argv = ['']
_fresh_std()
_base_std = _std
_base_names = tuple(_modules)
_base_set = frozenset(_base_names)
_put_back()
gc.collect()
# builtins first: the rest of the clean-up looks names up there
_base_namespace_items = sorted(((name, m, m.__dict__, dict(m.__dict__)) for name, m in _modules.items() if isinstance(getattr(m, '__dict__', None), dict)), key=lambda item: item[0] != 'builtins')
# abstract base classes keep what register() adds in C, out of the walk's sight: their registries are counted
_abcs = list({id(v): v for m in _modules.values() if type(m) is _ModuleType for v in m.__dict__.values() if isinstance(v, type) and '_abc_impl' in v.__dict__}.values())
_baseline = _walk(_base_names, False)
_protected.update(id(o) for o in _baseline if type(o) is type(_report))
_baseline_labelled = _walk(_base_names, True)


def _first_change():
    for (where, now), (_, then) in zip(_walk(_base_names, True), _baseline_labelled):
        if now is not then and now != then:
            return _label(where)
    return 'the number of objects'


def _label(where):
    parts = []
    while type(where) is tuple:
        where, last = where
        parts.append(str(last))
    parts.append(str(where))
    return '.'.join(reversed(parts))
gc.freeze()
`;
