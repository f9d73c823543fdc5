import { readBenchmark } from './exec/benchmarks/bundled.js';
import type { Problem } from './exec/benchmarks/problems.js';
import type { Sample } from './exec/benchmarks/samples.js';
import { runnerIn } from './exec/runners/registry.js';
import { runSample } from './exec/sample.js';
import { resolveSandboxMode } from './exec/sandbox/mode.js';
import { Sandbox } from './exec/sandbox/sandbox.js';
import type { SandboxMode } from './exec/sandbox/types.js';
import { Servers } from './exec/servers.js';
import { UsageError } from './errors.js';
import { DsaJudge } from './judges/dsa.js';
import { IceJudge } from './judges/ice.js';
import type { Judge } from './judges/judge.js';
import { LlmClient } from './llm/client.js';
import { parseModelSpec } from './llm/model-spec.js';
import { LlmStore } from './llm/store.js';
import { loadMetric } from './metrics/specs.js';
import { scoreSystems } from './api/score.js';

/**
 * codegauge's assertions for a team's own tests (`codegauge/vitest` registers them with Vitest; Jest users call
 * `expect.extend(codegaugeMatchers)`). All three are asynchronous: `await expect(code).toPassTests(problem)`.
 */

/** A problem: one read with `readBenchmark`/`readProblems`, or a bundled benchmark's task. */
export type ProblemRef = Problem | { benchmark: string; task: string };

export interface PassTestsOptions {
  /** `solution`: the code is a whole program; `completion`: it continues the problem's prompt. Default: a solution when it defines the entry point. */
  as?: 'solution' | 'completion';
  /** Seconds per run (a timeout is retried once with twice the time). Default 3. */
  timeout?: number;
  memoryMb?: number;
  sandbox?: 'auto' | SandboxMode;
}

export interface JudgeSpec {
  method: 'dsa' | 'dsa-simple' | 'ice';
  /** `openai:MODEL` or `ollama:MODEL`. */
  model: string;
  reference: string;
  problem?: string;
  /** Language of the code (default python). */
  language?: string;
  /** OpenAI-compatible server(s) (default OPENAI_BASE_URL). */
  baseUrl?: string | string[];
  apiKey?: string;
  ollamaHost?: string;
  /** SQLite response cache: a rerun sends no request (default: none). */
  cacheFile?: string;
  temperature?: number;
  /** Use this client instead of building one. */
  client?: LlmClient;
}

interface MatcherContext {
  isNot?: boolean;
}
export interface MatcherResult {
  pass: boolean;
  message: () => string;
}

const problems = new Map<string, Map<string, Problem>>();
function resolveProblem(ref: ProblemRef): Problem {
  if (!('benchmark' in ref)) return ref;
  let byId = problems.get(ref.benchmark);
  if (!byId) problems.set(ref.benchmark, (byId = new Map(readBenchmark(ref.benchmark).problems.map((p) => [p.taskId, p]))));
  const p = byId.get(ref.task);
  if (!p) throw new UsageError(`toPassTests: no task "${ref.task}" in benchmark ${ref.benchmark}`);
  return p;
}

export async function toPassTests(this: MatcherContext, code: unknown, ref: ProblemRef, options: PassTestsOptions = {}): Promise<MatcherResult> {
  if (typeof code !== 'string') throw new TypeError(`toPassTests: expected the code as a string, got ${typeof code}`);
  const problem = resolveProblem(ref);
  const mode = resolveSandboxMode(options.sandbox ?? 'auto', () => {});
  const runner = runnerIn(mode, problem.language);
  const definesEntry = problem.entryPoint ? new RegExp(`(def|function|fn)\\s+${problem.entryPoint}\\b|\\b${problem.entryPoint}\\s*=`).test(code) : true;
  const as = options.as ?? (definesEntry ? 'solution' : 'completion');
  const sample: Sample = { index: 0, taskId: problem.taskId, line: 1, ...(as === 'solution' ? { solution: code } : { completion: code }) };
  // servers for this call only (a test run must not be kept alive by them)
  const sandbox = new Sandbox(mode);
  const servers = new Servers(sandbox, false);
  let verdict;
  try {
    ({ verdict } = await runSample({ sandbox, servers }, { problem, runner, code: runner.code(problem, sample) }, { timeoutMs: Math.round((options.timeout ?? 3) * 1000), memoryMb: options.memoryMb ?? 1024 }));
  } finally {
    servers.close();
  }
  const pass = verdict.status === 'passed';
  const tail = verdict.stderr.trim().split('\n').slice(-12).join('\n');
  return {
    pass,
    message: () =>
      pass
        ? `expected the code not to pass the tests of ${problem.taskId}, but it passed (${verdict.durationMs} ms)`
        : `expected the code to pass the tests of ${problem.taskId}: ${verdict.status}${verdict.note ? ` (${verdict.note})` : ''}${tail ? `\n${tail}` : ''}`,
  };
}

export async function toScoreAtLeast(this: MatcherContext, hypothesis: unknown, spec: string, reference: string | string[], threshold: number): Promise<MatcherResult> {
  if (typeof hypothesis !== 'string') throw new TypeError(`toScoreAtLeast: expected the code as a string, got ${typeof hypothesis}`);
  const metric = await loadMetric(spec);
  const report = await scoreSystems({ references: [Array.isArray(reference) ? reference : [reference]], systems: [{ name: 'hypothesis', hypotheses: [hypothesis] }], metrics: [metric] });
  const entry = report.systems[0].scores[0];
  const pass = entry.score >= threshold;
  const score = entry.score.toFixed(2);
  return {
    pass,
    message: () => (pass ? `expected ${spec} score ${score} to be below ${threshold}` : `expected ${spec} score ${score} to be at least ${threshold}`) + ` (${entry.signature})`,
  };
}

export async function toBeJudgedAtLeast(this: MatcherContext, code: unknown, spec: JudgeSpec, threshold: number): Promise<MatcherResult> {
  if (typeof code !== 'string') throw new TypeError(`toBeJudgedAtLeast: expected the code as a string, got ${typeof code}`);
  const model = parseModelSpec(spec.model);
  const judge: Judge = spec.method === 'ice' ? new IceJudge({}) : new DsaJudge({ simplified: spec.method === 'dsa-simple' });
  const store = spec.client || !spec.cacheFile ? null : new LlmStore(spec.cacheFile);
  const baseUrls = spec.baseUrl ? (Array.isArray(spec.baseUrl) ? spec.baseUrl : [spec.baseUrl]) : process.env.OPENAI_BASE_URL ? process.env.OPENAI_BASE_URL.split(',') : [];
  const client = spec.client ?? new LlmClient({ baseUrls, apiKey: spec.apiKey ?? process.env.OPENAI_API_KEY, ollamaHosts: [spec.ollamaHost ?? process.env.OLLAMA_HOST ?? 'http://127.0.0.1:11434'], store, retries: 2 });
  try {
    const outcome = await judge.judge({ code, reference: spec.reference, problem: spec.problem, language: spec.language ?? 'python' }, { client, model, temperature: spec.temperature ?? 0 });
    const differences = Array.isArray(outcome.trace.differences) ? (outcome.trace.differences as string[]) : [];
    const found = differences.length ? `\ndifferences found:\n${differences.map((d) => `  - ${d}`).join('\n')}` : '\nno differences found';
    if (outcome.grade === null) return { pass: false, message: () => `the ${spec.method} judge (${spec.model}) could not grade the code: ${outcome.error ?? 'no grade'}` };
    const score = outcome.grade * 25;
    const pass = score >= threshold;
    const what = `${spec.method} score ${score.toFixed(2)} (grade ${outcome.grade}/4 by ${spec.model})`;
    return { pass, message: () => (pass ? `expected ${what} to be below ${threshold}` : `expected ${what} to be at least ${threshold}`) + found };
  } finally {
    store?.close();
  }
}

/** The matchers, for `expect.extend` (Vitest: import `codegauge/vitest` instead; Jest: `expect.extend(codegaugeMatchers)`). */
export const codegaugeMatchers = { toPassTests, toScoreAtLeast, toBeJudgedAtLeast };

/** Releases nothing today (each matcher call closes what it started); kept for suites that call it in afterAll. */
export function resetMatchers(): void {
  // nothing is kept between calls
}

/** The matchers' types, for a test runner's `Matchers` interface. */
export interface CodegaugeMatchers<R = unknown> {
  /** Runs the code against the problem's tests in the sandbox. Await it. */
  toPassTests(problem: ProblemRef, options?: PassTestsOptions): Promise<R>;
  /** Scores the code against the reference(s) with a metric spec (0-100). Await it. */
  toScoreAtLeast(spec: string, reference: string | string[], threshold: number): Promise<R>;
  /** Grades the code with an LLM judge (0-100 = grade x 25). Await it. */
  toBeJudgedAtLeast(judge: JudgeSpec, threshold: number): Promise<R>;
}
