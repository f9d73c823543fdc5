import { InputError } from '../errors.js';
import { isUtf8 } from 'node:buffer';
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

/** Where a reader starts (a line start other than the file's beginning) and how far it may read. */
export interface ReaderWindow {
  /** Byte offset of the first line to read (0: the file's beginning, where a BOM is dropped). */
  offset?: number;
  /** The number of lines before `offset` (so that errors name the line in the whole file). */
  line?: number;
  /** Byte offset past which nothing is read (a line end: the start of the next reader's window). */
  end?: number;
}

/**
 * Reads a segment file line by line in bounded memory (a 1 MiB buffer plus the current line), with the checks
 * every reader needs: UTF-8 (the first bad line is named), a leading BOM dropped, lines split as Python's
 * readlines() + rstrip('\n') plus one '\r' before '\n', and for `.jsonl` one JSON string (or, for references,
 * a non-empty array of strings) per line. A window reads only part of the file (a worker thread's share).
 */
export class SegmentReader {
  private fd: number;
  private buffer: Buffer;
  private start = 0;
  private end = 0;
  private eof = false;
  /** The buffer's bytes before this offset are whole lines of valid UTF-8; those before `unchecked`, lines to
   * check one by one (one of them is not UTF-8). */
  private checked = 0;
  private unchecked = 0;
  /** File offset of the next read (the byte after the buffer's content). */
  private filePos: number;
  private limit: number;
  private readonly jsonl: boolean;
  /** Lines read so far (the number of the last line returned), counted from the file's beginning. */
  line: number;

  constructor(
    readonly path: string,
    private readonly options: { allowMultiple?: boolean } & ReaderWindow = {},
  ) {
    try {
      this.fd = openSync(path, 'r');
      if (fstatSync(this.fd).isDirectory()) throw Object.assign(new Error('is a folder'), { code: 'EISDIR' });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new InputError(err.code === 'ENOENT' ? 'file not found' : err.code === 'EISDIR' ? 'is a folder, not a file' : `cannot read file (${err.code ?? err.message})`, path);
    }
    this.jsonl = extname(path).toLowerCase() === '.jsonl';
    this.filePos = options.offset ?? 0;
    this.line = options.line ?? 0;
    this.limit = options.end ?? Infinity;
    // A window smaller than the usual buffer needs no more (a longer line grows it).
    this.buffer = Buffer.allocUnsafe(Math.max(1 << 12, Math.min(CHUNK_BYTES, this.limit - this.filePos)));
  }

  /** The file offset where the next line starts (after the last line returned). */
  get position(): number {
    return this.filePos - (this.end - this.start);
  }

  private fill(): boolean {
    if (this.eof) return false;
    if (this.start > 0) {
      this.buffer.copy(this.buffer, 0, this.start, this.end);
      this.end -= this.start;
      this.checked = Math.max(0, this.checked - this.start);
      this.unchecked = Math.max(0, this.unchecked - this.start);
      this.start = 0;
    }
    if (this.end === this.buffer.length) this.buffer = Buffer.concat([this.buffer, Buffer.allocUnsafe(this.buffer.length)]);
    const atStart = this.filePos === 0;
    const n = this.filePos >= this.limit ? 0 : readSync(this.fd, this.buffer, this.end, Math.min(this.buffer.length - this.end, this.limit - this.filePos), this.filePos);
    if (n === 0) {
      this.eof = true;
      return false;
    }
    this.filePos += n;
    if (atStart && this.end === 0 && n >= 3 && this.buffer[0] === 0xef && this.buffer[1] === 0xbb && this.buffer[2] === 0xbf) this.start = 3;
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
    // UTF-8 is checked for all the whole lines in the buffer at once (a newline is never inside a character), and
    // the lines are then sliced without a check of their own: less work and garbage than a decoder per line.
    if (to > this.checked && to > this.unchecked) {
      const lastNewline = this.buffer.lastIndexOf(10, this.end - 1);
      const upTo = Math.max(to, lastNewline);
      if (isUtf8(this.buffer.subarray(from, upTo))) this.checked = upTo;
      else this.unchecked = upTo; // a bad line ahead: line by line, to name it
    }
    if (to > this.checked) {
      try {
        return fatalUtf8.decode(this.buffer.subarray(from, to));
      } catch {
        throw new InputError('invalid UTF-8 (files must be UTF-8 encoded)', this.path, this.line);
      }
    }
    // As the decoder above, drop a byte order mark at the start of the line.
    if (to - from >= 3 && this.buffer[from] === 0xef && this.buffer[from + 1] === 0xbb && this.buffer[from + 2] === 0xbf) from += 3;
    return this.buffer.toString('utf8', from, to);
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
    this.limit = Infinity; // to the end of the file, past a window's end
    this.eof = false;
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

/** A run of whole lines of every file, from line `line` (a worker thread's share of the segments). */
export interface SegmentWindow {
  /** The number of the window's first line (0-based: the lines before it). */
  line: number;
  /** Byte offset of that line in each file: the reference files, then the hypothesis files. */
  offsets: readonly number[];
  /** Byte offset where each file's window ends (the next window's first line); omitted: the end of the files,
   * whose lengths are then checked as for a whole run. */
  ends?: readonly number[];
}

/**
 * Reads reference files and one or more hypothesis files in step, one segment at a time, so that memory stays
 * flat however long the files are. Yields the references of a segment (all reference files joined), each system's
 * hypothesis and the segment's index; files of different lengths are an error naming both counts. With `window`,
 * only those lines are read (their errors name lines of the whole files). `atLineStart` is asked before each
 * segment, with the byte offset of its line in the first reference file, whether to go on.
 */
export function* parallelSegments(
  refPaths: readonly string[],
  hypPaths: readonly string[],
  options: { window?: SegmentWindow; atLineStart?: (offset: number) => boolean } = {},
): Generator<{ refs: string[]; hyps: string[]; index: number }> {
  if (refPaths.length === 0) throw new InputError('at least one --refs file is required');
  const { window, atLineStart } = options;
  const nrefs = refPaths.length;
  const readers: SegmentReader[] = [];
  const open = (path: string, i: number, allowMultiple: boolean) =>
    new SegmentReader(path, window ? { allowMultiple, offset: window.offsets[i], line: window.line, end: window.ends?.[i] } : { allowMultiple });
  try {
    refPaths.forEach((p, i) => readers.push(open(p, i, true)));
    hypPaths.forEach((p, i) => readers.push(open(p, nrefs + i, false)));
    const rows: (string[] | null)[] = new Array(readers.length);
    for (let index = window?.line ?? 0; ; index++) {
      if (atLineStart && !atLineStart(readers[0].position)) return;
      let ended = 0;
      for (let i = 0; i < readers.length; i++) if ((rows[i] = readers[i].next()) === null) ended++;
      if (ended === readers.length) {
        if (readers[0].line === 0) throw new InputError('no segments (the reference file is empty)', refPaths[0]);
        return;
      }
      if (ended > 0) {
        const counts = readers.map((r, i) => (rows[i] === null ? r.line : r.countRemaining()));
        const odd = counts.findIndex((c) => c !== counts[0]);
        const what = odd < nrefs ? 'reference files differ in length' : 'hypothesis and reference files differ in length';
        throw new InputError(`${what}: ${readers[odd].path} has ${counts[odd]} segments, ${readers[0].path} has ${counts[0]}`);
      }
      const refs = nrefs === 1 ? rows[0]! : rows.slice(0, nrefs).flatMap((r) => r!);
      const hyps = new Array<string>(readers.length - nrefs);
      for (let i = nrefs; i < readers.length; i++) hyps[i - nrefs] = rows[i]![0];
      yield { refs, hyps, index };
    }
  } finally {
    for (const r of readers) r.close();
  }
}

const SCAN_BYTES = 4 << 20;

/**
 * Where windows of whole lines start, for worker threads: `starts` are byte offsets in the first file (ascending);
 * each window begins at the first line of that file that starts at or after its offset (or at its end). Returns for
 * each window its first line and that line's byte offset in every file (`paths`: the first file, then the others);
 * the offset is the file's end where the file has exactly that many lines, and null where it has fewer (the window
 * that holds that file's end reports the difference in length). A scan for newlines, nothing decoded.
 */
export function segmentWindows(paths: readonly string[], starts: readonly number[]): { line: number; offsets: (number | null)[] }[] {
  const buffer = Buffer.allocUnsafe(SCAN_BYTES);
  const lines: number[] = [];
  const offsets: (number | null)[][] = starts.map(() => []);
  paths.forEach((path, f) => {
    const fd = openSync(path, 'r');
    try {
      const size = fstatSync(fd).size;
      // The first file: the first line that starts at or after each start. The others: where that line starts.
      const due = (line: number, lineStart: number) => (f === 0 ? lineStart >= starts[w] : line >= lines[w]);
      const found = (line: number, offset: number | null) => {
        if (f === 0) lines.push(line);
        offsets[w++].push(offset);
      };
      let w = 0;
      let line = 0; // newlines before `lineStart`
      let lineStart = 0;
      for (let filePos = 0; w < starts.length && filePos < size; ) {
        while (w < starts.length && due(line, lineStart)) found(line, lineStart);
        const n = readSync(fd, buffer, 0, Math.min(SCAN_BYTES, size - filePos), filePos);
        if (n === 0) break;
        for (let nl = buffer.indexOf(10); nl >= 0 && nl < n && w < starts.length; nl = buffer.indexOf(10, nl + 1)) {
          line++;
          lineStart = filePos + nl + 1;
          while (w < starts.length && due(line, lineStart)) found(line, lineStart);
        }
        filePos += n;
      }
      // The end of the file: a last line without a newline counts (a file that is only a BOM has no line).
      const total = line + (size > lineStart && !(lineStart === 0 && size === 3 && isBom(fd)) ? 1 : 0);
      while (w < starts.length) found(total, f === 0 || lines[w] === total ? size : null);
    } finally {
      closeSync(fd);
    }
  });
  return starts.map((_, w) => ({ line: lines[w], offsets: offsets[w] }));
}

function isBom(fd: number): boolean {
  const b = Buffer.alloc(3);
  readSync(fd, b, 0, 3, 0);
  return b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
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
