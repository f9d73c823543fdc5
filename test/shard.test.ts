import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseShard, shardOfId } from '../src/config/shard.js';
import { startFakeLlmServer, type FakeServer } from './fixtures/fake-llm-server.js';
import { cli } from './helpers.js';

/** --shard i/N: a deterministic split by item id on judge, sbc run and run. */
let dir: string;
let server: FakeServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-shard-'));
  server = await startFakeLlmServer({ reply: (body) => (body.messages.at(-1).content.includes('score') ? 'Functional correctness: 3' : '```python\nprint(1)\n```') });
});
afterAll(() => server.close());

describe('the split', () => {
  it('parses i/N and refuses anything else', () => {
    expect(parseShard('2/8')).toEqual({ index: 2, count: 8 });
    for (const bad of ['0/4', '5/4', '1/0', 'a/b', '2', '1/2/3']) expect(() => parseShard(bad), bad).toThrow(/--shard must be i\/N/);
  });

  it('is deterministic, covers every id exactly once, and is roughly balanced', () => {
    const ids = Array.from({ length: 4000 }, (_, i) => String(i + 1));
    const counts = [0, 0, 0, 0];
    for (const id of ids) {
      const s = shardOfId(id, 4);
      expect(s).toBe(shardOfId(id, 4));
      counts[s - 1]++;
    }
    expect(counts.reduce((a, b) => a + b, 0)).toBe(4000);
    for (const c of counts) expect(Math.abs(c - 1000)).toBeLessThan(120);
  });

  it('a bad --shard is a usage error on every command that takes it', async () => {
    for (const args of [['run', '--shard', '3/2'], ['judge', '--method', 'ice', '--model', 'openai:j', '--refs', 'r', '--hyps', 'h', '--shard', '3/2']]) {
      const r = await cli(...args);
      expect(r.code).toBe(2);
      expect(r.err).toContain('--shard must be i/N');
    }
  });
});

describe('judge --shard', () => {
  it('grades only the shard\'s segments and says which; the shards together are the whole', async () => {
    const refs = join(dir, 'refs.py.jsonl');
    const hyps = join(dir, 'sys.py.jsonl');
    const lines = Array.from({ length: 12 }, (_, i) => JSON.stringify(`x = ${i}`)).join('\n') + '\n';
    writeFileSync(refs, lines);
    writeFileSync(hyps, lines);
    const seen: string[] = [];
    for (const i of [1, 2, 3]) {
      const r = await cli('judge', '--method', 'ice', '--model', 'openai:j', '--base-url', server.url, '--refs', refs, '--hyps', hyps, '--format', 'json', '--cache-file', join(dir, 'cache.sqlite'), '--shard', `${i}/3`);
      expect(r.err).not.toContain('internal error');
      expect(r.code).toBe(0);
      const report = JSON.parse(r.out);
      expect(report.shard).toBe(`${i}/3`);
      expect(report.systems[0].scores[0].segments.length).toBe(report.ids.length);
      for (const id of report.ids) expect(shardOfId(id, 3)).toBe(i);
      seen.push(...report.ids);
    }
    expect(seen.map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });
});

describe('sbc run --shard', () => {
  it('runs only the shard\'s requirements into OUT/shard-i-of-N', async () => {
    const dataset = join(dir, 'dataset.json');
    writeFileSync(dataset, JSON.stringify(Array.from({ length: 6 }, (_, i) => ({ question_id: i + 1, requirement: `Print the number ${i}.`, implementation_layer: 'backend', programming_language: 'python' }))));
    const out = join(dir, 'sbc');
    const r = await cli('sbc', 'run', '--dataset', dataset, '--model', 'openai:m', '--base-url', server.url, '--embed', 'openai:e', '--iterations', '1', '--cache-file', join(dir, 'sbc.sqlite'), '--out', out, '--shard', '2/3');
    expect(r.err).not.toContain('internal error');
    const path = join(out, 'shard-2-of-3', 'results.jsonl');
    expect(existsSync(path)).toBe(true);
    const ids = readFileSync(path, 'utf8').trim().split('\n').map((l) => String(JSON.parse(l).question_id));
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(shardOfId(id, 3)).toBe(2);
  });
});
