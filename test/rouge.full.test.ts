import { describe, expect, it } from 'vitest';
import { Rouge } from '../src/index.js';
import type { PRF } from '../src/metrics/rouge.js';

/** The long ROUGE cases (npm run test:full): test/rouge.test.ts has the same path on 100,000 tokens. */
function prf(type: 'rougeL' | 'rougeLsum', target: string, prediction: string): PRF {
  const metric = new Rouge(type);
  return metric.scoreSegment(prediction, metric.prepareReferences([target]));
}

/** mulberry32: a seeded generator in [0, 1). */
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

describe('LCS without n*m tables, at a million tokens', () => {
  it('ROUGE-L and ROUGE-Lsum of one 1M-token line: exact, in linear memory', () => {
    const r = rng(7);
    const ref = Array.from({ length: 1_000_000 }, () => `w${Math.floor(r() * 1_000_000)}`);
    // Every 10th token replaced by one absent from the reference: the other 900,000 are a common subsequence, and
    // no longer one exists, since the replaced tokens cannot match.
    const hyp = ref.map((x, i) => (i % 10 === 9 ? `x${i}` : x));
    const [target, prediction] = [ref.join(' '), hyp.join(' ')];
    for (const type of ['rougeL', 'rougeLsum'] as const) {
      const got = prf(type, target, prediction);
      for (const k of ['precision', 'recall', 'fmeasure'] as const) expect(got[k]).toBeCloseTo(0.9, 12);
    }
  });

  it('ROUGE-L and one-line ROUGE-Lsum on 100,000 tokens of two periodic sequences (bit-parallel LCS, no alignment table)', () => {
    const tokens = (n: number, mod: number) => Array.from({ length: n }, (_, i) => `w${i % mod}`).join(' ');
    const [hyp, ref] = [tokens(100_000, 997), tokens(100_000, 991)];
    const l = prf('rougeL', ref, hyp);
    const lsum = prf('rougeLsum', ref, hyp);
    expect(lsum).toEqual(l);
    expect(l.fmeasure).toBeGreaterThan(0.5);
    expect(l.fmeasure).toBeLessThan(1);
  });
});
