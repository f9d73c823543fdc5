/**
 * Column sums of bootstrap resamples [from, to): each resample's draws become multiplicities, and the matrices are
 * summed in row order with those weights (the same sums as adding the drawn rows, read sequentially, skipping the
 * third of the rows a resample leaves out). Output layout: for each sample, the matrices' sums side by side.
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
  const counts = new Int32Array(n);
  const datas = matrices.map((m) => m.data);
  const sizes = matrices.map((m) => m.size);
  const starts = sizes.map((_, k) => sizes.slice(0, k).reduce((s, x) => s + x, 0));
  for (let s = from; s < to; s++) {
    counts.fill(0);
    const offset = s * n;
    for (let r = 0; r < n; r++) counts[draws[offset + r]]++;
    const column = s * width;
    for (let m = 0; m < datas.length; m++) {
      const data = datas[m];
      const size = sizes[m];
      const target = column + starts[m];
      if (size === 2) {
        // Segment-averaged metrics ([score, 1]) and small statistics: unrolled.
        let a = 0;
        let b = 0;
        for (let i = 0; i < n; i++) {
          const c = counts[i];
          if (c !== 0) {
            a += c * data[2 * i];
            b += c * data[2 * i + 1];
          }
        }
        out[target] += a;
        out[target + 1] += b;
        continue;
      }
      for (let i = 0; i < n; i++) {
        const c = counts[i];
        if (c === 0) continue;
        const base = i * size;
        for (let k = 0; k < size; k++) out[target + k] += c * data[base + k];
      }
    }
  }
}
