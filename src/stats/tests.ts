import { averageRanks } from './correlation.js';
import { incompleteBeta, normalTwoSided } from './special.js';

/**
 * Paired tests on per-item results, with the p-values of the Python references (test/vectors/stats_reference.json,
 * scripts/vectors-stats.py): statsmodels `mcnemar(exact=True)`, SciPy `binomtest` (sign test) and SciPy
 * `wilcoxon` with its defaults.
 */

/** P(X <= k) for X ~ Binomial(n, 1/2). */
export function binomialCdfHalf(k: number, n: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  return incompleteBeta(n - k, k + 1, 0.5)[0];
}

/**
 * Exact McNemar test on the discordant pairs, as statsmodels `mcnemar(table, exact=True)`: with b items that
 * pass only for the baseline and c only for the system, p = min(1, 2 · P(X <= min(b, c))), X ~ Binomial(b + c, 1/2).
 */
export function mcnemarExact(b: number, c: number): { statistic: number; pValue: number } {
  const statistic = Math.min(b, c);
  return { statistic, pValue: Math.min(1, 2 * binomialCdfHalf(statistic, b + c)) };
}

/**
 * Two-sided exact binomial test of k successes in n trials against p = 1/2, as SciPy `binomtest(k, n).pvalue`
 * (for p = 1/2 the distribution is symmetric: 2 · P(X <= min(k, n-k)), 1 at the centre). n = 0 gives 1.
 */
export function binomialTestHalf(k: number, n: number): number {
  if (n === 0 || 2 * k === n) return 1;
  return Math.min(1, 2 * binomialCdfHalf(Math.min(k, n - k), n));
}

/** Sign test of paired differences: zeros dropped, positives counted, SciPy `binomtest(positives, nonzero)`. */
export function signTest(differences: ArrayLike<number>): { positive: number; negative: number; pValue: number } {
  let positive = 0;
  let negative = 0;
  for (let i = 0; i < differences.length; i++) {
    if (differences[i] > 0) positive++;
    else if (differences[i] < 0) negative++;
  }
  return { positive, negative, pValue: binomialTestHalf(positive, positive + negative) };
}

/** SciPy `_get_wilcoxon_distr(n)`: P(R+ = r), r = 0 .. n(n+1)/2, under the null without ties. */
function wilcoxonDistribution(n: number): Float64Array {
  let c = new Float64Array([1]);
  for (let k = 1; k <= n; k++) {
    const next = new Float64Array((k * (k + 1)) / 2 + 1);
    const m = c.length;
    for (let i = 0; i < m; i++) {
      next[i] += c[i] * 0.5;
      next[next.length - m + i] += c[i] * 0.5;
    }
    c = next;
  }
  return c;
}

export interface WilcoxonResult {
  /** min(R+, R-), SciPy's two-sided statistic. */
  statistic: number;
  pValue: number;
  method: 'exact' | 'approx';
  /** Differences that were not zero (the ones ranked). */
  n: number;
}

/**
 * Wilcoxon signed-rank test of paired differences, two-sided, SciPy `wilcoxon(d)` defaults (zero_method='wilcox':
 * zero differences are dropped; correction=False; method='auto'): the exact null distribution when there are at
 * most 50 differences, none zero and no tied absolute values; otherwise the normal approximation with the tie
 * correction of the variance, z = (T - n(n+1)/4) / sqrt((n(n+1)(2n+1) - Σ(t³-t)/2) / 24). Current SciPy makes
 * the same choice; SciPy <= 1.12 used the exact distribution despite ties. No non-zero difference gives p = 1.
 */
export function wilcoxonSignedRank(differences: ArrayLike<number>): WilcoxonResult {
  const all = Array.from(differences);
  const hasZeros = all.some((d) => d === 0);
  const d = all.filter((x) => x !== 0);
  const count = d.length;
  if (count === 0) return { statistic: 0, pValue: 1, method: 'approx', n: 0 };
  const abs = d.map(Math.abs);
  const ranks = averageRanks(abs);
  let rPlus = 0;
  let rMinus = 0;
  d.forEach((x, i) => (x > 0 ? (rPlus += ranks[i]) : (rMinus += ranks[i])));
  const statistic = Math.min(rPlus, rMinus);
  const tieCounts = new Map<number, number>();
  for (const a of abs) tieCounts.set(a, (tieCounts.get(a) ?? 0) + 1);
  const hasTies = [...tieCounts.values()].some((t) => t > 1);
  if (all.length <= 50 && !hasZeros && !hasTies) {
    const pmf = wilcoxonDistribution(count);
    const r = Math.round(rPlus);
    if (r === Math.floor((pmf.length - 1) / 2)) return { statistic, pValue: 1, method: 'exact', n: count };
    let less = 0;
    for (let i = 0; i <= r; i++) less += pmf[i];
    let greater = 0;
    for (let i = r; i < pmf.length; i++) greater += pmf[i];
    return { statistic, pValue: Math.min(1, Math.max(0, 2 * Math.min(less, greater))), method: 'exact', n: count };
  }
  const mn = count * (count + 1) * 0.25;
  let se = count * (count + 1) * (2 * count + 1);
  for (const t of tieCounts.values()) if (t > 1) se -= 0.5 * (t * (t * t - 1));
  se = Math.sqrt(se / 24);
  const z = (statistic - mn) / se;
  return { statistic, pValue: normalTwoSided(z), method: 'approx', n: count };
}
