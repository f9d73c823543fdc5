/**
 * pass@k, the unbiased estimator of Chen et al. 2021 (openai/human-eval's `estimate_pass_at_k`):
 * 1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i), for n samples of which c pass.
 * k > n has no unbiased estimate: null (the caller says why), never a made-up value.
 */
export function passAtK(n: number, c: number, k: number): number | null {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 0 || c < 0 || c > n || k < 1) {
    throw new RangeError(`pass@k needs integers 0 <= c <= n and k >= 1, got n=${n}, c=${c}, k=${k}`);
  }
  if (k > n) return null;
  if (n - c < k) return 1;
  // human-eval: 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

export interface PassAtKResult {
  /** k -> mean pass@k over problems, or null when some problem has fewer than k samples. */
  values: Record<string, number | null>;
  notes: string[];
}

/** Mean pass@k over problems (each problem's n and c), as human-eval reports it. */
export function meanPassAtK(perProblem: { n: number; c: number }[], ks: number[]): PassAtKResult {
  const values: Record<string, number | null> = {};
  const notes: string[] = [];
  for (const k of ks) {
    const short = perProblem.filter((p) => p.n < k).length;
    if (perProblem.length === 0) {
      values[k] = null;
      notes.push(`pass@${k}: no problems`);
      continue;
    }
    if (short > 0) {
      values[k] = null;
      notes.push(`pass@${k}: ${short} of ${perProblem.length} problems have fewer than ${k} samples`);
      continue;
    }
    values[k] = perProblem.reduce((s, p) => s + passAtK(p.n, p.c, k)!, 0) / perProblem.length;
  }
  return { values, notes };
}
