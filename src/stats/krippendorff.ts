import { UsageError } from '../errors.js';

/**
 * Krippendorff's alpha for any number of raters (observers) and missing ratings, at the nominal, ordinal,
 * interval and ratio levels, computed from the coincidence matrix as in Krippendorff (2011), "Computing
 * Krippendorff's Alpha-Reliability": alpha = 1 - (n - 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck, over the units that hold
 * at least two ratings (pairable values). His worked example (4 observers x 12 units with missing values) gives
 * .743, .815, .849 and .797 (test/agreement.test.ts).
 */
export type AlphaLevel = 'nominal' | 'ordinal' | 'interval' | 'ratio';
export const ALPHA_LEVELS: AlphaLevel[] = ['nominal', 'ordinal', 'interval', 'ratio'];

export interface AlphaResult {
  /** NaN when undefined: no pairable values, or no variation at all (expected disagreement 0). */
  alpha: number;
  /** Units with at least two ratings (the ones that count). */
  units: number;
  /** Pairable values n. */
  values: number;
}

/**
 * `units[u]` holds unit u's ratings, one per rater, null where missing. Nominal ratings may be strings; the other
 * levels need numbers (ratio: non-negative).
 */
/** Ordinal and ratio alphas loop over pairs of distinct values; past this many, bin the values first. */
export const MAX_ALPHA_PAIRED_VALUES = 20_000;

export function krippendorffAlpha(units: readonly (readonly (number | string | null)[])[], level: AlphaLevel): AlphaResult {
  const pairable = units.map((u) => u.filter((v): v is number | string => v !== null && v !== undefined && !(typeof v === 'number' && Number.isNaN(v)))).filter((u) => u.length >= 2);
  if (level !== 'nominal' && pairable.some((u) => u.some((v) => typeof v !== 'number'))) throw new RangeError(`${level} alpha needs numeric ratings`);
  // Distinct values, sorted (numbers by value; nominal strings in order of appearance), and n_c: how many pairable
  // values equal each (the coincidence matrix's marginals). The matrix itself is never built: memory stays O(V).
  const distinct = [...new Set(pairable.flat())];
  if (distinct.every((v) => typeof v === 'number')) (distinct as number[]).sort((a, b) => a - b);
  const index = new Map<number | string, number>(distinct.map((v, i) => [v, i]));
  const V = distinct.length;
  if ((level === 'ordinal' || level === 'ratio') && V > MAX_ALPHA_PAIRED_VALUES) {
    throw new UsageError(`${level} alpha over ${V} distinct values would compare ${V}² pairs; round or bin the ratings (at most ${MAX_ALPHA_PAIRED_VALUES} distinct values), or use the interval level`);
  }
  const nc = new Float64Array(V);
  for (const u of pairable) for (const v of u) nc[index.get(v)!]++;
  const n = nc.reduce((a, x) => a + x, 0);
  const values = distinct as number[];
  const cumulative = new Float64Array(V + 1);
  for (let c = 0; c < V; c++) cumulative[c + 1] = cumulative[c] + nc[c];
  const delta2 = (c: number, k: number): number => {
    if (c === k) return 0;
    switch (level) {
      case 'nominal':
        return 1;
      case 'ordinal': {
        const [lo, hi] = c < k ? [c, k] : [k, c];
        return (cumulative[hi + 1] - cumulative[lo] - (nc[c] + nc[k]) / 2) ** 2;
      }
      case 'interval':
        return (values[c] - values[k]) ** 2;
      case 'ratio': {
        const a = values[c];
        const b = values[k];
        return a + b === 0 ? 0 : ((a - b) / (a + b)) ** 2;
      }
    }
  };
  // Observed disagreement, unit by unit: Σ_c Σ_k o_ck δ²_ck with o_ck = Σ_u (pairs c,k in u) / (m_u - 1).
  let observed = 0;
  for (const u of pairable) {
    const ids = u.map((v) => index.get(v)!);
    let sum = 0;
    for (let i = 0; i < ids.length; i++) for (let j = 0; j < ids.length; j++) if (i !== j) sum += delta2(ids[i], ids[j]);
    observed += sum / (ids.length - 1);
  }
  // Expected disagreement Σ_{c≠k} n_c n_k δ²_ck, in closed form where the level allows it.
  let expected = 0;
  if (level === 'nominal') {
    expected = n * n - nc.reduce((a, x) => a + x * x, 0);
  } else if (level === 'interval') {
    // Σ_{c,k} n_c n_k (v_c - v_k)² = 2n Σ n_c (v_c - mean)², centred for accuracy.
    let mean = 0;
    for (let c = 0; c < V; c++) mean += nc[c] * values[c];
    mean /= n || 1;
    for (let c = 0; c < V; c++) expected += nc[c] * (values[c] - mean) ** 2;
    expected *= 2 * n;
  } else {
    for (let c = 0; c < V; c++) for (let k = 0; k < V; k++) if (c !== k) expected += nc[c] * nc[k] * delta2(c, k);
  }
  const alpha = n < 2 || expected === 0 ? NaN : 1 - ((n - 1) * observed) / expected;
  return { alpha, units: pairable.length, values: n };
}
