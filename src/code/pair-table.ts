/**
 * A map from pairs of non-negative 32-bit integers to ids 0, 1, 2, ... in order of first insertion: open addressing
 * over typed arrays. Hash-consing (an n-gram as its prefix's id and one token, a subtree as its prefix and one child)
 * goes through it; a JavaScript Map would need keys beyond the small-integer range, which it boxes.
 */
export class PairTable {
  private keysA: Int32Array;
  private keysB: Int32Array;
  private values: Int32Array;
  private mask: number;
  private count = 0;

  constructor(capacity = 1 << 12) {
    const slots = 1 << Math.ceil(Math.log2(Math.max(16, 2 * capacity)));
    this.keysA = new Int32Array(slots).fill(-1);
    this.keysB = new Int32Array(slots);
    this.values = new Int32Array(slots);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count;
  }

  /** The number of slots (twice the pairs it holds before it grows, or more). */
  get capacity(): number {
    return this.keysA.length;
  }

  /** The id of (a, b), or -1 if it has not been interned. */
  get(a: number, b: number): number {
    const slot = this.slotOf(a, b);
    return this.keysA[slot] >= 0 ? this.values[slot] : -1;
  }

  /** Forgets every pair, keeping the capacity. */
  clear(): void {
    this.keysA.fill(-1);
    this.count = 0;
  }

  /** The id of (a, b), or `fresh()` for a pair not seen before (then remembered). */
  intern(a: number, b: number, fresh: () => number): number {
    let slot = this.slotOf(a, b);
    if (this.keysA[slot] >= 0) return this.values[slot];
    if (2 * (this.count + 1) > this.keysA.length) {
      this.grow();
      slot = this.slotOf(a, b);
    }
    const id = fresh();
    this.keysA[slot] = a;
    this.keysB[slot] = b;
    this.values[slot] = id;
    this.count++;
    return id;
  }

  /** The slot holding (a, b), or the empty slot where it would go (linear probing). */
  private slotOf(a: number, b: number): number {
    let slot = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) & this.mask;
    const keysA = this.keysA;
    const keysB = this.keysB;
    while (keysA[slot] >= 0 && (keysA[slot] !== a || keysB[slot] !== b)) slot = (slot + 1) & this.mask;
    return slot;
  }

  private grow(): void {
    const { keysA, keysB, values } = this;
    const slots = 2 * keysA.length;
    this.keysA = new Int32Array(slots).fill(-1);
    this.keysB = new Int32Array(slots);
    this.values = new Int32Array(slots);
    this.mask = slots - 1;
    for (let i = 0; i < keysA.length; i++) {
      if (keysA[i] < 0) continue;
      const slot = this.slotOf(keysA[i], keysB[i]);
      this.keysA[slot] = keysA[i];
      this.keysB[slot] = keysB[i];
      this.values[slot] = values[i];
    }
  }
}
