import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isRoot } from './identity.js';
import { findExecutable, SYSTEM_DIRS } from './paths.js';

/** bubblewrap's command line: what the sandbox shows of the host, and its namespaces. */
const ETC_ENTRIES = ['alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'java-17-openjdk', 'java-21-openjdk', 'gcc', 'os-release'];

/** Whether bubblewrap is installed and can make a sandbox here. */
export function bwrapAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  const bwrap = findExecutable('bwrap');
  if (!bwrap) return false;
  const probe = spawnSync(bwrap, [...bwrapBaseArgs([], 1), '/usr/bin/true'], { timeout: 10_000, stdio: 'ignore' });
  return probe.status === 0;
}

/**
 * The sandbox every program runs in: the system folders and the toolchains read-only, a private /tmp and /dev/shm
 * (tmpfs of `diskMb` each: what a program writes is bounded in total, not only per file), its own POSIX message
 * queues, no network, its own pid, IPC and UTS namespaces, no capabilities, an empty environment.
 */
export function bwrapBaseArgs(extraRoots: string[], diskMb: number): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else args.push('--ro-bind', dir, dir);
  }
  args.push('--perms', '0755', '--dir', '/etc');
  for (const entry of ETC_ENTRIES) {
    const path = `/etc/${entry}`;
    if (existsSync(path)) args.push('--ro-bind', path, path);
  }
  // Toolchains outside /usr (pyenv, nvm, sdkman): their folder, with world-traversable parents made by bwrap.
  const made = new Set<string>();
  for (const root of extraRoots) {
    const parents: string[] = [];
    for (let p = dirname(root); p !== '/' && p !== '.'; p = dirname(p)) parents.unshift(p);
    for (const p of parents) {
      if (made.has(p) || SYSTEM_DIRS.includes(p)) continue;
      made.add(p);
      args.push('--perms', '0755', '--dir', p);
    }
    args.push('--ro-bind', root, root);
  }
  const size = String(diskMb * 1024 * 1024);
  args.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--size', size, '--tmpfs', '/tmp', '--perms', '1777', '--size', size, '--tmpfs', '/dev/shm', '--mqueue', '/dev/mqueue');
  args.push('--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!isRoot()) args.push('--unshare-user', '--cap-drop', 'ALL');
  args.push('--die-with-parent', '--new-session', '--clearenv', '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin', '--setenv', 'LANG', 'C.UTF-8');
  return args;
}

/**
 * The work folder inside the sandbox: writable (a compile step: the host keeps what the compiler wrote), or its
 * entries bound read-only into a fresh tmpfs of `diskMb` (a program's run: it may write beside them, bounded, and
 * nothing it writes reaches the host).
 */
export function workFolderArgs(workDir: string, readOnly: boolean, diskMb: number): string[] {
  if (!readOnly) return ['--bind', workDir, '/sandbox', '--setenv', 'HOME', '/sandbox', '--chdir', '/sandbox'];
  const args = ['--perms', '1777', '--size', String(diskMb * 1024 * 1024), '--tmpfs', '/sandbox'];
  for (const name of readdirSync(workDir)) args.push('--ro-bind', join(workDir, name), `/sandbox/${name}`);
  return [...args, '--setenv', 'HOME', '/sandbox', '--chdir', '/sandbox'];
}
