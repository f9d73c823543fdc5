import { VERSION } from '../version.js';
import { bootstrapOverProblems, passHatK } from './pass-at-k.js';
import { STATUSES } from './runners/kit.js';
import { summariseSystem, type ExecRow, type ExecSummary } from './summary.js';

/** What the report's execution section shows, computed from an exec summary (and its rows). */

/** A summary from results.jsonl rows alone (no summary.json beside them): pass@k for k in 1, 10, 100 where n allows. */
export function execSummaryOfRows(rows: ExecRow[]): ExecSummary {
  const systems = [...new Set(rows.map((r) => r.system))];
  return {
    kind: 'exec',
    version: VERSION,
    systems: systems.map((name) => {
      const mine = rows.filter((r) => r.system === name);
      const counts = new Map<string, number>();
      for (const r of mine) counts.set(r.problem_id ?? r.task_id, (counts.get(r.problem_id ?? r.task_id) ?? 0) + 1);
      const least = Math.min(...counts.values());
      const ks = [1, 10, 100].filter((k) => k <= least);
      return summariseSystem(name, '(results.jsonl)', mine, mine.map((r) => ({ problem: { taskId: r.problem_id ?? r.task_id } })), ks.length ? ks : [1], 'unknown (read from results.jsonl)');
    }),
  };
}

export interface ExecSectionData {
  ks: string[];
  systems: {
    name: string;
    n: number;
    problems: number;
    passAt: Record<string, { value: number | null; ci: [number, number] | null }>;
    passHat: Record<string, number | null>;
    statuses: Record<string, number>;
    signature: string;
    notes: string[];
  }[];
  statuses: string[];
  /** Problems in their order of first appearance, and each system's pass rate c/n on each (null: not run). */
  problems: string[];
  rates: (number | null)[][];
  counts: ({ n: number; c: number } | null)[][];
}

export function execSectionData(summary: ExecSummary): ExecSectionData {
  const ks = [...new Set(summary.systems.flatMap((s) => Object.keys(s.pass_at)))].sort((a, b) => Number(a) - Number(b));
  const problems = [...new Set(summary.systems.flatMap((s) => Object.keys(s.per_problem)))];
  return {
    ks,
    statuses: STATUSES,
    systems: summary.systems.map((s) => {
      const per = Object.values(s.per_problem);
      return {
        name: s.name,
        n: s.n,
        problems: s.problems,
        passAt: Object.fromEntries(ks.map((k) => [k, { value: s.pass_at[k] ?? null, ci: s.pass_at[k] === null || s.pass_at[k] === undefined ? null : bootstrapOverProblems(per, Number(k)) }])),
        passHat: Object.fromEntries(ks.map((k) => [k, s.pass_hat?.[k] ?? (per.length && per.every((p) => p.n >= Number(k)) ? per.reduce((a, p) => a + passHatK(p.n, p.c, Number(k))!, 0) / per.length : null)])),
        statuses: s.statuses,
        signature: s.signature,
        notes: s.notes ?? [],
      };
    }),
    problems,
    rates: summary.systems.map((s) => problems.map((p) => (s.per_problem[p] && s.per_problem[p].n > 0 ? s.per_problem[p].c / s.per_problem[p].n : null))),
    counts: summary.systems.map((s) => problems.map((p) => s.per_problem[p] ?? null)),
  };
}
