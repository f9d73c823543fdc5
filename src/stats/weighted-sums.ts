/**
 * Column sums of bootstrap resamples [from, to): each resample's draws become multiplicities, and the matrices are
 * summed in row order with those weights (the same sums as adding the drawn rows, read sequentially, skipping the
 * third of the rows a resample leaves out). Output layout: for each sample, the matrices' sums side by side.
 *
 * Each output cell is one dot product over the rows a resample drew (kept as a list of ascending row indices and
 * multiplicities), accumulated from zero in that order, so a floating-point column gets exactly the row-wise sum.
 *
 * Columns of non-negative integers (BLEU's and chrF's counts) are summed several to one double: a column whose
 * resampled sums stay below 2^b (b bits of n times its largest value) takes b bits of a 53-bit lane, shifted past
 * the columns before it. Integer arithmetic below 2^53 is exact in doubles, so the lane's dot product is exactly the
 * shifted sum of its columns' dot products, which are then read back exactly; fewer lanes than columns means
 * proportionally less work. Other columns keep a lane of their own.
 *
 * The lanes of a row lie side by side, and a small WebAssembly kernel (wasm/weighted-sums.wat) counts the draws and
 * takes the dot products two lanes at a time with SIMD (the same multiply, then add, per lane); the TypeScript loop
 * below is its fallback and reference.
 */
import { WEIGHTED_SUMS_WASM_BASE64 } from './weighted-sums-wasm.js';

interface Lane {
  /** Output columns of the lane and their shifts (as powers of two), highest shift last. */
  columns: number[];
  scales: number[];
  /** A lane of one floating-point column: its dot product is the value itself. */
  float: boolean;
}

const LANE_BITS = 53;

/** Bits that any resampled sum of a column takes (n draws of its largest value), or -1 when it cannot be packed. */
function columnBits(data: Float64Array, size: number, k: number, n: number): number {
  let max = 0;
  for (let i = k; i < data.length; i += size) {
    const v = data[i];
    if (!(v >= 0) || !Number.isInteger(v)) return -1;
    if (v > max) max = v;
  }
  const bound = max * n;
  if (bound >= 2 ** LANE_BITS) return -1;
  let bits = 0;
  while (2 ** bits <= bound) bits++;
  return bits;
}

/** The WebAssembly kernel (wasm/weighted-sums.wat), or null where it cannot be used (no SIMD). */
interface Kernel {
  memory: WebAssembly.Memory;
  multiplicities(draws: number, n: number, counts: number, rows: number, weights: number): number;
  dot14(m: number, rows: number, weights: number, packed: number, stride: number, lane: number, out: number): void;
}
let kernel: Kernel | null | undefined;
function loadKernel(): Kernel | null {
  if (kernel === undefined) {
    try {
      kernel = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(WEIGHTED_SUMS_WASM_BASE64, 'base64'))).exports as unknown as Kernel;
    } catch {
      kernel = null;
    }
  }
  return kernel;
}
/** The kernel works on blocks of 14 lanes (seven SIMD registers); past this much memory the loop below runs instead. */
const KERNEL_LANES = 14;
const KERNEL_MAX_BYTES = 1 << 30;
/** Tests compare the two paths; the kernel is used unless this is false. */
export const weightedSumsOptions = { wasm: true };

export function weightedSums(
  draws: Int32Array,
  n: number,
  from: number,
  to: number,
  matrices: { data: Float64Array; size: number }[],
  out: Float64Array,
): void {
  const width = matrices.reduce((s, m) => s + m.size, 0);
  // Plan the lanes: integer columns packed first-fit in column order, the others alone; all-zero columns need none.
  const lanes: Lane[] = [];
  let open: Lane | null = null;
  let used = 0;
  let c0 = 0;
  for (const { data, size } of matrices) {
    for (let k = 0; k < size; k++) {
      const bits = columnBits(data, size, k, n);
      if (bits === 0) continue;
      if (bits < 0) {
        lanes.push({ columns: [c0 + k], scales: [1], float: true });
        continue;
      }
      if (open === null || used + bits > LANE_BITS) {
        open = { columns: [], scales: [], float: false };
        lanes.push(open);
        used = 0;
      }
      open.columns.push(c0 + k);
      open.scales.push(2 ** used);
      used += bits;
    }
    c0 += size;
  }
  const count = lanes.length;
  if (count === 0) return;
  const sources: { data: Float64Array; size: number; k: number }[] = [];
  c0 = 0;
  for (const { data, size } of matrices) {
    for (let k = 0; k < size; k++) sources[c0 + k] = { data, size, k };
    c0 += size;
  }
  // Row-major lanes, `stride` per row: lane l of row i at packed[i * stride + l].
  const pack = (packed: Float64Array, stride: number) =>
    lanes.forEach((lane, l) => {
      lane.columns.forEach((c, j) => {
        const { data, size, k } = sources[c];
        const scale = lane.scales[j];
        if (lane.float) for (let i = 0; i < n; i++) packed[i * stride + l] = data[i * size + k];
        else for (let i = 0; i < n; i++) packed[i * stride + l] += data[i * size + k] * scale;
      });
    });
  const unpack = (sums: Float64Array, s: number) => {
    const target = s * width;
    for (let l = 0; l < count; l++) {
      const lane = lanes[l];
      let v = sums[l];
      if (lane.float) {
        out[target + lane.columns[0]] += v;
        continue;
      }
      // Highest column first: its sum is the quotient by its scale; the rest is what the lower columns hold.
      for (let j = lane.columns.length - 1; j >= 0; j--) {
        const scale = lane.scales[j];
        const q = Math.floor(v / scale);
        v -= q * scale;
        out[target + lane.columns[j]] += q;
      }
    }
  };

  const k = weightedSumsOptions.wasm ? loadKernel() : null;
  const stride = Math.ceil(count / KERNEL_LANES) * KERNEL_LANES;
  // Byte offsets in the kernel's memory, 16-aligned: packed rows, one resample's draws, counts, rows, weights, sums.
  const align = (x: number) => (x + 15) & ~15;
  const packedAt = 0;
  const drawsAt = align(packedAt + n * stride * 8);
  const countsAt = align(drawsAt + n * 4);
  const rowsAt = align(countsAt + n * 4);
  const weightsAt = align(rowsAt + n * 4);
  const sumsAt = align(weightsAt + n * 8);
  const bytes = sumsAt + stride * 8;
  if (k && bytes <= KERNEL_MAX_BYTES) {
    const pages = Math.ceil(bytes / 65536) - k.memory.buffer.byteLength / 65536;
    if (pages > 0) k.memory.grow(pages);
    const buffer = k.memory.buffer;
    const packed = new Float64Array(buffer, packedAt, n * stride);
    packed.fill(0);
    pack(packed, stride);
    const drawsView = new Int32Array(buffer, drawsAt, n);
    const sums = new Float64Array(buffer, sumsAt, stride);
    for (let s = from; s < to; s++) {
      drawsView.set(draws.subarray(s * n, (s + 1) * n));
      const m = k.multiplicities(drawsAt, n, countsAt, rowsAt, weightsAt);
      for (let lane = 0; lane < stride; lane += KERNEL_LANES) k.dot14(m, rowsAt, weightsAt, packedAt, stride * 8, lane * 8, sumsAt + lane * 8);
      unpack(sums, s);
    }
    return;
  }

  const packed = new Float64Array(count * n);
  pack(packed, count);
  const sums = new Float64Array(count);
  const counts = new Int32Array(n);
  const rows = new Int32Array(n);
  const weights = new Float64Array(n);
  for (let s = from; s < to; s++) {
    counts.fill(0);
    const offset = s * n;
    for (let r = 0; r < n; r++) counts[draws[offset + r]]++;
    let m = 0;
    for (let i = 0; i < n; i++) {
      const c = counts[i];
      if (c !== 0) {
        rows[m] = i;
        weights[m++] = c;
      }
    }
    let l = 0;
    // Four lanes per pass share the loads of the row list (each still sums its rows in ascending order).
    for (; l + 4 <= count; l += 4) {
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let j = 0; j < m; j++) {
        const w = weights[j];
        const p = rows[j] * count + l;
        a0 += w * packed[p];
        a1 += w * packed[p + 1];
        a2 += w * packed[p + 2];
        a3 += w * packed[p + 3];
      }
      sums[l] = a0;
      sums[l + 1] = a1;
      sums[l + 2] = a2;
      sums[l + 3] = a3;
    }
    for (; l < count; l++) {
      let a = 0;
      for (let j = 0; j < m; j++) a += weights[j] * packed[rows[j] * count + l];
      sums[l] = a;
    }
    unpack(sums, s);
  }
}
