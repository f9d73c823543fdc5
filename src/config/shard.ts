import { createHash } from 'node:crypto';
import { InvalidArgumentError } from 'commander';

/**
 * `--shard i/N`: a deterministic split by item id. An item belongs to shard `sha256(id) mod N` (1-based i), so the
 * same item lands in the same shard on every machine and for every N-way run, whatever the order of the input.
 */
export interface Shard {
  index: number;
  count: number;
}

export function parseShard(value: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(count) || count < 1 || count > 100_000 || index < 1 || index > count) {
    throw new InvalidArgumentError(`--shard must be i/N with 1 <= i <= N (e.g. 2/8), got "${value}"`);
  }
  return { index, count };
}

/** The 1-based shard an item id belongs to. */
export function shardOfId(id: string, count: number): number {
  const h = createHash('sha256').update(id).digest();
  return (h.readUInt32BE(0) % count) + 1;
}

export function inShard(id: string, shard: Shard | undefined): boolean {
  return !shard || shard.count === 1 || shardOfId(id, shard.count) === shard.index;
}

export const shardLabel = (shard: Shard) => `${shard.index}/${shard.count}`;
export const shardDirName = (shard: Shard) => `shard-${shard.index}-of-${shard.count}`;
