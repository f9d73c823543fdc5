import { realpathSync } from 'node:fs';
import { JS_CODEC, JS_HARNESS_CONTEXT } from './boundary/node-side.js';
import { PYTHON_BOUNDARY } from './boundary/python-side.js';
import type { SandboxRole } from './sandbox/identity.js';
import { JobServer, ServerPool } from './sandbox/job-server.js';
import { nodeServerScript } from './sandbox/node-server.js';
import { PyodideChildren } from './sandbox/pyodide/pool.js';
import { PYTHON_FORK_SERVER } from './sandbox/python-server.js';
import type { Sandbox } from './sandbox/sandbox.js';
import { makeWorkDir, removeWorkDir } from './sandbox/workdir.js';
import { DEFAULT_DISK_MB, DEFAULT_OUTPUT_BYTES } from './sandbox/types.js';

/**
 * The servers Python, JavaScript and TypeScript samples run on: per worker slot, a candidate server and a harness
 * server of each family, each in its own sandbox with its own uid. In bwrap they stay warm (a fresh child or Worker
 * per candidate job, cleaned after it; Python's tests run in their server itself, the role passed as its last
 * argument); in process mode, where no pid namespace keeps a job's leftovers in, each server runs
 * one job (`cold`), and everything its uid still runs is killed after it.
 */
export interface ServerSettings {
  memoryMb: number;
  outputBytes?: number;
  diskMb?: number;
  /** Largest file a job may write, MiB. */
  fileSizeMb?: number;
}

const MIB = 1024 * 1024;
/** In bwrap, where a job's stdout and stderr files go: a tmpfs apart from /tmp (see Sandbox.serverCommandLine). */
const IO_ROOT = '/run/codegauge-io';
/** Memory of a node server beyond a job's heap: the server itself and a Worker's isolate before the program allocates. */
const NODE_SERVER_DATA_MB = 96;
/** Memory of a harness's node (the tests and the values they compare). */
const NODE_HARNESS_DATA_MB = 2048;

function permissionFlag(): string {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 13) ? '--permission' : '--experimental-permission';
}

export class Servers {
  private readonly pools = new Map<string, ServerPool>();
  private pyodideChildren?: PyodideChildren;

  constructor(
    readonly sandbox: Sandbox,
    readonly warm = true,
  ) {}

  /** Where a server's jobs work: the sandbox's own /tmp (bwrap), or a private folder of the host (process). */
  private root(slot: number, role: SandboxRole): { root: string; workDir?: string } {
    if (this.sandbox.mode === 'bwrap') return { root: '/tmp' };
    const workDir = makeWorkDir('codegauge-server-');
    this.sandbox.prepare(workDir, slot, role);
    return { root: workDir, workDir };
  }

  private pool(name: string, start: (slot: number, role: SandboxRole) => JobServer | Promise<JobServer>, cold?: (role: SandboxRole) => boolean): ServerPool {
    let pool = this.pools.get(name);
    if (!pool) {
      const warm = this.warm && this.sandbox.mode === 'bwrap';
      pool = new ServerPool(this.sandbox, start, cold ?? (() => !warm));
      this.pools.set(name, pool);
    }
    return pool;
  }

  /**
   * The pyodide children: a candidate's runs one job (a fresh interpreter per sample), the harness's is reused (it
   * runs the benchmark's tests, and takes only plain values from a candidate).
   */
  pyodide(settings: ServerSettings): ServerPool {
    const filesMb = Math.min(settings.diskMb ?? DEFAULT_DISK_MB, settings.memoryMb);
    return this.pool(
      `pyodide\u0000${settings.memoryMb}\u0000${filesMb}`,
      (slot, role) => (this.pyodideChildren ??= new PyodideChildren(PYTHON_BOUNDARY)).start(slot, role, settings.memoryMb, filesMb),
      (role) => role === 'candidate',
    );
  }

  /** The fork servers of a Python interpreter. */
  python(interpreter: string, settings: ServerSettings): ServerPool {
    const python = realpathSync(interpreter);
    const key = `${settings.outputBytes ?? DEFAULT_OUTPUT_BYTES}|${settings.diskMb ?? DEFAULT_DISK_MB}|${settings.fileSizeMb ?? 16}`;
    return this.pool(`python\u0000${python}\u0000${key}`, (slot, role) => {
      this.sandbox.mount(python);
      const { root, workDir } = this.root(slot, role);
      const isolated = this.sandbox.mode === 'bwrap';
      const argv = [python, '-I', '-B', '-c', PYTHON_BOUNDARY + '\n' + PYTHON_FORK_SERVER, isolated ? 'ns' : 'host', this.sandbox.uidOf(slot, role) !== undefined ? 'uid' : 'shared', root, isolated ? IO_ROOT : root, role];
      const command = this.sandbox.serverCommandLine({ argv, slot, role, workDir, limits: this.serverLimits(settings, 'none', 0) });
      return this.own(new JobServer(`Python ${role} server`, command, isolated), workDir);
    });
  }

  /** The node servers (candidate: Workers under the permission model; harness: vm contexts). */
  node(binary: string, settings: ServerSettings): ServerPool {
    const node = realpathSync(binary);
    const key = `${settings.memoryMb}|${settings.outputBytes ?? DEFAULT_OUTPUT_BYTES}|${settings.diskMb ?? DEFAULT_DISK_MB}|${settings.fileSizeMb ?? 16}`;
    return this.pool(`node\u0000${node}\u0000${key}`, (slot, role) => {
      this.sandbox.mount(node);
      const { root, workDir } = this.root(slot, role);
      const script = nodeServerScript(JS_CODEC, JS_HARNESS_CONTEXT);
      const flags =
        role === 'candidate'
          ? [permissionFlag(), `--allow-fs-read=${root}/*`, `--allow-fs-write=${root}/*`, '--allow-worker', '--no-addons', '--no-warnings']
          : ['--no-addons', '--no-warnings', '--stack-size=4000'];
      const argv = [node, ...flags, '-e', script, role, root];
      const dataMb = role === 'candidate' ? settings.memoryMb + NODE_SERVER_DATA_MB : NODE_HARNESS_DATA_MB;
      const command = this.sandbox.serverCommandLine({ argv, slot, role, workDir, limits: this.serverLimits(settings, 'data', dataMb) });
      return this.own(new JobServer(`JavaScript ${role} server`, command, this.sandbox.mode === 'bwrap'), workDir);
    });
  }

  /** A process-mode server's private folder goes with it (the sandbox reaps what its uid still runs first). */
  private own(server: JobServer, workDir: string | undefined): JobServer {
    if (workDir) server.dispose = () => setImmediate(() => removeWorkDir(workDir));
    return server;
  }

  private serverLimits(settings: ServerSettings, memoryKind: 'none' | 'data', memoryMb: number) {
    const outputMb = Math.ceil((settings.outputBytes ?? DEFAULT_OUTPUT_BYTES) / MIB) + 1;
    return {
      timeoutMs: 0,
      memoryMb,
      memoryKind,
      processes: 64,
      // the server's own descriptors come on top of a job's
      openFiles: 128,
      fileSizeMb: Math.max(settings.fileSizeMb ?? 16, outputMb),
      diskMb: settings.diskMb ?? DEFAULT_DISK_MB,
      cpuSeconds: 'unlimited' as const,
    };
  }

  close(): void {
    for (const pool of this.pools.values()) pool.close();
    this.pools.clear();
    this.pyodideChildren?.close();
  }
}
