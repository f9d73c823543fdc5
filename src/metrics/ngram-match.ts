import { isPyWhitespace } from '../compat/python-strings.js';

/**
 * Exact clipped n-gram matching for BLEU and chrF, fast enough to score tens of thousands of segments a second.
 * N-grams are never turned into strings: an n-gram's id is looked up from (id of its (n-1)-gram prefix, its last
 * token) in a small open-addressing table that holds only the current segment's reference n-grams, so it stays
 * in the CPU cache. A hypothesis n-gram that is not in the table cannot match and gets no id.
 */
const ROOT = -2;

export class NgramMatcher {
  private capacity = 0;
  private keyA = new Int32Array(0);
  private keyB = new Int32Array(0);
  private value = new Int32Array(0);
  private slotGeneration = new Int32Array(0);
  private generation = 0;
  private size = 0;
  // Per local n-gram id: count in the current reference, max over references so far, matches used.
  private current = new Int32Array(1024);
  private best = new Int32Array(1024);
  private used = new Int32Array(1024);
  private scratch = new Int32Array(1024);
  private seen = new Int32Array(1024);

  constructor() {
    this.resize(1 << 12);
  }

  private resize(capacity: number): void {
    const old = { keyA: this.keyA, keyB: this.keyB, value: this.value, slotGeneration: this.slotGeneration, generation: this.generation };
    this.capacity = capacity;
    this.keyA = new Int32Array(capacity);
    this.keyB = new Int32Array(capacity);
    this.value = new Int32Array(capacity);
    this.slotGeneration = new Int32Array(capacity);
    this.generation = 1;
    for (let i = 0; i < old.value.length; i++) {
      if (old.slotGeneration[i] === old.generation && old.generation > 0) this.insert(old.keyA[i], old.keyB[i], old.value[i]);
    }
  }

  private hash(a: number, b: number): number {
    let h = Math.imul(a ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77);
    h ^= h >>> 16;
    return h & (this.capacity - 1);
  }

  private insert(a: number, b: number, id: number): void {
    const mask = this.capacity - 1;
    let i = this.hash(a, b);
    while (this.slotGeneration[i] === this.generation) i = (i + 1) & mask;
    this.slotGeneration[i] = this.generation;
    this.keyA[i] = a;
    this.keyB[i] = b;
    this.value[i] = id;
  }

  private growCounters(min: number): void {
    let n = this.best.length;
    while (n < min) n *= 2;
    const grow = (a: Int32Array) => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    this.current = grow(this.current);
    this.best = grow(this.best);
    this.used = grow(this.used);
  }

  private lastReferences: readonly Int32Array[] = [];
  private lastOrder = 0;

  /**
   * Loads the references of one segment. When they are the very arrays loaded last time (consecutive samples
   * for the same problem, as in pass@k data), the table is kept and only the match counters are cleared.
   */
  loadReferences(references: readonly Int32Array[], maxOrder: number): void {
    const last = this.lastReferences;
    if (maxOrder === this.lastOrder && references.length === last.length && references.every((r, i) => r === last[i])) {
      this.used.fill(0, 0, this.size);
      return;
    }
    this.reset();
    for (const ref of references) this.addReference(ref, maxOrder);
    this.lastReferences = references.slice();
    this.lastOrder = maxOrder;
  }

  /** Starts a new segment: forgets every n-gram. */
  reset(): void {
    this.lastReferences = [];
    this.size = 0;
    if (++this.generation >= 2 ** 30) {
      this.slotGeneration.fill(0);
      this.generation = 1;
    }
  }

  private prefixes(length: number): Int32Array {
    if (this.scratch.length < length) this.scratch = new Int32Array(Math.max(length, this.scratch.length * 2));
    return this.scratch;
  }

  /**
   * Adds one reference's n-grams of orders 1..maxOrder; with several references, each n-gram keeps its
   * largest count (sacrebleu and NLTK clip against the maximum over references). The table and counters are
   * grown once up front, so the loop probes the table inline (one probe finds or inserts).
   */
  addReference(tokens: Int32Array, maxOrder: number): void {
    const most = tokens.length * maxOrder;
    while ((this.size + most + 1) * 2 > this.capacity) this.resize(this.capacity * 2);
    if (this.size + most > this.best.length) this.growCounters(this.size + most);
    const prefix = this.prefixes(tokens.length);
    if (this.seen.length < most) this.seen = new Int32Array(Math.max(most, this.seen.length * 2));
    const { keyA, keyB, value, slotGeneration, current, best, used, seen } = this;
    const generation = this.generation;
    const mask = this.capacity - 1;
    let seenCount = 0;
    let size = this.size;
    for (let n = 1; n <= maxOrder; n++) {
      const positions = tokens.length - n + 1;
      for (let i = 0; i < positions; i++) {
        const a = n === 1 ? ROOT : prefix[i];
        const b = tokens[i + n - 1];
        let h = Math.imul(a ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77);
        h = (h ^ (h >>> 16)) & mask;
        let id = -1;
        while (slotGeneration[h] === generation) {
          if (keyA[h] === a && keyB[h] === b) {
            id = value[h];
            break;
          }
          h = (h + 1) & mask;
        }
        if (id === -1) {
          id = size++;
          best[id] = 0;
          current[id] = 0;
          used[id] = 0;
          slotGeneration[h] = generation;
          keyA[h] = a;
          keyB[h] = b;
          value[h] = id;
        }
        prefix[i] = id;
        if (current[id]++ === 0) seen[seenCount++] = id;
      }
    }
    this.size = size;
    for (let k = 0; k < seenCount; k++) {
      const id = seen[k];
      if (current[id] > best[id]) best[id] = current[id];
      current[id] = 0;
    }
  }

  /** Clipped matches per order of a hypothesis against the references added since the last reset. */
  matchHypothesis(tokens: Int32Array, maxOrder: number, out: Float64Array, offset: number): void {
    const prefix = this.prefixes(tokens.length);
    const { keyA, keyB, value, slotGeneration, best, used } = this;
    const generation = this.generation;
    const mask = this.capacity - 1;
    for (let n = 1; n <= maxOrder; n++) {
      const positions = tokens.length - n + 1;
      let matched = 0;
      for (let i = 0; i < positions; i++) {
        const a = n === 1 ? ROOT : prefix[i];
        const b = tokens[i + n - 1];
        let id = -1;
        if (a !== -1 && b !== -1) {
          let h = Math.imul(a ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77);
          h = (h ^ (h >>> 16)) & mask;
          while (slotGeneration[h] === generation) {
            if (keyA[h] === a && keyB[h] === b) {
              id = value[h];
              break;
            }
            h = (h + 1) & mask;
          }
        }
        prefix[i] = id;
        if (id !== -1 && used[id] < best[id]) {
          used[id]++;
          matched++;
        }
      }
      out[offset + n - 1] = matched;
    }
  }
}

/** Interns word tokens to integer ids shared by references and hypotheses of one metric instance. */
export class Vocabulary {
  private readonly ids = new Map<string, number>();

  /** Id of a word; a hypothesis word that no reference contains is -1 (it cannot match). */
  id(word: string, intern: boolean): number {
    let id = this.ids.get(word);
    if (id === undefined) {
      if (!intern) return -1;
      id = this.ids.size;
      this.ids.set(word, id);
    }
    return id;
  }

  encode(words: readonly string[], intern: boolean): Int32Array {
    const out = new Int32Array(words.length);
    for (let i = 0; i < words.length; i++) out[i] = this.id(words[i], intern);
    return out;
  }
}

/** Code points of a string as integers (what sacrebleu's chrF indexes). */
export function codePointArray(s: string): Int32Array {
  const out = new Int32Array(s.length);
  let k = 0;
  for (let i = 0; i < s.length; i++) {
    const cp = s.codePointAt(i)!;
    if (cp > 0xffff) i++;
    out[k++] = cp;
  }
  return k === s.length ? out : out.slice(0, k);
}

/** Code points of a string without its Python whitespace: `codePointArray(pySplit(s).join(''))` in one pass. */
export function codePointArrayWithoutWhitespace(s: string): Int32Array {
  const out = new Int32Array(s.length);
  let k = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const cp = s.codePointAt(i)!;
      if (cp > 0xffff) i++;
      out[k++] = cp;
    } else if (!isPyWhitespace(c)) out[k++] = c;
  }
  return k === s.length ? out : out.slice(0, k);
}
