import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, ROOT } from './helpers.js';

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
      // ids, values and (metrics) each segment's statistics, in the unsharded order (exec ids are sorted by name in both)
      const pairs = (x: any) => x.ids.map((id: string, i: number) => `${id}=${x.values[i]}${x.segment_statistics ? JSON.stringify(x.segment_statistics[i]) : ''}`).sort();
      expect(Boolean(g.segment_statistics)).toBe(e.kind === 'metric');
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

describe('merge recomputes corpus scores from the shards\' statistics', () => {
  const CORPUS = `version: 1
out: corpus-results
confidence: 0
data:
  refs: bundled:conala/refs.jsonl
  lang: python
  systems:
    baseline: bundled:conala/baseline.jsonl
    codex: bundled:conala/codex.jsonl
metrics: [bleu, chrf, 'codebleu', rougeL:tok=code]
`;
  let corpusConfig: string;
  beforeAll(() => {
    corpusConfig = join(dir, 'corpus.yaml');
    writeFileSync(corpusConfig, CORPUS);
  });

  it('3 shards merged: corpus BLEU and chrF equal the unsharded run and `score` on the concatenated inputs', async () => {
    for (const s of ['1/3', '2/3', '3/3']) expect((await cli('run', '--config', corpusConfig, '--shard', s)).code).toBe(0);
    const whole = JSON.parse((await cli('run', '--config', corpusConfig, '--format', 'json')).out);
    const merged = await cli('merge', join(dir, 'corpus-results'), '--out', join(dir, 'corpus-merged'), '--format', 'json');
    expect(merged.code, merged.err).toBe(0);
    const report = JSON.parse(merged.out);
    const data = join(ROOT, 'data', 'conala');
    for (const system of ['baseline', 'codex']) {
      const scored = await cli('score', '--refs', join(data, 'refs.jsonl'), '--hyps', join(data, `${system}.jsonl`), '--metric', 'bleu', '--metric', 'chrf', '--metric', 'codebleu:lang=python', '--metric', 'rougeL:tok=code', '--format', 'json');
      expect(scored.code, scored.err).toBe(0);
      const reference = JSON.parse(scored.out).systems[0].scores;
      for (const [i, metric] of ['bleu', 'chrf', 'codebleu', 'rougeL:tok=code'].entries()) {
        const m = report.scores.find((s: any) => s.system === system && s.metric === metric);
        const w = whole.scores.find((s: any) => s.system === system && s.metric === metric);
        expect(m.aggregation).toBe('corpus');
        expect(Math.abs(m.score - w.score)).toBeLessThan(1e-12);
        expect(m.score).toBe(w.score); // exactly, in fact
        expect(m.score).toBe(reference[i].score);
      }
      // BLEU's corpus score is not the mean of its sentence scores: the merged score is not a mean of items.
      const bleu = report.scores.find((s: any) => s.system === system && s.metric === 'bleu');
      const items = readFileSync(join(dir, 'corpus-merged', 'items.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const values = items.find((r: any) => r.system === system && r.metric === 'bleu').values;
      expect(bleu.score).not.toBeCloseTo(values.reduce((a: number, b: number) => a + b, 0) / values.length, 6);
    }
    // merging the merged result again gives the same corpus scores (it carries the summed statistics)
    const merged2 = join(dir, 'corpus-merged-2');
    cpSync(join(dir, 'corpus-merged', 'items.jsonl'), join(merged2, 'items.jsonl'), { recursive: true });
    writeFileSync(join(merged2, 'run.json'), JSON.stringify({ kind: 'run', shard: null }));
    const again = JSON.parse((await cli('merge', merged2, '--format', 'json')).out);
    expect(again.scores.filter((s: any) => s.kind === 'metric')).toEqual(report.scores.filter((s: any) => s.kind === 'metric'));
  });

  it('without statistics in a shard a metric stays a mean of items, and the output says which', async () => {
    const copy = join(dir, 'corpus-nostats');
    cpSync(join(dir, 'corpus-results', 'shard-3-of-3'), copy, { recursive: true });
    const path = join(copy, 'items.jsonl');
    writeFileSync(path, items(path).map((r: any) => JSON.stringify(r.metric === 'chrf' ? { ...r, statistics: undefined } : r)).join('\n') + '\n');
    const r = await cli('merge', join(dir, 'corpus-results', 'shard-1-of-3'), join(dir, 'corpus-results', 'shard-2-of-3'), copy, '--format', 'json');
    expect(r.code, r.err).toBe(0);
    const scores = JSON.parse(r.out).scores;
    const chrf = scores.find((s: any) => s.system === 'codex' && s.metric === 'chrf');
    expect(chrf).toMatchObject({ aggregation: 'mean' });
    expect(chrf.note).toMatch(/no additive statistics/);
    expect(scores.find((s: any) => s.system === 'codex' && s.metric === 'bleu').aggregation).toBe('corpus');
    const table = await cli('merge', join(dir, 'corpus-results', 'shard-1-of-3'), join(dir, 'corpus-results', 'shard-2-of-3'), copy);
    expect(table.out).toMatch(/codex\s+chrf\s+\d+\.\d+\s+\(n=\d+, mean of items\)/);
    expect(table.out).toMatch(/codex\s+bleu\s+\d+\.\d+\s+\(n=\d+, corpus score from the summed statistics\)/);
  });
});
