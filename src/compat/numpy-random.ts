/**
 * NumPy's `default_rng(seed)` (SeedSequence + PCG64, XSL-RR 128/64) and the sampling routines sacrebleu uses
 * (`choice(n, size, replace=True)`, `integers(2, size, dtype=bool)`), ported so that resampling draws the very
 * same indices as sacrebleu does under the same seed. Hand-written: no JavaScript library implements NumPy's
 * SeedSequence mixing or its buffered Lemire sampling. 128-bit state arithmetic uses 32-bit limbs.
 */
import { PCG64_WASM_BASE64 } from './pcg64-wasm.js';

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
  /** State and increment as little-endian uint32 limbs (for inspection); the generator works on 16-bit limbs. */
  readonly state = new Uint32Array(4);
  readonly inc = new Uint32Array(4);
  private readonly s16 = new Float64Array(8);
  private readonly inc16 = new Float64Array(8);
  private static readonly MUL16 = Float64Array.from({ length: 8 }, (_, i) => (MULTIPLIER[i >> 1] >>> ((i & 1) * 16)) & 0xffff);
  private hasUint32 = false;
  private uinteger = 0;

  constructor(seed: number | bigint) {
    const w = seedSequenceState(seed, 8); // four uint64 = eight uint32, little-endian pairs
    const initState = Uint32Array.from([w[2], w[3], w[0], w[1]]); // (val[0] << 64) | val[1]
    const initSeq = Uint32Array.from([w[6], w[7], w[4], w[5]]); // (val[2] << 64) | val[3]
    // inc = (initseq << 1) | 1
    for (let k = 3; k >= 0; k--) this.inc[k] = ((initSeq[k] << 1) | (k > 0 ? initSeq[k - 1] >>> 31 : 0)) >>> 0;
    this.inc[0] = (this.inc[0] | 1) >>> 0;
    for (let i = 0; i < 8; i++) this.inc16[i] = (this.inc[i >> 1] >>> ((i & 1) * 16)) & 0xffff;
    this.s16.fill(0);
    this.step();
    this.syncState();
    add128(this.state, initState, this.state);
    for (let i = 0; i < 8; i++) this.s16[i] = (this.state[i >> 1] >>> ((i & 1) * 16)) & 0xffff;
    this.step();
    this.syncState();
  }

  private syncState(): void {
    for (let k = 0; k < 4; k++) this.state[k] = (this.s16[2 * k] + this.s16[2 * k + 1] * 65536) >>> 0;
  }

  /** state = state * multiplier + inc (mod 2^128), on 16-bit limbs so every partial sum stays exact in a double. */
  private step(): void {
    const s = this.s16;
    const m = Pcg64.MUL16;
    const inc = this.inc16;
    const s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4], s5 = s[5], s6 = s[6], s7 = s[7];
    // Column sums stay below 2^36; q is the carry into the next column (x * 2^-16 is exact).
    let acc = s0 * m[0] + inc[0];
    let q = Math.floor(acc * 1.52587890625e-5);
    s[0] = acc - q * 65536;
    acc = q + s0 * m[1] + s1 * m[0] + inc[1];
    q = Math.floor(acc * 1.52587890625e-5);
    s[1] = acc - q * 65536;
    acc = q + s0 * m[2] + s1 * m[1] + s2 * m[0] + inc[2];
    q = Math.floor(acc * 1.52587890625e-5);
    s[2] = acc - q * 65536;
    acc = q + s0 * m[3] + s1 * m[2] + s2 * m[1] + s3 * m[0] + inc[3];
    q = Math.floor(acc * 1.52587890625e-5);
    s[3] = acc - q * 65536;
    acc = q + s0 * m[4] + s1 * m[3] + s2 * m[2] + s3 * m[1] + s4 * m[0] + inc[4];
    q = Math.floor(acc * 1.52587890625e-5);
    s[4] = acc - q * 65536;
    acc = q + s0 * m[5] + s1 * m[4] + s2 * m[3] + s3 * m[2] + s4 * m[1] + s5 * m[0] + inc[5];
    q = Math.floor(acc * 1.52587890625e-5);
    s[5] = acc - q * 65536;
    acc = q + s0 * m[6] + s1 * m[5] + s2 * m[4] + s3 * m[3] + s4 * m[2] + s5 * m[1] + s6 * m[0] + inc[6];
    q = Math.floor(acc * 1.52587890625e-5);
    s[6] = acc - q * 65536;
    acc = q + s0 * m[7] + s1 * m[6] + s2 * m[5] + s3 * m[4] + s4 * m[3] + s5 * m[2] + s6 * m[1] + s7 * m[0] + inc[7];
    q = Math.floor(acc * 1.52587890625e-5);
    s[7] = acc - q * 65536;
  }

  private lo = 0;
  private hi = 0;

  /** Next 64-bit output, left in this.lo / this.hi (low and high 32 bits). */
  private next64Into(): void {
    this.step();
    const s = this.s16;
    const w0 = s[0] + s[1] * 65536;
    const w1 = s[2] + s[3] * 65536;
    const w2 = s[4] + s[5] * 65536;
    const w3 = s[6] + s[7] * 65536;
    const xHi = (w3 ^ w1) >>> 0;
    const xLo = (w2 ^ w0) >>> 0;
    let rot = (s[7] / 1024) | 0; // state >> 122
    let lo = xLo;
    let hi = xHi;
    if (rot >= 32) {
      const t = lo;
      lo = hi;
      hi = t;
      rot -= 32;
    }
    if (rot === 0) {
      this.lo = lo;
      this.hi = hi;
    } else {
      this.lo = ((lo >>> rot) | (hi << (32 - rot))) >>> 0;
      this.hi = ((hi >>> rot) | (lo << (32 - rot))) >>> 0;
    }
  }

  /** The full generator state, for handing over to the WebAssembly sampler and back. */
  exportState(): { hi: bigint; lo: bigint; incHi: bigint; incLo: bigint; has32: boolean; buf32: number } {
    const limbs = (a: Float64Array, from: number) =>
      (BigInt(a[from + 3]) << 48n) | (BigInt(a[from + 2]) << 32n) | (BigInt(a[from + 1]) << 16n) | BigInt(a[from]);
    return { hi: limbs(this.s16, 4), lo: limbs(this.s16, 0), incHi: limbs(this.inc16, 4), incLo: limbs(this.inc16, 0), has32: this.hasUint32, buf32: this.uinteger };
  }

  importState(state: { hi: bigint; lo: bigint; has32: boolean; buf32: number }): void {
    for (let i = 0; i < 4; i++) {
      this.s16[i] = Number((state.lo >> BigInt(16 * i)) & 0xffffn);
      this.s16[i + 4] = Number((state.hi >> BigInt(16 * i)) & 0xffffn);
    }
    this.hasUint32 = state.has32;
    this.uinteger = state.buf32 >>> 0;
    this.syncState();
  }

  /** Next 64-bit output as [low 32, high 32]. */
  next64(): [number, number] {
    this.next64Into();
    this.syncState();
    return [this.lo, this.hi];
  }

  /** NumPy's next_uint32: the low half of a 64-bit draw, then its high half. */
  next32(): number {
    if (this.hasUint32) {
      this.hasUint32 = false;
      return this.uinteger;
    }
    this.next64Into();
    this.hasUint32 = true;
    this.uinteger = this.hi;
    return this.lo;
  }
}

interface Pcg64Wasm {
  memory: WebAssembly.Memory;
  setState(hi: bigint, lo: bigint, incHi: bigint, incLo: bigint, has32: number, buf32: number): void;
  stateHi(): bigint;
  stateLo(): bigint;
  has32(): number;
  buf32(): number;
  choice(n: number, count: number): void;
}
let wasm: Pcg64Wasm | null = null;
const CHUNK = 1 << 20; // draws per call: the module's 4 MiB memory

/**
 * The same draws as the loop in `choice`, an order of magnitude faster: WebAssembly has the 64-bit multiplies that
 * PCG64 needs (wasm/pcg64.wat; tests check it against the TypeScript generator draw for draw).
 */
function wasmChoice(generator: Pcg64, n: number, out: Int32Array): void {
  if (!wasm) {
    const bytes = Buffer.from(PCG64_WASM_BASE64, 'base64');
    wasm = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as unknown as Pcg64Wasm;
  }
  const st = generator.exportState();
  const u64 = (x: bigint) => BigInt.asIntN(64, x);
  wasm.setState(u64(st.hi), u64(st.lo), u64(st.incHi), u64(st.incLo), st.has32 ? 1 : 0, st.buf32 | 0);
  for (let done = 0; done < out.length; done += CHUNK) {
    const count = Math.min(CHUNK, out.length - done);
    wasm.choice(n, count);
    out.set(new Int32Array(wasm.memory.buffer, 0, count), done);
  }
  generator.importState({ hi: BigInt.asUintN(64, wasm.stateHi()), lo: BigInt.asUintN(64, wasm.stateLo()), has32: wasm.has32() === 1, buf32: wasm.buf32() });
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
    // m = draw * rngExcl is below 2^64; its high and low 32-bit words, computed exactly in doubles.
    let draw = this.bitGenerator.next32();
    let product = draw * rngExcl;
    let high = Math.floor(product / 0x100000000);
    let leftover = Math.imul(draw, rngExcl) >>> 0;
    if (product >= 2 ** 53) [leftover, high] = mul32(draw, rngExcl);
    if (leftover < rngExcl) {
      const threshold = (0xffffffff - rng) % rngExcl;
      while (leftover < threshold) {
        draw = this.bitGenerator.next32();
        product = draw * rngExcl;
        high = Math.floor(product / 0x100000000);
        leftover = Math.imul(draw, rngExcl) >>> 0;
        if (product >= 2 ** 53) [leftover, high] = mul32(draw, rngExcl);
      }
    }
    return high;
  }

  /** `choice(n, size=count, replace=True)` (= `integers(0, n, size)`), flattened row-major. */
  choice(n: number, count: number): Int32Array {
    if (!Number.isInteger(n) || n <= 0 || n > 0x100000000) throw new Error(`choice: population must be 1..2^32, got ${n}`);
    const out = new Int32Array(count);
    if (n >= 2 && n <= 0x7fffffff && count >= 4096) {
      wasmChoice(this.bitGenerator, n, out);
      return out;
    }
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
