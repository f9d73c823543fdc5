import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scoreSystems } from './score.js';
import { UsageError, writing } from '../errors.js';
import type { Judge, JudgeContext } from '../judges/judge.js';
import { judgeSystems } from '../api/judge.js';
import type { LlmClient } from '../llm/client.js';
import type { ModelSpec } from '../llm/model-spec.js';
import { VERSION } from '../version.js';
import { inShard, type Shard } from '../config/shard.js';
import type { ProblemSet } from '../exec/benchmarks/problems.js';
import { quarantine } from '../exec/benchmarks/quarantine.js';
import type { Sample } from '../exec/benchmarks/samples.js';
import { execSystems, type ExecRow, type ExecSummary, type TimeoutRetry } from '../exec/run.js';
import { runnerIn } from '../exec/runners/registry.js';
import type { SandboxMode } from '../exec/sandbox/types.js';
import { loadExtractor } from '../extract/extract.js';
import { makeDir } from '../io/dirs.js';
import { generateSamples } from './generate.js';

/**
 * `eval`: the end-to-end benchmark run. n samples per problem from a model (each sample its own seed, so a repeat
 * is a new request, never a cache hit; rerun, the same seeds are answered from the cache and from
 * DIR/generations.jsonl), code extracted from each reply (`extract.ts`), run with `exec` (DIR/results.jsonl,
 * DIR/summary.json: pass@k and pass^k), and, with metrics or judges, the same samples scored against the canonical
 * solution into DIR/table.jsonl, one row per sample: `system, task_id, sample, passed, status, <metric columns>`,
 * the table `codegauge meta --input DIR/table.jsonl --truth passed --metric-column ...` reads.
 */
export interface EvalJudge {
  /** The table column, e.g. `dsa` or `ice`. */
  column: string;
  judge: Judge;
}

export interface EvalOptions {
  problems: ProblemSet;
  client: LlmClient;
  model: { name: string; spec: ModelSpec };
  n: number;
  temperature: number;
  /** Sample s of every problem is asked with seed `seed + s` (default 0). */
  seed?: number;
  maxTokens?: number;
  ks: number[];
  timeoutMs: number;
  memoryMb: number;
  jobs: number;
  sandbox: SandboxMode;
  warm?: boolean;
  /** What a timeout leads to (default `always`: once more with twice the time). */
  timeoutRetry?: TimeoutRetry;
  outDir: string;
  /** Only the first `limit` problems. */
  limit?: number;
  /** Only this shard's problems (by problem id, as `exec --shard`); `merge` joins the folders. */
  shard?: Shard;
  /** Leave the bundled benchmark's quarantined tasks out (not generated, not counted). */
  excludeBroken?: boolean;
  metrics?: string[];
  judges?: EvalJudge[];
  /** The judges' model and settings (default: the generating model at temperature 0). */
  judgeContext?: Omit<JudgeContext, 'client'> & { name: string };
  onProgress?: (phase: 'generate' | 'exec' | 'judge') => ((done: number, total: number) => void) | undefined;
}

export interface EvalTableRow {
  system: string;
  task_id: string;
  sample: number;
  passed: boolean;
  status: string;
  [column: string]: unknown;
}

export interface EvalReport {
  kind: 'eval';
  version: string;
  model: string;
  n: number;
  temperature: number;
  problems: number;
  exec: ExecSummary;
  /** Mean of each metric and judge column over the samples it scored (0-100); a judge's failures as `judge` lists them. */
  scores: { column: string; mean: number | null; signature: string; failures?: number; errors?: string[] }[];
  generation: { requests: number; cache_hits: number; reused: number };
  files: { generations: string; samples: string; results: string; summary: string; table?: string };
}

export { generationPrompt, readGenerations, type Generation } from './generate.js';

/** The system's name, as exec names it after its samples file: the model spec with odd characters replaced. */
export function systemNameOf(model: string): string {
  return model.replace(/[^\w.@+-]+/g, '_');
}

export async function evalModel(options: EvalOptions): Promise<{ report: EvalReport; table: EvalTableRow[] }> {
  const { outDir: dir, n } = options;
  const broken = options.excludeBroken && options.problems.benchmark ? quarantine(options.problems.benchmark) : {};
  const problems = options.problems.problems.slice(0, options.limit ?? undefined).filter((p) => inShard(p.key, options.shard) && !(p.key in broken));
  if (problems.length === 0) throw new UsageError('no problems to evaluate');
  const needsReference = (options.metrics?.length ?? 0) > 0 || (options.judges?.length ?? 0) > 0;
  if (needsReference) {
    const without = problems.filter((p) => p.canonicalSolution === undefined);
    if (without.length) throw new UsageError(`--metric and --judge score samples against the canonical solution, and ${without.length} problem(s) have none (e.g. ${without[0].taskId}); use a benchmark with canonical solutions (humaneval)`);
  }
  for (const language of new Set(problems.map((p) => p.language))) {
    runnerIn(options.sandbox, language); // a missing toolchain stops before any request
    await loadExtractor(language);
  }
  makeDir(join(dir, 'samples'));

  // 1. generate (resumable: rows already in generations.jsonl with the same request are kept), 2. extract: one
  // samples file (the system) in problem x sample order, raw reply and extraction kept
  const generationsPath = join(dir, 'generations.jsonl');
  const before = { requests: options.client.usage.requests, cacheHits: options.client.usage.cacheHits };
  const generated = await generateSamples({
    path: generationsPath,
    problems,
    model: options.model,
    client: options.client,
    n,
    temperature: options.temperature,
    seed: options.seed ?? 0,
    maxTokens: options.maxTokens,
    sandbox: options.sandbox,
    onProgress: options.onProgress?.('generate'),
  });
  const reused = generated.reused;
  const ordered = generated.samples;
  const system = systemNameOf(options.model.name);
  const samplesPath = join(dir, 'samples', `${system}.jsonl`);
  writing(samplesPath, () => writeFileSync(samplesPath, generated.lines.map((l) => l + '\n').join('')));

  // 3. execute
  const { summary, rows } = await execSystems({
    problems: { ...options.problems, problems },
    samples: [samplesPath],
    ks: options.ks,
    timeoutMs: options.timeoutMs,
    memoryMb: options.memoryMb,
    jobs: options.jobs,
    sandbox: options.sandbox,
    warm: options.warm,
    timeoutRetry: options.timeoutRetry,
    shard: options.shard,
    excludeBroken: options.excludeBroken,
    outDir: dir,
    onProgress: options.onProgress?.('exec'),
  });

  // 4. score against the canonical solution: the code as run vs the prompt + canonical solution (MBPP: its code)
  const table: EvalTableRow[] = ordered.map((o, i) => {
    const row: ExecRow = rows[i];
    return { system, task_id: o.problem.taskId, sample: o.sample, passed: row.passed, status: row.status };
  });
  const scores: EvalReport['scores'] = [];
  if (needsReference) {
    const asSample = (o: (typeof ordered)[number], i: number): Sample => ({ index: i, taskId: o.problem.taskId, line: i + 1, ...o.extraction });
    const hypotheses = ordered.map((o, i) => runnerIn(options.sandbox, o.problem.language).code(o.problem, asSample(o, i)));
    // MBPP's prompt is prose and its code a whole program: the reference is the code alone
    const references = ordered.map((o) => [o.problem.mbpp ? o.problem.canonicalSolution! : o.problem.prompt + o.problem.canonicalSolution!]);
    const put = (column: string, segments: readonly number[] | undefined, signature: string, mean: number) => {
      if (table.length && column in table[0]) throw new UsageError(`two scores would fill the column "${column}"`);
      table.forEach((row, i) => {
        const v = segments?.[i];
        row[column] = v === undefined || Number.isNaN(v) ? null : v;
      });
      scores.push({ column, mean: Number.isFinite(mean) ? mean : null, signature });
    };
    if (options.metrics?.length) {
      const report = await scoreSystems({ references, systems: [{ name: system, hypotheses }], metrics: options.metrics, segments: true });
      for (const s of report.systems[0].scores) put(s.metric, s.segments, s.signature, s.score);
    }
    if (options.judges?.length) {
      const ctx = options.judgeContext ?? { name: options.model.name, model: options.model.spec, temperature: 0 };
      const { name: judgeModel, ...context } = ctx;
      for (const j of options.judges) {
        const report = await judgeSystems({
          judge: j.judge,
          modelName: judgeModel,
          context: { ...context, client: options.client },
          references,
          systems: [{ name: system, hypotheses }],
          problems: ordered.map((o) => o.problem.prompt),
          language: problems[0].language,
          onProgress: options.onProgress?.('judge'),
        });
        for (const s of report.systems[0].scores) {
          // A judge's column is its method; `method:entry` only for a judge with several entries (an ensemble).
          put(report.systems[0].scores.length > 1 ? `${j.column}:${s.metric}` : j.column, s.segments, s.signature, s.score);
          // Samples the judge could not grade: counted and listed, as `judge` reports them (the CLI exits 1).
          const errors = (s as { errors?: string[] }).errors;
          if (s.details?.failures) Object.assign(scores[scores.length - 1], { failures: s.details.failures, ...(errors ? { errors } : {}) });
        }
      }
    }
  }
  const tablePath = join(dir, 'table.jsonl');
  writing(tablePath, () => writeFileSync(tablePath, table.map((r) => JSON.stringify(r) + '\n').join('')));
  const report: EvalReport = {
    kind: 'eval',
    version: VERSION,
    model: options.model.name,
    n,
    temperature: options.temperature,
    problems: problems.length,
    exec: summary,
    scores,
    generation: { requests: options.client.usage.requests - before.requests, cache_hits: options.client.usage.cacheHits - before.cacheHits, reused },
    files: { generations: generationsPath, samples: samplesPath, results: join(dir, 'results.jsonl'), summary: join(dir, 'summary.json'), table: tablePath },
  };
  const evalPath = join(dir, 'eval.json');
  writing(evalPath, () => writeFileSync(evalPath, JSON.stringify(report, null, 2) + '\n'));
  return { report, table };
}
