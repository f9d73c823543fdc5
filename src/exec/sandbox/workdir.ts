import { closeSync, constants, fstatSync, mkdtempSync, openSync, readSync, renameSync, rm, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Host folders of the sandbox: made private, removed without making the event loop wait, read without following links. */

/** A fresh private work folder on the host. */
export function makeWorkDir(prefix = 'codegauge-exec-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeWorkDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

let trash: string | undefined;
let trashed = 0;

/**
 * Removes a used work folder in the background: on some file systems removing a folder waits milliseconds for the
 * disk (ext4 with `discard`: ~3 ms a folder), during which no other worker's verdict could be taken in. The folder is
 * first moved (atomic and cheap) into a private folder of this process that no sandbox shows. Call it only once
 * nothing runs in the folder's sandbox any more.
 */
export function discardWorkDir(dir: string): void {
  try {
    if (!trash) {
      trash = mkdtempSync(join(tmpdir(), 'codegauge-trash-'));
      const made = trash;
      process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    }
    const target = join(trash, String(trashed++));
    renameSync(dir, target);
    rm(target, { recursive: true, force: true }, () => undefined);
  } catch {
    removeWorkDir(dir);
  }
}

/**
 * The first (or last) `cap` bytes of a file a sandbox wrote, and its size. Opened without following a symlink and
 * only if it is a regular file: the program could have replaced it by a link to a file of the host.
 */
export function readCapped(path: string, cap: number, tail = false): { text: string; size: number } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return { text: '', size: 0 };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { text: '', size: 0 };
    const size = st.size;
    const length = Math.min(size, cap);
    const buffer = Buffer.alloc(length);
    const read = readSync(fd, buffer, 0, length, tail ? size - length : 0);
    return { text: buffer.subarray(0, read).toString('utf8'), size };
  } finally {
    closeSync(fd);
  }
}
