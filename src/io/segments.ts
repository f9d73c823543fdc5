import { InputError } from '../errors.js';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { extname } from 'node:path';

/**
 * Segment files: `.txt` holds one segment per line (sacrebleu's convention; CRLF accepted); `.jsonl` holds one
 * JSON string per line, so code keeps its newlines. A reference `.jsonl` line may also be an array of strings:
 * several references for that segment (their number may vary, as in CoNaLa).
 */
export { InputError };

export interface SegmentFile {
  path: string;
  /** One entry per segment; each entry lists that segment's strings (one for hypotheses). */
  segments: string[][];
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });
const CHUNK_BYTES = 1 << 20;

/**
 * Reads a segment file line by line in bounded memory (a 1 MiB buffer plus the current line), with the checks
 * every reader needs: UTF-8 (the first bad line is named), a leading BOM dropped, lines split as Python's
 * readlines() + rstrip('\n') plus one '\r' before '\n', and for `.jsonl` one JSON string (or, for references,
 * a non-empty array of strings) per line.
 */
export class SegmentReader {
  private fd: number;
  private buffer = Buffer.alloc(CHUNK_BYTES);
  private start = 0;
  private end = 0;
  private eof = false;
  private readonly jsonl: boolean;
  /** Lines read so far (the number of the last line returned). */
  line = 0;

  constructor(
    readonly path: string,
    private readonly options: { allowMultiple?: boolean } = {},
  ) {
    try {
      this.fd = openSync(path, 'r');
      if (fstatSync(this.fd).isDirectory()) throw Object.assign(new Error('is a folder'), { code: 'EISDIR' });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new InputError(err.code === 'ENOENT' ? 'file not found' : err.code === 'EISDIR' ? 'is a folder, not a file' : `cannot read file (${err.code ?? err.message})`, path);
    }
    this.jsonl = extname(path).toLowerCase() === '.jsonl';
  }

  private fill(): boolean {
    if (this.eof) return false;
    if (this.start > 0) {
      this.buffer.copy(this.buffer, 0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    if (this.end === this.buffer.length) this.buffer = Buffer.concat([this.buffer, Buffer.alloc(this.buffer.length)]);
    const n = readSync(this.fd, this.buffer, this.end, this.buffer.length - this.end, null);
    if (n === 0) {
      this.eof = true;
      return false;
    }
    if (this.line === 0 && this.end === 0 && n >= 3 && this.buffer[0] === 0xef && this.buffer[1] === 0xbb && this.buffer[2] === 0xbf) this.start = 3;
    this.end += n;
    return true;
  }

  /** The next line's raw text, or null at the end of the file. */
  private nextLine(): string | null {
    for (;;) {
      const nl = this.buffer.indexOf(10, this.start);
      if (nl >= 0 && nl < this.end) {
        const text = this.decode(this.start, nl);
        this.start = nl + 1;
        return text;
      }
      if (!this.fill()) {
        if (this.start >= this.end) return null;
        const text = this.decode(this.start, this.end);
        this.start = this.end;
        return text;
      }
    }
  }

  private decode(from: number, to: number): string {
    this.line++;
    if (to > from && this.buffer[to - 1] === 13) to--;
    try {
      return fatalUtf8.decode(this.buffer.subarray(from, to));
    } catch {
      throw new InputError('invalid UTF-8 (files must be UTF-8 encoded)', this.path, this.line);
    }
  }

  /** The next segment (its strings: one for a hypothesis, one or more for references), or null at the end. */
  next(): string[] | null {
    const row = this.nextLine();
    if (row === null) return null;
    if (!this.jsonl) return [row];
    if (row.trim() === '') throw new InputError('empty line; every line must be a JSON string (use "" for an empty segment)', this.path, this.line);
    let value: unknown;
    try {
      value = JSON.parse(row);
    } catch (e) {
      throw new InputError(`invalid JSON (${(e as Error).message})`, this.path, this.line);
    }
    if (typeof value === 'string') return [value];
    if (this.options.allowMultiple && Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) return value as string[];
    const expected = this.options.allowMultiple ? 'a JSON string or a non-empty array of strings' : 'a JSON string';
    throw new InputError(`expected ${expected}, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`, this.path, this.line);
  }

  /** Passes over the next line without decoding it (another worker owns it); false at the end of the file. */
  skip(): boolean {
    for (;;) {
      const nl = this.buffer.indexOf(10, this.start);
      if (nl >= 0 && nl < this.end) {
        this.start = nl + 1;
        this.line++;
        return true;
      }
      if (!this.fill()) {
        if (this.start >= this.end) return false;
        this.start = this.end;
        this.line++;
        return true;
      }
    }
  }

  /** Counts the remaining lines (to report how long a file is when another one ended first). */
  countRemaining(): number {
    while (this.nextLine() !== null);
    return this.line;
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

export function readSegmentFile(path: string, options: { allowMultiple?: boolean } = {}): SegmentFile {
  const reader = new SegmentReader(path, options);
  try {
    const segments: string[][] = [];
    for (let s = reader.next(); s !== null; s = reader.next()) segments.push(s);
    return { path, segments };
  } finally {
    reader.close();
  }
}

/**
 * Reads reference files and one or more hypothesis files in step, one segment at a time, so that memory stays
 * flat however long the files are. Yields the references of a segment (all reference files joined), each system's
 * hypothesis and the segment's index; files of different lengths are an error naming both counts. With `owns`,
 * segments it rejects are passed over undecoded (each worker of a parallel run reads only its own).
 */
export function* parallelSegments(
  refPaths: readonly string[],
  hypPaths: readonly string[],
  owns?: (index: number) => boolean,
): Generator<{ refs: string[]; hyps: string[]; index: number }> {
  if (refPaths.length === 0) throw new InputError('at least one --refs file is required');
  const refs = refPaths.map((p) => new SegmentReader(p, { allowMultiple: true }));
  const readers: SegmentReader[] = [...refs];
  try {
    for (const p of hypPaths) readers.push(new SegmentReader(p));
    for (let index = 0; ; index++) {
      const take = !owns || owns(index);
      const rows = readers.map((r) => (take ? r.next() : r.skip() ? [] : null));
      const ended = rows.map((r) => r === null);
      if (ended.every(Boolean)) {
        if (readers[0].line === 0) throw new InputError('no segments (the reference file is empty)', refPaths[0]);
        return;
      }
      if (ended.some(Boolean)) {
        const counts = readers.map((r, i) => (ended[i] ? r.line : r.countRemaining()));
        const odd = counts.findIndex((c) => c !== counts[0]);
        const what = odd < refs.length ? 'reference files differ in length' : 'hypothesis and reference files differ in length';
        throw new InputError(`${what}: ${readers[odd].path} has ${counts[odd]} segments, ${readers[0].path} has ${counts[0]}`);
      }
      if (take) yield { refs: rows.slice(0, refs.length).flatMap((r) => r!), hyps: rows.slice(refs.length).map((r) => r![0]), index };
    }
  } finally {
    for (const r of readers) r.close();
  }
}

/** Reads hypothesis and reference files and checks they line up. Returns references per segment. */
export function readReferences(paths: readonly string[]): { references: string[][]; files: SegmentFile[] } {
  if (paths.length === 0) throw new InputError('at least one --refs file is required');
  const files = paths.map((p) => readSegmentFile(p, { allowMultiple: true }));
  const n = files[0].segments.length;
  for (const f of files.slice(1)) {
    if (f.segments.length !== n) {
      throw new InputError(`reference files differ in length: ${files[0].path} has ${n} segments, ${f.path} has ${f.segments.length}`);
    }
  }
  if (n === 0) throw new InputError('no segments (the reference file is empty)', files[0].path);
  const references = Array.from({ length: n }, (_, i) => files.flatMap((f) => f.segments[i]));
  return { references, files };
}

export function readHypotheses(path: string, refsFile: SegmentFile): string[] {
  const file = readSegmentFile(path);
  if (file.segments.length !== refsFile.segments.length) {
    throw new InputError(
      `hypothesis and reference files differ in length: ${path} has ${file.segments.length} segments, ${refsFile.path} has ${refsFile.segments.length}`,
    );
  }
  return file.segments.map((s) => s[0]);
}
