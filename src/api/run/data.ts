import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { LoadedConfig } from '../../config/load.js';
import { inShard, shardLabel, type Shard } from '../../config/shard.js';
import { InputError, UsageError } from '../../errors.js';
import { readHypotheses, readReferences } from '../../io/segments.js';
import type { RunData } from './context.js';

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** Stage 1: the config's data section (references, systems, problem statements), cut to the shard. */
export function readRunData(loaded: LoadedConfig, shard: Shard | undefined): RunData | undefined {
  const d = loaded.config.data;
  if (!d) return undefined;
  const refPaths = (Array.isArray(d.refs) ? d.refs : [d.refs]).map(loaded.resolvePath);
  const { references, files } = readReferences(refPaths);
  const allIds = references.map((_, i) => String(i + 1));
  const keep = allIds.map((id) => inShard(id, shard));
  const pick = <T>(xs: readonly T[]) => xs.filter((_, i) => keep[i]);
  const systems = Object.entries(d.systems).map(([name, path]) => ({ name, hypotheses: pick(readHypotheses(loaded.resolvePath(path), files[0])) }));
  let problems: string[] | undefined;
  if (d.problems) {
    const path = loaded.resolvePath(d.problems);
    const lines = readFileSync(path, 'utf8').replace(/\n$/, '').split('\n');
    problems = path.endsWith('.jsonl') ? lines.map((l, i) => { try { return String(JSON.parse(l)); } catch { throw new InputError('invalid JSON string', path, i + 1); } }) : lines;
    if (problems.length !== references.length) throw loaded.error(['data', 'problems'], `${problems.length} problems but ${references.length} references`);
    problems = pick(problems);
  }
  const data: RunData = { references: pick(references), systems, ids: pick(allIds), refsSha: sha(refPaths.map((p) => readFileSync(p)).join('\u0000')), problems };
  if (data.ids.length === 0) throw new UsageError(`--shard ${shardLabel(shard!)}: no segment of ${d.refs} falls in this shard`);
  return data;
}
