import { readFileSync } from 'node:fs';
import { extname } from 'node:path';

/**
 * Segment files: `.txt` holds one segment per line (sacrebleu's convention; CRLF accepted); `.jsonl` holds one
 * JSON string per line, so code keeps its newlines. A reference `.jsonl` line may also be an array of strings:
 * several references for that segment (their number may vary, as in CoNaLa).
 */
export class InputError extends Error {
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
  ) {
    super(file ? `${file}${line ? `:${line}` : ''}: ${message}` : message);
  }
}

export interface SegmentFile {
  path: string;
  /** One entry per segment; each entry lists that segment's strings (one for hypotheses). */
  segments: string[][];
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

function decode(path: string, bytes: Buffer): string {
  try {
    return fatalUtf8.decode(bytes);
  } catch {
    // Find the first offending line so the user can fix it.
    let line = 1;
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i === bytes.length || bytes[i] === 10) {
        try {
          fatalUtf8.decode(bytes.subarray(start, i));
        } catch {
          throw new InputError('invalid UTF-8 (files must be UTF-8 encoded)', path, line);
        }
        line++;
        start = i + 1;
      }
    }
    throw new InputError('invalid UTF-8 (files must be UTF-8 encoded)', path);
  }
}

/** Splits into lines the way Python's readlines() + rstrip('\n') does, also dropping one '\r' before '\n'. */
function lines(text: string): string[] {
  if (text.length === 0) return [];
  const out = text.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

export function readSegmentFile(path: string, options: { allowMultiple?: boolean } = {}): SegmentFile {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new InputError(err.code === 'ENOENT' ? 'file not found' : `cannot read file (${err.code ?? err.message})`, path);
  }
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3); // UTF-8 BOM
  const text = decode(path, bytes);
  const rows = lines(text);
  const ext = extname(path).toLowerCase();
  if (ext !== '.jsonl') return { path, segments: rows.map((r) => [r]) };

  const segments = rows.map((row, i): string[] => {
    if (row.trim() === '') {
      throw new InputError('empty line; every line must be a JSON string (use "" for an empty segment)', path, i + 1);
    }
    let value: unknown;
    try {
      value = JSON.parse(row);
    } catch (e) {
      throw new InputError(`invalid JSON (${(e as Error).message})`, path, i + 1);
    }
    if (typeof value === 'string') return [value];
    if (options.allowMultiple && Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) {
      return value as string[];
    }
    const expected = options.allowMultiple ? 'a JSON string or a non-empty array of strings' : 'a JSON string';
    throw new InputError(`expected ${expected}, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`, path, i + 1);
  });
  return { path, segments };
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
