import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { asOutputError, OutputError } from '../errors.js';

/**
 * Creates a folder and its missing parents, one at a time. Node 20's `mkdirSync(path, { recursive: true })` loops
 * forever where mkdir fails with ENOENT under a parent that exists (/proc, /sys): here that is one OutputError.
 */
export function makeDir(path: string): void {
  const missing: string[] = [];
  let p = resolve(path);
  while (!existsSync(p)) {
    missing.unshift(p);
    const up = dirname(p);
    if (up === p) break;
    p = up;
  }
  if (existsSync(p) && !statSync(p).isDirectory()) throw new OutputError(path, `${p} is not a folder`);
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && statSync(dir).isDirectory()) continue;
      if (code === 'ENOENT') throw new OutputError(path, `cannot create folders in ${dirname(dir)}`);
      throw asOutputError(e, path) ?? e;
    }
  }
}
