/**
 * NumPy arithmetic details that decide the last digits of sacrebleu's resampling results.
 * sacrebleu casts resampled statistics to float32, and under NumPy 2's promotion rules (NEP 50) a Python number
 * meeting a float32 value is converted to float32, so BLEU's precisions and all of chrF are computed in single
 * precision there. `F32` values emulate that: every operation with a float32 operand rounds both operands and the
 * result to float32 (exact for + - * /, since a double holds the exact float32 result before rounding).
 */
export type Num = { v: number; f32: boolean };
const f = Math.fround;

export const py = (v: number): Num => ({ v, f32: false });
export const f32 = (v: number): Num => ({ v: f(v), f32: true });

function op(a: Num, b: Num, fn: (x: number, y: number) => number): Num {
  if (a.f32 || b.f32) return { v: f(fn(f(a.v), f(b.v))), f32: true };
  return { v: fn(a.v, b.v), f32: false };
}
export const add = (a: Num, b: Num) => op(a, b, (x, y) => x + y);
export const sub = (a: Num, b: Num) => op(a, b, (x, y) => x - y);
export const mul = (a: Num, b: Num) => op(a, b, (x, y) => x * y);
export const div = (a: Num, b: Num) => op(a, b, (x, y) => x / y);

/**
 * NumPy's pairwise summation (`pairwise_sum_DOUBLE/FLOAT`: blocks of 128 with 8 partial sums), which `np.sum` and
 * `np.mean` use on contiguous arrays; with `single` the partial sums are float32, as for a float32 array.
 */
export function numpyPairwiseSum(a: ArrayLike<number>, start: number, n: number, single: boolean): number {
  const r = single ? f : (x: number) => x;
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res = r(res + a[start + i]);
    return res;
  }
  if (n <= 128) {
    const p = new Array<number>(8);
    for (let j = 0; j < 8; j++) p[j] = r(a[start + j]);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) p[j] = r(p[j] + a[start + i + j]);
    let res = r(r(r(p[0] + p[1]) + r(p[2] + p[3])) + r(r(p[4] + p[5]) + r(p[6] + p[7])));
    for (; i < n; i++) res = r(res + a[start + i]);
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return r(numpyPairwiseSum(a, start, n2, single) + numpyPairwiseSum(a, start + n2, n - n2, single));
}

/** `np.mean` of a 1-D array (float32 arrays keep a float32 accumulator and result). */
export function numpyMean(a: ArrayLike<number>, single: boolean): number {
  const s = numpyPairwiseSum(a, 0, a.length, single);
  return single ? f(s / a.length) : s / a.length;
}
