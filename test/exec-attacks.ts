import type { Problem } from '../src/exec/benchmarks/problems.js';
import type { NamedSample } from './exec-fixtures.js';

/**
 * The attack programs of the execution tests (test/exec-attacks-*.test.ts), each a real program that would forge a
 * pass, reach another sample, or exhaust a resource. A problem checks `double(x) == 2 * x`, so that a program must
 * compute to pass; `probe-*` samples pass only if nothing of an attacker before them on the same worker is visible.
 */
export const PY_DOUBLE: Problem = {
  taskId: 'attack/double', key: 'attack/double', language: 'python', format: 'human-eval', line: 1,
  prompt: 'def double(x):\n',
  tests: 'def check(candidate):\n    assert candidate(3) == 6\n    assert candidate(-4) == -8\n    assert candidate(10 ** 30) == 2 * 10 ** 30\n',
  entryPoint: 'double',
};

export const JS_DOUBLE: Problem = {
  taskId: 'attack/double-js', key: 'attack/double-js', language: 'javascript', format: 'multipl-e', line: 1,
  prompt: 'function double(x){\n',
  tests: "const assert = require('node:assert');\n\nfunction test() {\n  let candidate = double;\n  assert.deepEqual(candidate(3), 6);\n  assert.deepEqual(candidate(-4), -8);\n}\n\ntest();\n",
};

/** HumanEval-X's JavaScript convention: tests that only print a failed console.assert. */
export const JSX_DOUBLE: Problem = {
  taskId: 'JavaScript/9001', key: '9001', language: 'javascript', format: 'humaneval-x', line: 1,
  prompt: 'const double = (x) => {\n', declaration: 'const double = (x) => {\n',
  tests: 'const testDouble = () => {\n  console.assert(double(3) === 6)\n  console.assert(double(-4) === -8)\n}\n\ntestDouble()\n',
};

const py = (name: string, completion: string): NamedSample => ({ name, task_id: PY_DOUBLE.taskId, completion });
const js = (name: string, completion: string): NamedSample => ({ name, task_id: JS_DOUBLE.taskId, completion });

export const PY_CORRECT = '    return 2 * x\n';
export const PY_WRONG = '    return x\n';

/** A pass cannot be forged: each of these is a wrong answer dressed up; every one must be `failed` (or worse). */
export const PY_FORGERS: NamedSample[] = [
  py('stdin-replay', `${PY_WRONG}import sys\nsys.stdout.write('\\n' + sys.stdin.read() + '\\n')\nsys.exit(0)\n`),
  py('exit-early', `${PY_WRONG}import os\nos._exit(0)\n`),
  py('exit-in-call', '    import sys\n    sys.exit(0)\n'),
  py('atexit', `${PY_WRONG}import atexit, os\natexit.register(lambda: (print('passed'), os._exit(0)))\n`),
  py('excepthook', `${PY_WRONG}import sys\nsys.excepthook = lambda *a: None\n`),
  py('patch-assert', `${PY_WRONG}import builtins\nbuiltins.AssertionError = type('Never', (BaseException,), {})\n`),
  py('redefine-check', `${PY_WRONG}def check(candidate):\n    return None\n`),
  py('always-equal', '    class Eq:\n        def __eq__(self, other): return True\n        def __ne__(self, other): return False\n        def __bool__(self): return True\n    return Eq()\n'),
  py('always-equal-int', '    class I(int):\n        def __eq__(self, other): return True\n        __hash__ = int.__hash__\n    return I(x)\n'),
  py('always-equal-str', "    class S(str):\n        def __eq__(self, other): return True\n        __hash__ = str.__hash__\n    return S('x')\n"),
  py('frames', "    import sys\n    f = sys._getframe()\n    while f is not None:\n        if 'check' in f.f_code.co_name or f.f_code.co_filename == 'tests.py':\n            sys.stderr.write('FOUND the tests\\n')\n        f = f.f_back\n    return x\n"),
  py('gc-scan', "    import gc, sys\n    if any(isinstance(o, str) and ('candi' + 'date(-4)') in o for o in gc.get_objects()):\n        sys.stderr.write('FOUND the tests\\n')\n    return x\n"),
  py(
    'read-host',
    // the harness's files, stdin, argv and environment, and every process's, as far as /proc shows them (the
    // tests' text is looked for in two pieces, so that the program's own text does not count)
    "    import os, sys\n    found = False\n    try:\n        pids = [p for p in os.listdir('/proc') if p.isdigit()]\n    except OSError:\n        pids = []\n    for pid in pids:\n        for part in ('cmdline', 'environ'):\n            try:\n                with open('/proc/%s/%s' % (pid, part), 'rb') as fh:\n                    found = found or (b'candi' + b'date(-4)') in fh.read()\n            except OSError:\n                pass\n    for root in ('/tmp', '.'):\n        for dirpath, _, files in os.walk(root):\n            for name in files:\n                try:\n                    with open(os.path.join(dirpath, name), 'rb') as fh:\n                        found = found or (b'candi' + b'date(-4)') in fh.read(1 << 20)\n                except OSError:\n                    pass\n    if found or 'candidate' in ' '.join(sys.argv) + str(dict(os.environ)):\n        sys.stderr.write('FOUND the tests\\n')\n    return x\n",
  ),
];

/** One sample cannot touch another: attackers, each followed (on the same worker) by a probe that fails if it sees them. */
export const PY_NEIGHBOURS: NamedSample[] = [
  py('chmod-folders', "    import os\n    for p in ('.', '/tmp', '/dev/shm', os.path.expanduser('~')):\n        try:\n            os.chmod(p, 0)\n        except OSError:\n            pass\n    return 2 * x\n"),
  py('probe-after-chmod', PY_CORRECT),
  py('leave-files', "    for p in ('/tmp/cg-leak', '/dev/shm/cg-leak', 'cg-leak'):\n        try:\n            open(p, 'w').write('leak')\n        except OSError:\n            pass\n    return 2 * x\n"),
  py('probe-files', "    import os\n    return x if any(os.path.exists(p) for p in ('/tmp/cg-leak', '/dev/shm/cg-leak', 'cg-leak')) else 2 * x\n"),
  py('poison-modules', "    import math, builtins, typing, functools\n    math.sqrt = lambda v: 0\n    builtins.len = lambda v: 0\n    typing.List = int\n    functools.reduce = None\n    return 2 * x\n"),
  py('probe-modules', '    import math, typing, functools\n    ok = math.sqrt(16) == 4 and len([1, 2]) == 2 and typing.List is not int and functools.reduce is not None\n    return 2 * x if ok else x\n'),
];

/** Neighbours that need a POSIX process of their own (not pyodide): processes, System V IPC, message queues, the server. */
export const PY_PROCESS_NEIGHBOURS: NamedSample[] = [
  py('leave-process', "    import os, time\n    if os.fork() == 0:\n        os.setsid()\n        time.sleep(60)\n        os._exit(0)\n    return 2 * x\n"),
  py('probe-process', "    import os\n    mine = {os.getpid(), os.getppid(), 1}\n    others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in mine]\n    return x if others else 2 * x\n"),
  py('sysv-shm', "    import ctypes\n    libc = ctypes.CDLL(None)\n    libc.shmget(0x4347, 4096, 0o1666)\n    libc.msgget(0x4348, 0o1666)\n    libc.semget(0x4349, 1, 0o1666)\n    return 2 * x\n"),
  py('probe-sysv', "    import ctypes\n    libc = ctypes.CDLL(None)\n    return x if libc.shmget(0x4347, 0, 0) >= 0 or libc.msgget(0x4348, 0) >= 0 or libc.semget(0x4349, 0, 0) >= 0 else 2 * x\n"),
  py('posix-mq', "    import ctypes, os\n    rt = ctypes.CDLL('librt.so.1')\n    rt.mq_open(b'/cgleak', os.O_CREAT | os.O_RDWR, 0o600, None)\n    return 2 * x\n"),
  py('probe-mq', "    import ctypes, os\n    rt = ctypes.CDLL('librt.so.1')\n    return x if rt.mq_open(b'/cgleak', os.O_RDWR) >= 0 else 2 * x\n"),
  py('renice-server', "    import os, resource\n    for pid in (os.getppid(),):\n        try:\n            os.setpriority(os.PRIO_PROCESS, pid, 19)\n        except OSError:\n            pass\n        try:\n            resource.prlimit(pid, resource.RLIMIT_NOFILE, (8, 8))\n        except (OSError, ValueError):\n            pass\n    return 2 * x\n"),
  py('probe-server', "    import os\n    files = [open('/dev/null') for _ in range(20)]\n    return 2 * x if os.getpriority(os.PRIO_PROCESS, 0) < 19 and len(files) == 20 else x\n"),
];

export const PY_AFTER: NamedSample[] = [py('correct-after', PY_CORRECT), py('wrong-after', PY_WRONG)];

/** Resources are bounded: all written (a tmpfs of --disk), output, memory. */
export const PY_RESOURCES: NamedSample[] = [
  py('disk-fill', "    n = 0\n    try:\n        for i in range(100):\n            with open('/tmp/fill-%d' % i, 'wb') as fh:\n                for _ in range(8):\n                    fh.write(b'x' * (1 << 20))\n                    n += 1\n    except OSError as e:\n        raise RuntimeError('wrote %d MiB, then %s' % (n, e.strerror))\n    return 2 * x\n"),
  py('output-flood', "    import sys\n    while True:\n        sys.stdout.write('x' * 65536)\n"),
  py('memory', '    b = bytearray(10 << 30)\n    return 2 * x\n'),
];

export const JS_CORRECT = '  return 2 * x;\n}\n';
export const JS_WRONG = '  return x;\n}\n';

export const JS_FORGERS: NamedSample[] = [
  js('stdin-replay', `${JS_WRONG}const fs = require('fs');\ntry { process.stdout.write('\\n' + fs.readFileSync(0, 'utf8') + '\\n'); } catch (e) {}\nprocess.exit(0);\n`),
  js('exit-early', `${JS_WRONG}process.exit(0);\n`),
  js('exit-handler', `${JS_WRONG}process.on('exit', () => process.stdout.write('\\npassed\\n'));\n`),
  js('uncaught-handler', `${JS_WRONG}process.on('uncaughtException', () => process.exit(0));\n`),
  js('patch-assert', `${JS_WRONG}const a = require('node:assert');\na.deepEqual = () => {};\na.strictEqual = () => {};\na.equal = () => {};\n`),
  js('proxy', '  return new Proxy({}, { get: () => () => true });\n}\n'),
  js('value-of', '  return { valueOf() { return 2 * x; }, toString() { return String(2 * x); } };\n}\n'),
  js('read-host', "  const fs = require('fs');\n  let found = false;\n  try {\n    for (const p of fs.readdirSync('/proc')) {\n      for (const part of ['cmdline', 'environ']) {\n        try { if (fs.readFileSync('/proc/' + p + '/' + part, 'latin1').includes('candi' + 'date(-4)')) found = true; } catch (e) {}\n      }\n    }\n  } catch (e) {}\n  if (found || process.argv.join(' ').includes('candidate') || JSON.stringify(process.env).includes('candidate')) console.error('FOUND the tests');\n  return x;\n}\n"),
  js('child-process', "  try { require('child_process').execSync('echo spawned'); console.error('SPAWNED a process'); } catch (e) {}\n  return x;\n}\n"),
  js('addon', "  try { process.dlopen({ exports: {} }, '/lib/x86_64-linux-gnu/libc.so.6'); console.error('LOADED an addon'); } catch (e) {}\n  return x;\n}\n"),
];

export const JS_NEIGHBOURS: NamedSample[] = [
  js('poison-globals', '  globalThis.cgLeak = 1;\n  Object.prototype.cgLeak = 1;\n  Array.prototype.push = function () { return 0; };\n  JSON.stringify = () => "";\n  return 2 * x;\n}\n'),
  js('probe-globals', '  return globalThis.cgLeak || ({}).cgLeak || [].push(1) !== 1 || JSON.stringify([1]) !== "[1]" ? x : 2 * x;\n}\n'),
  js('process-wide', "  try { require('v8').setFlagsFromString('--stack-size=50'); } catch (e) {}\n  try { require('os').setPriority(process.pid, 19); } catch (e) {}\n  try { process.env.TZ = 'Pacific/Kiritimati'; } catch (e) {}\n  return 2 * x;\n}\n"),
  js('probe-process-wide', "  const deep = (n) => (n === 0 ? 0 : 1 + deep(n - 1));\n  return require('os').getPriority(process.pid) < 19 && deep(2000) === 2000 ? 2 * x : x;\n}\n"),
  js('leave-files', "  const fs = require('fs');\n  for (const p of ['/tmp/cg-leak-js', 'cg-leak-js']) { try { fs.writeFileSync(p, 'leak'); } catch (e) {} }\n  return 2 * x;\n}\n"),
  js('probe-files', "  const fs = require('fs');\n  return ['/tmp/cg-leak-js', 'cg-leak-js'].some((p) => fs.existsSync(p)) ? x : 2 * x;\n}\n"),
];

export const JS_AFTER: NamedSample[] = [js('correct-after', JS_CORRECT), js('wrong-after', JS_WRONG)];

export const JS_RESOURCES: NamedSample[] = [
  js('output-flood', "  const s = 'x'.repeat(65536);\n  for (;;) process.stdout.write(s);\n}\n"),
  js('memory', '  const a = [];\n  for (;;) a.push(new Array(1 << 20).fill(x));\n}\n'),
];
