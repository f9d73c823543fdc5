import { randomInt } from 'node:crypto';

/**
 * Sandbox uids. As root, every program runs as an unprivileged uid; the uids are this process's own (a random block
 * of 4,096 above 2^20), so that two codegauge processes on one machine never share one: the process limit counts per
 * uid, and a fork bomb in one run must not eat the limit of another. Each worker slot has two: one for candidates,
 * one for the tests' harness, so that a candidate can never signal or trace the process that judges it.
 */
const BLOCK = 4096;
const BASE = BLOCK * randomInt(256, (2 ** 31 - BLOCK) / BLOCK);

export type SandboxRole = 'candidate' | 'harness';

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** The uid of a slot's sandbox in a role (slots beyond 2,047 share uids with lower ones). */
export function sandboxUid(slot: number, role: SandboxRole = 'candidate'): number {
  return BASE + ((2 * slot + (role === 'harness' ? 1 : 0)) % BLOCK);
}

/** Whether `uid` is one of this process's sandbox uids. */
export function isSandboxUid(uid: number): boolean {
  return uid >= BASE && uid < BASE + BLOCK;
}
