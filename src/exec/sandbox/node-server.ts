/**
 * The node server (one per slot and role). `candidate`: each job in a fresh Worker (own isolate, globals, module
 * registry), in a process started with node's permission model (files only in its job folders; no child processes,
 * inspector, process.binding or addons), whose process-wide switches a program could turn for later ones
 * (priority, V8 flags) are taken away before the program runs, and which is replaced when anything it can check of
 * itself changed. `harness`: each job's tests in a fresh vm context. See boundary/ for the calls between them.
 */
export function nodeServerScript(codec: string, harnessContext: string): string {
  return `'use strict';\nconst CODEC = ${JSON.stringify(codec)};\nconst HARNESS_CONTEXT = ${JSON.stringify(harnessContext)};\n${NODE_SERVER_BODY}`;
}

const NODE_SERVER_BODY = String.raw`// ---- the node server: 'candidate' runs each job in a fresh Worker (own isolate, globals and module registry) under
// node's permission model; 'harness' runs each job's tests in a fresh vm context, calling the candidate's functions
// across the boundary. Jobs and replies: JSON lines on fd 3; a job's calls and replies: JSON lines on fd 4.
const fs = require('fs');
const os = require('os');
const net = require('net');
const vm = require('vm');
const { Worker } = require('worker_threads');
const ROLE = process.argv[1];
const ROOT = process.argv[2];
const CONTROL = 3;
const DATA = 4;

function lineReader(fd, cap) {
  let buf = Buffer.alloc(0);
  const chunk = Buffer.alloc(1 << 16);
  return function next() {
    for (;;) {
      const nl = buf.indexOf(10);
      if (nl >= 0) {
        const line = buf.subarray(0, nl);
        buf = buf.subarray(nl + 1);
        return line;
      }
      if (buf.length > cap) return null;
      let n;
      try {
        n = fs.readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        if (e.code === 'EAGAIN') continue;
        return null;
      }
      if (n === 0) return null;
      buf = Buffer.concat([buf, chunk.subarray(0, n)]);
    }
  };
}

function writeLine(fd, text) {
  const data = Buffer.from(text + '\n', 'utf8');
  let off = 0;
  while (off < data.length) {
    try {
      off += fs.writeSync(fd, data, off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

// Runs first in each candidate Worker, in a function scope the program cannot reach: stdio on files, the
// process-wide switches a program could turn for later ones (priority, V8 flags) taken away, then the job.
function boot(CODEC, lineReaderSource, writeLineSource) {
  const { workerData } = require('worker_threads');
  const fs = require('fs');
  const Module = require('module');
  // taken before the program runs: one that replaces JSON.stringify for its own ends does not break its replies
  const { stringify, parse } = JSON;
  const job = workerData;
  const nonce = job.nonce;
  delete job.nonce;
  const os = require('os');
  os.setPriority = () => {
    throw new Error('os.setPriority is not available to programs run by codegauge');
  };
  const v8 = require('v8');
  v8.setFlagsFromString = () => {
    throw new Error('v8.setFlagsFromString is not available to programs run by codegauge');
  };
  const { file, fds, paths, cap, memoryMb } = job;
  const stdPaths = { '/dev/stdin': 0, '/dev/stdout': 1, '/dev/stderr': 2, '/proc/self/fd/0': 0, '/proc/self/fd/1': 1, '/proc/self/fd/2': 2 };
  const mapFd = (fd) => (fd === 0 || fd === 1 || fd === 2 ? fds[fd] : fd);
  const mapTarget = (p) => (typeof p === 'number' ? mapFd(p) : typeof p === 'string' && p in stdPaths ? fds[stdPaths[p]] : p);
  let written = 0;
  const count = (fd, n) => {
    if ((fd === 1 || fd === fds[1]) && typeof n === 'number' && (written += n) > cap) process.exit(125); // over the output cap
    return n;
  };
  const orig = {};
  for (const name of ['readSync', 'writeSync', 'fstatSync', 'fsyncSync', 'fdatasyncSync', 'read', 'write', 'fstat', 'readFileSync', 'writeFileSync', 'appendFileSync', 'readFile', 'writeFile', 'appendFile', 'closeSync', 'close', 'openSync', 'open']) orig[name] = fs[name];
  for (const name of ['readSync', 'fstatSync', 'fsyncSync', 'fdatasyncSync', 'read', 'write', 'fstat', 'readFileSync', 'writeFileSync', 'appendFileSync', 'readFile', 'writeFile', 'appendFile']) {
    const f = orig[name];
    fs[name] = function (target, ...rest) {
      return f.call(this, mapTarget(target), ...rest);
    };
  }
  fs.writeSync = function (fd, ...rest) {
    return count(fd, orig.writeSync.call(this, mapFd(fd), ...rest));
  };
  // the job's channels and files are not the program's to close
  const own = new Set([fds[0], fds[1], fds[2], 3, 4]);
  fs.closeSync = function (fd) {
    if (fd === 0 || fd === 1 || fd === 2 || own.has(fd)) return undefined;
    return orig.closeSync.call(this, fd);
  };
  fs.close = function (fd, cb) {
    if (fd === 0 || fd === 1 || fd === 2 || own.has(fd)) {
      if (typeof cb === 'function') process.nextTick(cb, null);
      return undefined;
    }
    return orig.close.apply(this, arguments);
  };
  const openPath = (p, flags) => (typeof p === 'string' && p in stdPaths ? [paths[stdPaths[p]], stdPaths[p] === 0 ? 'r' : 'a'] : [p, flags]);
  fs.openSync = function (p, flags, ...rest) {
    const [q, f] = openPath(p, flags);
    return orig.openSync.call(this, q, f, ...rest);
  };
  fs.open = function (p, flags, ...rest) {
    if (typeof flags === 'function') {
      rest.unshift(flags);
      flags = undefined;
    }
    const [q, f] = openPath(p, flags);
    return orig.open.call(this, q, f, ...rest);
  };
  for (const [stream, fd] of [[process.stdout, 1], [process.stderr, 2]]) {
    const put = (chunk, encoding) => (typeof chunk === 'string' ? fs.writeSync(fd, chunk, null, encoding) : fs.writeSync(fd, chunk));
    stream._write = (chunk, encoding, cb) => {
      try {
        put(chunk, encoding);
        cb();
      } catch (e) {
        cb(e);
      }
    };
    stream._writev = (chunks, cb) => {
      try {
        for (const c of chunks) put(c.chunk, c.encoding);
        cb();
      } catch (e) {
        cb(e);
      }
    };
    stream.fd = fd;
  }
  let stdin;
  Object.defineProperty(process, 'stdin', {
    configurable: true,
    enumerable: true,
    get() {
      if (!stdin) stdin = fs.createReadStream(null, { fd: 0, autoClose: false });
      return stdin;
    },
  });
  if (job.assertFails) {
    // HumanEval-X's tests only print a failed console.assert; CodeGeeX's harness counts that as a failure
    const { AssertionError } = require('assert');
    console.assert = (value, ...message) => {
      if (!value) throw new AssertionError({ message: message.length ? message.join(' ') : 'console.assert failed' });
    };
  }
  process.argv = [process.execPath, file];
  process.execArgv = ['--max-old-space-size=' + memoryMb, '--stack-size=4000'];
  if (job.kind === 'program') {
    Module.runMain(file);
    // the tests returned: the proof, which no file, descriptor or variable of the program held
    orig.writeSync(fds[1], '\n' + nonce + '\n');
    return;
  }
  // serve: the program ran as it would alone; then its functions answer the harness's calls
  const { encode, decode, NotPlain } = new Function(CODEC + '\nreturn { encode, decode, NotPlain };')();
  const lineReader = new Function('fs', 'return ' + lineReaderSource)(fs);
  const writeLine = new Function('fs', 'return ' + writeLineSource)(fs);
  Module.runMain(file);
  const table = globalThis[job.key];
  const token = job.token;
  const send = (obj) => writeLine(4, stringify(Object.assign({ t: token }, obj)));
  send({ ready: 1 });
  const next = lineReader(4, job.lineCap);
  const prefix = Buffer.from('{"t":"' + token + '",');
  for (;;) {
    const line = next();
    if (line === null) break;
    if (line.length < prefix.length || prefix.compare(line, 0, prefix.length) !== 0) continue;
    const msg = parse(line.toString('utf8'));
    if (msg.end) break;
    const seq = msg.seq;
    let fn;
    try {
      fn = typeof table === 'function' ? table(msg.name) : undefined;
    } catch {
      fn = undefined;
    }
    if (typeof fn !== 'function') {
      send({ seq, raise: ['ReferenceError', msg.name + ' is not defined'] });
      continue;
    }
    let args;
    try {
      args = decode(msg.args);
    } catch (e) {
      send({ seq, raise: ['TypeError', 'malformed arguments'] });
      continue;
    }
    let value;
    try {
      value = fn(...args);
    } catch (e) {
      let name = 'Error';
      let text = '';
      try {
        name = e && typeof e.name === 'string' ? e.name : typeof e;
        text = e && typeof e.message === 'string' ? e.message : String(e);
      } catch {}
      try {
        process.stderr.write((e && e.stack ? String(e.stack) : name + ': ' + text) + '\n');
      } catch {}
      send({ seq, raise: [name, text.slice(0, 2000)] });
      continue;
    }
    const reply = { seq };
    try {
      reply.ok = encode(value);
    } catch (e) {
      if (!(e instanceof NotPlain) && !(e instanceof RangeError)) throw e;
      send({ seq, not_plain: e instanceof NotPlain ? e.message : 'a value nested too deep' });
      continue;
    }
    const changed = {};
    let any = false;
    msg.args[1].forEach((before, i) => {
      const after = args[i];
      if (after === null || typeof after !== 'object') return;
      try {
        const now = encode(after);
        if (stringify(now) !== stringify(before)) {
          changed[i] = now;
          any = true;
        }
      } catch {}
    });
    if (any) reply.changed = changed;
    send(reply);
  }
  process.exit(0);
}

function fingerprint() {
  // what a program could change process-wide for later ones: a changed server is replaced
  return JSON.stringify([os.getPriority(), new Date(0).getTimezoneOffset(), Intl.DateTimeFormat().resolvedOptions().timeZone, process.cwd()]);
}

function removeAll(path) {
  try {
    fs.chmodSync(path, 0o700);
  } catch {}
  let entries = [];
  try {
    entries = fs.readdirSync(path, { withFileTypes: true });
  } catch {}
  for (const e of entries) {
    const p = path + '/' + e.name;
    if (e.isDirectory()) removeAll(p);
    else {
      try {
        fs.unlinkSync(p);
      } catch {}
    }
  }
  try {
    fs.rmdirSync(path);
  } catch {}
}

function cleanRoot() {
  for (const name of fs.readdirSync(ROOT)) removeAll(ROOT + '/' + name);
  return fs.readdirSync(ROOT).length;
}

function readCapped(path, cap, tail) {
  let fd;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return { data: Buffer.alloc(0), size: 0 };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { data: Buffer.alloc(0), size: 0 };
    const n = Math.min(st.size, cap);
    const b = Buffer.alloc(n);
    const read = fs.readSync(fd, b, 0, n, tail ? st.size - n : 0);
    return { data: b.subarray(0, read), size: st.size };
  } finally {
    fs.closeSync(fd);
  }
}

const BASELINE = fingerprint();
const BOOT = '(' + boot.toString() + ')(' + JSON.stringify(CODEC) + ',' + JSON.stringify(lineReader.toString()) + ',' + JSON.stringify(writeLine.toString()) + ')';

function reply(message) {
  writeLine(CONTROL, JSON.stringify(message));
}

function candidateJob(job, done) {
  const dir = ROOT + '/' + require('crypto').randomBytes(8).toString('hex');
  fs.mkdirSync(dir, 0o700);
  for (const [name, data] of Object.entries(job.files)) fs.writeFileSync(dir + '/' + name, Buffer.from(data, 'base64'), { mode: 0o600 });
  const paths = [dir + '/.stdin', dir + '/.stdout', dir + '/.stderr'];
  fs.writeFileSync(paths[0], '', { mode: 0o600 });
  const fds = [fs.openSync(paths[0], 'r'), fs.openSync(paths[1], 'w', 0o600), fs.openSync(paths[2], 'w', 0o600)];
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  let worker;
  try {
    worker = new Worker(BOOT, {
      eval: true,
      workerData: { kind: job.kind, file: dir + '/' + job.file, fds, paths, cap: job.limits.output, memoryMb: job.limits.memoryMb, nonce: job.nonce, key: job.key, token: job.token, lineCap: job.line_cap, assertFails: job.assert_fails },
      // the server's own flags (the permission model, --no-addons): an explicit execArgv, even empty, would drop the
      // permission model in the Worker (node 20)
      stdout: true,
      stderr: true,
      trackUnmanagedFds: true,
      resourceLimits: { maxOldGenerationSizeMb: job.limits.memoryMb, stackSizeMb: job.limits.stackMb },
    });
  } catch (e) {
    for (const fd of fds) try { fs.closeSync(fd); } catch {}
    done({ id: job.id, lost: String(e), dirty: true });
    return;
  }
  let timedOut = false;
  let exitCode = null;
  let waiting = 3;
  let relayed = 0;
  const relay = (stream, fd) => {
    stream.on('data', (chunk) => {
      if (fd === fds[1] && (relayed += chunk.length) > job.limits.output) worker.terminate();
      try { fs.writeSync(fd, chunk); } catch {}
    });
    stream.on('end', step);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    worker.terminate();
  }, job.timeout_ms);
  let grace;
  worker.on('error', (e) => {
    try { fs.writeSync(fds[2], require('util').inspect(e) + '\n\nNode.js ' + process.version + '\n'); } catch {}
  });
  worker.on('exit', (code) => {
    exitCode = code;
    grace = setTimeout(finish, 500);
    step();
  });
  relay(worker.stdout, fds[1]);
  relay(worker.stderr, fds[2]);
  let finished = false;
  function step() {
    if (--waiting === 0) finish();
  }
  function finish() {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    clearTimeout(grace);
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu0);
    for (const fd of fds) try { fs.closeSync(fd); } catch {}
    const out = readCapped(paths[1], job.limits.output + 1, false);
    const err = readCapped(paths[2], 64 * 1024, true);
    const left = cleanRoot();
    done({
      id: job.id, exit: timedOut ? null : exitCode, signal: null, timed_out: timedOut, ms, cpu: (used.user + used.system) / 1000,
      stdout: out.data.toString('base64'), stdout_size: out.size, stderr: err.data.toString('base64'),
      dirty: left > 0 || fingerprint() !== BASELINE,
    });
  }
}

// ---- harness: the tests in a vm context, the candidate's functions as synchronous calls across fd 4

// compiled once; each job's context runs it afresh (V8 reuses the compiled code)
let compiledBoundary;
function boundaryScript() {
  compiledBoundary ??= new vm.Script(CODEC + HARNESS_CONTEXT, { filename: 'codegauge-boundary.js' });
  return compiledBoundary;
}

function harnessJob(job) {
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const token = job.token;
  const prefix = Buffer.from('{"t":"' + token + '",');
  const next = lineReader(DATA, job.line_cap);
  let seq = 0;
  const call = (name, args) => {
    seq += 1;
    writeLine(DATA, '{"t":"' + token + '","seq":' + seq + ',"name":' + JSON.stringify(name) + ',"args":' + args + '}');
    for (;;) {
      const line = next();
      if (line === null) return null;
      if (line.length < prefix.length || prefix.compare(line, 0, prefix.length) !== 0) continue;
      const text = line.toString('utf8');
      const msg = JSON.parse(text);
      if (msg.gone || msg.seq === seq) return text;
    }
  };
  let output = '';
  const cap = job.limits.output;
  const print = (stream) => (...a) => {
    if (output.length < cap) output += require('util').format(...a) + '\n';
  };
  const consoleLike = { log: print(), info: print(), warn: print(), error: print(), debug: print(), trace: print(), dir: print(), table: print() };
  const sandbox = { console: consoleLike, require, process, Buffer, setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate, queueMicrotask, structuredClone, TextEncoder, TextDecoder, URL, performance };
  const context = vm.createContext(sandbox);
  boundaryScript().runInContext(context);
  consoleLike.assert = job.assert_fails
    ? (value, ...message) => {
        if (!value) {
          const { AssertionError } = require('assert');
          throw new AssertionError({ message: message.length ? message.join(' ') : 'console.assert failed' });
        }
      }
    : (value, ...message) => {
        if (!value) print()('Assertion failed' + (message.length ? ': ' + message.join(' ') : ''));
      };
  const remote = vm.runInContext('__codegauge_remote', context);
  for (const name of job.names) context[name] = remote(name, call);
  let result;
  try {
    vm.runInContext(job.tests, context, { filename: 'tests.js' });
    result = { result: 'passed' };
  } catch (e) {
    const kind = e && e.constructor && e.constructor.name;
    if (kind === 'CandidateGone') result = { result: 'gone' };
    else if (kind === 'Unsupported') result = { result: 'unsupported', why: e.message };
    else if (kind === 'NotPlainResult') result = { result: 'failed', note: e.message };
    else {
      // the tests' frames only (not the server's, nor the remote call machinery's)
      const text = e && e.stack ? String(e.stack).split('\n').filter((l) => !/^\s+at /.test(l) || /tests\.js:\d+/.test(l)).join('\n') : String(e);
      output += text + '\n';
      const assertion = e && (e.code === 'ERR_ASSERTION' || e.name === 'AssertionError');
      const first = (e && e.name ? e.name : 'Error') + (e && e.message ? ': ' + String(e.message).split('\n')[0] : '');
      result = assertion ? { result: 'failed', error: first.slice(0, 300) } : { result: 'error', error: first.slice(0, 300), candidate: !!(e && e.__codegauge_candidate) };
      if (e instanceof RangeError && /call stack|Maximum call stack/i.test(String(e.message))) result.note = 'stack overflow';
    }
  }
  const used = process.cpuUsage(cpu0);
  return {
    id: job.id, exit: 0, signal: null, timed_out: false, ms: performance.now() - started, cpu: (used.user + used.system) / 1000,
    stdout: '', stdout_size: 0, stderr: Buffer.from(output.slice(-64 * 1024)).toString('base64'), result, dirty: false,
  };
}

if (ROLE !== 'candidate' && ROLE !== 'harness') {
  process.stderr.write('codegauge node server: unknown role\n');
  process.exit(70);
}
const control = new net.Socket({ fd: CONTROL, readable: true, writable: false });
control.setEncoding('utf8');
let pending = '';
const queue = [];
let busy = false;
function pump() {
  if (busy || queue.length === 0) return;
  const job = queue.shift();
  busy = true;
  if (ROLE === 'harness') {
    let message;
    try {
      message = harnessJob(job);
    } catch (e) {
      message = { id: job.id, lost: String(e), dirty: true };
    }
    reply(message);
    busy = false;
    if (message.dirty) process.exit(0);
    setImmediate(pump);
    return;
  }
  candidateJob(job, (message) => {
    reply(message);
    busy = false;
    if (message.dirty) process.exit(0);
    setImmediate(pump);
  });
}
control.on('data', (chunk) => {
  pending += chunk;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    queue.push(JSON.parse(pending.slice(0, nl)));
    pending = pending.slice(nl + 1);
  }
  pump();
});
control.on('end', () => process.exit(0));
control.on('error', () => process.exit(1));
reply({ ready: 1 });
`;
