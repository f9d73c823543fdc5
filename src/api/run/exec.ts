import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GeneratedSystemConfig } from '../../config/schema.js';
import { inShard } from '../../config/shard.js';
import { writing } from '../../errors.js';
import { readBenchmark } from '../../exec/benchmarks/bundled.js';
import { problemKey, readProblems, type ProblemSet } from '../../exec/benchmarks/problems.js';
import { readSamples } from '../../exec/benchmarks/samples.js';
import { execSystems } from '../../exec/run.js';
import { runnerFor } from '../../exec/runners/registry.js';
import { resolveSandboxMode } from '../../exec/sandbox/mode.js';
import { loadExtractor } from '../../extract/extract.js';
import { generateSamples } from '../generate.js';
import { baseSignature, type RunContext } from './context.js';

/**
 * Stage 4: execution (resumes from OUT/exec/results.jsonl: a rerun with nothing changed runs no program), of samples
 * files, canonical solutions, or samples a model generates (resumed from OUT/exec/generations/SYSTEM.jsonl and the
 * response cache: a rerun with nothing changed sends no request).
 */
export async function execStage(ctx: RunContext): Promise<void> {
  const e = ctx.config.exec!;
  const problems: ProblemSet = e.benchmark ? readBenchmark(e.benchmark) : readProblems(ctx.loaded.resolvePath(e.problems!), e.lang);
  const limited = new Set((e.limit ? problems.problems.slice(0, e.limit) : problems.problems).filter((p) => inShard(p.taskId, ctx.shard)).map((p) => p.key));
  const chosen = problems.problems.filter((p) => limited.has(p.key));
  const execDir = join(ctx.out, 'exec');
  const samplesDir = join(execDir, 'samples');
  writing(samplesDir, () => mkdirSync(samplesDir, { recursive: true }));
  const generated = Object.entries(e.systems).filter((x): x is [string, GeneratedSystemConfig] => typeof x[1] !== 'string');
  if (generated.length) {
    // A missing toolchain or grammar stops before any request.
    for (const language of new Set(chosen.map((p) => p.language))) {
      runnerFor(language);
      await loadExtractor(language);
    }
  }
  const samplePaths: string[] = [];
  for (const [name, source] of Object.entries(e.systems)) {
    if (!/^[\w.@-]+$/.test(name)) throw ctx.loaded.error(['exec', 'systems', name], 'a system name of letters, digits, . _ - @');
    let lines: string[];
    if (typeof source !== 'string') {
      const model = ctx.llm.model(source.model, ['exec', 'systems', name, 'model'], ctx.loaded);
      const temperature = source.temperature ?? ctx.config.llm.temperature;
      ctx.log(`generating ${source.n} sample(s) per problem for ${name} on ${chosen.length} problem(s) with ${model.name}${ctx.llm.batch ? ' (batch)' : ''}`);
      const g = await generateSamples({
        problems: chosen,
        model,
        client: model.client,
        n: source.n,
        temperature,
        seed: source.seed,
        maxTokens: source.max_tokens ?? ctx.config.llm.max_tokens,
        path: join(execDir, 'generations', `${name}.jsonl`),
        batch: ctx.llm.batch ? ctx.llm.batchOptions(model, ctx.log) : undefined,
        onProgress: ctx.options.onProgress?.(`generate ${name}`),
      });
      ctx.llm.absorb(g.batch);
      (ctx.result.generation ??= []).push({ system: name, model: model.name, n: source.n, problems: chosen.length, reused: g.reused, asked: g.asked });
      lines = g.lines;
    } else if (source === 'canonical') {
      lines = chosen.map((p) => {
        if (p.canonicalSolution === undefined) throw ctx.loaded.error(['exec', 'systems', name], `problem ${p.taskId} has no canonical solution`);
        return JSON.stringify({ task_id: p.taskId, completion: p.canonicalSolution });
      });
    } else {
      lines = readSamples(ctx.loaded.resolvePath(source))
        .filter((s) => limited.has(problemKey(s.taskId)))
        .map((s) => JSON.stringify({ task_id: s.taskId, ...(s.completion !== undefined ? { completion: s.completion } : {}), ...(s.solution !== undefined ? { solution: s.solution } : {}), ...(s.prompt !== undefined ? { prompt: s.prompt } : {}) }));
    }
    if (lines.length === 0) throw ctx.loaded.error(['exec', 'systems', name], 'no sample for the problems of this run');
    const path = join(samplesDir, `${name}.jsonl`);
    const text = lines.join('\n') + '\n';
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) writing(path, () => writeFileSync(path, text));
    samplePaths.push(path);
  }
  const sandbox = resolveSandboxMode(e.sandbox, (m) => ctx.result.warnings.push(m.trim()));
  let first: number | undefined;
  let total = 0;
  const progress = ctx.options.onProgress?.('exec');
  ctx.log(`executing ${samplePaths.length} system(s) on ${limited.size} problem(s) (sandbox ${sandbox})`);
  const { summary, rows } = await execSystems({
    problems,
    samples: samplePaths,
    ks: [...new Set(e.k)].sort((a, b) => a - b),
    timeoutMs: Math.round(e.timeout * 1000),
    timeoutRetry: ctx.options.timeoutRetry ?? e.timeout_retry,
    memoryMb: e.memory,
    jobs: e.jobs,
    sandbox,
    outDir: execDir,
    onProgress: (done, all) => {
      first ??= done;
      total = all;
      progress?.(done, all);
    },
  });
  ctx.result.files.push(join(execDir, 'results.jsonl'), join(execDir, 'summary.json'));
  if (generated.length) ctx.result.files.push(...generated.map(([name]) => join(execDir, 'generations', `${name}.jsonl`)));
  ctx.result.exec = { ran: total - (first ?? 0), reused: first ?? 0, rows: rows.map((r) => ({ system: r.system, index: r.index, task_id: r.task_id, status: r.status, passed: r.passed, stderr: r.stderr, duration_ms: r.duration_ms })) };
  for (const s of summary.systems) {
    for (const [k, v] of Object.entries(s.pass_at)) ctx.result.scores.push({ kind: 'exec', system: s.name, metric: `pass@${k}`, aggregation: 'mean', score: v === null ? null : 100 * v, ci: null, signature: s.signature });
    const mine = rows.filter((r) => r.system === s.name);
    ctx.items.push({ kind: 'exec', system: s.name, metric: 'passed', signature: baseSignature(s.signature), ids: mine.map((r) => r.task_id), values: mine.map((r) => (r.passed ? 1 : 0)) });
  }
}
