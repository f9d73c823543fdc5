import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli } from './helpers.js';

/** run --shard i/N, then merge: the shards joined equal the unsharded run; mismatches and gaps are reported. */
let dir: string;
let config: string;
const CONFIG = `version: 1
out: results
confidence: 0
data:
  refs: bundled:conala/refs.jsonl
  systems:
    baseline: bundled:conala/baseline.jsonl
    codex: bundled:conala/codex.jsonl
metrics: [chrf, rougeL:tok=code]
exec:
  benchmark: humaneval
  limit: 6
  systems:
    canonical: canonical
  jobs: 2
`;
const items = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-merge-'));
  config = join(dir, 'codegauge.config.yaml');
  writeFileSync(config, CONFIG);
});

describe('run --shard and merge', () => {
  it('each shard writes its own results; merged, they equal the unsharded run', async () => {
    for (const s of ['1/2', '2/2']) {
      const r = await cli('run', '--config', config, '--shard', s, '--format', 'json');
      expect(r.err).not.toContain('internal error');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out).shard).toBe(s);
    }
    const whole = await cli('run', '--config', config, '--format', 'json');
    expect(whole.code).toBe(0);
    const merged = await cli('merge', join(dir, 'results'), '--out', join(dir, 'merged'), '--format', 'json');
    expect(merged.err).toBe('');
    expect(merged.code).toBe(0);
    const report = JSON.parse(merged.out);
    expect(report).toMatchObject({ kind: 'merge', complete: true, shards: { count: 2, present: [1, 2], missing: [] } });
    const expected = items(join(dir, 'results', 'items.jsonl'));
    const got = items(join(dir, 'merged', 'items.jsonl'));
    expect(got.length).toBe(expected.length);
    for (const e of expected) {
      const g = got.find((x: any) => x.kind === e.kind && x.system === e.system && x.metric === e.metric);
      expect(g.signature).toBe(e.signature);
      // ids and values, in the unsharded order (exec ids are sorted by name in both)
      const pairs = (x: any) => x.ids.map((id: string, i: number) => `${id}=${x.values[i]}`).sort();
      expect(pairs(g)).toEqual(pairs(e));
    }
  });

  it('reports a missing shard (exit 1) and refuses mismatched signatures (exit 2)', async () => {
    const one = await cli('merge', join(dir, 'results', 'shard-1-of-2'));
    expect(one.code).toBe(1);
    expect(one.err).toContain('incomplete: shard(s) 2/2 missing');
    const copy = join(dir, 'tampered');
    cpSync(join(dir, 'results', 'shard-2-of-2'), copy, { recursive: true });
    const path = join(copy, 'items.jsonl');
    writeFileSync(path, readFileSync(path, 'utf8').replace('nc:6', 'nc:7'));
    const bad = await cli('merge', join(dir, 'results', 'shard-1-of-2'), copy);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/signatures differ between shards/);
    const twice = await cli('merge', join(dir, 'results', 'shard-1-of-2'), join(dir, 'results', 'shard-1-of-2'));
    expect(twice.code).toBe(2);
    expect(twice.err).toContain('given twice');
  });

  it('merge --save-baseline stores the joined shards; a shard is then gated against its part of that baseline', async () => {
    const store = join(dir, 'store.sqlite');
    const saved = await cli('merge', join(dir, 'results'), '--save-baseline', 'main', '--store', store);
    expect(saved.code).toBe(0);
    expect(saved.err).toContain('saved baseline "main"');
    const r = await cli('run', '--config', config, '--shard', '2/2', '--store', store, '--baseline', 'main', '--fail-if-worse', '0.5', '--format', 'json');
    expect(r.code).toBe(0);
    const comparisons = JSON.parse(r.out).baseline.comparisons;
    expect(comparisons.length).toBe(5);
    for (const c of comparisons) expect(c.status, c.reason).toBe('passed');
    const incomplete = await cli('merge', join(dir, 'results', 'shard-1-of-2'), '--save-baseline', 'half', '--store', store);
    expect(incomplete.code).toBe(2);
    expect(incomplete.err).toContain('the merge is incomplete');
  });
});
