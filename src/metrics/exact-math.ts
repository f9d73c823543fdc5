/**
 * Correctly rounded `exp` and `log` for the last step of NLTK-style BLEU scores. V8's Math.exp / Math.log (fdlibm)
 * and glibc's (what CPython's `math` calls) are both faithful but differ in the last bit on about one argument in
 * ten; glibc's are correctly rounded on all but very rare arguments (worst error 0.51 ulp), so computing the
 * correctly rounded value makes codegauge's scores bit-identical to the Python reference's. The value is first
 * computed in double-double arithmetic (about 100 bits), then rounded once.
 */
const SPLIT = 134217729; // 2^27 + 1, Dekker's splitter

function twoProd(a: number, b: number): [number, number] {
  const p = a * b;
  let t = SPLIT * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b);
  const bl = b - bh;
  return [p, ah * bh - p + ah * bl + al * bh + al * bl];
}

function twoSum(a: number, b: number): [number, number] {
  const s = a + b;
  const bb = s - a;
  return [s, a - (s - bb) + (b - bb)];
}

function quickTwoSum(a: number, b: number): [number, number] {
  const s = a + b;
  return [s, b - (s - a)];
}

type DD = [number, number];

function ddAdd(a: DD, b: DD): DD {
  const [s, e] = twoSum(a[0], b[0]);
  return quickTwoSum(s, e + a[1] + b[1]);
}

function ddMul(a: DD, b: DD): DD {
  const [p, e] = twoProd(a[0], b[0]);
  return quickTwoSum(p, e + a[0] * b[1] + a[1] * b[0]);
}

const LN2: DD = [0.6931471805599453, 2.3190468138462996e-17];
const SQUARINGS = 10;

/** exp(x) = m * 2^k with m a double-double near 1 (x finite, |x| < 710). */
function ddExpScaled(x: number): { m: DD; k: number } {
  const k = Math.round(x / LN2[0]);
  // r = (x - k ln2) / 2^SQUARINGS, in double-double.
  let r = ddAdd([x, 0], ddMul([-k, 0], LN2));
  const scale = 2 ** -SQUARINGS;
  r = [r[0] * scale, r[1] * scale];
  // Taylor series of exp(r) - 1 for |r| < 0.00034: 10 terms are far below 2^-106.
  let term: DD = r;
  let sum: DD = r;
  for (let n = 2; n <= 10; n++) {
    term = ddMul(term, r);
    term = ddDivSmall(term, n);
    sum = ddAdd(sum, term);
  }
  // (1 + s)^2 - 1 = s (2 + s): squaring near 1 without losing the small part.
  for (let i = 0; i < SQUARINGS; i++) sum = ddMul(sum, ddAdd([2, 0], sum));
  return { m: ddAdd([1, 0], sum), k };
}

function ddExp(x: number): DD {
  const { m, k } = ddExpScaled(x);
  const p = 2 ** k;
  return [m[0] * p, m[1] * p];
}

/** A double-double divided by a small integer. */
function ddDivSmall(a: DD, n: number): DD {
  const q = a[0] / n;
  const [p, e] = twoProd(q, n);
  const rest = a[0] - p - e + a[1];
  return quickTwoSum(q, rest / n);
}

/** Correctly rounded e^x (falls back to Math.exp where the result is not a normal double). */
export function exactExp(x: number): number {
  if (!Number.isFinite(x) || x > 709 || x < -708) return Math.exp(x);
  if (x === 0) return 1;
  const [hi, lo] = ddExp(x);
  return hi + lo;
}

/** Correctly rounded natural logarithm of a positive normal double (one Newton step from Math.log). */
export function exactLog(x: number): number {
  if (!(x > 0) || !Number.isFinite(x) || x < 2.2250738585072014e-308) return Math.log(x);
  if (x === 1) return 0;
  const y0 = Math.log(x);
  // y = y0 + (x e^-y0 - 1): the correction is tiny, so its double-double value is exact enough. x and e^-y0 are
  // taken apart into mantissa and power of two so that neither product nor splitting overflows or underflows.
  const e = Math.floor(Math.log2(x));
  const xm = x * 2 ** -e;
  const { m, k } = ddExpScaled(-y0);
  const prod = ddMul(m, [xm, 0]);
  const p = 2 ** (k + e);
  const t = ddAdd([prod[0] * p, prod[1] * p], [-1, 0]);
  const [hi, lo] = ddAdd([y0, 0], t);
  return hi + lo;
}
