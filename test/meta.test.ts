import { describe, expect, it } from 'vitest';
import { kendall, kendallBoth, pearson, sortKeys, spearman } from '../src/stats/correlation.js';
import { corpusCorrelation, exampleCorrelation, pairwiseKendall, percentile } from '../src/stats/meta.js';
import { pyRound, readJson, vector } from './helpers.js';

describe('correlations and p-values = SciPy 1.17', () => {
  const { cases } = vector('scipy_correlations.json');
  for (const c of cases) {
    it(c.note, () => {
      const got: Record<string, { value: number; p: number }> = {
        pearson: pearson(c.x, c.y),
        spearman: spearman(c.x, c.y),
        kendall_b: kendall(c.x, c.y, 'b'),
        kendall_c: kendall(c.x, c.y, 'c'),
      };
      for (const [name, g] of Object.entries(got)) {
        const [value, p] = c[name];
        for (const [e, x] of [[value, g.value], [p, g.p]] as [number | null, number][]) {
          if (e === null) expect(x).toBeNaN();
          else if (e === 0) expect(Math.abs(x)).toBeLessThan(1e-300);
          else expect(Math.abs(x - e) / Math.abs(e)).toBeLessThanOrEqual(1e-6);
        }
      }
    });
  }
});

const MODELS = ['baseline', 'tranx-annot', 'best-tranx', 'best-tranx-rerank', 'codex'];

describe('ICE-Score CoNaLa table (metric vs M-MSR human grade)', () => {
  const items = readJson<any[]>('data/codegen-metrics/conala-all-grades.json.gz');
  // Kendall / Pearson / Spearman, example level | corpus level, as published.
  const expected: Record<string, [number[], number[]]> = {
    bleu: [[0.439, 0.522, 0.488], [0.423, 0.572, 0.542]],
    chrf: [[0.458, 0.57, 0.515], [0.449, 0.592, 0.578]],
    rougel: [[0.447, 0.529, 0.499], [0.432, 0.581, 0.552]],
    meteor: [[0.41, 0.507, 0.462], [0.415, 0.557, 0.534]],
    codebleu: [[0.292, 0.363, 0.331], [0.259, 0.397, 0.339]],
    ruby: [[0.331, 0.397, 0.371], [0.339, 0.493, 0.439]],
  };
  for (const [metric, [example, corpus]] of Object.entries(expected)) {
    it(metric, () => {
      const groups = items.map((x) => ({ truth: MODELS.map((m) => x[`grade-${m}`]), metric: MODELS.map((m) => x[`${metric}-${m}`]) }));
      const ex = exampleCorrelation(groups);
      const co = corpusCorrelation(groups.flatMap((g) => g.truth), groups.flatMap((g) => g.metric));
      expect([ex.kendall_b.tau, ex.pearson.r, ex.spearman.r].map((x) => pyRound(x, 3))).toEqual(example);
      expect([co.kendall_b.tau, co.pearson.r, co.spearman.r].map((x) => pyRound(x, 3))).toEqual(corpus);
      expect(co.pearson.p).toBeLessThan(1e-80); // 2,360 pairs
    });
  }
  it('chrF and ROUGE-L agree best with the graders, as "Out of the BLEU" concludes', () => {
    const corpusKendall = (metric: string) =>
      corpusCorrelation(items.flatMap((x) => MODELS.map((m) => x[`grade-${m}`])), items.flatMap((x) => MODELS.map((m) => x[`${metric}-${m}`]))).kendall_b.tau;
    const ranked = ['bleu', 'chrf', 'rougel', 'meteor', 'codebleu', 'ruby'].sort((a, b) => corpusKendall(b) - corpusKendall(a));
    expect(ranked.slice(0, 2).sort()).toEqual(['chrf', 'rougel']);
  });
});

describe('HumanEval execution labels (ICE-Score data, python and js)', () => {
  // tau / rho example level | corpus level, computed by the ICE-Score protocol with SciPy.
  const expected: Record<string, Record<string, number[]>> = {
    python: { bleu: [0.251, 0.297, 0.281, 0.344], codebleu: [0.272, 0.323, 0.303, 0.371], chrf: [0.262, 0.312, 0.328, 0.402], rougel: [0.24, 0.284, 0.296, 0.363], meteor: [0.276, 0.327, 0.349, 0.427], ruby: [0.216, 0.255, 0.279, 0.341] },
    js: { bleu: [0.168, 0.199, 0.22, 0.27], codebleu: [0.226, 0.267, 0.315, 0.385], chrf: [0.186, 0.22, 0.279, 0.342], rougel: [0.151, 0.179, 0.216, 0.264], meteor: [0.195, 0.231, 0.311, 0.38], ruby: [0.138, 0.163, 0.219, 0.268] },
  };
  for (const lang of ['python', 'js']) {
    it(lang, () => {
      const problems = readJson<any[]>(`data/ice-humaneval/humaneval_${lang}_grade.json.gz`);
      for (const [metric, values] of Object.entries(expected[lang])) {
        const groups = problems.map((x) => {
          const keys = Object.keys(x).filter((k) => k.startsWith('grade-')).map((k) => k.slice(6));
          return { truth: keys.map((k) => x[`grade-${k}`].execution), metric: keys.map((k) => x[`${metric}-${k}`]) };
        });
        const ex = exampleCorrelation(groups);
        const co = corpusCorrelation(groups.flatMap((g) => g.truth), groups.flatMap((g) => g.metric));
        expect([ex.kendall_b.tau, ex.spearman.r, co.kendall_b.tau, co.spearman.r].map((x) => pyRound(x, 3))).toEqual(values);
      }
    });
  }
});

describe('confidence intervals and the pairwise variant', () => {
  it('bootstrap CIs bracket the estimate and are reproducible', () => {
    const x = Array.from({ length: 200 }, (_, i) => Math.sin(i));
    const y = x.map((v, i) => v + Math.cos(i * 7) * 0.8);
    const a = corpusCorrelation(x, y, { samples: 300, seed: 1 });
    const b = corpusCorrelation(x, y, { samples: 300, seed: 1 });
    expect(a).toEqual(b);
    for (const v of [a.pearson, a.spearman]) {
      expect(v.ci![0]).toBeLessThan(v.r);
      expect(v.ci![1]).toBeGreaterThan(v.r);
    }
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
  });
  it("CodeBERTScore's pairwise Kendall counts ordered pairs inside each group", () => {
    const r = pairwiseKendall([{ truth: [1, 0, 0], metric: [0.9, 0.2, 0.2] }, { truth: [0, 1], metric: [0.5, 0.1] }]);
    // Group 1: (0,1),(1,0),(0,2),(2,0) concordant; human ties between 1 and 2 skipped. Group 2: 2 discordant.
    expect(r).toEqual({ tau: (4 - 2) / 6, concordant: 4, discordant: 2, ties: 0 });
  });
});

describe("the bootstrap's counting sort", () => {
  it('gives the comparison sort\'s Kendall and Spearman, bit for bit, on resamples with ties, -0 and 0', () => {
    let state = 7;
    const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
    const x = Array.from({ length: 300 }, () => Math.floor(next() * 5) - 2).map((v) => (v === 0 && next() < 0.5 ? -0 : v));
    const y = Array.from({ length: 300 }, () => Math.round(next() * 40) / 8);
    const kx = sortKeys(x)!;
    const ky = sortKeys(y)!;
    expect(kx.levels).toBe(5);
    for (let s = 0; s < 20; s++) {
      const idx = Int32Array.from({ length: 300 }, () => Math.floor(next() * 300));
      const rx = Array.from(idx, (i) => x[i]);
      const ry = Array.from(idx, (i) => y[i]);
      const keys = { x: { keys: Int32Array.from(idx, (i) => kx.keys[i]), levels: kx.levels }, y: { keys: Int32Array.from(idx, (i) => ky.keys[i]), levels: ky.levels } };
      expect(kendallBoth(rx, ry, keys)).toEqual(kendallBoth(rx, ry));
      expect(spearman(rx, ry, keys)).toEqual(spearman(rx, ry));
    }
    expect(sortKeys([1, NaN])).toBeUndefined();
  });
});
