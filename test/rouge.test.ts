import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Rouge, parseMetric, rougeTokens, scoreCorpus } from '../src/index.js';
import { lcsIndices, lcsLength, rougeL, rougeLsum, type PRF } from '../src/metrics/rouge.js';
import { MAX_LCS_WORD_STEPS, alignmentSteps, lcsLengthOfIds } from '../src/text/lcs.js';
import { WorkBoundError } from '../src/errors.js';
import { ROOT, vector } from './helpers.js';

const v = vector('rouge.json');
type RType = 'rouge1' | 'rouge2' | 'rougeL' | 'rougeLsum';

/** Precision/recall/F of one target-prediction pair through the public metric (0-1 scale). */
function prf(type: RType, target: string, prediction: string, stem = false): PRF {
  const metric = new Rouge(type, { stem });
  return metric.scoreSegment(prediction, metric.prepareReferences([target]));
}

function expectPrf(got: PRF, expected: { precision: number; recall: number; fmeasure: number }, digits: number) {
  expect(got.precision).toBeCloseTo(expected.precision, digits);
  expect(got.recall).toBeCloseTo(expected.recall, digits);
  expect(got.fmeasure).toBeCloseTo(expected.fmeasure, digits);
}

describe('rouge-score test vectors', () => {
  for (const tc of v.verbatim_tests.simple) {
    it(`${tc.types.join(',')}: ${JSON.stringify(tc.target)} vs ${JSON.stringify(tc.prediction)}`, () => {
      for (const type of tc.types as RType[]) expectPrf(prf(type, tc.target, tc.prediction), tc[type] ?? tc.all, 4);
    });
  }

  it('accepts rouge1..rouge9, rougeL, rougeLsum and rejects invalid types', () => {
    for (const t of v.verbatim_tests.valid_types) expect(() => new Rouge(t)).not.toThrow();
    for (const t of v.verbatim_tests.invalid_types_raise) expect(() => new Rouge(t)).toThrow();
  });

  it('internals: LCS backtracking and summary-level LCS', () => {
    const i = v.verbatim_tests.internals;
    const s = (xs: number[]) => xs.map(String);
    expect(lcsIndices(s([1, 2, 3, 4, 5]), s([2, 5, 3, 4]))).toEqual(i['_backtrack_norec indices']);
    expectPrf(rougeLsum([s([1, 2, 3, 4, 5])], [s([1, 2, 6, 7, 8]), s([1, 3, 8, 9, 5])]), i['_summary_level_lcs([[1,2,3,4,5]], [[1,2,6,7,8],[1,3,8,9,5]])'], 4);
    expect(rougeLsum([['reference']], [[]]).recall).toBe(0);
  });

  it('agrees with ROUGE-1.5.5 on the rouge-score test data (5 places)', () => {
    const key = 'against_ROUGE_1.5.5 (places=5; files rouge/testdata/target.txt & prediction.txt, readlines(), line i vs line i)';
    const g = v.verbatim_tests[key];
    const targets = readFileSync(join(ROOT, 'test/vectors/rouge_testdata/target.txt'), 'utf8').split(/(?<=\n)/);
    const predictions = readFileSync(join(ROOT, 'test/vectors/rouge_testdata/prediction.txt'), 'utf8').split(/(?<=\n)/);
    expect(targets).toEqual(g.target_lines);
    for (let line = 0; line < 2; line++) {
      expectPrf(prf('rouge1', targets[line], predictions[line]), g.rouge1[line], 5);
      expectPrf(prf('rouge1', targets[line], predictions[line], true), g.rouge1_stem[line], 5);
      expectPrf(prf('rouge2', targets[line], predictions[line]), g.rouge2[line], 5);
      expectPrf(prf('rouge2', targets[line], predictions[line], true), g.rouge2_stem[line], 5);
      expectPrf(prf('rougeL', targets[line], predictions[line]), g.rougeL[line], 5);
    }
    const exact = v.generated_check_of_the_above_by_transcribed_code;
    for (const [line, stem] of [[0, false], [0, true], [1, false], [1, true]] as const) {
      const expected = exact[`line${line}${stem ? '_stem' : ''}`];
      for (const type of Object.keys(expected) as RType[]) expectPrf(prf(type, targets[line], predictions[line], stem), expected[type], 12);
    }
  });

  it('ROUGE-Lsum with stemming agrees with ROUGE-1.5.5 on multi-sentence summaries', () => {
    const g = v.verbatim_tests['rougeLsum_stem_against_ROUGE_1.5.5 (pyrouge_files/target_multi.0.txt vs prediction_multi.0.txt)'];
    const target = readFileSync(join(ROOT, 'test/vectors/rouge_testdata/target_multi.0.txt'), 'utf8');
    const prediction = readFileSync(join(ROOT, 'test/vectors/rouge_testdata/prediction_multi.0.txt'), 'utf8');
    expect(target).toBe(g.target);
    expectPrf(prf('rougeLsum', target, prediction, true), g.rougeLsum, 5);
    expectPrf(prf('rougeLsum', target, prediction, true), v.generated_check_of_the_above_by_transcribed_code.multi0_rougeLsum_stem, 12);
  });
});

describe('rouge-score 0.1.2, generated cases (parity 1e-6 on the 0-100 scale)', () => {
  for (const tc of v.generated) {
    it(`${JSON.stringify(tc.target).slice(0, 40)} vs ${JSON.stringify(tc.prediction).slice(0, 40)}`, () => {
      expect(rougeTokens(tc.target, false)).toEqual(tc.tokens_target);
      expect(rougeTokens(tc.prediction, false)).toEqual(tc.tokens_prediction);
      expect(rougeTokens(tc.target, true)).toEqual(tc.tokens_target_stem);
      expect(rougeTokens(tc.prediction, true)).toEqual(tc.tokens_prediction_stem);
      for (const [variant, stem] of [['nostem', false], ['stem', true]] as const) {
        for (const type of ['rouge1', 'rouge2', 'rougeL', 'rougeLsum'] as const) {
          const got = prf(type, tc.target, tc.prediction, stem);
          for (const k of ['precision', 'recall', 'fmeasure'] as const) expect(Math.abs(100 * got[k] - 100 * tc[variant][type][k])).toBeLessThanOrEqual(1e-6);
          // The metric's 0-100 corpus path gives the same number.
          const spec = `${type}:stem=${stem ? 'yes' : 'no'}`;
          expect(Math.abs(scoreCorpus(parseMetric(spec), [tc.prediction], [[tc.target]]).score - 100 * tc[variant][type].fmeasure)).toBeLessThanOrEqual(1e-6);
        }
      }
    });
  }

  it('takes the best-F reference among several (score_multi) and averages segments', () => {
    const metric = parseMetric('rougeL');
    const r = scoreCorpus(metric, ['the cat sat', 'a b c'], [['dog', 'the cat sat down'], ['a b c', 'x']], { segments: true });
    expect(r.segments![0]).toBeCloseTo((100 * 2 * 1 * 0.75) / 1.75, 10);
    expect(r.segments![1]).toBe(100);
    expect(r.score).toBeCloseTo((r.segments![0] + 100) / 2, 10);
    expect(r.signature).toMatch(/^nrefs:2\|tok:default\|stem:no\|measure:f\|impl:rouge-score-0\.1\.2\|version:/);
  });
});

describe('LCS without n*m tables (issue 10)', () => {
  /** mulberry32: a seeded generator in [0, 1). */
  const rng = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  /** rouge-score `_lcs_table` and `_backtrack_norec`, transcribed with a full table. */
  const table = (ref: string[], can: string[]) => {
    const t = Array.from({ length: ref.length + 1 }, () => new Array<number>(can.length + 1).fill(0));
    for (let i = 1; i <= ref.length; i++) {
      for (let j = 1; j <= can.length; j++) t[i][j] = ref[i - 1] === can[j - 1] ? t[i - 1][j - 1] + 1 : Math.max(t[i - 1][j], t[i][j - 1]);
    }
    return t;
  };
  const backtrack = (ref: string[], can: string[]) => {
    const t = table(ref, can);
    const out: number[] = [];
    let [i, j] = [ref.length, can.length];
    while (i > 0 && j > 0) {
      if (ref[i - 1] === can[j - 1]) {
        out.unshift(i - 1);
        i--;
        j--;
      } else if (t[i][j - 1] > t[i - 1][j]) j--;
      else i--;
    }
    return out;
  };
  /** Plain DP length in two rows. */
  const dpLength = (a: string[], b: string[]) => {
    let prev = new Int32Array(b.length + 1);
    let cur = new Int32Array(b.length + 1);
    for (let i = 1; i <= a.length; i++) {
      for (let j = 1; j <= b.length; j++) cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(cur[j - 1], prev[j]);
      [prev, cur] = [cur, prev];
    }
    return prev[b.length];
  };
  const random = (r: () => number, length: number, alphabet: number) => Array.from({ length }, () => `t${Math.floor(r() * alphabet)}`);
  /** `a` with random substitutions, insertions and deletions (shared prefixes, suffixes and long matches). */
  const mutate = (r: () => number, a: string[], alphabet: number) =>
    a.flatMap((x) => {
      const u = r();
      return u < 0.1 ? [] : u < 0.2 ? [x, `t${Math.floor(r() * alphabet)}`] : u < 0.3 ? [`t${Math.floor(r() * alphabet)}`] : [x];
    });

  it('bit-parallel length and backtracked indices equal the DP on 400 random pairs', () => {
    const r = rng(20261130);
    for (let n = 0; n < 400; n++) {
      const alphabet = [1, 2, 4, 26, 1000, 100_000][n % 6];
      const a = random(r, Math.floor(r() * (n < 200 ? 70 : 300)), alphabet);
      const b = n % 2 ? mutate(r, a, alphabet) : random(r, Math.floor(r() * (n < 200 ? 70 : 300)), alphabet);
      const expected = dpLength(a, b);
      expect(lcsLength(a, b)).toBe(expected);
      expect(lcsLength(b, a)).toBe(expected);
      const indices = backtrack(a, b);
      expect(lcsIndices(a, b)).toEqual(indices);
      // Rows kept only every ~sqrt(rows) and recomputed block by block (the path of tables past 64 MB).
      expect(lcsIndices(a, b, 0)).toEqual(indices);
      if (a.length && b.length) expect(rougeLsum([a], [b]).recall).toBe(expected / a.length);
    }
  });

  it('equals the DP across the 8192-token stripes of the pattern', () => {
    const r = rng(42);
    for (const [alphabet, mutated] of [[3, false], [300, true]] as const) {
      const a = random(r, 9000 + Math.floor(r() * 1000), alphabet);
      const b = mutated ? mutate(r, a, alphabet) : random(r, 9000 + Math.floor(r() * 1000), alphabet);
      expect(Math.min(a.length, b.length)).toBeGreaterThan(8192 + 100);
      expect(lcsLength(a, b)).toBe(dpLength(a, b));
    }
  });

  it('integer tokens (any int32, ranges of one shared array) give the DP length', () => {
    const r = rng(99);
    for (let n = 0; n < 300; n++) {
      // small ids, negative ones, and ids far from 0 (past the look-up table: the Map path)
      const pick = [(x: number) => x, (x: number) => -1 - x, (x: number) => (x % 2 ? x : 2 ** 30 + x), (x: number) => -(2 ** 31) + x][n % 4];
      const alphabet = [2, 26, 1000][n % 3];
      const length = Math.floor(r() * (n < 150 ? 40 : 200));
      const a = random(r, length, alphabet);
      const b = n % 2 ? mutate(r, a, alphabet) : random(r, Math.floor(r() * (n < 150 ? 40 : 200)), alphabet);
      const ids = (xs: string[]) => xs.map((x) => pick(Number(x.slice(1))));
      const expected = dpLength(a, b);
      expect(lcsLength(Int32Array.from(ids(a)), Int32Array.from(ids(b)))).toBe(expected);
      const shared = Int32Array.from([7, ...ids(a), -3, ...ids(b), 7]);
      expect(lcsLengthOfIds(shared, 1, 1 + a.length, shared, 2 + a.length, 2 + a.length + b.length)).toBe(expected);
      expect(lcsLengthOfIds(shared, 2 + a.length, 2 + a.length + b.length, shared, 1, 1 + a.length)).toBe(expected);
    }
  });

  it('ROUGE-L of texts through cached token ids equals ROUGE-L of their tokens, past the cache bound', () => {
    const r = rng(5);
    const words = ['Foo', 'foo', 'BAR', 'baz_qux', 'x1', 'caf\u00e9', 'running', 'runs', '\u0130d', 'a.b', '(', ')', '42'];
    const text = () => Array.from({ length: Math.floor(r() * 30) }, () => words[Math.floor(r() * words.length)]).join(r() < 0.5 ? ' ' : '\n');
    for (const options of [{}, { stem: true }, { tokenize: 'code' as const }]) {
      const metric = new Rouge('rougeL', options);
      const plain = new Rouge('rouge1', options); // tokens only
      for (let i = 0; i < 5000; i++) {
        const hyp = text();
        const refs = [text(), text()];
        const got = metric.scoreSegment(hyp, metric.prepareReferences(refs));
        let best: PRF | null = null;
        for (const ref of refs) {
          const s = rougeL(plain.tokens(ref), plain.tokens(hyp));
          if (best === null || s.fmeasure > best.fmeasure) best = s;
        }
        expect(got).toEqual(best);
      }
    }
  });

  it('ROUGE-Lsum unions equal rouge-score _summary_level_lcs (transcribed) on 300 random multi-sentence pairs', () => {
    /** rouge-score's _summary_level_lcs with its _union_lcs, over the full-table backtrack above. */
    const summaryLevel = (refSents: string[][], canSents: string[][]) => {
      const m = refSents.flat().length;
      const n = canSents.flat().length;
      if (!m || !n) return { precision: 0, recall: 0 };
      const countsR = new Map<string, number>();
      const countsC = new Map<string, number>();
      for (const t of refSents.flat()) countsR.set(t, (countsR.get(t) ?? 0) + 1);
      for (const t of canSents.flat()) countsC.set(t, (countsC.get(t) ?? 0) + 1);
      let hits = 0;
      for (const r of refSents) {
        const union = [...new Set(canSents.flatMap((c) => backtrack(r, c)))].sort((x, y) => x - y);
        for (const idx of union) {
          const t = r[idx];
          if (countsC.get(t)! > 0 && countsR.get(t)! > 0) {
            hits++;
            countsC.set(t, countsC.get(t)! - 1);
            countsR.set(t, countsR.get(t)! - 1);
          }
        }
      }
      return { precision: hits / n, recall: hits / m };
    };
    const r = rng(311);
    for (let k = 0; k < 300; k++) {
      const alphabet = [2, 5, 40][k % 3];
      // sentence lengths spread over both sides of the small-pair table (4096 cells): 0 to 150 tokens
      const sentences = () => Array.from({ length: 1 + Math.floor(r() * 5) }, () => random(r, Math.floor(r() * (k % 4 === 3 ? 150 : 20)), alphabet));
      const refSents = sentences();
      const canSents = k % 2 ? refSents.map((s) => mutate(r, s, alphabet)) : sentences();
      const expected = summaryLevel(refSents, canSents);
      const got = rougeLsum(refSents, canSents);
      expect(got.precision).toBe(expected.precision);
      expect(got.recall).toBe(expected.recall);
    }
  });

  it('ROUGE-Lsum aligns a 33,000-token sentence (past the 64 MB table) exactly', () => {
    // Two sentences a side, so the alignment is needed: 'a' x 33,000 then 'b' (once in the reference, twice in the
    // prediction). The LCS of the long sentences is all of them, 'b' clips to one hit: 33,001 of 33,001 and 33,002.
    const long = new Array<string>(33_000).fill('a');
    const got = rougeLsum([long, ['b']], [long, ['b', 'b']]);
    expect(got.recall).toBe(1);
    expect(got.precision).toBe(33_001 / 33_002);
  });

  it('alignments, unions and LCS lengths past the work bound are a WorkBoundError (an input error), in bounded time', () => {
    const long = Array.from({ length: 430_000 }, (_, i) => `t${i % 7}`);
    expect(alignmentSteps(long.length, long.length)).toBeGreaterThan(MAX_LCS_WORD_STEPS);
    expect(() => lcsIndices(long, long)).toThrow(WorkBoundError);
    // 1.6e9 sentence pairs: refused before any alignment
    const lines = Array.from({ length: 40_000 }, () => ['x']);
    expect(() => rougeLsum(lines, lines)).toThrow(/union LCS of 40000 x 40000 sentences .* exceeds the bound of 2\^34 steps/);
    // 3,000 one-token lines each side pass: each line matches one of the other side
    const fewer = lines.slice(0, 3000);
    expect(rougeLsum(fewer, fewer).recall).toBe(1);
  });

  it('the bound is the caller\'s (score --max-work): the same segment refused under a lower one, exact under a higher one', () => {
    const a = Array.from({ length: 20_000 }, (_, i) => `t${(i * 7) % 5}`);
    const b = Array.from({ length: 20_000 }, (_, i) => `t${(i * 3) % 5}`);
    const exact = rougeL(a, b);
    expect(() => rougeL(a, b, 2 ** 20)).toThrow(/an LCS of \d+ x \d+ tokens exceeds the bound of 2\^20 word steps \(split such long lines, or raise it with --max-work\)/);
    expect(rougeL(a, b, 2 ** 24)).toEqual(exact);
    const lines = Array.from({ length: 1000 }, () => ['x']);
    expect(() => rougeLsum(lines, lines, 2 ** 20)).toThrow(WorkBoundError);
    expect(() => new Rouge('rougeL', { maxWork: 2 ** 20 }).scoreSegment(a.join(' '), new Rouge('rougeL').prepareReferences([b.join(' ')]))).toThrow(WorkBoundError);
  });
});
