import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { makeWorkDir, removeWorkDir, type Limits, type RunResult, type Sandbox } from './sandbox.js';
import { readCapped } from './warm-python.js';
import { WarmPool } from './warm-pool.js';

/**
 * A warm JavaScript runner: one long-lived node process per worker slot, inside the slot's bwrap sandbox, runs each
 * program in a fresh `worker_threads` Worker (own isolate, globals, module registry; `process.exit` ends only the
 * Worker; the heap bounded by `resourceLimits`, memory outside the heap by the process's RLIMIT_DATA). The Worker
 * lives until its event loop is empty, as a process would (timers and promises still run), and an uncaught exception
 * or unhandled rejection ends it with exit code 1 and the error on its stderr. The program's stdin, stdout and stderr
 * are files: in the Worker, fds 0-2 (fs calls, /dev/std*) and process.stdin/stdout/stderr are pointed at them, and
 * stdout is cut at the output cap. After each program the server kills everything else in the sandbox's pid
 * namespace and empties /tmp; the host empties the work folder. A program that runs past its time is terminated
 * (`worker.terminate()`); if the server does not answer soon after, the whole sandbox is killed and the next program
 * starts a fresh one, as is a server that found processes left behind (their zombies would count against the
 * process limit). Jobs and replies go over fd 3, with a per-job token, never over the program's stdio.
 * A fresh Worker costs ~30 ms of CPU against ~80 ms for a fresh node. bwrap only.
 */
const SERVER = String.raw`
'use strict';
const { Worker } = require('worker_threads');
const fs = require('fs');
const net = require('net');
const { inspect } = require('util');

// Runs first in each Worker (in a function scope, so the program cannot reach it), then loads the program as the
// main module, as node would.
function boot() {
  const { workerData } = require('worker_threads');
  const fs = require('fs');
  const { Writable } = require('stream');
  const Module = require('module');
  const { file, fds, paths, cap, memoryMb } = workerData;
  const stdPaths = { '/dev/stdin': 0, '/dev/stdout': 1, '/dev/stderr': 2, '/proc/self/fd/0': 0, '/proc/self/fd/1': 1, '/proc/self/fd/2': 2 };
  const mapFd = (fd) => (fd === 0 || fd === 1 || fd === 2 ? fds[fd] : fd);
  const mapTarget = (p) => (typeof p === 'number' ? mapFd(p) : typeof p === 'string' && p in stdPaths ? fds[stdPaths[p]] : p);
  let written = 0;
  const count = (fd, n) => {
    if ((fd === 1 || fd === fds[1]) && typeof n === 'number' && (written += n) > cap) process.exit(1); // like a killed process: over the cap
    return n;
  };
  const orig = {};
  for (const name of ['readSync', 'writeSync', 'fstatSync', 'fsyncSync', 'fdatasyncSync', 'read', 'write', 'fstat', 'readFileSync', 'writeFileSync', 'appendFileSync', 'readFile', 'writeFile', 'appendFile', 'closeSync', 'close', 'openSync', 'open']) orig[name] = fs[name];
  for (const name of ['readSync', 'fstatSync', 'fsyncSync', 'fdatasyncSync', 'read', 'write', 'fstat', 'readFileSync', 'writeFileSync', 'appendFileSync', 'readFile', 'writeFile', 'appendFile']) {
    const f = orig[name];
    fs[name] = function (target, ...rest) { return f.call(this, mapTarget(target), ...rest); };
  }
  fs.writeSync = function (fd, ...rest) { return count(fd, orig.writeSync.call(this, mapFd(fd), ...rest)); };
  // closing fd 0-2 closes nothing of the server's
  fs.closeSync = function (fd) { if (fd === 0 || fd === 1 || fd === 2) return undefined; return orig.closeSync.call(this, fd); };
  fs.close = function (fd, cb) { if (fd === 0 || fd === 1 || fd === 2) { if (typeof cb === 'function') process.nextTick(cb, null); return undefined; } return orig.close.apply(this, arguments); };
  // opening /dev/stdout appends to the program's stdout file (a truncating open must not drop what is there)
  const openPath = (p, flags) => (typeof p === 'string' && p in stdPaths ? [paths[stdPaths[p]], stdPaths[p] === 0 ? 'r' : 'a'] : [p, flags]);
  fs.openSync = function (p, flags, ...rest) { const [q, f] = openPath(p, flags); return orig.openSync.call(this, q, f, ...rest); };
  fs.open = function (p, flags, ...rest) { if (typeof flags === 'function') { rest.unshift(flags); flags = undefined; } const [q, f] = openPath(p, flags); return orig.open.call(this, q, f, ...rest); };
  // process.stdout/stderr write synchronously to the files, as node's do to files and pipes (the Worker's own
  // streams are kept, their writing replaced: the Worker's internals talk to them)
  for (const [stream, fd] of [[process.stdout, 1], [process.stderr, 2]]) {
    const put = (chunk, encoding) => (typeof chunk === 'string' ? fs.writeSync(fd, chunk, null, encoding) : fs.writeSync(fd, chunk));
    stream._write = (chunk, encoding, cb) => { try { put(chunk, encoding); cb(); } catch (e) { cb(e); } };
    stream._writev = (chunks, cb) => { try { for (const c of chunks) put(c.chunk, c.encoding); cb(); } catch (e) { cb(e); } };
    stream.fd = fd;
  }
  let stdin;
  Object.defineProperty(process, 'stdin', {
    configurable: true,
    enumerable: true,
    get() {
      // fd 0 (mapped): reads share the file position with fs.readFileSync(0), as on a pipe
      if (!stdin) stdin = fs.createReadStream(null, { fd: 0, autoClose: false });
      return stdin;
    },
  });
  process.argv = [process.execPath, file];
  process.execArgv = ['--max-old-space-size=' + memoryMb, '--stack-size=4000']; // as the program's own node has them
  Module.runMain(file);
}
const BOOT = '(' + boot.toString() + ')()';
// killOthers() and cleanTmp() are only safe in the sandbox's own pid namespace (bwrap is pid 1, this server 2):
// anywhere else they would kill the host's processes and empty its /tmp
if (process.pid !== 2) {
  process.stderr.write('codegauge warm runner: refusing to run outside its bwrap pid namespace\n');
  process.exit(70);
}

const chan = new net.Socket({ fd: 3, readable: true, writable: true });
chan.setEncoding('utf8');
let pending = '';
chan.on('data', (chunk) => {
  pending += chunk;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    run(JSON.parse(line));
  }
});
chan.on('end', () => process.exit(0));
chan.on('error', () => process.exit(1));

function others() {
  return fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e) && e !== '1' && Number(e) !== process.pid).map(Number);
}

/** Kills every other process of the sandbox, again until none is left (a fork bomb forks between passes). */
function killOthers() {
  let found = 0;
  for (let pass = 0; pass < 50; pass++) {
    const pids = others();
    if (pids.length === 0) return found;
    found += pids.length;
    for (const pid of pids) {
      try { process.kill(pid, 'SIGKILL'); } catch {}
    }
  }
  return found;
}

function cleanTmp() {
  for (const entry of fs.readdirSync('/tmp')) {
    try { fs.rmSync('/tmp/' + entry, { recursive: true, force: true }); } catch {}
  }
}

function run(job) {
  const started = performance.now();
  // the program's CPU time: this process runs nothing else meanwhile (the Worker's threads are this process's)
  const cpu0 = process.cpuUsage();
  const fds = [];
  let worker;
  try {
    fds.push(fs.openSync(job.paths[0], 'r'), fs.openSync(job.paths[1], 'w', 0o600), fs.openSync(job.paths[2], 'w', 0o600));
    worker = new Worker(BOOT, {
      eval: true,
      workerData: { file: job.file, fds, paths: job.paths, cap: job.cap, memoryMb: job.memoryMb },
      execArgv: [],
      stdout: true,
      stderr: true,
      trackUnmanagedFds: true,
      resourceLimits: { maxOldGenerationSizeMb: job.memoryMb, stackSizeMb: job.stackMb },
    });
  } catch (e) {
    for (const fd of fds) try { fs.closeSync(fd); } catch {}
    reply({ id: job.id, token: job.token, lost: String(e) });
    return;
  }
  let timedOut = false;
  let exitCode = null;
  let waiting = 3; // exit, stdout end, stderr end
  let relayed = 0;
  // whatever still reaches the Worker's own stdio relay (nothing should) goes to the same files
  const relay = (stream, fd) => {
    stream.on('data', (chunk) => {
      if (fd === fds[1] && (relayed += chunk.length) > job.cap) worker.terminate();
      try { fs.writeSync(fd, chunk); } catch {}
    });
    stream.on('end', step);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    worker.terminate();
    killOthers(); // a program blocked on a child (execSync) returns
  }, job.timeoutMs);
  let grace;
  worker.on('error', (e) => {
    try { fs.writeSync(fds[2], inspect(e) + '\n\nNode.js ' + process.version + '\n'); } catch {}
  });
  worker.on('exit', (code) => {
    exitCode = code;
    grace = setTimeout(finish, 500); // the relay's ends should follow at once
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
    const cpu = (used.user + used.system) / 1000;
    for (const fd of fds) try { fs.closeSync(fd); } catch {}
    const strays = killOthers();
    cleanTmp();
    reply({ id: job.id, token: job.token, exit: timedOut ? null : exitCode, timedOut, ms, cpu, strays });
  }
}

function reply(message) {
  chan.write(JSON.stringify(message) + '\n');
}
`;

const STDERR_KEEP = 64 * 1024;
/** Data limit beyond the program's: what the server and a Worker's isolate use before the program allocates. */
const SERVER_DATA_MB = 64;
/** V8's stack limit in a Worker is its thread's stack less 192 KiB; this gives the cold run's --stack-size=4000 (KiB). */
const STACK_MB = (4000 + 192) / 1024;
/** How long past its timeout a program may take to be terminated before the whole sandbox is killed. */
const KILL_GRACE_MS = 1500;
const IO = ['.codegauge-stdin', '.codegauge-stdout', '.codegauge-stderr'];

interface Reply {
  exit?: number | null;
  timedOut?: boolean;
  ms?: number;
  /** CPU time of the server process over the job (the Worker's threads included), ms. */
  cpu?: number;
  strays?: number;
  lost?: string;
}

class WarmNodeServer {
  readonly dir = makeWorkDir();
  private readonly child: ChildProcess;
  private readonly channel: Readable & Writable;
  private pending?: { token: string; resolve: (reply: Reply) => void };
  private buffer = '';
  private nextId = 0;
  private serverErr = '';
  dead = false;

  constructor(
    sandbox: Sandbox,
    node: string,
    slot: number,
    readonly memoryMb: number,
    limits: Limits,
  ) {
    sandbox.prepare(this.dir, slot);
    const outputCap = limits.outputBytes ?? 1024 * 1024;
    const { file, args, cwd } = sandbox.commandLine({
      argv: [node, '-e', SERVER],
      workDir: this.dir,
      slot,
      limits: {
        timeoutMs: 0,
        memoryMb: memoryMb + SERVER_DATA_MB,
        memoryKind: 'data',
        processes: limits.processes ?? 64,
        // the server's own descriptors (~25) come on top of the program's
        openFiles: (limits.openFiles ?? 64) + 64,
        fileSizeMb: Math.max(limits.fileSizeMb ?? 16, Math.ceil(outputCap / (1024 * 1024)) + 1),
        cpuSeconds: 'unlimited',
      },
    });
    this.child = spawn(file, args, { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, detached: true, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    this.channel = this.child.stdio[3] as Readable & Writable;
    this.channel.setEncoding('utf8');
    this.channel.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        let message: Reply & { token?: string };
        try {
          message = JSON.parse(line);
        } catch {
          this.lose('the warm JavaScript runner sent a garbled reply');
          return;
        }
        // a program can write to fd 3 too, but cannot know the token of the job it runs in
        if (this.pending && message.token === this.pending.token) this.settle(message);
      }
    });
    this.channel.on('error', () => undefined);
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      this.serverErr = (this.serverErr + chunk).slice(-4000);
    });
    this.child.on('exit', () => this.lose(`the warm JavaScript runner stopped${this.serverErr.trim() ? `: ${this.serverErr.trim().split('\n').pop()}` : ''}`));
  }

  private settle(reply: Reply): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.resolve(reply);
  }

  private lose(why: string): void {
    this.kill();
    this.settle({ lost: why });
  }

  kill(): void {
    this.dead = true;
    if (this.child.pid !== undefined) {
      try {
        // bwrap's own group: when the namespace's init dies, the kernel kills everything in it
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

  /** Removes what the last program left in the work folder (nothing in the sandbox runs by now). */
  private clean(): void {
    for (const name of readdirSync(this.dir)) rmSync(join(this.dir, name), { recursive: true, force: true });
  }

  async run(files: Record<string, string>, file: string, stdin: string, limits: Limits): Promise<RunResult> {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(this.dir, name), text);
    writeFileSync(join(this.dir, IO[0]), stdin);
    const outputCap = limits.outputBytes ?? 1024 * 1024;
    const token = randomBytes(16).toString('hex');
    const job = {
      id: this.nextId++,
      token,
      file: `/sandbox/${file}`,
      paths: IO.map((name) => `/sandbox/${name}`),
      cap: outputCap,
      timeoutMs: limits.timeoutMs,
      memoryMb: this.memoryMb,
      stackMb: STACK_MB,
    };
    const started = performance.now();
    let killed = false;
    const reply = await new Promise<Reply>((resolve) => {
      const timer = setTimeout(() => {
        killed = true;
        this.kill();
        this.settle({ timedOut: true });
      }, limits.timeoutMs + KILL_GRACE_MS);
      this.pending = {
        token,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      if (this.dead) this.settle({ lost: 'the warm JavaScript runner stopped' });
      else this.channel.write(JSON.stringify(job) + '\n');
    });
    const stdout = readCapped(join(this.dir, IO[1]), outputCap + 1);
    const stderr = readCapped(join(this.dir, IO[2]), STDERR_KEEP, true);
    if (!this.dead) this.clean();
    // processes were left behind: their zombies stay children of the server; start a fresh sandbox
    if ((reply.strays ?? 0) > 0) this.kill();
    const timedOut = reply.timedOut === true || killed;
    const lost = !timedOut && reply.lost !== undefined;
    // what a Worker cannot do (process.chdir, process.umask with an argument): run the program on its own
    const unsupported = !lost && !timedOut && reply.exit !== 0 && stderr.text.includes('ERR_WORKER_UNSUPPORTED_OPERATION');
    return {
      exitCode: timedOut || lost ? null : (reply.exit ?? null),
      signal: null,
      stdout: stdout.text,
      stderr: stderr.text,
      timedOut,
      outputExceeded: stdout.size > outputCap,
      durationMs: Math.round(timedOut || lost || reply.ms === undefined ? performance.now() - started : reply.ms),
      // the server's own measure; a server killed from here (it did not answer) leaves it unknown
      ...(!killed && !lost && typeof reply.cpu === 'number' ? { cpuMs: Math.round(reply.cpu) } : {}),
      ...(lost ? { sandboxError: reply.lost } : unsupported ? { sandboxError: 'the program needs a process of its own' } : {}),
    };
  }
}

/** One warm node server per worker slot, started on first use and restarted after a timeout, a lost server or a change of memory limit. */
export class WarmNodePool extends WarmPool<WarmNodeServer> {
  constructor(sandbox: Sandbox) {
    super(sandbox, 'JavaScript', (node, slot, limits) => new WarmNodeServer(sandbox, node, slot, limits.memoryMb, limits), (server, limits) => server.memoryMb === limits.memoryMb);
  }
}
