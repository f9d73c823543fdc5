import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';

/**
 * How many threads llama.cpp computes with by default: the physical cores this process may use. node-llama-cpp's own
 * default is "the math cores or 4, whichever is higher", and llama.cpp's threads wait on each other by spinning, so
 * more threads than cores (or a second thread per core) is slower, not faster: on a 2-core machine its default of 4
 * generated 1-4 tokens/s where 1 thread generated ~2,000 on a tiny model. Every figure can be passed in, so the
 * choice is tested without the machine's own.
 */
export interface CpuFacts {
  /** /proc/cpuinfo's text (Linux), or undefined where there is none. */
  cpuinfo?: string;
  /** Logical processors this process may run on (os.availableParallelism()). */
  available: number;
  /** Logical processors of the machine (os.cpus().length). */
  logical: number;
  /** The cgroup's CPU quota in CPUs (/sys/fs/cgroup/cpu.max), undefined when unlimited or unknown. */
  quota?: number;
}

export function machineCpuFacts(): CpuFacts {
  const read = (path: string) => {
    try {
      return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    } catch {
      return undefined;
    }
  };
  const max = read('/sys/fs/cgroup/cpu.max')?.trim().split(/\s+/);
  const quota = max && max[0] !== 'max' && Number(max[1]) > 0 ? Number(max[0]) / Number(max[1]) : undefined;
  return { cpuinfo: read('/proc/cpuinfo'), available: availableParallelism(), logical: cpus().length || 1, quota };
}

/** Distinct (physical id, core id) pairs of /proc/cpuinfo; undefined when it does not list them. */
export function physicalCoresOf(cpuinfo: string | undefined): number | undefined {
  if (!cpuinfo) return undefined;
  const cores = new Set<string>();
  for (const block of cpuinfo.split(/\n\s*\n/)) {
    const core = /^core id\s*:\s*(\d+)/m.exec(block);
    if (!core) continue;
    const socket = /^physical id\s*:\s*(\d+)/m.exec(block);
    cores.add(`${socket?.[1] ?? 0}:${core[1]}`);
  }
  return cores.size || undefined;
}

/**
 * Physical cores, scaled to the share of logical processors this process may use, and capped by the cgroup quota;
 * at least 1. Without /proc/cpuinfo (macOS, Windows) the logical processors available.
 */
export function defaultThreads(facts: CpuFacts = machineCpuFacts()): number {
  const physical = physicalCoresOf(facts.cpuinfo);
  let threads = physical === undefined ? facts.available : Math.floor((physical * Math.min(facts.available, facts.logical)) / Math.max(1, facts.logical));
  if (facts.quota !== undefined) threads = Math.min(threads, Math.ceil(facts.quota));
  return Math.max(1, threads);
}
