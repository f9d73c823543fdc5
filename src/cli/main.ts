import { basename, extname } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { InputError, readHypotheses, readReferences } from '../io/segments.js';
import { languageOfFile, UnknownLanguageError } from '../code/languages.js';
import { describeMetrics, parseMetric, SpecError } from '../metrics/registry.js';
import { scoreSystems } from '../score.js';
import { VERSION } from '../version.js';
import { terminalProgress } from './progress.js';
import { addJudgeCommand } from './judge.js';
import { addReportCommands } from './report.js';
import { addSbcCommands } from './sbc.js';
import { ModelSpecError } from '../llm/model-spec.js';
import { LlmError } from '../llm/types.js';
import { formatComparisonTable, formatMetaTable, formatScoreTable } from './format.js';
import { metaEvaluate, modelPairStudy } from '../meta.js';
import { meanAggregation, mmsr } from '../stats/aggregation.js';
import { joinTables, numericColumn, readTable, stringColumn } from '../io/table.js';
import { compareSystems } from '../compare.js';

/** A command that completed but must signal failure (e.g. `sbc check` below its minimum) sets this. */
export const exitRequest = { code: 0 };

/** Exit codes: 0 success, 1 unexpected failure or a failed check, 2 bad input or usage. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Option parser for repeatable options. */
export const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

function systemName(path: string, taken: Set<string>): string {
  const base = basename(path, extname(path));
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}#${i}`;
  taken.add(name);
  return name;
}

/** The references and one system per hypothesis file (named after the file), as score, compare and judge read them. */
export function readSystems(refs: string[], hyps: string[]) {
  const { references, files } = readReferences(refs);
  const taken = new Set<string>();
  const systems = hyps.map((path) => ({ name: systemName(path, taken), hypotheses: readHypotheses(path, files[0]) }));
  return { references, systems };
}

/** A language named by a file's inner extension: `codex.py.jsonl`, `refs.ts.txt`. */
export function inferLanguage(paths: string[]): string | undefined {
  for (const path of paths) {
    const inner = basename(path, extname(path));
    const language = languageOfFile(inner);
    if (language) return language;
  }
  return undefined;
}

export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
  /** A progress reporter for long commands (a bar on a terminal, nothing in pipes and CI). */
  progress?: (label: string, detail?: () => string) => (done: number, total: number) => void;
}

export function buildProgram(io: CliIo): Command {
  const program = new Command('codegauge')
    .description('Exact reference-based metrics, honest statistics and LLM judges for generated code')
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });

  program
    .command('score')
    .description('score one or more systems against references with one or more metrics')
    .requiredOption('--refs <file>', 'reference file (.txt: one segment per line; .jsonl: one JSON string, or array of strings, per line); repeat for several references', collect)
    .requiredOption('--hyps <file>', 'hypothesis file of one system (.txt or .jsonl); repeat for several systems', collect)
    .requiredOption('--metric <spec>', 'metric spec, name or name:key=value,...; repeat for several metrics', collect)
    .option('--lang <language>', 'language of the code for codebleu/ruby when a spec has no lang= (default: from file names such as hyps.py.jsonl)')
    .option('--segments', 'also output sentence-level scores (JSON)', false)
    .option('--confidence', 'bootstrap 95% confidence interval of each score, as sacrebleu --confidence', false)
    .option('--confidence-n <n>', 'bootstrap samples for --confidence', (v) => positiveInteger(v, '--confidence-n'), 1000)
    .option('--seed <n>', 'random seed for --confidence', (v) => nonNegativeInteger(v, '--seed'), 12345)
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .addHelpText('after', `\nMetrics and their keys:\n${describeMetrics()}\n`)
    .action(async (opts: { refs: string[]; hyps: string[]; metric: string[]; lang?: string; segments: boolean; confidence: boolean; confidenceN: number; seed: number; format: 'table' | 'json' }) => {
      const language = opts.lang ?? inferLanguage([...opts.hyps, ...opts.refs]);
      const metrics = opts.metric.map((m) => parseMetric(m, { language })); // validate specs before reading any data
      const { references, systems } = readSystems(opts.refs, opts.hyps);
      const confidence = opts.confidence ? { samples: opts.confidenceN, seed: opts.seed } : undefined;
      const report = await scoreSystems({ references, systems, metrics, segments: opts.segments, confidence });
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatScoreTable(report));
    });

  program
    .command('compare')
    .description('test whether each system differs from the baseline (the first --hyps): paired bootstrap or approximate randomization, as sacrebleu')
    .requiredOption('--refs <file>', 'reference file; repeat for several references', collect)
    .requiredOption('--hyps <file>', 'hypothesis file; the first is the baseline; repeat for the systems', collect)
    .requiredOption('--metric <spec>', 'metric spec; repeat for several metrics', collect)
    .option('--paired-bs', 'paired bootstrap resampling (default 1000 samples)')
    .option('--paired-ar', 'paired approximate randomization (default 10000 trials)')
    .option('--samples <n>', 'number of resamples or trials', (v) => positiveInteger(v, '--samples'))
    .option('--seed <n>', 'random seed (NumPy default_rng, as sacrebleu)', (v) => nonNegativeInteger(v, '--seed'), 12345)
    .option('--lang <language>', 'language of the code for codebleu/ruby when a spec has no lang=')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (opts: { refs: string[]; hyps: string[]; metric: string[]; pairedBs?: boolean; pairedAr?: boolean; samples?: number; seed: number; lang?: string; format: 'table' | 'json' }) => {
      if (Boolean(opts.pairedBs) === Boolean(opts.pairedAr)) throw new InputError('choose one test: --paired-bs or --paired-ar');
      if (opts.hyps.length < 2) throw new InputError('compare needs a baseline and at least one system: give --hyps at least twice');
      const language = opts.lang ?? inferLanguage([...opts.hyps, ...opts.refs]);
      const metrics = opts.metric.map((m) => parseMetric(m, { language }));
      const { references, systems } = readSystems(opts.refs, opts.hyps);
      const progress = io.progress?.('comparing');
      const report = await compareSystems({
        references,
        systems,
        metrics,
        test: opts.pairedBs ? 'bs' : 'ar',
        samples: opts.samples,
        seed: opts.seed,
        onProgress: progress,
      });
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatComparisonTable(report));
    });

  program
    .command('meta')
    .description('how well metrics agree with a ground truth (human grades, execution results): Pearson, Spearman, Kendall tau-b/tau-c with p-values and bootstrap CIs')
    .requiredOption('--input <file>', 'table: .jsonl (one object per line), .csv (header row), or a score --segments / judge JSON report')
    .option('--join <file>', 'add the columns of another table (e.g. execution labels), matched on shared columns such as system and segment, else by row; repeatable', collect)
    .requiredOption('--truth <column>', 'the ground-truth column')
    .requiredOption('--metric-column <column>', 'a metric column; repeat for several', collect)
    .option('--group <column>', 'group rows (e.g. by problem) for example-level and pairwise correlations')
    .option('--samples <n>', 'bootstrap resamples for confidence intervals (0 for none)', (v) => nonNegativeInteger(v, '--samples'), 1000)
    .option('--seed <n>', 'random seed', (v) => nonNegativeInteger(v, '--seed'), 12345)
    .option('--model-pairs', 'also run the "Out of the BLEU" model-pair study (needs --group for items and --system)')
    .option('--system <column>', 'the system column, for --model-pairs')
    .option('--output-column <column>', 'the system output column: identical synthetic systems are merged by it')
    .option('--bins <edges>', 'metric-difference bin edges in points, for --model-pairs', '2,5,10')
    .option('--study-samples <n>', 'bootstrap samples of the model-pair study', (v) => positiveInteger(v, '--study-samples'), 500)
    .addOption(new Option('--rng <rng>', 'random generator of the study: numpy (default_rng) or python (random, as the paper)').choices(['numpy', 'python']).default('numpy'))
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action((opts: { input: string; join?: string[]; truth: string; metricColumn: string[]; group?: string; samples: number; seed: number; modelPairs?: boolean; system?: string; outputColumn?: string; bins: string; studySamples: number; rng: 'numpy' | 'python'; format: 'table' | 'json' }) => {
      let table = readTable(opts.input);
      if (table.rows.length === 0) throw new InputError('no rows', opts.input);
      for (const path of opts.join ?? []) table = joinTables(table, readTable(path));
      const report = metaEvaluate({
        truthName: opts.truth,
        truth: numericColumn(table, opts.truth),
        metrics: opts.metricColumn.map((c) => ({ name: c, values: numericColumn(table, c) })),
        groups: opts.group ? stringColumn(table, opts.group) : undefined,
        samples: opts.samples,
        seed: opts.seed,
      });
      if (opts.modelPairs) {
        if (!opts.group || !opts.system) throw new InputError('--model-pairs needs --group (the item column) and --system');
        const edges = opts.bins.split(',').map((x) => Number(x.trim()));
        if (edges.some((x) => !Number.isFinite(x) || x <= 0) || edges.some((x, i) => i > 0 && x <= edges[i - 1])) {
          throw new InputError(`--bins must be increasing positive numbers, got "${opts.bins}"`);
        }
        const truth = numericColumn(table, opts.truth);
        const metricValues = opts.metricColumn.map((c) => ({ name: c, values: numericColumn(table, c) }));
        const missing = truth.findIndex((t, i) => t === null || metricValues.some((m) => m.values[i] === null));
        if (missing >= 0) throw new InputError('--model-pairs needs every value present', opts.input, table.lines[missing]);
        report.model_pairs = modelPairStudy({
          items: stringColumn(table, opts.group),
          systems: stringColumn(table, opts.system),
          truth: truth as number[],
          metrics: metricValues.map((m) => ({ name: m.name, values: m.values as number[] })),
          outputs: opts.outputColumn ? stringColumn(table, opts.outputColumn) : undefined,
          samples: opts.studySamples,
          seed: opts.rng === 'python' ? undefined : opts.seed,
          rng: opts.rng,
          edges,
        });
      }
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatMetaTable(report));
    });

  addSbcCommands(program, io);
  addJudgeCommand(program, io);
  addReportCommands(program, io);

  program
    .command('aggregate')
    .description('aggregate several graders\' labels per item: M-MSR (robust skill-weighted vote, as "Out of the BLEU") or the mean')
    .requiredOption('--input <file>', 'table of answers: .jsonl or .csv, one row per (item, grader)')
    .requiredOption('--task <column>', 'the item column')
    .requiredOption('--worker <column>', 'the grader column')
    .requiredOption('--label <column>', 'the grade column (numbers)')
    .addOption(new Option('--method <method>', 'aggregation').choices(['mmsr', 'mean']).default('mmsr'))
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action((opts: { input: string; task: string; worker: string; label: string; method: 'mmsr' | 'mean'; format: 'table' | 'json' }) => {
      const table = readTable(opts.input);
      const labels = numericColumn(table, opts.label);
      const tasks = stringColumn(table, opts.task);
      const workers = stringColumn(table, opts.worker);
      const answers = labels.flatMap((l, i) => (l === null ? [] : [{ task: tasks[i], worker: workers[i], label: l }]));
      if (answers.length === 0) throw new InputError('no answers', opts.input);
      const result = opts.method === 'mean' ? { labels: meanAggregation(answers), skills: null } : mmsr(answers);
      const rows = [...result.labels].map(([task, label]) => ({ task, label }));
      if (opts.format === 'json') {
        io.out(JSON.stringify({ method: opts.method, items: rows, skills: result.skills ? Object.fromEntries(result.skills) : null }, null, 2) + '\n');
      } else {
        io.out(rows.map((r) => `${r.task}\t${r.label}`).join('\n') + '\n');
        if (result.skills) io.err([...result.skills].map(([w, s]) => `skill ${w}: ${s.toFixed(3)}`).join('\n') + '\n');
      }
    });

  return program;
}

function positiveInteger(value: string, option: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${option} must be an integer >= 1`);
  return n;
}

function nonNegativeInteger(value: string, option: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${option} must be an integer >= 0`);
  return n;
}

/** Runs the CLI and returns its exit code; errors are reported on `err`, never thrown. */
export async function runCli(
  argv: string[],
  io: CliIo = { out: (s) => void process.stdout.write(s), err: (s) => void process.stderr.write(s), progress: terminalProgress },
): Promise<number> {
  const program = buildProgram(io);
  exitRequest.code = 0;
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitRequest.code || EXIT_OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT_OK;
      return EXIT_USAGE;
    }
    if (e instanceof LlmError) {
      io.err(`codegauge: error: ${e.message}\n`);
      return EXIT_FAILURE;
    }
    if (e instanceof InputError || e instanceof SpecError || e instanceof UnknownLanguageError || e instanceof ModelSpecError) {
      io.err(`codegauge: error: ${e.message}\n`);
      return EXIT_USAGE;
    }
    io.err(`codegauge: internal error: ${(e as Error).stack ?? e}\n`);
    return EXIT_FAILURE;
  }
}
