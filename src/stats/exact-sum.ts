import { addToPartials, roundPartials } from '../compat/python-strings.js';

/**
 * Sums of statistics vectors that do not depend on the order of addition: each element keeps Shewchuk's exact
 * partials (as Python's math.fsum) and is rounded once when read. Integer statistics (BLEU's counts) take a plain
 * addition while the sum stays exactly representable. This is what lets worker threads split a corpus and still give
 * the very same corpus score as one thread, and what makes a segment-averaged mean the correctly rounded one.
 */
export class ExactSums {
  private readonly partials: number[][];

  constructor(size: number) {
    this.partials = Array.from({ length: size }, () => []);
  }

  add(row: ArrayLike<number>): void {
    for (let k = 0; k < row.length; k++) {
      const x = row[k];
      const p = this.partials[k];
      // Fast path: integers whose running sum is exact need no partials.
      if (p.length <= 1 && Number.isInteger(x)) {
        const sum = (p[0] ?? 0) + x;
        if (Number.isSafeInteger(sum) && Number.isInteger(p[0] ?? 0)) {
          p[0] = sum;
          continue;
        }
      }
      addToPartials(p, x);
    }
  }

  /** Adds another sum exactly (a worker's part of the corpus). */
  merge(other: ExactSums | number[][]): void {
    const parts = other instanceof ExactSums ? other.partials : other;
    parts.forEach((list, k) => {
      for (const x of list) addToPartials(this.partials[k], x);
    });
  }

  /** The exact state, for sending to another thread. */
  state(): number[][] {
    return this.partials.map((p) => p.slice());
  }

  values(): Float64Array {
    return Float64Array.from(this.partials, roundPartials);
  }
}
