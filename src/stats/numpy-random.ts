/**
 * NumPy's `default_rng(seed)` (SeedSequence + PCG64, XSL-RR 128/64) and the sampling routines sacrebleu uses
 * (`choice(n, size, replace=True)`, `integers(2, size, dtype=bool)`), ported so that resampling draws the very
 * same indices as sacrebleu does under the same seed. Hand-written: no JavaScript library implements NumPy's
 * SeedSequence mixing or its buffered Lemire sampling. 128-bit state arithmetic uses 32-bit limbs.
 */
const MASK32 = 0x100000000;

/** 64-bit product of two uint32 as [low 32 bits, high 32 bits]. */
function mul32(a: number, b: number): [number, number] {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const p11 = a1 * b1;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  const lo = (((mid & 0xffff) << 16) | (p00 & 0xffff)) >>> 0;
  const hi = (p11 + (p01 >>> 16) + (p10 >>> 16) + Math.floor(mid / 0x10000)) >>> 0;
  return [lo, hi];
}

/** (a * b + c) mod 2^128 on little-endian uint32 limbs. */
function mulAdd128(a: Uint32Array, b: Uint32Array, c: Uint32Array, out: Uint32Array): void {
  const col = [c[0], c[1], c[2], c[3], 0];
  for (let i = 0; i < 4; i++) {
    for (let j = 0; i + j < 4; j++) {
      const [lo, hi] = mul32(a[i], b[j]);
      col[i + j] += lo;
      col[i + j + 1] += hi;
    }
  }
  let carry = 0;
  for (let k = 0; k < 4; k++) {
    const v = col[k] + carry;
    out[k] = v % MASK32;
    carry = Math.floor(v / MASK32);
  }
}

function add128(a: Uint32Array, b: Uint32Array, out: Uint32Array): void {
  let carry = 0;
  for (let k = 0; k < 4; k++) {
    const v = a[k] + b[k] + carry;
    out[k] = v % MASK32;
    carry = v >= MASK32 ? 1 : 0;
  }
}

// SeedSequence constants (numpy/random/bit_generator.pyx).
const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL_SIZE = 4;

/** Splits a non-negative integer seed into uint32 words, least significant first (NumPy `_coerce_to_uint32_array`). */
function seedWords(seed: number | bigint): number[] {
  let s = BigInt(seed);
  if (s < 0n) throw new Error('seed must be non-negative');
  const words: number[] = [];
  do {
    words.push(Number(s & 0xffffffffn));
    s >>= 32n;
  } while (s > 0n);
  return words;
}

/** NumPy SeedSequence(seed).generate_state(nWords32, uint32). */
export function seedSequenceState(seed: number | bigint, nWords32: number): Uint32Array {
  const entropy = seedWords(seed);
  let hashConst = INIT_A;
  const hashmix = (value: number): number => {
    value = (value ^ hashConst) >>> 0;
    hashConst = Math.imul(hashConst, MULT_A) >>> 0;
    value = Math.imul(value, hashConst) >>> 0;
    return (value ^ (value >>> 16)) >>> 0;
  };
  const mix = (x: number, y: number): number => {
    const r = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
    return (r ^ (r >>> 16)) >>> 0;
  };
  const pool = new Array<number>(POOL_SIZE);
  for (let i = 0; i < POOL_SIZE; i++) pool[i] = hashmix(i < entropy.length ? entropy[i] : 0);
  for (let src = 0; src < POOL_SIZE; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
  }
  for (let src = POOL_SIZE; src < entropy.length; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
  }
  const state = new Uint32Array(nWords32);
  let h = INIT_B;
  for (let i = 0; i < nWords32; i++) {
    let v = (pool[i % POOL_SIZE] ^ h) >>> 0;
    h = Math.imul(h, MULT_B) >>> 0;
    v = Math.imul(v, h) >>> 0;
    state[i] = (v ^ (v >>> 16)) >>> 0;
  }
  return state;
}

const MULTIPLIER = Uint32Array.from([0x9fccf645, 0x4385df64, 0x1fc65da4, 0x2360ed05]); // 0x2360ED051FC65DA44385DF649FCCF645

export class Pcg64 {
  readonly state = new Uint32Array(4);
  readonly inc = new Uint32Array(4);
  private hasUint32 = false;
  private uinteger = 0;

  constructor(seed: number | bigint) {
    const w = seedSequenceState(seed, 8); // four uint64 = eight uint32, little-endian pairs
    const initState = Uint32Array.from([w[2], w[3], w[0], w[1]]); // (val[0] << 64) | val[1]
    const initSeq = Uint32Array.from([w[6], w[7], w[4], w[5]]); // (val[2] << 64) | val[3]
    // inc = (initseq << 1) | 1
    for (let k = 3; k >= 0; k--) this.inc[k] = ((initSeq[k] << 1) | (k > 0 ? initSeq[k - 1] >>> 31 : 0)) >>> 0;
    this.inc[0] = (this.inc[0] | 1) >>> 0;
    this.state.fill(0);
    this.step();
    add128(this.state, initState, this.state);
    this.step();
  }

  private step(): void {
    mulAdd128(this.state, MULTIPLIER, this.inc, this.state);
  }

  /** Next 64-bit output as [low 32, high 32]. */
  next64(): [number, number] {
    this.step();
    const s = this.state;
    const xHi = (s[3] ^ s[1]) >>> 0;
    const xLo = (s[2] ^ s[0]) >>> 0;
    let rot = s[3] >>> 26;
    let lo = xLo;
    let hi = xHi;
    if (rot >= 32) {
      [lo, hi] = [hi, lo];
      rot -= 32;
    }
    if (rot === 0) return [lo, hi];
    return [((lo >>> rot) | (hi << (32 - rot))) >>> 0, ((hi >>> rot) | (lo << (32 - rot))) >>> 0];
  }

  /** NumPy's next_uint32: the low half of a 64-bit draw, then its high half. */
  next32(): number {
    if (this.hasUint32) {
      this.hasUint32 = false;
      return this.uinteger;
    }
    const [lo, hi] = this.next64();
    this.hasUint32 = true;
    this.uinteger = hi;
    return lo;
  }
}

/** NumPy `Generator` restricted to what resampling needs. */
export class NumpyGenerator {
  readonly bitGenerator: Pcg64;

  constructor(seed: number | bigint) {
    this.bitGenerator = new Pcg64(seed);
  }

  /** A uniform integer in [0, rngInclusive] by NumPy's 32-bit Lemire method (`buffered_bounded_lemire_uint32`). */
  private lemire32(rng: number): number {
    if (rng === 0) return 0;
    if (rng === 0xffffffff) return this.bitGenerator.next32();
    const rngExcl = rng + 1;
    let [leftover, m] = mul32(this.bitGenerator.next32(), rngExcl);
    if (leftover < rngExcl) {
      const threshold = (0xffffffff - rng) % rngExcl;
      while (leftover < threshold) [leftover, m] = mul32(this.bitGenerator.next32(), rngExcl);
    }
    return m;
  }

  /** `choice(n, size=count, replace=True)` (= `integers(0, n, size)`), flattened row-major. */
  choice(n: number, count: number): Int32Array {
    if (!Number.isInteger(n) || n <= 0 || n > 0x100000000) throw new Error(`choice: population must be 1..2^32, got ${n}`);
    const out = new Int32Array(count);
    for (let i = 0; i < count; i++) out[i] = this.lemire32(n - 1);
    return out;
  }

  /** `integers(2, size=count, dtype=bool)`: one uint32 gives 32 booleans, least significant bit first. */
  booleans(count: number): Uint8Array {
    const out = new Uint8Array(count);
    let buf = 0;
    let bcnt = 0;
    for (let i = 0; i < count; i++) {
      if (bcnt === 0) {
        buf = this.bitGenerator.next32();
        bcnt = 31;
      } else {
        buf >>>= 1;
        bcnt--;
      }
      out[i] = buf & 1;
    }
    return out;
  }
}
