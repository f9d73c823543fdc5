/**
 * Memoised per-text work (tokens, encodings, parses) that is shared by the many hypotheses of one reference. The
 * cache forgets everything when full, as a cheap bound: memory stays flat however long a streamed input is, and
 * the common case (consecutive samples of one problem) still hits. 4,096 entries of code-sized texts keep a
 * metric's caches to tens of megabytes.
 */
export const SEGMENT_CACHE_ENTRIES = 1 << 12;

export class BoundedCache<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly capacity = SEGMENT_CACHE_ENTRIES) {}

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: V): void {
    if (this.entries.size >= this.capacity) this.entries.clear();
    this.entries.set(key, value);
  }

  /** The cached value, or the computed one (then cached). */
  getOrCompute(key: string, compute: (key: string) => V): V {
    let value = this.entries.get(key);
    if (value === undefined) {
      value = compute(key);
      this.set(key, value);
    }
    return value;
  }
}
