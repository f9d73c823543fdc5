import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError, writing } from '../errors.js';
import { makeDir } from './dirs.js';

/**
 * An output folder held by one process at a time: two runs writing the same results file would interleave and
 * duplicate rows. The lock file holds the owner's pid; a lock left by a process that no longer exists (kill -9)
 * is taken over.
 */
export function lockOutput(dir: string): () => void {
  makeDir(dir);
  const path = join(dir, '.codegauge.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        rmSync(path, { force: true });
        process.off('exit', release);
      };
      process.on('exit', release);
      return release;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw writing(path, () => { throw e; });
      const owner = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
        throw new UsageError(`${dir} is being written by another codegauge process (pid ${owner}); wait for it to finish or choose another output folder`);
      }
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new UsageError(`${dir}: cannot take the lock ${path}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
