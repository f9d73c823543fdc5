import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { InputError } from '../errors.js';

/**
 * Tables for meta-evaluation: `.jsonl` (one JSON object per line) or `.csv` (a header row), optionally gzipped. Numeric columns may
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
    const bytes = readFileSync(path);
    text = (path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new InputError(err.code === 'ENOENT' ? 'file not found' : `cannot read file (${err.code ?? err.message})`, path);
  }
  const ext = extname(path.replace(/\.gz$/, '')).toLowerCase();
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
  if (ext !== '.jsonl' && ext !== '.json') throw new InputError('unsupported table format; use .jsonl, .csv or a score/judge report (.json)', path);
  if (ext === '.json' && text.trimStart().startsWith('{') && text.includes('"systems"')) return reportTable(path, text);
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

/**
 * A `score --segments` or `judge` JSON report as a table: one row per system and segment with the columns
 * `system`, `segment` (1-based) and one per metric (its per-segment values; null where a judge failed).
 */
function reportTable(path: string, text: string): Table {
  let report: { systems?: { name: string; scores: { metric: string; segments?: (number | null)[] }[] }[] };
  try {
    report = JSON.parse(text);
  } catch (e) {
    throw new InputError(`invalid JSON (${(e as Error).message})`, path);
  }
  if (!Array.isArray(report.systems)) throw new InputError('expected a report with "systems"', path);
  const rows: Record<string, unknown>[] = [];
  for (const system of report.systems) {
    const withSegments = system.scores.filter((s) => Array.isArray(s.segments));
    if (withSegments.length === 0) throw new InputError(`system "${system.name}" has no per-segment values (run score with --segments)`, path);
    withSegments[0].segments!.forEach((_, i) => {
      const row: Record<string, unknown> = { system: system.name, segment: i + 1 };
      for (const s of withSegments) row[s.metric] = s.segments![i];
      rows.push(row);
    });
  }
  return { path, rows, lines: rows.map(() => 1) };
}

/**
 * Adds the columns of `extra` to `table`: rows are matched on the columns both tables have (such as system and
 * segment), or by position when they share none.
 */
export function joinTables(table: Table, extra: Table): Table {
  const shared = Object.keys(table.rows[0] ?? {}).filter((c) => extra.rows.length > 0 && c in extra.rows[0]);
  if (shared.length === 0) {
    if (extra.rows.length !== table.rows.length) {
      throw new InputError(`${extra.rows.length} rows but ${table.path} has ${table.rows.length}, and no shared column to match them on`, extra.path);
    }
    return { ...table, rows: table.rows.map((r, i) => ({ ...extra.rows[i], ...r })) };
  }
  const key = (r: Record<string, unknown>) => JSON.stringify(shared.map((c) => String(r[c])));
  const byKey = new Map(extra.rows.map((r, i) => [key(r), i]));
  const rows = table.rows.map((r, i) => {
    const j = byKey.get(key(r));
    if (j === undefined) throw new InputError(`no row matches ${shared.map((c) => `${c}=${String(r[c])}`).join(', ')} (row ${i + 1} of ${table.path})`, extra.path);
    return { ...extra.rows[j], ...r };
  });
  return { ...table, rows };
}
