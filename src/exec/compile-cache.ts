import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Program, Verdict } from './runners/kit.js';

/**
 * Compiled programs by their source and compile commands: identical programs (duplicate samples, the retry of a
 * timeout) are compiled once. Holds the build outputs, or the compile error.
 */
export class CompileCache {
  private readonly dir = mkdtempSync(join(tmpdir(), 'codegauge-build-'));
  private readonly entries = new Map<string, { outputs?: string; verdict?: Verdict }>();
  private next = 0;

  static key(program: Program): string {
    return createHash('sha256').update(JSON.stringify([program.files, program.compile, program.build ?? null])).digest('hex');
  }

  get(key: string) {
    return this.entries.get(key);
  }

  /** Keeps what the compiler wrote into `work` (everything but the program's own files), or its error. */
  store(key: string, work: string, program: Program, verdict?: Verdict): void {
    if (verdict) {
      this.entries.set(key, { verdict });
      return;
    }
    const outputs = join(this.dir, String(this.next++));
    mkdirSync(outputs);
    for (const name of readdirSync(work)) if (!(name in program.files)) cpSync(join(work, name), join(outputs, name), { recursive: true });
    this.entries.set(key, { outputs });
  }

  restore(outputs: string, work: string): void {
    for (const name of readdirSync(outputs)) cpSync(join(outputs, name), join(work, name), { recursive: true });
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
