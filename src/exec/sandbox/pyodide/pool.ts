import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { SandboxRole } from '../identity.js';
import { JobServer } from '../job-server.js';
import { PYODIDE_CHILD_SCRIPT, PYODIDE_HARNESS, PYODIDE_PRELOAD } from './child.js';
import { pyodidePackage, type PyodidePackage } from './package.js';

/**
 * The pyodide children as job servers (see package.ts for what the sandbox is and guarantees): a candidate's child
 * runs one job and ends, the harness's runs the tests job after job. Every child starts from a memory snapshot of
 * a loaded interpreter (made once per process, ~0.5 s a child instead of ~5 s).
 */
const LOAD_TIMEOUT_MS = 180_000;
const V8_HEAP_MB = 512;

export function permissionFlag(): string {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 13) ? '--permission' : '--experimental-permission';
}

/**
 * The child's node flags: no eval or new Function (so no JavaScript can be made from strings), a capped V8 heap, and
 * the permission model allowing reads of the pyodide package, the script and the snapshot only (no writes, child
 * processes, workers, addons or WASI).
 */
export function pyodideNodeFlags(pkg: PyodidePackage, script: string, snapshot?: string, writable?: string): string[] {
  return [
    '--disallow-code-generation-from-strings',
    `--max-old-space-size=${V8_HEAP_MB}`,
    '--no-warnings',
    permissionFlag(),
    `--allow-fs-read=${pkg.dir}`,
    `--allow-fs-read=${script}`,
    ...(snapshot ? [`--allow-fs-read=${snapshot}`] : []),
    ...(writable ? [`--allow-fs-write=${writable}`] : []),
  ];
}

export class PyodideChildren {
  readonly pkg: PyodidePackage = pyodidePackage();
  private dir?: string;
  private snapshot?: Promise<string | undefined>;

  private scriptPath(): string {
    if (!this.dir) {
      this.dir = mkdtempSync(join(tmpdir(), 'codegauge-pyodide-'));
      const dir = this.dir;
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      const text = `const HARNESS = ${JSON.stringify(PYODIDE_HARNESS)};\nconst BOUNDARY = ${JSON.stringify(this.boundary)};\nconst PRELOAD = ${JSON.stringify(PYODIDE_PRELOAD)};\n${PYODIDE_CHILD_SCRIPT}`;
      writeFileSync(join(dir, 'child.mjs'), text, { mode: 0o600 });
    }
    return join(this.dir, 'child.mjs');
  }

  constructor(private readonly boundary: string) {}

  private spawnChild(role: 'candidate' | 'harness' | 'snapshot', memoryMb: number, filesMb: number, snapshot?: string): JobServer {
    const script = this.scriptPath();
    const args = [...pyodideNodeFlags(this.pkg, script, role === 'snapshot' ? undefined : snapshot, role === 'snapshot' ? snapshot : undefined), script, this.pkg.dir, String(memoryMb), role, snapshot ?? '', String(filesMb)];
    // nothing of this process's environment (API keys, NODE_OPTIONS) reaches the child
    const env: Record<string, string> = process.platform === 'win32' && process.env.SystemRoot ? { SystemRoot: process.env.SystemRoot } : {};
    return new JobServer(`pyodide ${role}`, { file: process.execPath, args, cwd: dirname(script), env }, false, { readyTimeoutMs: LOAD_TIMEOUT_MS, graceMs: 0 });
  }

  /** The snapshot every child loads: made once, by a child of its own; undefined where it cannot be made (cold loads). */
  private snapshotPath(memoryMb: number): Promise<string | undefined> {
    this.snapshot ??= (async () => {
      const path = join(dirname(this.scriptPath()), 'interpreter.snapshot');
      const maker = this.spawnChild('snapshot', memoryMb, 1, path);
      const why = await maker.ready;
      maker.kill();
      return !why && existsSync(path) ? path : undefined;
    })();
    return this.snapshot;
  }

  /** A child for a slot's role (the slot only matters to the pool). */
  async start(_slot: number, role: SandboxRole, memoryMb: number, filesMb: number): Promise<JobServer> {
    const snapshot = await this.snapshotPath(memoryMb);
    return this.spawnChild(role, memoryMb, filesMb, snapshot);
  }

  close(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
    this.snapshot = undefined;
  }
}
