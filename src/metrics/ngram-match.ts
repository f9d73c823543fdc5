import { isPyWhitespace } from '../compat/python-strings.js';
import type { TokenSpans } from '../text/token-spans.js';

/**
 * Exact clipped n-gram matching for BLEU and chrF, fast enough to score tens of thousands of segments a second.
 * N-grams are never turned into strings: an n-gram's id is looked up from (id of its (n-1)-gram prefix, its last
 * token) in a small open-addressing table that holds only the current segment's reference n-grams, so it stays
 * in the CPU cache. A hypothesis n-gram that is not in the table cannot match and gets no id.
 *
 * A slot is four consecutive integers (generation stamp, prefix id, token, n-gram id), so a probe reads one cache
 * line; slots of an older generation are empty, so starting a segment clears nothing. The table is sized to the
 * text it holds (at most half full), so that a short reference keeps a table that stays in the L1 cache.
 */
const ROOT = -2;
const STRIDE = 4;
const MIN_CAPACITY = 1 << 8;
/**
 * First sizes of a matcher's buffers: enough for code-sized texts (a reference of up to about 1,300 tokens at order
 * 6) with no growth. Growing is cheap, but a path first taken after V8 has optimized the function (a text longer
 * than any before) throws the optimized code away and compiles it again; in a short process that recompilation
 * costs more than the growing. Only the part of a buffer that a text needs is touched.
 */
const INITIAL_SLOTS = 1 << 14;
const INITIAL_IDS = 1 << 13;
/**
 * Tokens below this get their unigram from a direct table instead of the hash table: every character of the Basic
 * Multilingual Plane (and the first word ids), so that only astral characters take the other path.
 */
const DIRECT = 1 << 16;

/** Segments whose encodings BLEU and chrF keep (a few MB for code-sized texts). */
export const TOKEN_CACHE_ENTRIES = 1 << 14;

/** Whether two reference sets are the same strings (the last set prepared is reused while it comes again). */
export function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class NgramMatcher {
  private capacity = 0;
  private slots = new Int32Array(0);
  private generation = 0;
  private size = 0;
  /** References added since the last reset: the first one counts straight into `best`. */
  private added = 0;
  // Per local n-gram id: count in the current reference, max over references so far, matches used.
  private current = new Int32Array(INITIAL_IDS);
  private best = new Int32Array(INITIAL_IDS);
  private used = new Int32Array(INITIAL_IDS);
  private scratch = new Int32Array(INITIAL_IDS);
  private seen = new Int32Array(INITIAL_IDS);
  /**
   * Unigrams of tokens below DIRECT (characters of most text, the first words interned) skip the hash table:
   * [2t] is the generation in which token t got a unigram id, [2t + 1] that id.
   */
  private direct = new Int32Array(2 * DIRECT);

  constructor() {
    this.resize(INITIAL_SLOTS);
  }

  /**
   * Sets the number of slots in use. An empty table only moves its mask over the buffer it has (a short segment
   * after a long one keeps a small table, which stays in the L1 cache); otherwise the entries move to a new buffer.
   */
  private resize(capacity: number): void {
    const old = this.slots;
    if (this.size === 0 && capacity * STRIDE <= old.length) {
      this.capacity = capacity;
      return;
    }
    const oldEnd = this.capacity * STRIDE;
    const generation = this.generation;
    this.capacity = capacity;
    this.slots = new Int32Array(capacity * STRIDE);
    const mask = capacity - 1;
    const slots = this.slots;
    for (let i = 0; i < oldEnd; i += STRIDE) {
      if (old[i] === generation && generation > 0) {
        const a = old[i + 1];
        const b = old[i + 2];
        const h = Math.imul(a ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77);
        let j = ((h ^ (h >>> 16)) & mask) * STRIDE;
        while (slots[j] === generation) j = (j + STRIDE) & (capacity * STRIDE - 1);
        slots[j] = generation;
        slots[j + 1] = a;
        slots[j + 2] = b;
        slots[j + 3] = old[i + 3];
      }
    }
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
  private lastReference: Int32Array | null = null;
  private lastOrder = 0;

  /**
   * Loads the references of one segment. When they are the very arrays loaded last time (consecutive samples
   * for the same problem, as in pass@k data), the table is kept and only the match counters are cleared.
   */
  loadReferences(references: readonly Int32Array[], maxOrder: number): void {
    if (references.length === 1) {
      this.loadReference(references[0], maxOrder);
      return;
    }
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

  /** `loadReferences([reference], maxOrder)` without the array. */
  loadReference(reference: Int32Array, maxOrder: number): void {
    if (reference === this.lastReference && maxOrder === this.lastOrder) {
      this.used.fill(0, 0, this.size);
      return;
    }
    this.reset();
    this.addReference(reference, maxOrder);
    this.lastReference = reference;
    this.lastOrder = maxOrder;
  }

  private lastHypothesis: Int32Array | null = null;

  /**
   * Clipped matches per order between one hypothesis and one reference. A clipped count is symmetric (the sum of
   * min(hypothesis count, reference count) over n-grams), so the table may hold either side: the one loaded last
   * is kept when it comes again, in either role, and otherwise the side that repeats the previous call's
   * hypothesis is loaded, so that one text against many (a reference against many samples, or one sample scored
   * against many references as in a both-ways comparison) builds its table once.
   */
  matchPair(hypothesis: Int32Array, reference: Int32Array, maxOrder: number, out: Float64Array, offset: number): void {
    const loaded = maxOrder === this.lastOrder ? this.lastReference : null;
    // The cases only choose the sides; one call loads (or, for the loaded side, just clears the counters), so that
    // a case first met late in a run (a hypothesis against a new reference) reaches no code the optimizer never saw.
    let table = reference;
    let probe = hypothesis;
    if (loaded !== null && (loaded === reference || loaded === hypothesis)) {
      table = loaded;
      probe = loaded === reference ? hypothesis : reference;
    } else if (hypothesis === this.lastHypothesis) {
      table = hypothesis;
      probe = reference;
    }
    this.loadReference(table, maxOrder);
    this.lastHypothesis = hypothesis;
    this.matchHypothesis(probe, maxOrder, out, offset);
  }

  /** Starts a new segment: forgets every n-gram. */
  reset(): void {
    this.lastReferences = [];
    this.lastReference = null;
    this.size = 0;
    this.added = 0;
    if (++this.generation >= 2 ** 30) {
      this.slots.fill(0);
      this.direct.fill(0);
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
    // At most half full; the first reference of a segment sizes the table to itself.
    const need = 2 * (this.size + most + 1);
    if (this.size === 0) this.resize(Math.max(MIN_CAPACITY, 1 << (32 - Math.clz32(need - 1))));
    else while (need > this.capacity) this.resize(this.capacity * 2);
    if (this.size + most > this.best.length) this.growCounters(this.size + most);
    const prefix = this.prefixes(tokens.length);
    // The first reference counts straight into `best`; later ones count apart and keep the maximum.
    const first = this.added++ === 0;
    if (!first && this.seen.length < most) this.seen = new Int32Array(Math.max(most, this.seen.length * 2));
    const { slots, current, best, used, seen, direct } = this;
    const counts = first ? best : current;
    const generation = this.generation;
    const mask = this.capacity - 1;
    let seenCount = 0;
    let size = this.size;
    for (let n = 1; n <= maxOrder; n++) {
      const positions = tokens.length - n + 1;
      for (let i = 0; i < positions; i++) {
        const a = n === 1 ? ROOT : prefix[i];
        const b = tokens[i + n - 1];
        if (n === 1 && b >= 0 && b < DIRECT) {
          let id = direct[2 * b + 1];
          if (direct[2 * b] !== generation) {
            id = size++;
            best[id] = 0;
            current[id] = 0;
            used[id] = 0;
            direct[2 * b] = generation;
            direct[2 * b + 1] = id;
          }
          prefix[i] = id;
          if (counts[id]++ === 0 && !first) seen[seenCount++] = id;
          continue;
        }
        const h = Math.imul(a ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77);
        let j = ((h ^ (h >>> 16)) & mask) * STRIDE;
        let id = -1;
        while (slots[j] === generation) {
          if (slots[j + 1] === a && slots[j + 2] === b) {
            id = slots[j + 3];
            break;
          }
          j = (j + STRIDE) & (mask * STRIDE + STRIDE - 1);
        }
        if (id === -1) {
          id = size++;
          best[id] = 0;
          current[id] = 0;
          used[id] = 0;
          slots[j] = generation;
          slots[j + 1] = a;
          slots[j + 2] = b;
          slots[j + 3] = id;
        }
        prefix[i] = id;
        if (counts[id]++ === 0 && !first) seen[seenCount++] = id;
      }
    }
    this.size = size;
    for (let k = 0; k < seenCount; k++) {
      const id = seen[k];
      if (current[id] > best[id]) best[id] = current[id];
      current[id] = 0;
    }
  }

  /**
   * Clipped matches per order of a hypothesis against the references added since the last reset. Order by order,
   * only the positions whose n-gram is in the table go on to the next order (a longer n-gram at a position whose
   * prefix or suffix is absent cannot match), kept as a list so that the absent ones cost nothing.
   */
  matchHypothesis(tokens: Int32Array, maxOrder: number, out: Float64Array, offset: number): void {
    const len = tokens.length;
    if (this.scratch.length < 2 * len) this.scratch = new Int32Array(Math.max(2 * len, this.scratch.length * 2));
    const live = this.scratch; // [2k]: a position, [2k + 1]: the id of its n-gram of the current order
    const { slots, best, used, direct } = this;
    const generation = this.generation;
    const mask = this.capacity - 1;
    const wrap = this.capacity * STRIDE - 1;
    let count = 0;
    let matched = 0;
    for (let i = 0; i < len; i++) {
      const b = tokens[i];
      let id = -1;
      if (b >= 0 && b < DIRECT) {
        if (direct[2 * b] === generation) id = direct[2 * b + 1];
      } else {
        const h = Math.imul(ROOT ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77);
        let j = ((h ^ (h >>> 16)) & mask) * STRIDE;
        while (slots[j] === generation) {
          if (slots[j + 1] === ROOT && slots[j + 2] === b) {
            id = slots[j + 3];
            break;
          }
          j = (j + STRIDE) & wrap;
        }
      }
      if (id >= 0) {
        live[2 * count] = i;
        live[2 * count + 1] = id;
        count++;
        const u = used[id];
        if (u < best[id]) {
          used[id] = u + 1;
          matched++;
        }
      }
    }
    if (maxOrder >= 1) out[offset] = matched;
    for (let n = 2; n <= maxOrder; n++) {
      matched = 0;
      const previous = count;
      count = 0; // entries are rewritten in place: entry `count` is never ahead of the one being read
      for (let k = 0; k < previous; k++) {
        const i = live[2 * k];
        const e = i + n - 1;
        if (e >= len) break; // positions ascend: the rest run past the end too
        // The table holds every n-gram of each reference, so also the (n-1)-gram suffix of any n-gram it holds: when
        // position i + 1 was not live, the n-gram at i cannot be in the table (the entry after k is i + 1 if live).
        if (k + 1 >= previous || live[2 * k + 2] !== i + 1) continue;
        const a = live[2 * k + 1];
        const b = tokens[e];
        const h = Math.imul(a ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77);
        let j = ((h ^ (h >>> 16)) & mask) * STRIDE;
        let id = -1;
        while (slots[j] === generation) {
          if (slots[j + 1] === a && slots[j + 2] === b) {
            id = slots[j + 3];
            break;
          }
          j = (j + STRIDE) & wrap;
        }
        if (id >= 0) {
          live[2 * count] = i;
          live[2 * count + 1] = id;
          count++;
          const u = used[id];
          if (u < best[id]) {
            used[id] = u + 1;
            matched++;
          }
        }
      }
      out[offset + n - 1] = matched;
    }
  }
}

/**
 * Interns word tokens to integer ids shared by references and hypotheses of one metric instance. Tokens are keyed
 * by their UTF-16 code units in an open-addressing table over one pool of code units, so that a tokenizer's spans
 * (`TokenSpans`) are interned without making a string per token; strings take the same hash, so both meet.
 */
export class Vocabulary {
  /** Per slot: [2s] the hash of its token, [2s + 1] id + 1 (0 when empty); the hash is compared before the units. */
  private slots = new Int32Array(2 << 12);
  /** Per id: where its code units lie in the pool (offsets[id] .. offsets[id + 1]). */
  private offsets = new Int32Array((1 << 10) + 1);
  private pool = new Uint16Array(1 << 14);
  /** Single ASCII characters (most tokens of code are punctuation) skip the table: id + 1 by character. */
  private readonly ascii = new Int32Array(128);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Id of codes[start, end); -1 when absent and not `intern`. */
  idOfSpan(codes: Uint16Array, start: number, end: number, intern = true): number {
    const len = end - start;
    if (len === 1 && codes[start] < 128) return this.asciiId(codes[start], intern);
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ codes[i], 0x01000193);
    h ^= h >>> 15;
    const { slots, offsets, pool } = this;
    const mask = (slots.length >> 1) - 1;
    let s = h & mask;
    for (;;) {
      const v = slots[2 * s + 1];
      if (v === 0) break;
      if (slots[2 * s] === h) {
        const o = offsets[v - 1];
        if (offsets[v] - o === len) {
          let k = 0;
          while (k < len && pool[o + k] === codes[start + k]) k++;
          if (k === len) return v - 1;
        }
      }
      s = (s + 1) & mask;
    }
    if (!intern) return -1;
    const id = this.add(h, len, s);
    this.pool.set(codes.subarray(start, end), this.offsets[id]);
    return id;
  }

  /** Id of a word; a hypothesis word that no reference contains is -1 when not interned (it cannot match). */
  id(word: string, intern: boolean): number {
    const len = word.length;
    if (len === 1 && word.charCodeAt(0) < 128) return this.asciiId(word.charCodeAt(0), intern);
    let h = 0x811c9dc5;
    for (let i = 0; i < len; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
    h ^= h >>> 15;
    const { slots, offsets, pool } = this;
    const mask = (slots.length >> 1) - 1;
    let s = h & mask;
    for (;;) {
      const v = slots[2 * s + 1];
      if (v === 0) break;
      if (slots[2 * s] === h) {
        const o = offsets[v - 1];
        if (offsets[v] - o === len) {
          let k = 0;
          while (k < len && pool[o + k] === word.charCodeAt(k)) k++;
          if (k === len) return v - 1;
        }
      }
      s = (s + 1) & mask;
    }
    if (!intern) return -1;
    const id = this.add(h, len, s);
    const o = this.offsets[id];
    for (let k = 0; k < len; k++) this.pool[o + k] = word.charCodeAt(k);
    return id;
  }

  private asciiId(c: number, intern: boolean): number {
    const v = this.ascii[c];
    if (v !== 0) return v - 1;
    if (!intern) return -1;
    const id = this.add(0, 1, -1);
    this.pool[this.offsets[id]] = c;
    this.ascii[c] = id + 1;
    return id;
  }

  /** Registers a new id of `len` code units in free slot `slot` (-1: none); the caller copies the units to offsets[id]. */
  private add(h: number, len: number, slot: number): number {
    const id = this.count++;
    if (id + 2 > this.offsets.length) {
      const offsets = new Int32Array(this.offsets.length * 2);
      offsets.set(this.offsets);
      this.offsets = offsets;
    }
    const o = this.offsets[id];
    if (o + len > this.pool.length) {
      const pool = new Uint16Array(Math.max(o + len, this.pool.length * 2));
      pool.set(this.pool.subarray(0, o));
      this.pool = pool;
    }
    this.offsets[id + 1] = o + len;
    if (slot >= 0) {
      this.slots[2 * slot] = h;
      this.slots[2 * slot + 1] = id + 1;
      // Keep the table at most half full.
      if (++this.used * 2 > this.slots.length >> 1) this.rehash(this.slots.length);
    }
    return id;
  }

  /** Tokens in the hash table (single ASCII characters are not). */
  private used = 0;

  private rehash(capacity: number): void {
    const old = this.slots;
    const slots = new Int32Array(2 * capacity);
    const mask = capacity - 1;
    for (let t = 1; t < old.length; t += 2) {
      if (old[t] === 0) continue;
      let s = old[t - 1] & mask;
      while (slots[2 * s + 1] !== 0) s = (s + 1) & mask;
      slots[2 * s] = old[t - 1];
      slots[2 * s + 1] = old[t];
    }
    this.slots = slots;
  }

  encode(words: readonly string[], intern: boolean): Int32Array {
    const out = new Int32Array(words.length);
    for (let i = 0; i < words.length; i++) out[i] = this.id(words[i], intern);
    return out;
  }

  /** Interns the tokens of `spans` (see `TokenSpans`). */
  encodeSpans(spans: TokenSpans): Int32Array {
    const { codes, bounds, count } = spans;
    const out = new Int32Array(count);
    const ascii = this.ascii;
    for (let k = 0; k < count; k++) {
      const start = bounds[2 * k];
      const end = bounds[2 * k + 1];
      const v = end - start === 1 && codes[start] < 128 ? ascii[codes[start]] : 0;
      out[k] = v !== 0 ? v - 1 : this.idOfSpan(codes, start, end);
    }
    return out;
  }

  /**
   * A vocabulary whose tables start at other sizes than a new one's (`slots` a power of two, room for `ids` ids and
   * `units` code units): for the warm-up below. The tables are replaced by ones of the same types, so the instance
   * keeps the hidden class of every other vocabulary.
   */
  private static withTables(slots: number, ids: number, units: number): Vocabulary {
    const v = new Vocabulary();
    v.slots = new Int32Array(2 * slots);
    v.offsets = new Int32Array(ids + 1);
    v.pool = new Uint16Array(units);
    return v;
  }

  /**
   * Type feedback for the growth paths (more ids, a longer pool, a rehash) before real text reaches them: a path
   * first taken in optimized code (by the first text that outgrows the first tables) deoptimizes `idOfSpan` or
   * `id`, which are then compiled again. A throwaway vocabulary with tiny tables grows several times on a few dozen
   * tokens, each interned, found again and missed through the methods the tokenizers call (about 0.2 ms at load,
   * besides compiling; growing tables of the usual sizes takes thousands of tokens: 10-30 ms).
   */
  static {
    const v = Vocabulary.withTables(4, 2, 4);
    const codes = new Uint16Array(3);
    for (let i = 0; i < 24; i++) {
      codes[0] = 97 + (i % 12);
      codes[1] = 97 + ((i / 12) | 0);
      codes[2] = i & 1 ? 0x3b1 : 98;
      v.idOfSpan(codes, 0, 3); // interned
      v.idOfSpan(codes, 0, 3); // found
      v.idOfSpan(codes, 0, 2, false); // missed
      v.idOfSpan(codes, 0, 1); // a single ASCII character: interned, then found
      if (i < 12) {
        v.id(String.fromCharCode(33 + i), i < 8);
        const word = String.fromCharCode(codes[2], codes[0]); // one-byte and two-byte strings
        v.id(word, true);
        v.id(word, true);
        v.id(word + 'q', false);
      }
    }
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

/** Where `codePointArrayWithoutWhitespace` collects code points before copying out exactly as many as it found. */
let codePointScratch = new Int32Array(1 << 12);

/**
 * Code points of a string without its Python whitespace: `codePointArray(pySplit(s).join(''))` in one pass. One
 * allocation per text (a copy of the scratch buffer's used part), not a full-length array and then a shorter copy.
 */
export function codePointArrayWithoutWhitespace(s: string): Int32Array {
  const len = s.length;
  if (codePointScratch.length < len) codePointScratch = new Int32Array(Math.max(len, 2 * codePointScratch.length));
  const out = codePointScratch;
  let k = 0;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x20 && c < 0x7f) out[k++] = c; // printable ASCII: most of code
    else if (c >= 0xd800 && c <= 0xdbff) {
      const cp = s.codePointAt(i)!;
      if (cp > 0xffff) i++;
      out[k++] = cp;
    } else if (!isPyWhitespace(c)) out[k++] = c;
  }
  return out.slice(0, k);
}
