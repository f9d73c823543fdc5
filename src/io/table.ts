import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse } from 'csv-parse/sync';
import { InputError } from './segments.js';

/**
 * Tables for meta-evaluation: `.jsonl` (one JSON object per line) or `.csv` (a header row). Numeric columns may
 * hold numbers, numeric strings or booleans (true = 1); an empty cell or null is a missing value.
 */
export interface Table {
  path: string;
  rows: Record<string, unknown>[];
  /** 1-based source line of each row, for error messages. */
  lines: number[];
}

export function readTable(path: string): Table {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new InputError(err.code === 'ENOENT' ? 'file not found' : `cannot read file (${err.code ?? err.message})`, path);
  }
  const ext = extname(path).toLowerCase();
  if (ext === '.csv') {
    let records: Record<string, string>[];
    try {
      records = parse(text, { columns: true, skip_empty_lines: true, bom: true });
    } catch (e) {
      const err = e as { lines?: number; message: string };
      throw new InputError(`invalid CSV (${err.message})`, path, err.lines);
    }
    return { path, rows: records, lines: records.map((_, i) => i + 2) };
  }
  if (ext !== '.jsonl' && ext !== '.json') throw new InputError('unsupported table format; use .jsonl or .csv', path);
  const rows: Record<string, unknown>[] = [];
  const lines: number[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new InputError(`invalid JSON (${(e as Error).message})`, path, i + 1);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError('expected a JSON object', path, i + 1);
    rows.push(value as Record<string, unknown>);
    lines.push(i + 1);
  });
  return { path, rows, lines };
}

/** A numeric column; `null` for missing cells. Throws with file, line and column on a non-numeric value. */
export function numericColumn(table: Table, column: string): (number | null)[] {
  if (table.rows.length > 0 && !table.rows.some((r) => Object.hasOwn(r, column))) {
    const known = Object.keys(table.rows[0]).join(', ');
    throw new InputError(`no column "${column}"; columns: ${known}`, table.path);
  }
  return table.rows.map((row, i) => {
    const v = row[column];
    if (v === undefined || v === null || v === '') return null;
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (v === 'true' || v === 'True') return 1;
    if (v === 'false' || v === 'False') return 0;
    const n = typeof v === 'number' ? v : Number(v);
    if (typeof v === 'object' || !Number.isFinite(n)) {
      throw new InputError(`column "${column}": expected a number, got ${JSON.stringify(v)}`, table.path, table.lines[i]);
    }
    return n;
  });
}

export function stringColumn(table: Table, column: string): string[] {
  if (table.rows.length > 0 && !table.rows.some((r) => Object.hasOwn(r, column))) {
    throw new InputError(`no column "${column}"; columns: ${Object.keys(table.rows[0]).join(', ')}`, table.path);
  }
  return table.rows.map((row, i) => {
    const v = row[column];
    if (v === undefined || v === null) throw new InputError(`column "${column}" is empty`, table.path, table.lines[i]);
    return String(v);
  });
}
