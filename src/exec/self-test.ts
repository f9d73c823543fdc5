import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { BENCHMARKS, dataDir, readBenchmark } from './benchmarks/bundled.js';
import { problemKey, type ExecLanguage, type ProblemSet } from './benchmarks/problems.js';
import { quarantine } from './benchmarks/quarantine.js';
import { installHint } from './runners/kit.js';
import { runnerIn } from './runners/registry.js';
import { execSystems } from './run.js';
import type { TimeoutRetry } from './sample.js';
import type { SandboxMode } from './sandbox/types.js';
import { makeWorkDir, removeWorkDir } from './sandbox/workdir.js';

/**
 * `exec --self-test`: the bundled benchmarks checked against their own reference solutions, in every language whose
 * toolchain is here. References: HumanEval's canonical solutions and MBPP's code (Python); for JavaScript, a Codex sample per problem
 * that ICE-Score's recorded run labelled passed (data/ice-humaneval). The MultiPL-E sets bundle none (their prompts
 * are checked to compile with a stub body in the tests instead): reported as such, never as passing. A reference
 * that fails is listed with its status; tasks in the shipped quarantine list (data/exec/quarantine.json) are reported
 * apart with their reason.
 */
export interface SelfTestBenchmark {
  benchmark: string;
  language: ExecLanguage;
  /** The runner's version, or undefined when its toolchain is missing. */
  runner?: string;
  /** What to install when the toolchain is missing. */
  missing?: string;
  references: number;
  reference_source?: string;
  passed: number;
  failed: { task_id: string; status: string; note?: string }[];
  /** references that timed out at the run's timeout and passed at four times it (counted as passed) */
  slow: { task_id: string; timeout_ms: number }[];
  quarantined: { task_id: string; reason: string; status?: string }[];
}

export interface SelfTestReport {
  kind: 'exec-self-test';
  version: string;
  benchmarks: SelfTestBenchmark[];
}

interface Reference {
  task_id: string;
  completion: string;
  prompt?: string;
}

/** A bundled benchmark's reference solutions, or undefined where none are bundled. */
function references(name: string, set: ProblemSet): { source: string; samples: Reference[] } | undefined {
  if (name === 'humaneval' || name === 'mbpp' || name === 'mbpp-sanitized') {
    return { source: name === 'humaneval' ? 'canonical solutions' : "the dataset's code", samples: set.problems.filter((p) => p.canonicalSolution !== undefined).map((p) => ({ task_id: p.taskId, completion: p.canonicalSolution! })) };
  }
  if (name === 'humaneval-js') {
    const data = JSON.parse(gunzipSync(readFileSync(join(dataDir(), 'ice-humaneval', 'humaneval_js_grade.json.gz'))).toString('utf8')) as Record<string, unknown>[];
    const samples: Reference[] = [];
    for (const problem of data) {
      const keys = Object.keys(problem).filter((k) => /^\d+$/.test(k)).sort((a, b) => Number(a) - Number(b));
      const passing = keys.find((k) => (problem[`grade-${k}`] as { execution?: number } | undefined)?.execution === 1);
      if (passing !== undefined && set.byKey.has(String(problem.task_id))) samples.push({ task_id: `HumanEval/${problem.task_id}`, completion: String(problem[passing]), prompt: String(problem.intent) });
    }
    return { source: "Codex samples ICE-Score's run labelled passed (one per problem)", samples };
  }
  return undefined;
}

export async function selfTest(options: { benchmarks?: string[]; sandbox: SandboxMode; jobs: number; timeoutMs: number; memoryMb: number; timeoutRetry?: TimeoutRetry; onProgress?: (done: number, total: number) => void }): Promise<SelfTestReport> {
  const names = options.benchmarks?.length ? options.benchmarks : Object.keys(BENCHMARKS);
  for (const name of names) if (!BENCHMARKS[name]) throw new UsageError(`--benchmark: unknown benchmark "${name}"; bundled: ${Object.keys(BENCHMARKS).join(', ')}`);
  const report: SelfTestReport = { kind: 'exec-self-test', version: VERSION, benchmarks: [] };
  const work = makeWorkDir('codegauge-self-test-');
  try {
    for (const name of names) {
      const language = BENCHMARKS[name].language;
      const set = readBenchmark(name);
      const broken = quarantine(name);
      const entry: SelfTestBenchmark = { benchmark: name, language, references: 0, passed: 0, failed: [], slow: [], quarantined: [] };
      report.benchmarks.push(entry);
      try {
        entry.runner = runnerIn(options.sandbox, language).version;
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        entry.missing = options.sandbox === 'pyodide' ? e.message : installHint(language);
        for (const [key, reason] of Object.entries(broken)) entry.quarantined.push({ task_id: set.byKey.get(key)?.taskId ?? key, reason });
        continue;
      }
      const refs = references(name, set);
      if (!refs || refs.samples.length === 0) {
        for (const [key, reason] of Object.entries(broken)) entry.quarantined.push({ task_id: set.byKey.get(key)?.taskId ?? key, reason });
        continue;
      }
      entry.reference_source = refs.source;
      const file = join(work, `${name}.jsonl`);
      writeFileSync(file, refs.samples.map((s) => JSON.stringify(s) + '\n').join(''));
      const { rows } = await execSystems({ problems: set, samples: [file], ks: [1], timeoutMs: options.timeoutMs, memoryMb: options.memoryMb, jobs: options.jobs, sandbox: options.sandbox, outDir: join(work, `${name}-out`), timeoutRetry: options.timeoutRetry, onProgress: options.onProgress });
      entry.references = rows.length;
      // a reference slower than the timeout (MBPP 123 sums amicable numbers below 9999 in ~3 s) is a fact about the
      // timeout, not about this machine's runner: run it again at four times the timeout and say so
      const timedOut = rows.filter((r) => r.status === 'timeout' && broken[problemKey(r.task_id)] === undefined);
      if (timedOut.length) {
        const again = join(work, `${name}-slow.jsonl`);
        const ids = new Set(timedOut.map((r) => r.task_id));
        writeFileSync(again, refs.samples.filter((s) => ids.has(set.byKey.get(problemKey(s.task_id))?.taskId ?? s.task_id)).map((s) => JSON.stringify(s) + '\n').join(''));
        const slowMs = options.timeoutMs * 4;
        const retried = await execSystems({ problems: set, samples: [again], ks: [1], timeoutMs: slowMs, memoryMb: options.memoryMb, jobs: options.jobs, sandbox: options.sandbox, outDir: join(work, `${name}-slow-out`), timeoutRetry: options.timeoutRetry });
        const byId = new Map(retried.rows.map((r) => [r.task_id, r]));
        for (let i = 0; i < rows.length; i++) {
          const second = rows[i].status === 'timeout' ? byId.get(rows[i].task_id) : undefined;
          if (second?.passed) {
            entry.slow.push({ task_id: rows[i].task_id, timeout_ms: slowMs });
            rows[i] = second;
          }
        }
      }
      for (const row of rows) {
        const key = set.byKey.get(problemKey(row.task_id))?.key ?? row.task_id;
        const reason = broken[key];
        if (reason !== undefined) entry.quarantined.push({ task_id: row.task_id, reason, status: row.status });
        else if (row.passed) entry.passed++;
        else entry.failed.push({ task_id: row.task_id, status: row.status, ...(row.note ? { note: row.note } : {}) });
      }
      const run = new Set(rows.map((r) => r.task_id));
      for (const [key, reason] of Object.entries(broken)) {
        const id = set.byKey.get(key)?.taskId ?? key;
        if (!run.has(id) && !entry.quarantined.some((q) => q.task_id === id)) entry.quarantined.push({ task_id: id, reason });
      }
    }
  } finally {
    removeWorkDir(work);
  }
  return report;
}

export function formatSelfTest(report: SelfTestReport): string {
  const header = ['benchmark', 'language', 'references', 'passed', 'failed', 'quarantined', 'runner'];
  const rows = report.benchmarks.map((b) => [
    b.benchmark,
    b.language,
    b.missing ? '-' : b.references ? String(b.references) : 'none bundled',
    b.missing || !b.references ? '-' : String(b.passed),
    b.missing || !b.references ? '-' : String(b.failed.length),
    String(b.quarantined.length),
    b.runner ?? `missing: install ${b.missing}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 || i === 6 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  const out = [line(header), ...rows.map(line)];
  for (const b of report.benchmarks) {
    for (const f of b.failed) out.push(`${b.benchmark}: ${f.task_id}: its reference is ${f.status}${f.note ? ` (${f.note})` : ''}`);
    for (const f of b.slow) out.push(`${b.benchmark}: ${f.task_id}: its reference needs more than --timeout: it passed at ${f.timeout_ms / 1000}s`);
    for (const q of b.quarantined) out.push(`${b.benchmark}: ${q.task_id}: quarantined${q.status ? ` (${q.status})` : ''}: ${q.reason}`);
  }
  return out.join('\n') + '\n';
}
