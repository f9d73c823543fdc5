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

/**
 * pass^k (all k pass; Yao et al. 2024, tau-bench): the probability that k samples drawn without replacement from the
 * n all pass, estimated without bias by C(c, k) / C(n, k) = prod_{i=0}^{k-1} (c - i) / (n - i). k > n: null.
 */
export function passHatK(n: number, c: number, k: number): number | null {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 0 || c < 0 || c > n || k < 1) {
    throw new RangeError(`pass^k needs integers 0 <= c <= n and k >= 1, got n=${n}, c=${c}, k=${k}`);
  }
  if (k > n) return null;
  if (c < k) return 0;
  let prod = 1;
  for (let i = 0; i < k; i++) prod *= (c - i) / (n - i);
  return prod;
}

/** Mean pass^k over problems; null (with a note) when some problem has fewer than k samples. */
export function meanPassHatK(perProblem: { n: number; c: number }[], ks: number[]): PassAtKResult {
  const values: Record<string, number | null> = {};
  const notes: string[] = [];
  for (const k of ks) {
    const short = perProblem.filter((p) => p.n < k).length;
    if (perProblem.length === 0 || short > 0) {
      values[k] = null;
      notes.push(perProblem.length === 0 ? `pass^${k}: no problems` : `pass^${k}: ${short} of ${perProblem.length} problems have fewer than ${k} samples`);
      continue;
    }
    values[k] = perProblem.reduce((s, p) => s + passHatK(p.n, p.c, k)!, 0) / perProblem.length;
  }
  return { values, notes };
}

/**
 * A percentile bootstrap interval over problems for mean pass@k (or pass^k with `estimator: passHatK`): problems
 * are drawn with replacement `samples` times (a seeded generator, so a report is reproducible) and the central
 * `level` range of the resampled means is returned. Null when the estimate itself is null.
 */
export function bootstrapOverProblems(
  perProblem: { n: number; c: number }[],
  k: number,
  options: { samples?: number; seed?: number; level?: number; estimator?: (n: number, c: number, k: number) => number | null } = {},
): [number, number] | null {
  const estimator = options.estimator ?? passAtK;
  const values = perProblem.map((p) => estimator(p.n, p.c, k));
  if (values.length === 0 || values.some((v) => v === null)) return null;
  const xs = values as number[];
  const samples = options.samples ?? 1000;
  const level = options.level ?? 0.95;
  let state = (options.seed ?? 12345) >>> 0;
  // mulberry32
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const means = new Float64Array(samples);
  for (let b = 0; b < samples; b++) {
    let sum = 0;
    for (let i = 0; i < xs.length; i++) sum += xs[Math.floor(random() * xs.length)];
    means[b] = sum / xs.length;
  }
  means.sort();
  const at = (q: number) => means[Math.min(samples - 1, Math.max(0, Math.round(q * (samples - 1))))];
  return [at((1 - level) / 2), at(1 - (1 - level) / 2)];
}
