import { PythonRandom } from '../compat/python-random.js';

/**
 * Aggregating several graders' labels per item: the mean, and M-MSR (Ma & Olshevsky 2020, "Adversarial
 * Crowdsourcing Through Robust Rank-One Matrix Completion"), which estimates each grader's skill by robust rank-one
 * completion of the graders' agreement matrix and then takes a skill-weighted majority vote. The M-MSR steps follow
 * crowd-kit's `MMSR` (used by "Out of the BLEU" for its CoNaLa and HearthStone grades): its initialisation
 * (NumPy RandomState(0) uniforms), trimming rule, sign determination and weighted vote, so that the published
 * aggregated grades can be reproduced.
 */
export interface Answer {
  task: string | number;
  worker: string;
  label: number;
}

export function meanAggregation(answers: Answer[]): Map<string | number, number> {
  const sums = new Map<string | number, [number, number]>();
  for (const a of answers) {
    const s = sums.get(a.task) ?? [0, 0];
    s[0] += a.label;
    s[1] += 1;
    sums.set(a.task, s);
  }
  return new Map([...sums].map(([t, [s, n]]) => [t, s / n]));
}

/** NumPy legacy `RandomState(seed).random_sample(n)` (MT19937 seeded by init_genrand). */
function legacyUniform(seed: number, n: number): Float64Array {
  const mt = new PythonRandom(0);
  (mt as unknown as { initGenrand(s: number): void }).initGenrand(seed);
  return Float64Array.from({ length: n }, () => mt.random());
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

/** crowd-kit `_remove_largest_and_smallest_F_value`, with Python's slicing for a negative F. */
function trimmed(values: number[], F: number, a: number, nTasks: number): number[] {
  let y = values.slice().sort((p, q) => p - q);
  const slice = (arr: number[], start: number, end?: number) => {
    const n = arr.length;
    const norm = (i: number) => (i < 0 ? Math.max(0, n + i) : Math.min(i, n));
    return arr.slice(norm(start), end === undefined ? n : norm(end));
  };
  if (y.filter((v) => v < a).length < F) y = y.filter((v) => v >= a);
  else y = slice(y, F);
  const m = y.length;
  if (y.filter((v) => v > a).length < F) y = y.filter((v) => v <= a);
  else y = [...slice(y, 0, m - F), ...slice(y, m)];
  if (y.length === 1 && y[0] === 0) y[0] = 1 / Math.sqrt(nTasks);
  return y;
}

/** Eigenvector of the eigenvalue of smallest magnitude, by inverse iteration (ARPACK `which='SM'` for one vector). */
function smallestEigenvector(A: Float64Array[], n: number): Float64Array {
  // LU with partial pivoting of A + epsilon * I (the smallest eigenvalue may be 0).
  const M = A.map((row, i) => {
    const r = Float64Array.from(row);
    r[i] += 1e-10;
    return r;
  });
  const piv = Int32Array.from({ length: n }, (_, i) => i);
  for (let k = 0; k < n; k++) {
    let p = k;
    for (let i = k + 1; i < n; i++) if (Math.abs(M[i][k]) > Math.abs(M[p][k])) p = i;
    [M[k], M[p]] = [M[p], M[k]];
    [piv[k], piv[p]] = [piv[p], piv[k]];
    if (M[k][k] === 0) M[k][k] = 1e-300;
    for (let i = k + 1; i < n; i++) {
      const f = (M[i][k] /= M[k][k]);
      if (f !== 0) for (let j = k + 1; j < n; j++) M[i][j] -= f * M[k][j];
    }
  }
  let x = new Float64Array(n).fill(1 / Math.sqrt(n));
  for (let it = 0; it < 100; it++) {
    const b = Float64Array.from(piv, (p) => x[p]);
    for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) b[i] -= M[i][j] * b[j];
    for (let i = n - 1; i >= 0; i--) {
      for (let j = i + 1; j < n; j++) b[i] -= M[i][j] * b[j];
      b[i] /= M[i][i];
    }
    let norm = 0;
    for (const v of b) norm += v * v;
    norm = Math.sqrt(norm);
    const next = b.map((v) => v / norm);
    let change = 0;
    for (let i = 0; i < n; i++) change = Math.max(change, Math.min(Math.abs(next[i] - x[i]), Math.abs(next[i] + x[i])));
    x = next;
    if (change < 1e-14) break;
  }
  return x;
}

export interface MmsrResult {
  labels: Map<string | number, number>;
  skills: Map<string, number>;
}

export function mmsr(answers: Answer[], options: { maxIterations?: number; tolerance?: number } = {}): MmsrResult {
  const nIter = options.maxIterations ?? 10000;
  const tol = options.tolerance ?? 1e-10;
  const labels = unique(answers.map((a) => a.label));
  const L = labels.length;
  const labelIndex = new Map(labels.map((l, i) => [l, i + 1]));
  const workers = unique(answers.map((a) => a.worker));
  const W = workers.length;
  const workerIndex = new Map(workers.map((w, i) => [w, i]));
  const tasks = unique(answers.map((a) => a.task));
  const T = tasks.length;
  const taskIndex = new Map(tasks.map((t, i) => [t, i]));
  const obs = Array.from({ length: W }, () => new Int32Array(T));
  for (const a of answers) obs[workerIndex.get(a.worker)!][taskIndex.get(a.task)!] = labelIndex.get(a.label)!;
  const common = Array.from({ length: W }, () => new Float64Array(W));
  const C = Array.from({ length: W }, () => new Float64Array(W));
  for (let i = 0; i < W; i++) {
    for (let j = 0; j < W; j++) {
      if (i === j) continue;
      let both = 0;
      let same = 0;
      for (let t = 0; t < T; t++) {
        if (obs[i][t] && obs[j][t]) {
          both++;
          if (obs[i][t] === obs[j][t]) same++;
        }
      }
      common[i][j] = both;
      if (both) C[i][j] = same / both;
    }
  }
  for (let i = 0; i < W; i++) for (let j = 0; j < W; j++) C[i][j] = (C[i][j] * L) / (L - 1) - 1 / (L - 1);
  let sparsity = Infinity;
  for (let j = 0; j < W; j++) {
    let s = 0;
    for (let i = 0; i < W; i++) if (common[i][j] !== 0) s++;
    sparsity = Math.min(sparsity, s);
  }
  const F = Math.floor(sparsity / 2) - 1;
  const u = legacyUniform(0, W);
  const v = legacyUniform(0, W);
  const observed = (i: number, j: number) => common[i][j] !== 0;
  for (let it = 0; it < nIter; it++) {
    const uPrev = Float64Array.from(u);
    const vPrev = Float64Array.from(v);
    for (let j = 0; j < W; j++) {
      const target: number[] = [];
      for (let i = 0; i < W; i++) if (observed(i, j)) target.push(Math.abs(C[i][j]) / u[i]);
      const y = trimmed(target, F, v[j], T);
      if (y.length) v[j] = y.reduce((s, x) => s + x, 0) / y.length;
    }
    for (let i = 0; i < W; i++) {
      const target: number[] = [];
      for (let j = 0; j < W; j++) if (observed(i, j)) target.push(Math.abs(C[i][j]) / v[j]);
      const y = trimmed(target, F, u[i], T);
      if (y.length) u[i] = y.reduce((s, x) => s + x, 0) / y.length;
    }
    let loss = 0;
    for (let i = 0; i < W; i++) for (let j = 0; j < W; j++) loss += (u[i] * v[j] - uPrev[i] * vPrev[j]) ** 2;
    if (Math.sqrt(loss) < tol) break;
  }
  const norm = (x: Float64Array) => Math.sqrt(x.reduce((s, e) => s + e * e, 0));
  const k = Math.sqrt(norm(u) / norm(v));
  const sAbs = u.map((x) => x / k);
  // Sign determination.
  const valid: number[] = [];
  for (let i = 0; i < W; i++) if (C[i].reduce((s, x) => s + x, 0) !== 0) valid.push(i);
  const kk = valid.length;
  const S = valid.map((i) => valid.map((j) => Math.sign(C[i][j])));
  const pairs: [number, number][] = [];
  for (let a = 0; a < kk; a++) for (let b = a; b < kk; b++) if (S[a][b] === 1) pairs.push([a, b]);
  const m = pairs.length;
  const size = kk + m;
  const A = Array.from({ length: size }, () => new Float64Array(size));
  for (let a = 0; a < kk; a++) for (let b = 0; b < kk; b++) A[a][b] = Math.abs(S[a][b] === 1 ? 0 : S[a][b]);
  pairs.forEach(([a, b], r) => {
    A[kk + r][a] += 1;
    A[kk + r][b] += 1;
    A[a][kk + r] += 1;
    A[b][kk + r] += 1;
  });
  for (let r = 0; r < size; r++) {
    const sum = A[r].reduce((s, x) => s + x, 0);
    for (let c = 0; c < size; c++) A[r][c] /= sum;
    A[r][r] += 1;
  }
  const vec = smallestEigenvector(A, size);
  const signs = Array.from(vec.subarray(0, kk), (x) => Math.sign(x));
  const overall = Math.sign(signs.reduce((s, x) => s + x, 0));
  const sSign = new Float64Array(W);
  valid.forEach((w, idx) => (sSign[w] = overall * sAbs[w] * signs[idx]));
  const skills = new Map<string, number>();
  workers.forEach((w, i) => {
    let x = Math.min(sSign[i], 1 - 1 / Math.sqrt(T));
    x = Math.max(x, -1 / (L - 1) + 1 / Math.sqrt(T));
    const p = (x * (L - 1)) / L + 1 / L;
    skills.set(w, Math.log((p * (L - 1)) / (1 - p)));
  });
  // Skill-weighted majority vote; crowd-kit normalises each task's label weights by their sum before taking the
  // first maximum in ascending label order, which flips the choice when the sum is negative.
  const weights = new Map<string | number, Map<number, number>>();
  for (const a of answers) {
    let w = weights.get(a.task);
    if (!w) weights.set(a.task, (w = new Map()));
    w.set(a.label, (w.get(a.label) ?? 0) + skills.get(a.worker)!);
  }
  const sortedLabels = labels.slice().sort((a, b) => a - b);
  const result = new Map<string | number, number>();
  for (const t of [...weights.keys()].sort((a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b))))) {
    const w = weights.get(t)!;
    const total = [...w.values()].reduce((s, x) => s + x, 0);
    let best = -Infinity;
    let label = sortedLabels[0];
    for (const l of sortedLabels) {
      const score = (w.get(l) ?? 0) / total;
      if (score > best) {
        best = score;
        label = l;
      }
    }
    result.set(t, label);
  }
  return { labels: result, skills };
}
