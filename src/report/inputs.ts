import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InputError } from '../io/segments.js';
import { readTable } from '../io/table.js';
import type { ComparisonReport } from '../api/compare.js';
import type { MetaReport } from '../api/meta.js';
import type { ScoreReport } from '../api/score.js';
import type { EvalReport, EvalTableRow } from '../api/eval.js';
import type { ExecRow, ExecSummary } from '../exec/summary.js';
import { execSummaryOfRows } from '../exec/report-data.js';

/**
 * What `codegauge report` reads, recognised by content: score and judge reports, compare reports, meta reports
 * (optionally with the points behind the correlations), SBC rows (results.jsonl) and judge `--explain` folders.
 */
export type ReportInput =
  | { kind: 'score'; path: string; data: ScoreReport }
  | { kind: 'compare'; path: string; data: ComparisonReport }
  | { kind: 'meta'; path: string; data: MetaReport & { points?: Record<string, [number, number][]> } }
  | { kind: 'sbc'; path: string; rows: Record<string, any>[] }
  | { kind: 'explain'; path: string; systems: { name: string; samples: any[] }[] }
  /**
   * exec / eval: DIR/summary.json (or eval.json), with DIR/results.jsonl's rows when they are there; an eval folder
   * adds its metric and judge columns (eval.json's means, DIR/table.jsonl's per-sample values).
   */
  | { kind: 'exec'; path: string; data: ExecSummary; rows?: ExecRow[]; columns?: EvalColumns };

/** The metric and judge columns of an eval folder. */
export interface EvalColumns {
  scores: EvalReport['scores'];
  /** DIR/table.jsonl, when it is there: one row per sample with `passed` and the columns. */
  table: EvalTableRow[] | null;
}

/** eval.json's columns next to a results.jsonl or summary.json (or given itself), and table.jsonl's rows. */
function evalColumns(evalPath: string, report?: EvalReport): EvalColumns | undefined {
  let data = report;
  if (!data) {
    if (!existsSync(evalPath)) return undefined;
    try {
      data = JSON.parse(readFileSync(evalPath, 'utf8'));
    } catch {
      return undefined;
    }
  }
  if (data?.kind !== 'eval' || !Array.isArray(data.scores) || data.scores.length === 0) return undefined;
  const tablePath = join(evalPath, '..', 'table.jsonl');
  const table = existsSync(tablePath) ? (readTable(tablePath).rows as unknown as EvalTableRow[]) : null;
  return { scores: data.scores, table };
}

/** An exec summary.json next to results.jsonl, when there is one. */
function siblingExecSummary(resultsPath: string): ExecSummary | undefined {
  const path = join(resultsPath, '..', 'summary.json');
  if (!existsSync(path)) return undefined;
  try {
    const data = JSON.parse(readFileSync(path, 'utf8'));
    return data?.kind === 'exec' && Array.isArray(data.systems) ? data : undefined;
  } catch {
    return undefined;
  }
}

function readExplainDir(path: string): ReportInput {
  const systems = readdirSync(path)
    .filter((d) => statSync(join(path, d)).isDirectory())
    .map((d) => ({
      name: d,
      samples: readdirSync(join(path, d))
        .filter((f) => /^\d+\.json$/.test(f))
        .sort((a, b) => parseInt(a) - parseInt(b))
        .map((f) => JSON.parse(readFileSync(join(path, d, f), 'utf8'))),
    }));
  if (systems.every((s) => s.samples.length === 0)) throw new InputError('no judge explanations (SYSTEM/N.json) in this folder', path);
  return { kind: 'explain', path, systems };
}

/** Result files a `codegauge run` folder holds, in report order. */
const RUN_FOLDER_FILES = ['score.json', 'compare.json', 'meta.json', join('exec', 'summary.json')];

/**
 * Every report input a path holds: a file, a results folder, a judge --explain folder, or a `codegauge run` output
 * folder (its score, compare, meta, judge and execution results together).
 */
export function readReportInputs(path: string): ReportInput[] {
  // A results folder (exec, eval, sbc: results.jsonl) or a judge --explain folder is one input; a run folder is several.
  if (existsSync(path) && statSync(path).isDirectory() && !existsSync(join(path, 'results.jsonl'))) {
    const files = [...RUN_FOLDER_FILES, ...readdirSync(path).filter((f) => /^judge-.*\.json$/.test(f)).sort()].map((f) => join(path, f)).filter((f) => existsSync(f));
    if (files.length > 0) return files.map(readReportInput);
  }
  return [readReportInput(path)];
}

export function readReportInput(path: string): ReportInput {
  if (!existsSync(path)) throw new InputError('file not found', path);
  if (statSync(path).isDirectory()) {
    if (existsSync(join(path, 'results.jsonl'))) return readReportInput(join(path, 'results.jsonl'));
    return readExplainDir(path);
  }
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.jsonl')) {
    const { rows } = readTable(path);
    if (rows.length && 'input_requirement' in rows[0]) return { kind: 'sbc', path, rows };
    if (rows.length && 'status' in rows[0] && 'sha' in rows[0] && 'system' in rows[0]) {
      const execRows = rows as unknown as ExecRow[];
      const columns = evalColumns(join(path, '..', 'eval.json'));
      return { kind: 'exec', path, data: siblingExecSummary(path) ?? execSummaryOfRows(execRows), rows: execRows, ...(columns ? { columns } : {}) };
    }
    throw new InputError('unrecognised JSONL: expected SBC rows (results.jsonl of sbc run or sbc score)', path);
  }
  let data: any;
  try {
    data = JSON.parse(text);
  } catch (e) {
    if (!path.endsWith('.json')) throw new InputError(`unrecognised input: expected the JSON of score, compare, meta or judge, SBC results.jsonl, or a judge --explain folder`, path);
    throw new InputError(`invalid JSON (${(e as Error).message})`, path);
  }
  if (data && Array.isArray(data.metrics) && typeof data.truth === 'string') return { kind: 'meta', path, data };
  if (data && data.kind === 'exec' && Array.isArray(data.systems)) return { kind: 'exec', path, data };
  if (data && data.kind === 'eval' && data.exec && Array.isArray(data.exec.systems)) {
    const columns = evalColumns(path, data);
    return { kind: 'exec', path, data: data.exec, ...(columns ? { columns } : {}) };
  }
  if (data && Array.isArray(data.systems) && typeof data.test === 'string') return { kind: 'compare', path, data };
  if (data && Array.isArray(data.systems)) return { kind: 'score', path, data };
  throw new InputError(`unrecognised report in ${basename(path)}: expected the JSON of score, compare, meta or judge, SBC results.jsonl, or a judge --explain folder`, path);
}
