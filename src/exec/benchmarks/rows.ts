import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { InputError } from '../../errors.js';

/**
 * The rows of a problems file as published: `.jsonl` (one object a line) or `.json` (an array of objects, as
 * google-research publishes sanitized MBPP), either gzipped. Each row keeps its raw text (JSON lines), so that fields
 * a JavaScript number cannot hold (EvalPlus' inputs: integers past 2^53) reach the Python harness as written; lines
 * with bare `Infinity` or `NaN` (Python's json writes them; MBPP+ has one) are read too.
 */
export interface ProblemRow {
  value: Record<string, unknown>;
  /** The line's own text (JSON lines), or undefined (an array file). */
  raw?: string;
  line: number;
}

const PROBLEM_FILE = /\.(jsonl|json)(\.gz)?$/;

export function isProblemFile(path: string): boolean {
  return PROBLEM_FILE.test(path);
}

function text(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a folder, not a file' : `cannot read (${code ?? (e as Error).message})`, path);
  }
  try {
    return (path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  } catch {
    throw new InputError('not a valid gzip file', path);
  }
}

/** JSON with Python's bare Infinity, -Infinity and NaN (outside strings) read as those numbers. */
export function parsePythonJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch (first) {
    let out = '';
    let changed = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (c === '"') {
        let j = i + 1;
        while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
        out += line.slice(i, j + 1);
        i = j;
        continue;
      }
      const word = /^(-?Infinity|NaN)\b/.exec(line.slice(i, i + 9));
      if (word) {
        out += `"\\u0000${word[1]}"`;
        i += word[1].length - 1;
        changed = true;
        continue;
      }
      out += c;
    }
    if (!changed) throw first;
    return JSON.parse(out, (_key, v) => (v === '\u0000Infinity' ? Infinity : v === '\u0000-Infinity' ? -Infinity : v === '\u0000NaN' ? NaN : v));
  }
}

/** The raw text of a top-level field's value in a JSON object's line, or undefined. */
export function rawField(line: string, key: string): string | undefined {
  const needle = `${JSON.stringify(key)}`;
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (depth === 1 && line.slice(i, j + 1) === needle) {
        let k = j + 1;
        while (/\s/.test(line[k] ?? '')) k++;
        if (line[k] !== ':') {
          i = j;
          continue;
        }
        k++;
        while (/\s/.test(line[k] ?? '')) k++;
        const start = k;
        let d = 0;
        for (; k < line.length; k++) {
          const ch = line[k];
          if (ch === '"') {
            let m = k + 1;
            while (m < line.length && line[m] !== '"') m += line[m] === '\\' ? 2 : 1;
            k = m;
            if (d === 0) return line.slice(start, k + 1);
            continue;
          }
          if (ch === '[' || ch === '{') d++;
          else if (ch === ']' || ch === '}') {
            if (d === 0) return line.slice(start, k).trim();
            d--;
            if (d === 0) return line.slice(start, k + 1);
          } else if (ch === ',' && d === 0) return line.slice(start, k).trim();
        }
        return undefined;
      }
      i = j;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return undefined;
}

export function readProblemRows(path: string): ProblemRow[] {
  if (!isProblemFile(path)) throw new InputError('problems must be .jsonl or .json (an array), optionally .gz', path);
  const body = text(path);
  if (/\.json(\.gz)?$/.test(path)) {
    let value: unknown;
    try {
      value = parsePythonJson(body);
    } catch (e) {
      throw new InputError(`invalid JSON (${(e as Error).message})`, path);
    }
    if (!Array.isArray(value)) throw new InputError('a .json problems file must hold an array of problems', path);
    return value.map((v, i) => {
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new InputError(`item ${i + 1} is not an object`, path);
      return { value: v as Record<string, unknown>, line: i + 1 };
    });
  }
  const rows: ProblemRow[] = [];
  const lines = body.split('\n');
  lines.forEach((raw, i) => {
    if (!raw.trim()) return;
    let value: unknown;
    try {
      value = parsePythonJson(raw.replace(/\r$/, ''));
    } catch (e) {
      throw new InputError(`invalid JSON (${(e as Error).message})`, path, i + 1);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new InputError('expected a JSON object', path, i + 1);
    rows.push({ value: value as Record<string, unknown>, raw: raw.replace(/\r$/, ''), line: i + 1 });
  });
  return rows;
}
