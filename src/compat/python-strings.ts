/**
 * Python string semantics that the reference implementations rely on.
 * JavaScript's `\s` and `trim` differ from Python's `str.split()` / `str.rstrip()`:
 * Python also treats U+001C..U+001F and U+0085 as whitespace and does not treat U+FEFF as whitespace.
 */
const PY_WS_CLASS = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
export const PY_WS_RUN = new RegExp(`[${PY_WS_CLASS}]+`, 'g');

/** Whether a UTF-16 unit is whitespace for Python's str.split() (all Python whitespace is in the BMP). */
export function isPyWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

/** Python `str.split()` with no arguments (a hand-written scanner: this is on every metric's hot path). */
export function pySplit(s: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i < s.length; i++) {
    if (isPyWhitespace(s.charCodeAt(i))) {
      if (start >= 0) {
        out.push(s.slice(start, i));
        start = -1;
      }
    } else if (start < 0) start = i;
  }
  if (start >= 0) out.push(s.slice(start));
  return out;
}

/** Python `str.rstrip()` with no arguments. */
export function pyRstrip(s: string): string {
  let end = s.length;
  while (end > 0 && isPyWhitespace(s.charCodeAt(end - 1))) end--;
  return end === s.length ? s : s.slice(0, end);
}

/**
 * Python `str.strip()` with no arguments. A scan from both ends: a regex `[ws]+$` is retried at every start of a
 * whitespace run, quadratic on a long run in the middle of a line.
 */
export function pyStrip(s: string): string {
  const right = pyRstrip(s);
  let start = 0;
  while (start < right.length && isPyWhitespace(right.charCodeAt(start))) start++;
  return start === 0 ? right : right.slice(start);
}

/** Python `' '.join(s.split())`. */
export function pyNormalizeSpaces(s: string): string {
  return pySplit(s).join(' ');
}

/** Python indexes strings by code point; JavaScript by UTF-16 unit. Returns the code points. */
export function codePoints(s: string): string[] {
  return /[\uD800-\uDFFF]/.test(s) ? Array.from(s) : s.split('');
}

/** Python `math.fsum`: exactly rounded sum (Shewchuk's algorithm, as CPython implements it). */
/** Adds `x` to Shewchuk's non-overlapping partials exactly (CPython's `math.fsum` inner loop). */
export function addToPartials(partials: number[], x: number): void {
  let i = 0;
  for (let y of partials) {
    if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
    const hi = x + y;
    const lo = y - (hi - x);
    if (lo !== 0) partials[i++] = lo;
    x = hi;
  }
  partials.length = i;
  partials.push(x);
}

/** The correctly rounded value of exact partials, with CPython's half-even correction. */
export function roundPartials(partials: readonly number[]): number {
  let n = partials.length;
  let hi = 0;
  if (n > 0) {
    hi = partials[--n];
    let lo = 0;
    while (n > 0) {
      const x = hi;
      const y = partials[--n];
      hi = x + y;
      const yr = hi - x;
      lo = y - yr;
      if (lo !== 0) break;
    }
    if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
      const y = lo * 2;
      const x = hi + y;
      const yr = x - hi;
      if (y === yr) hi = x;
    }
  }
  return hi;
}

export function fsum(values: Iterable<number>): number {
  const partials: number[] = [];
  for (const x of values) addToPartials(partials, x);
  return roundPartials(partials);
}

/** Python's round(x, nd): the exact binary value rounded to nd decimals, exact ties to even. */
export function pyRound(x: number, nd: number): number {
  if (!Number.isFinite(x)) return x;
  // toFixed rounds the exact binary value (ties away from zero); a tie is only possible for short dyadic values,
  // whose expansion toFixed(nd + 30) shows exactly.
  const expansion = Math.abs(x).toFixed(nd + 30);
  const tail = expansion.slice(expansion.indexOf('.') + 1 + nd);
  if (/^50*$/.test(tail)) {
    const head = expansion.slice(0, expansion.length - tail.length).replace(/\.$/, '');
    const truncated = Number(head);
    const lastDigit = Number(head[head.length - 1]);
    const rounded = lastDigit % 2 === 0 ? truncated : truncated + 10 ** -nd;
    return Math.sign(x) * Number(rounded.toFixed(nd));
  }
  return Number(x.toFixed(nd));
}
