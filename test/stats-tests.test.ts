import { afterAll, describe, expect, it } from 'vitest';
import { binomialTestHalf, mcnemarExact, signTest, wilcoxonSignedRank } from '../src/stats/tests.js';
import { adjustPValues, clopperPearsonInterval, minimumDetectableDifference, normalQuantile, wilsonInterval } from '../src/stats/intervals.js';
import { auroc, aurocWithCi, cohenKappa, confusionAt, confusionRates, roganGladen, youdenThreshold } from '../src/stats/agreement.js';
import { krippendorffAlpha } from '../src/stats/krippendorff.js';
import { vector } from './helpers.js';

/** Every value is matched to 1e-9 (absolute) against test/vectors/stats_reference.json (scripts/vectors-stats.py). */
const ref = vector('stats_reference.json');
const TOL = 1e-9;
const worst: Record<string, number> = {};
function close(name: string, actual: number, expected: number) {
  const diff = Math.abs(actual - expected);
  worst[name] = Math.max(worst[name] ?? 0, diff);
  expect(diff, `${name}: ${actual} vs ${expected}`).toBeLessThanOrEqual(TOL);
}
afterAll(() => console.log('max abs diff vs Python:', JSON.stringify(worst)));

describe('tests against statsmodels and SciPy', () => {
  it('normal quantile = scipy norm.ppf', () => {
    for (const c of ref.norm_ppf) close('norm.ppf', normalQuantile(c.p), c.x);
  });
  it('exact McNemar = statsmodels mcnemar(exact=True)', () => {
    for (const c of ref.mcnemar_exact) close('mcnemar', mcnemarExact(c.b, c.c).pValue, c.p);
  });
  it('sign test = scipy binomtest', () => {
    for (const c of ref.binomtest) close('binomtest', binomialTestHalf(c.k, c.n), c.p);
    expect(signTest([1, -2, 0, 3, 4]).pValue).toBeCloseTo(binomialTestHalf(3, 4), 15);
  });
  it('Wilcoxon signed-rank = scipy wilcoxon (exact and normal approximation)', () => {
    for (const c of ref.wilcoxon) {
      const d = c.x.map((x: number, i: number) => x - c.y[i]);
      const r = wilcoxonSignedRank(d);
      expect(r.method).toBe(c.method);
      close('wilcoxon.statistic', r.statistic, c.statistic);
      close('wilcoxon', r.pValue, c.p);
    }
    expect(wilcoxonSignedRank([0, 0]).pValue).toBe(1);
  });
});

describe('intervals and adjustment against statsmodels', () => {
  it('Wilson and Clopper-Pearson = proportion_confint', () => {
    for (const c of ref.proportion_confint) {
      const w = wilsonInterval(c.count, c.nobs);
      const b = clopperPearsonInterval(c.count, c.nobs);
      close('wilson', w[0], c.wilson[0]);
      close('wilson', w[1], c.wilson[1]);
      close('clopper_pearson', b[0], c.clopper_pearson[0]);
      close('clopper_pearson', b[1], c.clopper_pearson[1]);
    }
  });
  it('Holm and Benjamini-Hochberg = multipletests', () => {
    for (const c of ref.multipletests) {
      adjustPValues(c.p, 'holm').forEach((p, i) => close('holm', p!, c.holm[i]));
      adjustPValues(c.p, 'bh').forEach((p, i) => close('bh', p!, c.bh[i]));
    }
    expect(adjustPValues([null, 0.01, 0.04], 'holm')).toEqual([null, 0.02, 0.04]);
    expect(adjustPValues([null, 0.01], 'none')).toEqual([null, 0.01]);
  });
  it('minimum detectable difference: (z.975 + z.8) sd / sqrt(n)', () => {
    const d = [1, 2, 3, 4, 5];
    const sd = Math.sqrt(2.5);
    expect(minimumDetectableDifference(d)).toBeCloseTo(((1.959963984540054 + 0.8416212335729143) * sd) / Math.sqrt(5), 12);
    expect(minimumDetectableDifference([1])).toBeNull();
  });
});

describe('agreement against scikit-learn', () => {
  it("Cohen's kappa = cohen_kappa_score (none, linear, quadratic)", () => {
    for (const c of ref.cohen_kappa) {
      close('kappa', cohenKappa(c.a, c.b, 'none'), c.none);
      close('kappa_linear', cohenKappa(c.a, c.b, 'linear'), c.linear);
      close('kappa_quadratic', cohenKappa(c.a, c.b, 'quadratic'), c.quadratic);
    }
  });
  it('AUROC = roc_auc_score, with a bootstrap interval around it', () => {
    for (const c of ref.roc_auc) close('auroc', auroc(c.labels, c.scores), c.auc);
    const c = ref.roc_auc[2];
    const r = aurocWithCi(c.labels, c.scores, 200, 1);
    expect(r.ci![0]).toBeLessThan(r.value);
    expect(r.ci![1]).toBeGreaterThan(r.value);
    expect(Number.isNaN(auroc([1, 1], [0.2, 0.3]))).toBe(true);
  });
  it('confusion at a threshold and at the best Youden threshold', () => {
    const labels = [0, 0, 1, 1, 1, 0];
    const scores = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2];
    expect(confusionAt(labels, scores, 0.5)).toEqual({ tp: 2, fp: 0, tn: 3, fn: 1 });
    expect(youdenThreshold(labels, scores)).toBe(0.8); // J = 2/3 at 0.8, the same at 0.35, the highest wins
    expect(confusionRates({ tp: 2, fp: 0, tn: 3, fn: 1 })).toEqual({ sensitivity: 2 / 3, specificity: 1, precision: 1, f1: 0.8 });
    expect(confusionRates({ tp: 0, fp: 0, tn: 3, fn: 0 }).sensitivity).toBeNull();
  });
  it('Rogan-Gladen corrected prevalence with a delta-method interval', () => {
    const r = roganGladen({ positives: 60, n: 100, sensitivity: 0.9, specificity: 0.8, labelledPositives: 50, labelledNegatives: 40 });
    const pi = (0.6 + 0.8 - 1) / 0.7;
    expect(r.value).toBeCloseTo(pi, 15);
    const se = Math.sqrt((0.24 / 100 + (pi ** 2 * 0.09) / 50 + ((1 - pi) ** 2 * 0.16) / 40) / 0.49);
    expect(r.ci![0]).toBeCloseTo(pi - 1.959963984540054 * se, 12);
    expect(r.ci![1]).toBeCloseTo(pi + 1.959963984540054 * se, 12);
    expect(roganGladen({ positives: 5, n: 10, sensitivity: 0.5, specificity: 0.5, labelledPositives: 4, labelledNegatives: 4 }).value).toBeNull();
  });
});

describe("Krippendorff's alpha", () => {
  it('the worked example of Krippendorff 2011 and random matrices with missing ratings', () => {
    for (const c of ref.krippendorff) {
      const units = c.raters[0].map((_: unknown, u: number) => c.raters.map((r: (number | null)[]) => r[u]));
      for (const level of ['nominal', 'ordinal', 'interval', 'ratio'] as const) {
        const a = krippendorffAlpha(units, level).alpha;
        close(`alpha_${level}`, a, c[level]);
        if (c.published) expect(a.toFixed(3)).toBe(c.published[level].toFixed(3));
      }
    }
  });
});
