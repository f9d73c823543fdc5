import { meanPassAtK, meanPassHatK } from './pass-at-k.js';
import { STATUSES, type ExecStatus } from './runners/kit.js';
import type { ExecAttempt, Isolation } from './sample.js';

/** What `exec` writes: one row per sample (results.jsonl) and per system pass@k, statuses and isolation (summary.json). */
export interface ExecRow {
  system: string;
  index: number;
  task_id: string;
  /** The problem's own id, where the sample named it otherwise (`0`, `HumanEval_0_has_close_elements`). */
  problem_id?: string;
  status: ExecStatus;
  passed: boolean;
  duration_ms: number;
  exit_code: number | null;
  stderr: string;
  note?: string;
  attempts: ExecAttempt[];
  /** `boundary`: the tests ran in a process of their own; `in-process`: in the candidate's. */
  isolation?: Isolation;
  /** Why a Python or JavaScript sample ran in one process (the tests needed what the boundary cannot carry). */
  fallback?: string;
  /** sha256 prefix of the program run (code + tests), so a changed sample is never resumed from an old verdict. */
  sha: string;
}

export interface ExecSystemSummary {
  name: string;
  file: string;
  pass_at: Record<string, number | null>;
  /** pass^k: all of k samples pass (C(c,k)/C(n,k) per problem, averaged), beside pass@k. */
  pass_hat?: Record<string, number | null>;
  notes?: string[];
  n: number;
  problems: number;
  statuses: Record<ExecStatus, number>;
  /** How many samples ran with the tests in a process of their own, and how many in the candidate's. */
  isolation?: { boundary: number; in_process: number; fallbacks: number };
  per_problem: Record<string, { n: number; c: number }>;
  signature: string;
}

export interface ExecSummary {
  kind: 'exec';
  version: string;
  /** `i/N` when this folder holds one shard of a run (`merge` joins them). */
  shard?: string;
  /** Quarantined tasks left out of pass@k (`--exclude-broken`), with the reason each cannot be passed. */
  excluded?: { task_id: string; reason: string }[];
  systems: ExecSystemSummary[];
}

export function summariseSystem(name: string, file: string, rows: ExecRow[], tasks: { problem: { taskId: string } }[], ks: number[], signature: string): ExecSystemSummary {
  const statuses = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<ExecStatus, number>;
  const perProblem: Record<string, { n: number; c: number }> = {};
  const isolation = { boundary: 0, in_process: 0, fallbacks: 0 };
  rows.forEach((row, i) => {
    statuses[row.status] = (statuses[row.status] ?? 0) + 1;
    const p = (perProblem[tasks[i].problem.taskId] ??= { n: 0, c: 0 });
    p.n++;
    if (row.passed) p.c++;
    if (row.isolation === 'boundary') isolation.boundary++;
    else isolation.in_process++;
    if (row.fallback) isolation.fallbacks++;
  });
  const { values, notes } = meanPassAtK(Object.values(perProblem), ks);
  if (isolation.fallbacks > 0) notes.push(`${isolation.fallbacks} sample(s) ran with the tests in the candidate's process (isolation: in-process; see "fallback" in results.jsonl)`);
  // pass^k's notes repeat pass@k's (the same problems are short of samples)
  const hat = meanPassHatK(Object.values(perProblem), ks);
  return { name, file, pass_at: values, pass_hat: hat.values, ...(notes.length ? { notes } : {}), n: rows.length, problems: Object.keys(perProblem).length, statuses, isolation, per_problem: perProblem, signature };
}
