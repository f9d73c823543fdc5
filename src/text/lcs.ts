/**
 * Exact longest common subsequences of token sequences, without n*m tables of numbers.
 *
 * Length: the bit-parallel algorithm of Allison & Dix (1986) in Hyyro's (2004) form. For a pattern p of m tokens,
 * V is an m-bit vector, all ones at first; for each token c of the text, with M[c] the bits of p equal to c,
 *   V' = (V + (V & M[c])) | (V & ~M[c]),
 * and the LCS length is the number of zero bits of V at the end (zero bit j: the LCS of the text so far with
 * p[0..j] is one longer than with p[0..j-1]). V is kept in 32-bit words (Int32Arrays, so that the arithmetic stays
 * in V8's unboxed small integers); the only dependency between words is the carry of the addition, low to high.
 */

const ONES = -1; // all 32 bits set, as an Int32Array holds it

/**
 * Carry out of the 32-bit addition v + u + carry-in whose low 32 bits are s: the top bit of
 * (v & u) | ((v | u) & ~s). All in int32 arithmetic, which V8 keeps unboxed (33-bit doubles are slower).
 */
function carryOut(v: number, u: number, s: number): number {
  return ((v & u) | ((v | u) & ~s)) >>> 31;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/**
 * Words of the pattern processed together. The pattern is cut into stripes of this many words, and the whole text
 * runs through one stripe before the next, the carry out of a stripe at each text position saved (one byte per text
 * token) as the carry into the next. So the match masks are only needed for one stripe's tokens (at most 32 * 256
 * distinct ones: 8 MB at worst, instead of distinct(p) * m / 32 words), and a text token absent from the stripe
 * with no carry in leaves it unchanged at the cost of one look-up: on large vocabularies the work is n * m / 8192
 * look-ups plus about 256 word steps per matching (token, stripe) pair, far below n * m / 32 word steps.
 */
const STRIPE_WORDS = 256;

/** Length of a longest common subsequence of `a` and `b` (tokens compared with ===), in O(n m / 32) word steps. */
export function lcsLength<T>(a: readonly T[], b: readonly T[]): number {
  // A common prefix or suffix is part of some LCS; stripping it is exact and free.
  let lo = 0;
  let aHi = a.length;
  let bHi = b.length;
  while (lo < aHi && lo < bHi && a[lo] === b[lo]) lo++;
  while (aHi > lo && bHi > lo && a[aHi - 1] === b[bHi - 1]) aHi--, bHi--;
  const common = lo + (a.length - aHi);
  // The shorter side is the pattern (fewer bits); text tokens absent from it can never match and are dropped.
  const swap = aHi > bHi;
  const [p, t] = swap ? [b, a] : [a, b];
  const [pHi, tHi] = swap ? [bHi, aHi] : [aHi, bHi];
  const m = pHi - lo;
  if (m === 0) return common;
  const ids = new Map<T, number>();
  const pattern = new Int32Array(m);
  for (let i = 0; i < m; i++) {
    let id = ids.get(p[lo + i]);
    if (id === undefined) ids.set(p[lo + i], (id = ids.size));
    pattern[i] = id;
  }
  const textList: number[] = [];
  for (let j = lo; j < tHi; j++) {
    const id = ids.get(t[j]);
    if (id !== undefined) textList.push(id);
  }
  const text = Int32Array.from(textList);
  const n = text.length;
  const words = (m + 31) >>> 5;
  const rowsMax = Math.min(STRIPE_WORDS * 32, m) + 1;
  const carry = new Uint8Array(n);
  // id -> row of the stripe's mask table; row 0 is all zeros and stands for tokens absent from the stripe.
  const slot = new Int32Array(ids.size);
  const masks = new Int32Array(rowsMax * Math.min(STRIPE_WORDS, words));
  const low = new Int32Array(rowsMax); // first and last word of the stripe where each row's token occurs
  const high = new Int32Array(rowsMax);
  const V = new Int32Array(STRIPE_WORDS);
  let lcs = common;
  for (let w0 = 0; w0 < words; w0 += STRIPE_WORDS) {
    const sw = Math.min(STRIPE_WORDS, words - w0);
    const inStripe: number[] = [];
    low[0] = sw;
    high[0] = -1;
    for (let i = w0 * 32; i < Math.min(m, (w0 + sw) * 32); i++) {
      const id = pattern[i];
      const k = (i >>> 5) - w0;
      if (slot[id] === 0) {
        inStripe.push(id);
        slot[id] = inStripe.length;
        low[inStripe.length] = k;
      }
      high[slot[id]] = k;
      masks[slot[id] * sw + k] |= 1 << (i & 31);
    }
    V.fill(ONES);
    // Lowest word holding a zero bit. It only moves down: the zero bits of V below any position count an LCS
    // length, which never decreases as the text goes on. The words below it are all ones and pass a carry on.
    let first = sw;
    for (let j = 0; j < n; j++) {
      const row = slot[text[j]];
      let c = carry[j];
      if (row === 0 && c === 0) continue; // no match bits, no carry: the stripe is unchanged
      // Words below the token's first occurrence are unchanged, unless a carry comes in; it passes through the
      // all-ones words below `first`. Past the token's last occurrence only a carry changes anything.
      let k = c ? Math.min(first, low[row]) : low[row];
      const end = high[row];
      const base = row * sw;
      for (; k < sw && (k <= end || c); k++) {
        const v = V[k];
        const mk = masks[base + k];
        const u = v & mk;
        const sum = (v + u + c) | 0;
        c = carryOut(v, u, sum);
        const next = sum | (v & ~mk);
        V[k] = next;
        if (next !== ONES && k < first) first = k;
      }
      carry[j] = c;
    }
    // Zero bits of V within the pattern (bits past its end stay one: their mask bits are 0 and V's are 1).
    for (let k = 0; k < sw; k++) {
      const bits = Math.min(32, m - (w0 + k) * 32);
      lcs += bits - popcount(bits === 32 ? V[k] : V[k] & ((1 << bits) - 1));
    }
    for (const id of inStripe) slot[id] = 0;
    masks.fill(0, 0, (inStripe.length + 1) * sw);
  }
  return lcs;
}

/**
 * Largest alignment table lcsIndices builds, in cells (one bit each: 128 MB). The alignment has to be the very
 * LCS that rouge-score's `_backtrack_norec` picks, since ROUGE-Lsum unions and clips its tokens, so a
 * linear-space method such as Hirschberg's (which finds *an* LCS, with other tie-breaking) would change scores;
 * the table is kept instead, compressed 32-fold, and bounded.
 */
export const MAX_ALIGNMENT_CELLS = 2 ** 30;

/**
 * Indices into `ref` of one LCS with `can`, chosen by rouge-score's `_backtrack_norec` tie-breaking: from the end,
 * take a match, else step left when T[i][j-1] > T[i-1][j], else up, T being the LCS-length table. Row i of T is
 * stored as the bit-parallel vector V after ref[0..i) (T[i][j] = the zero bits of V below j), filled in
 * O(|ref| |can| / 32) word steps; its masks (distinct shared tokens x words) are no larger than the table.
 */
export function lcsIndices<T>(ref: readonly T[], can: readonly T[]): number[] {
  const rows = ref.length;
  const cols = can.length;
  if (rows === 0 || cols === 0) return [];
  if (rows * cols > MAX_ALIGNMENT_CELLS) {
    throw new RangeError(`LCS alignment of ${rows} x ${cols} tokens exceeds ${MAX_ALIGNMENT_CELLS} cells (ROUGE-Lsum aligns each reference sentence with each predicted one; split such long lines into sentences)`);
  }
  const W = (cols + 31) >>> 5;
  const ids = new Map<T, number>();
  for (const x of ref) if (!ids.has(x)) ids.set(x, -1);
  const maskList: Int32Array[] = [];
  for (let j = 0; j < cols; j++) {
    let id = ids.get(can[j]);
    if (id === undefined) continue; // absent from ref: never matched
    if (id < 0) {
      ids.set(can[j], (id = maskList.length));
      maskList.push(new Int32Array(W));
    }
    maskList[id][j >>> 5] |= 1 << (j & 31);
  }
  const table = new Int32Array((rows + 1) * W);
  table.fill(ONES, 0, W);
  for (let i = 1; i <= rows; i++) {
    const prev = (i - 1) * W;
    const cur = i * W;
    const id = ids.get(ref[i - 1])!;
    if (id < 0) {
      table.copyWithin(cur, prev, cur);
      continue;
    }
    const mask = maskList[id];
    let c = 0;
    for (let k = 0; k < W; k++) {
      const v = table[prev + k];
      const mk = mask[k];
      const u = v & mk;
      const sum = (v + u + c) | 0;
      c = carryOut(v, u, sum);
      table[cur + k] = sum | (v & ~mk);
    }
  }
  /** T[i][j]: the zero bits of row i below bit j. */
  const value = (i: number, j: number): number => {
    let zeros = 0;
    const base = i * W;
    for (let k = 0; k < j >>> 5; k++) zeros += 32 - popcount(table[base + k]);
    const rest = j & 31;
    if (rest) zeros += rest - popcount(table[base + (j >>> 5)] & ((1 << rest) - 1));
    return zeros;
  };
  /** T[i][j] - T[i][j-1], 0 or 1. */
  const step = (i: number, j: number): number => 1 - ((table[i * W + ((j - 1) >>> 5)] >>> ((j - 1) & 31)) & 1);
  const indices: number[] = [];
  let i = rows;
  let j = cols;
  let here = value(i, j); // T[i][j]
  let up = value(i - 1, j); // T[i-1][j]
  while (i > 0 && j > 0) {
    if (ref[i - 1] === can[j - 1]) {
      indices.push(i - 1);
      here = up - step(i - 1, j);
      i--;
      j--;
      up = i > 0 ? value(i - 1, j) : 0;
    } else if (here - step(i, j) > up) {
      here -= step(i, j);
      up -= step(i - 1, j);
      j--;
    } else {
      here = up;
      i--;
      up = i > 0 ? value(i - 1, j) : 0;
    }
  }
  return indices.reverse();
}
