/**
 * Column sums of bootstrap resamples [from, to): each resample's draws become multiplicities, and the matrices are
 * summed in row order with those weights (the same sums as adding the drawn rows, read sequentially, skipping the
 * third of the rows a resample leaves out). Output layout: for each sample, the matrices' sums side by side.
 *
 * The matrices are transposed once, so each output cell is one dot product over the rows a resample drew (kept
 * as a list of row indices and multiplicities): a register accumulator instead of a store per row and column. The
 * additions happen in the same order (rows ascending, starting from zero) as the row-wise sum, so the results are
 * bit-identical to it.
 */
export function weightedSums(
  draws: Int32Array,
  n: number,
  from: number,
  to: number,
  matrices: { data: Float64Array; size: number }[],
  out: Float64Array,
): void {
  const width = matrices.reduce((s, m) => s + m.size, 0);
  // Column-major copy of all matrices side by side: column c of the output reads columns[c * n .. c * n + n).
  const columns = new Float64Array(width * n);
  let c0 = 0;
  for (const { data, size } of matrices) {
    for (let i = 0; i < n; i++) {
      const base = i * size;
      for (let k = 0; k < size; k++) columns[(c0 + k) * n + i] = data[base + k];
    }
    c0 += size;
  }
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
    const target = s * width;
    let col = 0;
    // Four columns per pass share the loads of the row list (each still sums its rows in ascending order).
    for (; col + 4 <= width; col += 4) {
      const b0 = col * n;
      const b1 = b0 + n;
      const b2 = b1 + n;
      const b3 = b2 + n;
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let j = 0; j < m; j++) {
        const w = weights[j];
        const r = rows[j];
        a0 += w * columns[b0 + r];
        a1 += w * columns[b1 + r];
        a2 += w * columns[b2 + r];
        a3 += w * columns[b3 + r];
      }
      out[target + col] += a0;
      out[target + col + 1] += a1;
      out[target + col + 2] += a2;
      out[target + col + 3] += a3;
    }
    for (; col < width; col++) {
      const base = col * n;
      let a = 0;
      for (let j = 0; j < m; j++) a += weights[j] * columns[base + rows[j]];
      out[target + col] += a;
    }
  }
}
