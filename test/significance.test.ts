import { describe, expect, it } from 'vitest';
import { compareSystems } from '../src/api/compare.js';
import { Bleu, Chrf, scoreCorpus, type Metric } from '../src/index.js';
import { NumpyGenerator, Pcg64, seedSequenceState } from '../src/compat/numpy-random.js';
import { bootstrapDraws, corpusConfidenceInterval, resampledScores } from '../src/stats/resampling.js';
import { numpyMean, numpyPairwiseSum } from '../src/compat/numpy-float.js';
import { weightedSums, weightedSumsOptions } from '../src/stats/weighted-sums.js';
import { VERSION } from '../src/version.js';
import { vector } from './helpers.js';

const sb = vector('sacrebleu.json').generated;

describe('NumPy default_rng port', () => {
  it('SeedSequence and PCG64 state equal NumPy', () => {
    expect(Array.from(seedSequenceState(12345, 8))).toEqual([2688385916, 3048105090, 4196366895, 3152189807, 924159892, 1692637855, 2685664627, 1052446614]);
    const p = new Pcg64(12345);
    const big = (l: Uint32Array) => (BigInt(l[3]) << 96n) | (BigInt(l[2]) << 64n) | (BigInt(l[1]) << 32n) | BigInt(l[0]);
    expect(big(p.state)).toBe(33261208707367790463622745601869196757n);
    expect(big(p.inc)).toBe(268209174141567072605526753992732310247n);
    const raw = [p.next64(), p.next64(), p.next64()].map(([lo, hi]) => (BigInt(hi) << 32n) | BigInt(lo));
    expect(raw).toEqual([4193609425186963869n, 5843160025838961886n, 14708796524633321433n]);
  });
  it('choice and integers(dtype=bool) draw what NumPy draws (sacrebleu vectors)', () => {
    const r = sb.numpy_rng_reference;
    expect(Array.from(new NumpyGenerator(12345).choice(3, 15))).toEqual(r.value.flat());
    expect(Array.from(new NumpyGenerator(12345).booleans(24))).toEqual(r.value2.flat());
    expect(Array.from(new NumpyGenerator(12345).choice(10, 20))).toEqual(r.value3.flat());
  });
  it('pairwise summation as np.sum / np.mean', () => {
    const xs = Array.from({ length: 1000 }, (_, i) => Math.fround(Math.sin(i) * 100));
    let naive = 0;
    for (const x of xs) naive = Math.fround(naive + x);
    expect(numpyPairwiseSum(xs, 0, xs.length, true)).not.toBe(naive); // the order matters in float32
    expect(numpyMean([1, 2, 3, 4], false)).toBe(2.5);
  });
});

describe('bootstrap confidence intervals = sacrebleu corpus_score(n_bootstrap=1000)', () => {
  const r = sb.readme_corpus;
  const refs = r.refs_streams[0].map((_: string, i: number) => r.refs_streams.map((s: string[]) => s[i]));
  for (const [key, metric] of [['bleu', new Bleu()], ['chrF2', new Chrf()]] as [string, Metric<any>][]) {
    it(key, () => {
      const result = scoreCorpus(metric, r.hyps, refs);
      const scores = resampledScores(metric, result.statistics, bootstrapDraws(r.hyps.length, 1000), 1000);
      const { mean, ci } = corpusConfidenceInterval(scores, metric.float32Scores === true);
      const expected = r.bootstrap_ci_1000[key];
      expect(Math.abs(mean - expected.mean)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(ci - expected.ci)).toBeLessThanOrEqual(1e-9);
    });
  }
});

describe('paired tests = sacrebleu PairedTest', () => {
  const toy = sb.paired_tests_toy;
  for (const test of ['bs', 'ar'] as const) {
    it(`${test} on the toy systems (p-values exact, means and CIs to 1e-9)`, async () => {
      const report = await compareSystems({
        references: toy.refs_streams[0].map((x: string) => [x]),
        systems: [{ name: 'baseline', hypotheses: toy.baseline }, { name: 'system', hypotheses: toy.system }],
        metrics: ['bleu', 'chrf'],
        test,
      });
      ['BLEU', 'chrF2'].forEach((m, mi) => {
        toy[test].results[m].forEach((expected: any, si: number) => {
          const got = report.systems[si].scores[mi];
          expect(Math.abs(got.score - expected.score)).toBeLessThanOrEqual(1e-9);
          expect(got.p_value).toBe(expected.p_value);
          if (expected.mean === null) expect(got.mean).toBeNull();
          else {
            expect(Math.abs(got.mean! - expected.mean)).toBeLessThanOrEqual(1e-9);
            expect(Math.abs(got.ci! - expected.ci)).toBeLessThanOrEqual(1e-9);
          }
          expect(got.signature).toBe(toy[test].signatures[m].replace(/version:.*$/, `version:${VERSION}`));
        });
      });
    });
  }

  const conala = vector('sacrebleu_significance_conala.json');
  for (const test of ['bs', 'ar'] as const) {
    it(`${test} on four CoNaLa systems with BLEU, chrF2 and chrF2++`, async () => {
      const names = Object.keys(conala.systems);
      const report = await compareSystems({
        references: conala.references.map((x: string) => [x]),
        systems: names.map((name) => ({ name, hypotheses: conala.systems[name] })),
        metrics: ['bleu', 'chrf', 'chrf:nw=2'],
        test,
      });
      ['BLEU', 'chrF2', 'chrF2++'].forEach((m, mi) => {
        conala.results[test][m].forEach((expected: any, si: number) => {
          const got = report.systems[si].scores[mi];
          expect(Math.abs(got.score - expected.score)).toBeLessThanOrEqual(1e-9);
          expect(got.p_value).toBe(expected.p_value);
          if (expected.mean !== null) {
            expect(Math.abs(got.mean! - expected.mean)).toBeLessThanOrEqual(1e-9);
            expect(Math.abs(got.ci! - expected.ci)).toBeLessThanOrEqual(1e-9);
          }
        });
      });
    });
  }
});

describe('resampling works for every metric', () => {
  it('segment-averaged metrics resample segment scores', async () => {
    const refs = [['a b c'], ['d e f'], ['g h i'], ['j k l']];
    const report = await compareSystems({
      references: refs,
      systems: [{ name: 'base', hypotheses: ['a b c', 'x', 'g h', 'j'] }, { name: 'sys', hypotheses: ['a b c', 'd e f', 'g h i', 'j k'] }],
      metrics: ['rougeL', 'meteor', 'nltk-bleu'],
      test: 'bs',
      samples: 200,
      seed: 7,
    });
    for (const s of report.systems[1].scores) {
      expect(s.p_value).toBeGreaterThan(0);
      expect(s.p_value).toBeLessThanOrEqual(1);
      expect(s.mean).not.toBeNull();
      expect(s.signature).toMatch(/^nrefs:1\|bs:200\|seed:7\|/);
    }
  });
});

describe('bulk draws', () => {
  it('the WebAssembly sampler draws exactly what the TypeScript generator draws, and stays in step', () => {
    for (const n of [2, 3, 472, 6380, 1_000_003, 2_147_483_647]) {
      const bulk = new NumpyGenerator(12345).choice(n, 10_000);
      const one = new NumpyGenerator(12345);
      const single = Int32Array.from({ length: 10_000 }, () => one.choice(n, 1)[0]);
      expect(bulk).toEqual(single);
      const after = new NumpyGenerator(12345);
      after.choice(n, 5000);
      const reference = new NumpyGenerator(12345);
      for (let i = 0; i < 5000; i++) reference.choice(n, 1);
      expect(after.choice(n, 3)).toEqual(reference.choice(n, 3));
    }
  });
});

describe('resampled sums', () => {
  /** The definition: per resample, each column summed over the drawn rows in ascending order with their multiplicities. */
  function plainSums(draws: Int32Array, n: number, samples: number, matrices: { data: Float64Array; size: number }[]): Float64Array {
    const width = matrices.reduce((w, m) => w + m.size, 0);
    const out = new Float64Array(samples * width);
    for (let s = 0; s < samples; s++) {
      const counts = new Int32Array(n);
      for (let r = 0; r < n; r++) counts[draws[s * n + r]]++;
      let c0 = 0;
      for (const { data, size } of matrices) {
        for (let k = 0; k < size; k++) {
          let a = 0;
          for (let i = 0; i < n; i++) if (counts[i]) a += counts[i] * data[i * size + k];
          out[s * width + c0 + k] += a;
        }
        c0 += size;
      }
    }
    return out;
  }

  it('packed integer lanes, SIMD and scalar paths give the plain sums bit for bit', () => {
    let state = 99;
    const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (const n of [1, 7, 300, 2500]) {
      const samples = 40;
      const draws = bootstrapDraws(n, samples, 3);
      // counts of every size (up to sums near 2^53), all-zero columns, fractions, negatives and huge values
      const kinds = [() => Math.floor(next() * 5), () => Math.floor(next() * 3000), () => 0, () => Math.floor(next() * 2 ** 40), () => next() * 100, () => Math.floor(next() * 200) - 100, () => (next() < 0.01 ? 2 ** 52 : 1)];
      const matrices = [3, 10, 18].map((size) => {
        const data = new Float64Array(n * size);
        for (let k = 0; k < size; k++) {
          const kind = kinds[Math.floor(next() * kinds.length)];
          for (let i = 0; i < n; i++) data[i * size + k] = kind();
        }
        return { rows: n, size, data };
      });
      const expected = plainSums(draws, n, samples, matrices);
      for (const wasm of [true, false]) {
        weightedSumsOptions.wasm = wasm;
        const out = new Float64Array(expected.length);
        weightedSums(draws, n, 0, samples, matrices, out);
        expect(Array.from(out, (x, i) => Object.is(x, expected[i])).every(Boolean)).toBe(true);
      }
      weightedSumsOptions.wasm = true;
    }
  });
});
