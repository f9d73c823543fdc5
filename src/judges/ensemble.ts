import { krippendorffAlpha } from '../stats/krippendorff.js';

/**
 * Judge ensembles and stability: combining several judges' grades of one sample (mean, median, majority), their
 * agreement (Krippendorff's alpha, interval level, judges as raters), and one judge's self-consistency over
 * repeated grading.
 */

/**
 * Krippendorff's alpha at the interval level, judges as raters: `units[u]` holds the grades unit u received, one per
 * judge (null or NaN where the judge failed); units with fewer than two grades do not count. NaN when undefined (no
 * pairable values, or no variation at all). Continuous (--logprobs) grades are fine: the interval level needs memory
 * linear in the number of distinct values.
 */
export function krippendorffAlphaInterval(units: readonly (readonly (number | null)[])[]): number {
  return krippendorffAlpha(units, 'interval').alpha;
}

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

export function median(xs: readonly number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * The grade most judges gave, each judge's grade rounded to an integer grade first (a logprob-weighted 2.7 votes
 * 3); a tie goes to the lowest of the tied grades (the cautious reading). NaN without grades.
 */
export function majority(xs: readonly number[]): number {
  if (!xs.length) return NaN;
  const counts = new Map<number, number>();
  for (const x of xs) counts.set(Math.round(x), (counts.get(Math.round(x)) ?? 0) + 1);
  let best = NaN;
  let bestCount = 0;
  for (const [grade, count] of [...counts.entries()].sort((a, b) => a[0] - b[0])) {
    if (count > bestCount) {
      best = grade;
      bestCount = count;
    }
  }
  return best;
}

export type Combination = 'mean' | 'median' | 'majority';
export const COMBINATIONS: Record<Combination, (xs: readonly number[]) => number> = { mean, median, majority };

/** Sample standard deviation (n − 1); 0 for a single value. */
export function sampleStd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/**
 * A judge's self-consistency over K repeated gradings of each sample (`grades[i]`: the grades sample i received,
 * failures left out; `written[i]`: the integer grades the replies wrote, for agreement): over the samples with at
 * least two grades, the share whose written grades all agree, and the mean per-sample spread as the sample standard
 * deviation (n − 1) of the reported grades on the 0-100 scale, and as the range (max − min), also 0-100.
 */
export function selfConsistency(grades: readonly (readonly number[])[], written: readonly (readonly number[])[]): { samples: number; agreement: number; meanStd: number; meanRange: number } {
  let samples = 0;
  let agree = 0;
  let std = 0;
  let range = 0;
  grades.forEach((g, i) => {
    if (g.length < 2) return;
    samples++;
    const w = written[i] ?? g;
    if (w.every((x) => x === w[0])) agree++;
    const scaled = g.map((x) => x * 25);
    std += sampleStd(scaled);
    range += Math.max(...scaled) - Math.min(...scaled);
  });
  return samples ? { samples, agreement: agree / samples, meanStd: std / samples, meanRange: range / samples } : { samples: 0, agreement: NaN, meanStd: NaN, meanRange: NaN };
}
