import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Folders of the host visible (read-only) in the bwrap sandbox, when they exist. */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

export function findExecutable(name: string): string | undefined {
  if (name.includes('/')) return existsSync(name) ? name : undefined;
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    if (!dir) continue;
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** The folder a toolchain binary lives in, when it must be mounted (outside the system folders). */
export function toolchainRoot(binary: string): string | undefined {
  const real = realpathSync(binary);
  if (SYSTEM_DIRS.some((d) => real.startsWith(d + '/'))) return undefined;
  // .../prefix/bin/tool -> .../prefix
  return dirname(dirname(real));
}
