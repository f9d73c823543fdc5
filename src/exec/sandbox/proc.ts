import { readdirSync, readFileSync } from 'node:fs';

/** Processes as /proc shows them: CPU time of process trees (timeouts), and the processes of a uid (clean-up). */

/** /proc's clock ticks (USER_HZ, 100 on every Linux architecture node runs on). */
const TICK_MS = 10;

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  /** Start time after boot, in ticks. */
  start: number;
  /** utime + stime + cutime + cstime (its own CPU and that of the children it has reaped), in ticks. */
  ticks: number;
}

function parseStat(pid: number, text: string): ProcEntry | undefined {
  // the command name (field 2) may hold spaces and parentheses: the fields after it start at the last ')'
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = text.slice(close + 2).split(' ');
  // f[0] is field 3 (state): ppid 4, pgrp 5, utime 14, stime 15, cutime 16, cstime 17, starttime 22
  const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  const entry = { pid, ppid: Number(f[1]), pgrp: Number(f[2]), start: Number(f[19]), ticks };
  return Number.isFinite(ticks) && Number.isFinite(entry.ppid) ? entry : undefined;
}

function pids(): number[] | undefined {
  try {
    return readdirSync('/proc').filter((n) => n.charCodeAt(0) >= 48 && n.charCodeAt(0) <= 57).map(Number);
  } catch {
    return undefined;
  }
}

/** Every process of the host (as this process sees /proc), or undefined where there is no /proc. */
function processTable(): ProcEntry[] | undefined {
  const all = pids();
  if (!all) return undefined;
  const table: ProcEntry[] = [];
  for (const pid of all) {
    try {
      const entry = parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'latin1'));
      if (entry) table.push(entry);
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** The CPU time of one process (its threads and reaped children included), ms; undefined when it cannot be read. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const entry = parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'latin1'));
    return entry ? entry.ticks * TICK_MS : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The CPU time (ms) of a process tree: `root`, everything below it, and what is left in its process group, each with
 * the children it has reaped. `skip` leaves out processes (a server) without leaving out what runs below them.
 * Undefined when /proc cannot be read or `root` is gone.
 */
export function treeCpuMs(root: number, skip?: (entry: ProcEntry, children: Map<number, ProcEntry[]>) => boolean): number | undefined {
  const table = processTable();
  if (!table) return undefined;
  const children = new Map<number, ProcEntry[]>();
  let top: ProcEntry | undefined;
  for (const e of table) {
    if (e.pid === root) top = e;
    const list = children.get(e.ppid);
    if (list) list.push(e);
    else children.set(e.ppid, [e]);
  }
  if (!top) return undefined;
  const seen = new Set<number>();
  let ticks = 0;
  const visit = (e: ProcEntry) => {
    if (seen.has(e.pid)) return;
    seen.add(e.pid);
    if (!skip?.(e, children)) ticks += e.ticks;
    for (const c of children.get(e.pid) ?? []) visit(c);
  };
  visit(top);
  for (const e of table) if (e.pgrp === root) visit(e);
  return ticks * TICK_MS;
}

/**
 * The CPU time (ms) of what a server inside a bwrap sandbox started: everything in the sandbox but bwrap's two
 * processes (the outer one, `bwrapPid`, and the namespace's init) and the server (init's first child), whose own
 * counters hold earlier jobs' time.
 */
export function serverJobsCpuMs(bwrapPid: number): number | undefined {
  let init: number | undefined;
  let server: number | undefined;
  return treeCpuMs(bwrapPid, (e, children) => {
    if (e.pid === bwrapPid) {
      init = children.get(e.pid)?.[0]?.pid;
      const servers = init === undefined ? [] : [...(children.get(init) ?? [])].sort((a, b) => a.start - b.start || a.pid - b.pid);
      server = servers[0]?.pid;
      return true;
    }
    return e.pid === init || e.pid === server;
  });
}

/** The uid a process runs as (its real uid), or undefined. */
function uidOf(pid: number): number | undefined {
  try {
    const m = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Kills every process of `uid` (this process must be root and the uid one of its own sandbox uids): whatever a
 * program left behind in `process` mode, also what left its process group (setsid), so that nothing outlives its
 * sample or holds its output pipes. Again until none is left (a fork bomb forks between passes).
 */
export function killUid(uid: number): void {
  for (let pass = 0; pass < 20; pass++) {
    const all = pids();
    if (!all) return;
    let found = 0;
    for (const pid of all) {
      if (uidOf(pid) !== uid) continue;
      found++;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    if (found === 0) return;
  }
}
