import { availableParallelism } from 'node:os';
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { parseShard, type Shard } from '../config/shard.js';
import { BENCHMARKS, readBenchmark } from '../exec/benchmarks/bundled.js';
import { DEFAULT_DISK_MB } from '../exec/sandbox/types.js';
import { readProblems } from '../exec/benchmarks/problems.js';
// Running and sandboxing are loaded when the command runs, not at CLI start-up.
import type { ExecSummary } from '../exec/run.js';
import { exitRequest, type CliIo } from './io.js';
import { collect, formatOption, integerIn, list, numberIn } from './options.js';

/** `codegauge exec`: run generated code against tests in a sandbox and report pass@k. */
interface ExecCliOptions {
  benchmark?: string[];
  problems?: string;
  lang?: string;
  samples?: string[];
  selfTest?: boolean;
  excludeBroken?: boolean;
  shard?: Shard;
  disk: number;
  k: string[];
  timeout: number;
  timeoutRetry: 'always' | 'starved' | 'never';
  memory: number;
  jobs: number;
  sandbox: 'auto' | 'bwrap' | 'process' | 'pyodide';
  out?: string;
  format: 'table' | 'json';
}

/** `--k 1,10,100`: distinct integers >= 1, ascending (shared with `eval`). */
export function parseKs(values: string[]): number[] {
  const ks = values.map((v) => {
    const k = Number(v);
    if (!Number.isSafeInteger(k) || k < 1) throw new UsageError(`--k must be integers >= 1, got "${v}"`);
    return k;
  });
  return [...new Set(ks)].sort((a, b) => a - b);
}

/** `--timeout-retry always|starved|never` (shared with `eval`). */
export const timeoutRetryOption = () =>
  new Option('--timeout-retry <policy>', 'what a timeout leads to: always (once more with twice the time), starved (only when the program had less than half a core, or its CPU time is unknown; one that used the CPU the whole time is a timeout at once, as openai/human-eval does) or never').choices(['always', 'starved', 'never']).default('starved');

export function formatExecTable(summary: ExecSummary): string {
  const ks = [...new Set(summary.systems.flatMap((s) => Object.keys(s.pass_at)))].sort((a, b) => Number(a) - Number(b));
  const hatKs = ks.filter((k) => Number(k) > 1 && summary.systems.some((s) => s.pass_hat?.[k] !== undefined && s.pass_hat[k] !== null));
  const header = ['system', 'n', 'problems', ...ks.map((k) => `pass@${k}`), ...hatKs.map((k) => `pass^${k}`), 'passed', 'failed', 'timeout', 'compile', 'runtime', 'memory', 'output', 'sandbox'];
  const rows = summary.systems.map((s) => [
    s.name,
    String(s.n),
    String(s.problems),
    ...ks.map((k) => (s.pass_at[k] === null || s.pass_at[k] === undefined ? 'n/a' : (100 * s.pass_at[k]!).toFixed(2))),
    ...hatKs.map((k) => (s.pass_hat?.[k] === null || s.pass_hat?.[k] === undefined ? 'n/a' : (100 * s.pass_hat[k]!).toFixed(2))),
    String(s.statuses.passed),
    String(s.statuses.failed),
    String(s.statuses.timeout),
    String(s.statuses.compile_error),
    String(s.statuses.runtime_error),
    String(s.statuses.memory),
    String(s.statuses.output_limit ?? 0),
    String(s.statuses.sandbox_error),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  const out = [line(header), ...rows.map(line)];
  for (const e of summary.excluded ?? []) out.push(`excluded (--exclude-broken): ${e.task_id}: ${e.reason}`);
  for (const s of summary.systems) {
    for (const note of s.notes ?? []) out.push(`${s.name}: ${note}`);
    out.push(`${s.name}: ${s.signature}`);
  }
  return out.join('\n') + '\n';
}

export function addExecCommand(program: Command, io: CliIo): void {
  program
    .command('exec')
    .description('run generated code against tests in a sandbox (bubblewrap) and report pass@k; --self-test checks the bundled benchmarks against their own references')
    .option('--benchmark <name>', `bundled problems: ${Object.keys(BENCHMARKS).join(', ')} (with --self-test: repeat, or leave out for all)`, collect)
    .option('--problems <file>', 'problems (.jsonl or .json, optionally .gz): human-eval, MultiPL-E, HumanEval-X, MBPP or EvalPlus format')
    .option('--lang <language>', 'language of --problems when the file does not say (python, javascript, typescript, java, cpp, rust, php, ruby, go, csharp)')
    .option('--samples <file>', 'samples of one system (.jsonl: task_id + completion or solution); repeat for several systems', collect)
    .option('--self-test', "run every bundled benchmark's reference solutions (or those of --benchmark) in each language whose toolchain is here; list what fails, what is quarantined and what is missing")
    .option('--exclude-broken', "leave the bundled benchmark's quarantined tasks (ones no sample can pass; see --self-test) out of pass@k; the summary lists them")
    .option('--shard <i/N>', 'run only the problems of shard i of N (every sample of a problem in one shard); join the folders with codegauge merge', parseShard)
    .option('--k <list>', 'pass@k for these k (comma-separated)', list)
    .option('--timeout <seconds>', 'wall-clock limit per program (a timeout is retried with twice the time as --timeout-retry says)', numberIn('--timeout', 0.1, 600), 3)
    .addOption(timeoutRetryOption())
    .option('--memory <MB>', 'memory limit per program', integerIn('--memory', 64, 65536), 1024)
    .option('--disk <MB>', 'all a program may write (its /tmp, /dev/shm and folder are tmpfs of this size each; pyodide: its in-memory files, within --memory)', integerIn('--disk', 1, 65536), DEFAULT_DISK_MB)
    .option('--jobs <n>', 'programs run at once', integerIn('--jobs', 1, 256), availableParallelism())
    .addOption(new Option('--sandbox <mode>', 'auto (bubblewrap), bwrap, process (limits only, no isolation), or pyodide (Python in WebAssembly, no host access; standard library only; npm install pyodide@0.28)').choices(['auto', 'bwrap', 'process', 'pyodide']).default('auto'))
    .option('--out <dir>', 'results.jsonl and summary.json go here; a rerun resumes what is missing')
    .addOption(formatOption())
    .action(async (opts: ExecCliOptions) => {
      const benchmarks = opts.benchmark ?? [];
      if (opts.selfTest) {
        if (opts.problems || opts.samples?.length) throw new UsageError('--self-test runs the bundled benchmarks\' own references: give no --problems or --samples');
        const [{ selfTest, formatSelfTest }, { resolveSandboxMode }] = await Promise.all([import('../exec/self-test.js'), import('../exec/sandbox/mode.js')]);
        const sandbox = resolveSandboxMode(opts.sandbox, io.err);
        const report = await selfTest({ benchmarks, sandbox, jobs: opts.jobs, timeoutMs: Math.round(opts.timeout * 1000), memoryMb: opts.memory, timeoutRetry: opts.timeoutRetry, onProgress: io.progress?.('self-test') });
        io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatSelfTest(report));
        const failed = report.benchmarks.reduce((n, b) => n + b.failed.length, 0);
        if (failed > 0) {
          io.err(`codegauge: ${failed} reference solution(s) failed their own tests here (listed above)\n`);
          exitRequest.code = 1;
        }
        return;
      }
      if (benchmarks.length > 1) throw new UsageError('--benchmark: give one benchmark (several only with --self-test)');
      if (!benchmarks.length && !opts.problems) throw new UsageError('give --benchmark NAME or --problems FILE');
      if (benchmarks.length && opts.problems) throw new UsageError('give --benchmark or --problems, not both');
      if (!opts.samples?.length) throw new UsageError("required option '--samples <file>' not specified");
      if (!opts.out) throw new UsageError("required option '--out <dir>' not specified");
      const problems = benchmarks.length ? readBenchmark(benchmarks[0]) : readProblems(opts.problems!, opts.lang);
      const ks = parseKs(opts.k?.length ? opts.k : ['1', '10', '100']);
      const [{ execSystems }, { resolveSandboxMode }] = await Promise.all([import('../exec/run.js'), import('../exec/sandbox/mode.js')]);
      const sandbox = resolveSandboxMode(opts.sandbox, io.err);
      const { summary } = await execSystems({
        problems,
        samples: opts.samples,
        ks,
        timeoutMs: Math.round(opts.timeout * 1000),
        timeoutRetry: opts.timeoutRetry,
        memoryMb: opts.memory,
        diskMb: opts.disk,
        jobs: opts.jobs,
        sandbox,
        outDir: opts.out,
        shard: opts.shard,
        excludeBroken: opts.excludeBroken,
        onProgress: io.progress?.('exec'),
      });
      io.out(opts.format === 'json' ? JSON.stringify(summary, null, 2) + '\n' : formatExecTable(summary));
      const sandboxErrors = summary.systems.reduce((n, s) => n + s.statuses.sandbox_error, 0);
      if (sandboxErrors > 0) {
        io.err(`codegauge: ${sandboxErrors} sample(s) could not be run by the sandbox (status sandbox_error; see ${opts.out}/results.jsonl)\n`);
        exitRequest.code = 1;
      }
    });
}
