import { incompleteBeta, normalTwoSided, studentTTwoSided } from './special.js';

/**
 * Correlation coefficients with the p-values SciPy 1.17 reports (two-sided): `pearsonr` (beta distribution of r),
 * `spearmanr` (t distribution of the rank correlation), `kendalltau` tau-b and tau-c (exact null distribution
 * without ties and n <= 33, else the tie-corrected normal approximation). Undefined cases (constant input) give
 * NaN, as SciPy does.
 */
export interface Correlation {
  value: number;
  p: number;
}

function mean(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s / xs.length;
}

function isConstant(xs: ArrayLike<number>): boolean {
  for (let i = 1; i < xs.length; i++) if (xs[i] !== xs[0]) return false;
  return true;
}

/** Pearson's r, computed as SciPy does (centred, scaled by the largest deviation, normalised, then dotted). */
export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): Correlation {
  const n = x.length;
  if (n !== y.length) throw new Error('pearson: x and y differ in length');
  if (n < 2) throw new Error('pearson: need at least 2 observations');
  if (isConstant(x) || isConstant(y)) return { value: NaN, p: NaN };
  const mx = mean(x);
  const my = mean(y);
  const xm = new Float64Array(n);
  const ym = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    xm[i] = x[i] - mx;
    ym[i] = y[i] - my;
  }
  const norm = (v: Float64Array) => {
    let max = 0;
    for (const e of v) max = Math.max(max, Math.abs(e));
    let s = 0;
    for (const e of v) s += (e / max) * (e / max);
    return max * Math.sqrt(s);
  };
  const nx = norm(xm);
  const ny = norm(ym);
  let r = 0;
  for (let i = 0; i < n; i++) r += (xm[i] / nx) * (ym[i] / ny);
  r = Math.max(-1, Math.min(1, r));
  if (n === 2) return { value: Math.round(r), p: 1 };
  const ab = n / 2 - 1;
  const [, upper] = incompleteBeta(ab, ab, (Math.abs(r) + 1) / 2, (1 - Math.abs(r)) / 2);
  return { value: r, p: Math.min(1, 2 * upper) };
}

/**
 * Sort keys for a resample: each value's place among the distinct values of the data it is drawn from. A bootstrap
 * resample then sorts by counting in O(n), where a comparison sort per resample was most of `meta`'s time; the order
 * (stable, ties by position) and so every result are the comparison sort's. Undefined for data with NaN.
 */
export interface SortKeys {
  keys: Int32Array;
  levels: number;
}

export function sortKeys(x: ArrayLike<number>): SortKeys | undefined {
  const distinct = Float64Array.from(new Set(Array.from(x, (v) => (v === 0 ? 0 : v)))).sort();
  if (distinct.some(Number.isNaN)) return undefined;
  const place = new Map<number, number>();
  distinct.forEach((v, i) => place.set(v, i));
  return { keys: Int32Array.from(x, (v) => place.get(v === 0 ? 0 : v)!), levels: distinct.length };
}

/** Positions of `within` (default 0..n-1) stably sorted by key: a counting sort. */
function countingOrder(sort: SortKeys, within?: ArrayLike<number>): number[] {
  const n = sort.keys.length;
  const start = new Int32Array(sort.levels + 1);
  for (let i = 0; i < n; i++) start[sort.keys[i] + 1]++;
  for (let k = 0; k < sort.levels; k++) start[k + 1] += start[k];
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const pos = within ? within[i] : i;
    order[start[sort.keys[pos]]++] = pos;
  }
  return order;
}

/** Ranks with ties averaged (SciPy `rankdata(method='average')`), 1-based. */
export function averageRanks(x: ArrayLike<number>, keys?: SortKeys): Float64Array {
  const n = x.length;
  const order = keys ? countingOrder(keys) : Array.from({ length: n }, (_, i) => i).sort((a, b) => x[a] - x[b] || a - b);
  const ranks = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i;
    while (j + 1 < n && x[order[j + 1]] === x[order[i]]) j++;
    const r = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k]] = r;
    i = j + 1;
  }
  return ranks;
}

export function spearman(x: ArrayLike<number>, y: ArrayLike<number>, keys?: { x: SortKeys; y: SortKeys }): Correlation {
  const n = x.length;
  if (n !== y.length) throw new Error('spearman: x and y differ in length');
  if (n < 2) return { value: NaN, p: NaN };
  const rx = averageRanks(x, keys?.x);
  const ry = averageRanks(y, keys?.y);
  if (isConstant(rx) || isConstant(ry)) return { value: NaN, p: NaN };
  // np.corrcoef: covariance over the product of standard deviations.
  const mx = mean(rx);
  const my = mean(ry);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) ** 2;
    syy += (ry[i] - my) ** 2;
  }
  const rs = Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx) / Math.sqrt(syy)));
  const dof = n - 2;
  if (dof <= 0) return { value: rs, p: NaN };
  const t = rs * Math.sqrt(Math.max(0, dof / ((rs + 1) * (1 - rs))));
  return { value: rs, p: studentTTwoSided(t, dof) };
}

/** Dense ranks (1-based) after a stable sort, and the permutation that sorts. */
function denseRanks(values: ArrayLike<number>, order: ArrayLike<number>): Int32Array {
  const ranks = new Int32Array(order.length);
  let r = 0;
  for (let i = 0; i < order.length; i++) {
    if (i === 0 || values[order[i]] !== values[order[i - 1]]) r++;
    ranks[i] = r;
  }
  return ranks;
}

/** Discordant pairs of a sequence sorted by x (ties broken by y): inversions of y, by merge sort. */
function countDiscordant(y: Int32Array): number {
  const n = y.length;
  let a = Int32Array.from(y);
  let buf = new Int32Array(n);
  let inversions = 0;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        if (a[j] < a[i]) {
          inversions += mid - i;
          buf[k++] = a[j++];
        } else buf[k++] = a[i++];
      }
      while (i < mid) buf[k++] = a[i++];
      while (j < hi) buf[k++] = a[j++];
    }
    [a, buf] = [buf, a];
  }
  return inversions;
}

/** Tie sums of dense ranks 1..k. */
function tieStats(ranks: Int32Array): [number, number, number] {
  let levels = 0;
  for (let i = 0; i < ranks.length; i++) if (ranks[i] > levels) levels = ranks[i];
  const counts = new Float64Array(levels + 1);
  for (let i = 0; i < ranks.length; i++) counts[ranks[i]]++;
  let t0 = 0;
  let t1 = 0;
  let t2 = 0;
  for (const c of counts) {
    if (c > 1) {
      t0 += (c * (c - 1)) / 2;
      t1 += c * (c - 1) * (c - 2);
      t2 += c * (c - 1) * (2 * c + 5);
    }
  }
  return [t0, t1, t2];
}

/** SciPy `_kendall_p_exact`, two-sided. */
function kendallExactP(n: number, concordant: number): number {
  const total = (n * (n - 1)) / 2;
  const c = Math.min(concordant, total - concordant);
  if (n === 1 || n === 2) return 1;
  let factorial = 1;
  for (let i = 2; i <= n; i++) factorial *= i;
  if (c === 0) return n < 171 ? 2 / factorial : 0;
  if (c === 1) return n < 172 ? 2 / (factorial / n) : 0;
  if (4 * c === n * (n - 1)) return 1;
  let dist = new Float64Array(c + 1);
  dist[0] = 1;
  dist[1] = 1;
  for (let j = 3; j <= n; j++) {
    const next = new Float64Array(c + 1);
    let s = 0;
    for (let i = 0; i <= c; i++) {
      s += dist[i];
      next[i] = n < 171 ? s : s / j;
    }
    if (j <= c) {
      const prev = Float64Array.from(next);
      for (let i = j; i <= c; i++) next[i] -= prev[i - j];
    }
    dist = next;
  }
  let sum = 0;
  for (const v of dist) sum += v;
  const p = n < 171 ? (2 * sum) / factorial : sum;
  return Math.min(1, Math.max(0, p));
}

/** Kendall's tau-b (default) or tau-c with SciPy's p-value. */
export function kendall(x: ArrayLike<number>, y: ArrayLike<number>, variant: 'b' | 'c' = 'b'): Correlation {
  const both = kendallBoth(x, y);
  return variant === 'b' ? both.b : both.c;
}

/** Kendall's tau-b and tau-c from one pass (their p-value is the same). */
export function kendallBoth(x: ArrayLike<number>, y: ArrayLike<number>, keys?: { x: SortKeys; y: SortKeys }): { b: Correlation; c: Correlation } {
  const n = x.length;
  if (n !== y.length) throw new Error('kendall: x and y differ in length');
  const nan = { b: { value: NaN, p: NaN }, c: { value: NaN, p: NaN } };
  if (n === 0) return nan;
  // Sort by y, dense-rank y; then stable-sort by x, dense-rank x (as SciPy does).
  const byY = keys ? countingOrder(keys.y) : Array.from({ length: n }, (_, i) => i).sort((a, b) => y[a] - y[b] || a - b);
  const yRankSortedByY = denseRanks(y, byY);
  const yRank = new Int32Array(n);
  const positionByY = new Int32Array(n);
  for (let pos = 0; pos < n; pos++) {
    yRank[byY[pos]] = yRankSortedByY[pos];
    positionByY[byY[pos]] = pos;
  }
  const order = keys ? countingOrder(keys.x, byY) : byY.slice().sort((a, b) => x[a] - x[b] || positionByY[a] - positionByY[b]);
  const xs = denseRanks(x, order);
  const ys = new Int32Array(n);
  for (let i = 0; i < n; i++) ys[i] = yRank[order[i]];
  const dis = countDiscordant(ys);
  let ntie = 0;
  let run = 1;
  for (let i = 1; i <= n; i++) {
    if (i < n && xs[i] === xs[i - 1] && ys[i] === ys[i - 1]) run++;
    else {
      ntie += (run * (run - 1)) / 2;
      run = 1;
    }
  }
  const [xtie, x0, x1] = tieStats(xs);
  const [ytie, y0, y1] = tieStats(ys);
  const tot = (n * (n - 1)) / 2;
  if (xtie === tot || ytie === tot) return nan;
  const conMinusDis = tot - xtie - ytie + ntie - 2 * dis;
  const clip = (t: number) => Math.min(1, Math.max(-1, t));
  const tauB = clip(conMinusDis / Math.sqrt(tot - xtie) / Math.sqrt(tot - ytie));
  // ys are dense ranks 1..k of y: k classes
  const minClasses = Math.min(xs[n - 1], yRankSortedByY[n - 1]);
  const tauC = clip((2 * conMinusDis) / ((n * n * (minClasses - 1)) / minClasses));
  let p: number;
  if (xtie === 0 && ytie === 0 && (n <= 33 || Math.min(dis, tot - dis) <= 1)) p = kendallExactP(n, tot - dis);
  else {
    const m = n * (n - 1);
    const variance = (m * (2 * n + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + (x0 * y0) / (9 * m * (n - 2));
    p = normalTwoSided(conMinusDis / Math.sqrt(variance));
  }
  return { b: { value: tauB, p }, c: { value: tauC, p } };
}
