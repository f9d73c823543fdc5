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

import { WorkBoundError } from '../errors.js';

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

/**
 * Default work bound of one LCS, in 32-bit word steps plus one per text look-up: 2^34, about a minute on one core
 * here (two lines of 300k tokens from a handful of distinct ones take ~10 s; on large vocabularies far longer lines
 * pass: a text token absent from a stripe costs one look-up). It is there so that one pathological segment fails in
 * a bounded time with a message rather than run for hours (rouge-score itself would build a table of 9e10 Python
 * ints for the 300k pair); callers pass another bound (`score --max-work`). Past it a WorkBoundError says so; the
 * scoring loop adds which segment it was.
 */
export const MAX_LCS_WORD_STEPS = 2 ** 34;

/** A bound as `--max-work` takes it: `2^N` for a power of two, else the number. */
export function describeSteps(steps: number): string {
  const power = Math.log2(steps);
  return Number.isInteger(power) ? `2^${power}` : String(steps);
}

function lcsBoundError(what: string, maxSteps: number): WorkBoundError {
  return new WorkBoundError(`${what} exceeds the bound of ${describeSteps(maxSteps)} word steps (split such long lines, or raise it with --max-work)`);
}

/**
 * Scratch buffers of lcsLength, kept between calls and grown on demand (on short sequences, the common case, the
 * allocations cost more than the LCS itself). A request above RETAIN_ELEMENTS gets a buffer of its own, dropped
 * after the call, so one huge input does not pin its memory. Buffers marked "zero between calls" are restored to
 * zeros by the code that dirtied them.
 */
const RETAIN_ELEMENTS = 1 << 16;

class Int32Scratch {
  private buf = new Int32Array(64);
  get(size: number): Int32Array {
    if (size <= this.buf.length) return this.buf;
    if (size > RETAIN_ELEMENTS) return new Int32Array(size);
    this.buf = new Int32Array(Math.min(RETAIN_ELEMENTS, Math.max(size, 2 * this.buf.length)));
    return this.buf;
  }
}

class Uint8Scratch {
  private buf = new Uint8Array(256);
  get(size: number): Uint8Array {
    if (size <= this.buf.length) return this.buf;
    if (size > RETAIN_ELEMENTS) return new Uint8Array(size);
    this.buf = new Uint8Array(Math.min(RETAIN_ELEMENTS, Math.max(size, 2 * this.buf.length)));
    return this.buf;
  }
}

const patternScratch = new Int32Scratch();
const textScratch = new Int32Scratch();
const carryScratch = new Uint8Scratch();
const slotScratch = new Int32Scratch(); // zero between calls
const masksScratch = new Int32Scratch(); // zero between calls
const lowScratch = new Int32Scratch();
const highScratch = new Int32Scratch();
const V = new Int32Array(STRIPE_WORDS);

/**
 * Integer tokens: their zigzag code (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...) indexes `keyLocal`, which holds a
 * pattern token's local id + 1 during a call and 0 otherwise (zero between calls), in place of a Map. Codes from
 * KEY_LIMIT on (ids far from 0) take the Map.
 */
const KEY_LIMIT = 1 << 20;
let keyLocal = new Int32Array(1024);
const keysScratch = new Int32Scratch();

/** Length of a longest common subsequence of `a` and `b` (tokens compared with ===), in O(n m / 32) word steps. */
export function lcsLength<T>(a: ArrayLike<T>, b: ArrayLike<T>, maxSteps = MAX_LCS_WORD_STEPS): number {
  if (a instanceof Int32Array && b instanceof Int32Array) return lcsLengthOfIds(a, 0, a.length, b, 0, b.length, maxSteps);
  // A common prefix or suffix is part of some LCS; stripping it is exact and free.
  let lo = 0;
  let aHi = a.length;
  let bHi = b.length;
  while (lo < aHi && lo < bHi && a[lo] === b[lo]) lo++;
  while (aHi > lo && bHi > lo && a[aHi - 1] === b[bHi - 1]) aHi--, bHi--;
  const common = lo + (a.length - aHi);
  // The shorter side is the pattern (fewer bits); text tokens absent from it can never match and are dropped.
  const swap = aHi > bHi;
  if (Math.min(aHi, bHi) === lo) return common;
  return common + (swap ? internedLcs(b, lo, bHi, a, lo, aHi, maxSteps) : internedLcs(a, lo, aHi, b, lo, bHi, maxSteps));
}

/**
 * lcsLength of the integer tokens a[aStart, aEnd) and b[bStart, bEnd) (the two may share one array), with local
 * ids from a table rather than a Map: no allocation per call once the scratch buffers have grown.
 */
export function lcsLengthOfIds(a: Int32Array, aStart: number, aEnd: number, b: Int32Array, bStart: number, bEnd: number, maxSteps = MAX_LCS_WORD_STEPS): number {
  let aLo = aStart;
  let bLo = bStart;
  let aHi = aEnd;
  let bHi = bEnd;
  while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) aLo++, bLo++;
  while (aHi > aLo && bHi > bLo && a[aHi - 1] === b[bHi - 1]) aHi--, bHi--;
  const common = aLo - aStart + (aEnd - aHi);
  const swap = aHi - aLo > bHi - bLo;
  const p = swap ? b : a;
  const t = swap ? a : b;
  const pLo = swap ? bLo : aLo;
  const pHi = swap ? bHi : aHi;
  const tLo = swap ? aLo : bLo;
  const tHi = swap ? aHi : bHi;
  const m = pHi - pLo;
  if (m === 0) return common;
  const pattern = patternScratch.get(m);
  const text = textScratch.get(tHi - tLo);
  const keys = keysScratch.get(m);
  let table = keyLocal;
  let distinct = 0;
  for (let i = 0; i < m; i++) {
    const x = p[pLo + i];
    const key = ((x << 1) ^ (x >> 31)) >>> 0;
    if (key >= table.length) {
      if (key >= KEY_LIMIT) {
        for (let k = 0; k < distinct; k++) table[keys[k]] = 0;
        return common + internedLcs(p, pLo, pHi, t, tLo, tHi, maxSteps);
      }
      const grown = new Int32Array(Math.min(KEY_LIMIT, Math.max(key + 1, 2 * table.length)));
      grown.set(table);
      keyLocal = table = grown;
    }
    let id = table[key];
    if (id === 0) {
      keys[distinct] = key;
      table[key] = id = ++distinct;
    }
    pattern[i] = id - 1;
  }
  const size = table.length;
  let n = 0;
  for (let j = tLo; j < tHi; j++) {
    const x = t[j];
    const key = ((x << 1) ^ (x >> 31)) >>> 0;
    const id = key < size ? table[key] : 0;
    if (id !== 0) text[n++] = id - 1;
  }
  for (let k = 0; k < distinct; k++) table[keys[k]] = 0;
  return common + lcsOfIds(pattern, m, distinct, text, n, maxSteps);
}

/** LCS length of p[pLo, pHi) and t[tLo, tHi), with local ids from a Map (any tokens). */
function internedLcs<T>(p: ArrayLike<T>, pLo: number, pHi: number, t: ArrayLike<T>, tLo: number, tHi: number, maxSteps: number): number {
  const m = pHi - pLo;
  const pattern = patternScratch.get(m);
  const text = textScratch.get(tHi - tLo);
  const ids = new Map<T, number>();
  for (let i = 0; i < m; i++) {
    let id = ids.get(p[pLo + i]);
    if (id === undefined) ids.set(p[pLo + i], (id = ids.size));
    pattern[i] = id;
  }
  let n = 0;
  for (let j = tLo; j < tHi; j++) {
    const id = ids.get(t[j]);
    if (id !== undefined) text[n++] = id;
  }
  return lcsOfIds(pattern, m, ids.size, text, n, maxSteps);
}
/** LCS length of pattern[0, m) and text[0, n), local ids in [0, distinct), every text id occurring in the pattern. */
function lcsOfIds(pattern: Int32Array, m: number, distinct: number, text: Int32Array, n: number, maxSteps: number): number {
  if (m <= 32) {
    // One word: V is a plain int32, the carry out of the top bit is dropped (nothing above it).
    const masks = masksScratch.get(distinct);
    for (let i = 0; i < m; i++) masks[pattern[i]] |= 1 << i;
    let v = ONES;
    for (let j = 0; j < n; j++) {
      const mk = masks[text[j]];
      v = (v + (v & mk)) | (v & ~mk);
    }
    masks.fill(0, 0, distinct);
    return m - popcount(m === 32 ? v : v & ((1 << m) - 1));
  }
  const words = (m + 31) >>> 5;
  const rowsMax = Math.min(STRIPE_WORDS * 32, m) + 1;
  const carry = carryScratch.get(n);
  carry.fill(0, 0, n);
  // id -> row of the stripe's mask table; row 0 is all zeros and stands for tokens absent from the stripe.
  const slot = slotScratch.get(distinct);
  const masks = masksScratch.get(rowsMax * Math.min(STRIPE_WORDS, words));
  const low = lowScratch.get(rowsMax); // first and last word of the stripe where each row's token occurs
  const high = highScratch.get(rowsMax);
  let lcs = 0;
  let steps = 0;
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
    V.fill(ONES, 0, sw);
    // Lowest word holding a zero bit. It only moves down: the zero bits of V below any position count an LCS
    // length, which never decreases as the text goes on. The words below it are all ones and pass a carry on.
    let first = sw;
    steps += n; // one look-up per text token
    for (let j = 0; j < n; j++) {
      if ((j & 0xffff) === 0 && steps > maxSteps) break; // the scratch is cleaned up below first
      const row = slot[text[j]];
      let c = carry[j];
      if (row === 0 && c === 0) continue; // no match bits, no carry: the stripe is unchanged
      // Words below the token's first occurrence are unchanged, unless a carry comes in; it passes through the
      // all-ones words below `first`. Past the token's last occurrence only a carry changes anything.
      let k = c ? Math.min(first, low[row]) : low[row];
      const from = k;
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
      steps += k - from;
      carry[j] = c;
    }
    // Zero bits of V within the pattern (bits past its end stay one: their mask bits are 0 and V's are 1).
    for (let k = 0; k < sw; k++) {
      const bits = Math.min(32, m - (w0 + k) * 32);
      lcs += bits - popcount(bits === 32 ? V[k] : V[k] & ((1 << bits) - 1));
    }
    for (const id of inStripe) slot[id] = 0;
    masks.fill(0, 0, (inStripe.length + 1) * sw);
    if (steps > maxSteps) throw lcsBoundError(`an LCS of ${m} x ${n} tokens`, maxSteps);
  }
  return lcs;
}

/**
 * Largest alignment table lcsIndices keeps whole, in 32-bit words (64 MB). The alignment has to be the very LCS
 * that rouge-score's `_backtrack_norec` picks, since ROUGE-Lsum unions and clips its tokens, so a linear-space
 * method such as Hirschberg's (which finds *an* LCS, with other tie-breaking) would change scores. The table is
 * kept instead, one bit per cell; past this size only every B-th row is kept (B ~ sqrt(rows)), and the rows of a
 * block are computed again from its first when the backtracking reaches it: twice the work, O(sqrt(rows) W) memory.
 */
export const MAX_TABLE_WORDS = 1 << 24;

/** Word steps lcsIndices(ref, can) takes at most (forward pass, recomputed blocks, backtracking): its work bound. */
export function alignmentSteps(rows: number, cols: number): number {
  return 3 * rows * ((cols + 31) >>> 5);
}

/**
 * Indices into `ref` of one LCS with `can`, chosen by rouge-score's `_backtrack_norec` tie-breaking: from the end,
 * take a match, else step left when T[i][j-1] > T[i-1][j], else up, T being the LCS-length table. Row i of T is
 * stored as the bit-parallel vector V after ref[0..i) (T[i][j] = the zero bits of V below j), filled in
 * O(|ref| |can| / 32) word steps. `tableWords` (tests) moves the size past which rows are recomputed.
 */
export function lcsIndices<T>(ref: ArrayLike<T>, can: ArrayLike<T>, tableWords = MAX_TABLE_WORDS, maxSteps = MAX_LCS_WORD_STEPS): number[] {
  const rows = ref.length;
  const cols = can.length;
  if (rows === 0 || cols === 0) return [];
  if (alignmentSteps(rows, cols) > maxSteps) throw lcsBoundError(`an LCS alignment of ${rows} x ${cols} tokens`, maxSteps);
  const W = (cols + 31) >>> 5;
  const ids = new Map<T, number>();
  for (let i = 0; i < rows; i++) if (!ids.has(ref[i])) ids.set(ref[i], -1);
  // Each shared token's match words in `can`: (word index, bits) pairs, ascending, in compressed rows (token t's
  // are pairs start[t] .. start[t + 1]). At most min(occurrences, W) pairs a token, so at most `cols` in all, where
  // dense masks (W words a token) could outgrow the table itself.
  const canIds = new Int32Array(cols);
  let shared = 0;
  for (let j = 0; j < cols; j++) {
    let id = ids.get(can[j]);
    if (id !== undefined && id < 0) ids.set(can[j], (id = shared++));
    canIds[j] = id ?? -1;
  }
  const start = new Int32Array(shared + 1);
  const lastWord = new Int32Array(shared).fill(-1);
  for (let j = 0; j < cols; j++) {
    const t = canIds[j];
    if (t >= 0 && lastWord[t] !== j >>> 5) {
      lastWord[t] = j >>> 5;
      start[t + 1]++;
    }
  }
  for (let t = 0; t < shared; t++) start[t + 1] += start[t];
  // Each ref token's shared id (-1: absent from can), looked up once rather than per row and per recomputed block.
  const refIds = new Int32Array(rows);
  for (let i = 0; i < rows; i++) refIds[i] = ids.get(ref[i])!;
  const wordIndex = new Int32Array(start[shared]);
  const wordBits = new Int32Array(start[shared]);
  const next = start.slice(0, shared); // the pair each token fills next
  lastWord.fill(-1);
  for (let j = 0; j < cols; j++) {
    const t = canIds[j];
    if (t < 0) continue;
    if (lastWord[t] !== j >>> 5) {
      lastWord[t] = j >>> 5;
      wordIndex[next[t]++] = j >>> 5;
    }
    wordBits[next[t] - 1] |= 1 << (j & 31);
  }
  /**
   * Row i of T (i >= 1) into dst at `to`, from row i-1 in src at `from`. Words without match bits and without an
   * incoming carry are unchanged, so after the copy only the token's match words, and the carry runs after them,
   * are visited.
   */
  const advance = (src: Int32Array, from: number, dst: Int32Array, to: number, i: number): void => {
    dst.set(src.subarray(from, from + W), to);
    const id = refIds[i - 1];
    if (id < 0) return;
    let p = start[id];
    const pEnd = start[id + 1];
    let k = wordIndex[p];
    let c = 0;
    while (k < W) {
      const mk = p < pEnd && wordIndex[p] === k ? wordBits[p++] : 0;
      const v = dst[to + k];
      const u = v & mk;
      const sum = (v + u + c) | 0;
      c = carryOut(v, u, sum);
      dst[to + k] = sum | (v & ~mk);
      if (c) k++;
      else if (p < pEnd) k = wordIndex[p];
      else break; // the carry out of the top word is dropped, as in the full addition
    }
  };
  const whole = (rows + 1) * W <= tableWords;
  // Whole: every row. Otherwise rows 0, B, 2B, ... (checkpoints), and one block of rows b*B .. b*B+B at a time.
  const B = whole ? rows + 1 : Math.ceil(Math.sqrt(rows + 1));
  const checkpoints = new Int32Array((whole ? rows + 1 : Math.floor(rows / B) + 1) * W);
  checkpoints.fill(ONES, 0, W);
  if (whole) {
    for (let i = 1; i <= rows; i++) advance(checkpoints, (i - 1) * W, checkpoints, i * W, i);
  } else {
    const rolling = new Int32Array(2 * W);
    rolling.fill(ONES, 0, W);
    for (let i = 1; i <= rows; i++) {
      advance(rolling, ((i - 1) & 1) * W, rolling, (i & 1) * W, i);
      if (i % B === 0) checkpoints.set(rolling.subarray((i & 1) * W, (i & 1) * W + W), (i / B) * W);
    }
  }
  const block = whole ? checkpoints : new Int32Array((B + 1) * W);
  let loaded = -1;
  /** Where row i lies: sets `table` and returns the row's offset in it. */
  let table = checkpoints;
  const rowAt = (i: number): number => {
    if (whole) return i * W;
    const b = Math.floor(i / B);
    if (i === b * B) {
      table = checkpoints;
      return b * W;
    }
    if (loaded !== b) {
      block.set(checkpoints.subarray(b * W, b * W + W), 0);
      const last = Math.min(B, rows - b * B);
      for (let k = 1; k <= last; k++) advance(block, (k - 1) * W, block, k * W, b * B + k);
      loaded = b;
    }
    table = block;
    return (i - b * B) * W;
  };
  /** T[i][j]: the zero bits of row i below bit j. */
  const value = (i: number, j: number): number => {
    let zeros = 0;
    const base = rowAt(i);
    for (let k = 0; k < j >>> 5; k++) zeros += 32 - popcount(table[base + k]);
    const rest = j & 31;
    if (rest) zeros += rest - popcount(table[base + (j >>> 5)] & ((1 << rest) - 1));
    return zeros;
  };
  /** T[i][j] - T[i][j-1], 0 or 1. */
  const step = (i: number, j: number): number => {
    const base = rowAt(i);
    return 1 - ((table[base + ((j - 1) >>> 5)] >>> ((j - 1) & 31)) & 1);
  };
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
