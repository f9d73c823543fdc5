import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareWithBaseline, gateDelta } from '../src/api/run.js';
import { BaselineStore, type ItemResults } from '../src/config/baselines.js';
import { configSchema } from '../src/config/schema.js';
import { startFakeLlmServer, type FakeServer } from './fixtures/fake-llm-server.js';
import { cli } from './helpers.js';

/** Baselines in the store and the gates on them: per metric, pass@k and judge. */
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-gates-'));
});

const config = configSchema.parse({ metrics: ['bleu', { metric: 'chrf', fail_if_worse: 2 }], exec: { benchmark: 'humaneval', systems: { a: 'canonical' }, fail_if_worse: 0 } });
const metric = (values: number[], signature = 'chrF2|x'): ItemResults => ({ kind: 'metric', system: 's', metric: 'chrf', signature, ids: values.map((_, i) => String(i + 1)), values, segment_statistics: values.map((v) => [v, 1]) });
/** A segment-averaged metric's scorer: statistics [score, 1], corpus score = their mean. */
const meanScorer = { scoreFromStatistics: (s: ArrayLike<number>) => s[0] / s[1] };
const scorers = new Map([['chrf', meanScorer]]);

describe('gate deltas', () => {
  it('a result\'s own fail_if_worse wins over the command line\'s', () => {
    expect(gateDelta(config, { kind: 'metric', metric: 'chrf' }, 0.5)).toBe(2);
    expect(gateDelta(config, { kind: 'metric', metric: 'bleu' }, 0.5)).toBe(0.5);
    expect(gateDelta(config, { kind: 'metric', metric: 'bleu' }, undefined)).toBeUndefined();
    expect(gateDelta(config, { kind: 'exec', metric: 'passed' }, 3)).toBe(0);
  });
});

describe('compareWithBaseline', () => {
  const base = Array.from({ length: 200 }, (_, i) => 40 + (i % 7) * 5);
  it('a significant regression beyond the delta fails, naming the difference and its CI', () => {
    const [c] = compareWithBaseline(config, [metric(base.map((x) => x - 6))], [metric(base)], { baseline: 'main', scorers });
    expect(c.status).toBe('failed');
    expect(c.diff).toBeCloseTo(-6, 9);
    expect(c.ci![1]).toBeLessThan(-2);
    expect(c.reason).toMatch(/^s chrf \(corpus\) is worse than baseline "main" by more than 2: difference -6\.00, 95% CI \[-6\.00, -6\.00\]$/);
  });
  it('a regression within the delta, or noise, passes', () => {
    const noisy = base.map((x, i) => x + (i % 2 ? 1.5 : -2.5));
    const [c] = compareWithBaseline(config, [metric(noisy)], [metric(base)], { baseline: 'main', scorers });
    expect(c.status).toBe('passed');
  });
  it('different signatures or items are not comparable; an absent result is missing', () => {
    expect(compareWithBaseline(config, [metric(base, 'chrF2|y')], [metric(base)], { scorers })[0]).toMatchObject({ status: 'not-comparable', reason: expect.stringContaining('signatures differ') });
    expect(compareWithBaseline(config, [metric(base.slice(1))], [metric(base)], { scorers })[0]).toMatchObject({ status: 'not-comparable', reason: expect.stringContaining('rows do not match') });
    expect(compareWithBaseline(config, [{ ...metric(base), system: 't' }], [metric(base)], { scorers })[0].status).toBe('missing');
    // A baseline saved without segment statistics cannot give a corpus score: not compared on another number.
    const { segment_statistics: _, ...old } = metric(base);
    expect(compareWithBaseline(config, [metric(base)], [old], { baseline: 'main', scorers })[0]).toMatchObject({ status: 'not-comparable', reason: expect.stringContaining('holds no segment statistics for s chrf (saved by an earlier codegauge); save it again') });
  });
  it('a metric is gated on its corpus score, the number the run shows, not on the mean of its sentence scores', () => {
    // A BLEU-like ratio: statistics [matches, length], corpus score 100 x sum(matches) / sum(lengths). Long segments
    // got better, short ones worse: the corpus score rises while the mean of the sentence scores falls.
    const ratio = { scoreFromStatistics: (s: ArrayLike<number>) => (100 * s[0]) / s[1] };
    const lengths = Array.from({ length: 100 }, (_, i) => (i % 2 ? 40 : 4));
    const item = (matches: number[]): ItemResults => ({ ...metric(matches.map((m, i) => (100 * m) / lengths[i])), metric: 'bleu', segment_statistics: matches.map((m, i) => [m, lengths[i]]) });
    const before = item(lengths.map((l) => l / 2));
    const after = item(lengths.map((l) => (l === 40 ? 30 : 0)));
    const [c] = compareWithBaseline(config, [after], [before], { baseline: 'main', failIfWorse: 1, scorers: new Map([['bleu', ratio]]) });
    expect(c.aggregation).toBe('corpus');
    expect(c.baseline_score).toBeCloseTo(50, 12);
    expect(c.score).toBeCloseTo((100 * 50 * 30) / (50 * 44), 12); // 68.18, while the sentence scores' mean fell from 50 to 37.5
    expect(c.diff).toBeCloseTo(c.score! - 50, 12);
    expect(c.status).toBe('passed');
    expect(c.reason).toMatch(/^s bleu \(corpus\) is not worse than baseline "main" by more than 1 with confidence: difference 18\.18, 95% CI \[15\.22, 20\.31\]$/);
  });
  it('pass/fail with several samples per problem is resampled by problem', () => {
    const ids = Array.from({ length: 40 }, (_, i) => `T/${i % 20}`);
    const exec = (values: number[]): ItemResults => ({ kind: 'exec', system: 'a', metric: 'passed', signature: 'exec|x', ids, values });
    const [c] = compareWithBaseline(config, [exec(ids.map((_, i) => (i < 10 ? 0 : 1)))], [exec(ids.map(() => 1))], {});
    expect(c.status).toBe('failed');
    expect(c.score).toBeCloseTo(75, 9);
    expect(c.baseline_score).toBe(100);
  });
});

describe('BaselineStore', () => {
  it('saving a name replaces the whole baseline; names are listed', () => {
    const store = new BaselineStore(join(dir, 'b.sqlite'));
    store.save('main', [metric([1, 2]), { ...metric([3]), metric: 'bleu' }]);
    store.save('main', [metric([5, 6])]);
    store.save('dev', [metric([1])]);
    expect(store.load('main')!.results).toEqual([metric([5, 6])]);
    expect(store.load('nope')).toBeUndefined();
    expect(store.names()).toEqual(['dev', 'main']);
    store.close();
  });
});

describe('run with an LLM judge', () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await startFakeLlmServer({ reply: (body) => (body.messages.at(-1).content.includes('y = 2') ? 'Functional correctness: 1' : 'Functional correctness: 4') });
  });
  afterAll(() => server.close());

  it('judges through the config; a second run sends no request; the judge is gated against a baseline', async () => {
    const refs = join(dir, 'refs.jsonl');
    const good = join(dir, 'good.jsonl');
    const bad = join(dir, 'bad.jsonl');
    const n = 40;
    writeFileSync(refs, Array.from({ length: n }, () => JSON.stringify('x = 1')).join('\n') + '\n');
    writeFileSync(good, Array.from({ length: n }, () => JSON.stringify('x = 1')).join('\n') + '\n');
    writeFileSync(bad, Array.from({ length: n }, (_, i) => JSON.stringify(i % 2 ? 'x = 1' : 'y = 2')).join('\n') + '\n');
    const yaml = (hyps: string) => `out: out\nstore: store.sqlite\nconfidence: 0\ndata:\n  refs: refs.jsonl\n  lang: python\n  systems:\n    sys: ${hyps}\nmodels:\n  judge:\n    model: openai:j\n    base_url: ${server.url}\njudges:\n  - method: ice\n    model: judge\n    fail_if_worse: 5\n`;
    const path = join(dir, 'judge.yaml');
    writeFileSync(path, yaml('good.jsonl'));
    const first = await cli('run', '--config', path, '--save-baseline', 'main', '--format', 'json');
    expect(first.err).not.toContain('internal error');
    expect(first.code).toBe(0);
    const run = JSON.parse(first.out);
    expect(run.llm.requests).toBeGreaterThan(0);
    expect(run.scores[0]).toMatchObject({ kind: 'judge', system: 'sys', score: 100 });
    const before = server.requests.length;
    const second = JSON.parse((await cli('run', '--config', path, '--baseline', 'main', '--format', 'json')).out);
    expect(server.requests.length).toBe(before);
    expect(second.llm.requests).toBe(0);
    expect(second.baseline.comparisons[0].status).toBe('passed');
    writeFileSync(path, yaml('bad.jsonl'));
    const worse = await cli('run', '--config', path, '--baseline', 'main');
    expect(worse.code).toBe(1);
    expect(worse.err).toMatch(/gate failed: sys ice \(mean\) is worse than baseline "main" by more than 5: difference -37\.50/);
  });
});
