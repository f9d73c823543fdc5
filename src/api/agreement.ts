import { InputError } from '../errors.js';
import { numericColumn, type Table } from '../io/table.js';
import { krippendorffAlpha, type AlphaLevel } from '../stats/krippendorff.js';
import { VERSION } from '../version.js';

/** Library entry point behind `codegauge agreement`: Krippendorff's alpha over rater columns of a table. */
export interface AgreementReport {
  kind: 'agreement';
  version: string;
  /** Null when undefined (no unit with two ratings, or no variation at all). */
  krippendorff_alpha: number | null;
  level: AlphaLevel;
  /** Units (rows) with at least two ratings, the ones alpha counts. */
  units: number;
  /** Rows read, ratings counted. */
  rows: number;
  ratings: number;
  raters: string[];
}

/**
 * Each row is a unit, each rater column one rater; an empty cell or null is a missing rating. Nominal ratings may
 * be any strings or numbers; the other levels need numbers (ratio: not negative).
 */
export function agreementOfTable(table: Table, raters: readonly string[], level: AlphaLevel): AgreementReport {
  if (raters.length < 2) throw new InputError('agreement needs at least two --rater columns');
  if (table.rows.length === 0) throw new InputError('no rows', table.path);
  const columns = raters.map((rater) => {
    if (!table.rows.some((r) => Object.hasOwn(r, rater))) throw new InputError(`no column "${rater}"; columns: ${Object.keys(table.rows[0]).join(', ')}`, table.path);
    if (level === 'nominal') {
      return table.rows.map((row, i): number | string | null => {
        const v = row[rater];
        if (v === undefined || v === null || v === '') return null;
        if (typeof v === 'number' || typeof v === 'boolean') return typeof v === 'boolean' ? Number(v) : v;
        if (typeof v === 'string') return v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
        throw new InputError(`column "${rater}": expected a rating, got ${JSON.stringify(v)}`, table.path, table.lines[i]);
      });
    }
    const values = numericColumn(table, rater);
    if (level === 'ratio') {
      const negative = values.findIndex((v) => v !== null && v < 0);
      if (negative >= 0) throw new InputError(`column "${rater}": ratio ratings cannot be negative, got ${values[negative]}`, table.path, table.lines[negative]);
    }
    return values;
  });
  const units = table.rows.map((_, i) => columns.map((c) => c[i]));
  const result = krippendorffAlpha(units, level);
  return {
    kind: 'agreement',
    version: VERSION,
    krippendorff_alpha: Number.isFinite(result.alpha) ? result.alpha : null,
    level,
    units: result.units,
    rows: table.rows.length,
    ratings: units.reduce((s, u) => s + u.filter((v) => v !== null).length, 0),
    raters: [...raters],
  };
}
