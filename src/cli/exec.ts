import { availableParallelism } from 'node:os';
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { BENCHMARKS, readBenchmark } from '../exec/benchmarks/bundled.js';
import { readProblems } from '../exec/benchmarks/problems.js';
// Running and sandboxing are loaded when the command runs, not at CLI start-up.
import type { ExecSummary } from '../exec/run.js';
import { exitRequest, type CliIo } from './io.js';
import { collect, formatOption, integerIn, list, numberIn } from './options.js';

/** `codegauge exec`: run generated code against tests in a sandbox and report pass@k. */
interface ExecCliOptions {
  benchmark?: string;
  problems?: string;
  lang?: string;
  samples: string[];
  k: string[];
  timeout: number;
  timeoutRetry: 'always' | 'starved' | 'never';
  memory: number;
  jobs: number;
  sandbox: 'auto' | 'bwrap' | 'process' | 'pyodide';
  out: string;
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
  const header = ['system', 'n', 'problems', ...ks.map((k) => `pass@${k}`), ...hatKs.map((k) => `pass^${k}`), 'passed', 'failed', 'timeout', 'compile', 'runtime', 'memory', 'sandbox'];
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
    String(s.statuses.sandbox_error),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  const out = [line(header), ...rows.map(line)];
  for (const s of summary.systems) {
    for (const note of s.notes ?? []) out.push(`${s.name}: ${note}`);
    out.push(`${s.name}: ${s.signature}`);
  }
  return out.join('\n') + '\n';
}

export function addExecCommand(program: Command, io: CliIo): void {
  program
    .command('exec')
    .description('run generated code against tests in a sandbox (bubblewrap) and report pass@k')
    .addOption(new Option('--benchmark <name>', `bundled problems: ${Object.keys(BENCHMARKS).join(', ')}`).conflicts('problems'))
    .option('--problems <file>', 'problems (.jsonl or .jsonl.gz): human-eval, MultiPL-E or HumanEval-X format')
    .option('--lang <language>', 'language of --problems when the file does not say (python, javascript, typescript, java, cpp, rust, php, ruby, go, csharp)')
    .requiredOption('--samples <file>', 'samples of one system (.jsonl: task_id + completion or solution); repeat for several systems', collect)
    .option('--k <list>', 'pass@k for these k (comma-separated)', list)
    .option('--timeout <seconds>', 'wall-clock limit per program (a timeout is retried once with twice the time, as --timeout-retry says)', numberIn('--timeout', 0.1, 600), 3)
    .addOption(timeoutRetryOption())
    .option('--memory <MB>', 'memory limit per program', integerIn('--memory', 64, 65536), 1024)
    .option('--jobs <n>', 'programs run at once', integerIn('--jobs', 1, 256), availableParallelism())
    .addOption(new Option('--sandbox <mode>', 'auto (bubblewrap), bwrap, process (limits only, no isolation), or pyodide (Python in WebAssembly, no host access; standard library only; npm install pyodide@0.28)').choices(['auto', 'bwrap', 'process', 'pyodide']).default('auto'))
    .requiredOption('--out <dir>', 'results.jsonl and summary.json go here; a rerun resumes what is missing')
    .addOption(formatOption())
    .action(async (opts: ExecCliOptions) => {
      if (!opts.benchmark && !opts.problems) throw new UsageError('give --benchmark NAME or --problems FILE');
      const problems = opts.benchmark ? readBenchmark(opts.benchmark) : readProblems(opts.problems!, opts.lang);
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
        jobs: opts.jobs,
        sandbox,
        outDir: opts.out,
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
