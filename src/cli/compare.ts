import { Option, type Command } from 'commander';
import { COMPARE_TESTS, compareResults, readResults, type CompareTest } from '../api/compare-input.js';
import { UsageError } from '../errors.js';
import { loadMetrics } from '../metrics/specs.js';
import type { Adjustment } from '../stats/intervals.js';
import { formatComparisonTable, formatInputComparisonTable } from './format.js';
import { exitRequest, type CliIo } from './io.js';
import { collect, formatOption, integerIn, numberIn, onlyWith, workSteps } from './options.js';
import { inferLanguage, readSystems } from './systems.js';

interface CompareCliOptions {
  refs?: string[];
  hyps?: string[];
  input?: string[];
  metric?: string[];
  id?: string;
  test?: CompareTest;
  cluster?: string;
  adjust: Adjustment;
  failIfWorse?: number;
  passAt?: number[];
  pairedBs?: boolean;
  pairedAr?: boolean;
  samples?: number;
  seed: number;
  lang?: string;
  maxWork?: number;
  format: 'table' | 'json';
}

/**
 * `codegauge compare`: paired significance tests of each system against the first (the baseline), either on
 * outputs scored here (--refs/--hyps/--metric, as sacrebleu) or on any per-item results (--input).
 */
export function addCompareCommand(program: Command, io: CliIo): void {
  program
    .command('compare')
    .description(
      'test whether each system differs from the baseline: on outputs scored here (--refs/--hyps/--metric, paired bootstrap or approximate randomization as sacrebleu) or on any per-item results (--input: score/judge JSON, exec or SBC results, JSONL/CSV)',
    )
    .option('--refs <file>', 'reference file; repeat for several references', collect)
    .option('--hyps <file>', 'hypothesis file; the first is the baseline; repeat for the systems', collect)
    .option('--input <file>', 'per-item results (score/judge JSON with segments, exec or SBC results.jsonl, .jsonl, .csv); the first is the baseline; repeat for the systems', collect)
    .option('--metric <spec>', 'with --hyps: metric spec; with --input: score column (default: passed, final_accuracy_score or every metric of a report); repeatable', collect)
    .option('--id <column>', 'with --input: the id column rows are aligned on (default task_id, question_id, id or segment)')
    .addOption(new Option('--test <test>', 'with --input: the paired test (default paired-bs)').choices(COMPARE_TESTS))
    .option('--cluster <column>', 'with --input: resample whole clusters (e.g. task_id with several samples per problem)')
    .addOption(new Option('--adjust <method>', 'with --input: adjust p-values over all comparisons (Holm, Benjamini-Hochberg)').choices(['holm', 'bh', 'none']).default('none'))
    .option('--fail-if-worse <delta>', 'with --input: exit 1 when a system is worse than the baseline by more than DELTA points with confidence (the 95% CI of the difference lies below -DELTA)', numberIn('--fail-if-worse', 0))
    .option('--pass-at <k>', 'with --input: also pass@k of pass/fail scores over problems (ids), with bootstrap CIs; repeatable', (v: string, prev: number[] | undefined) => [...(prev ?? []), integerIn('--pass-at', 1, 1_000_000)(v)])
    .option('--paired-bs', 'paired bootstrap resampling (default 1000 samples)')
    .option('--paired-ar', 'paired approximate randomization (default 10000 trials)')
    .option('--samples <n>', 'number of resamples or trials', integerIn('--samples', 1, 1_000_000))
    .option('--seed <n>', 'random seed (NumPy default_rng, as sacrebleu)', integerIn('--seed', 0, 2 ** 32 - 1), 12345)
    .option('--lang <language>', 'language of the code for codebleu/ruby when a spec has no lang=')
    .option('--max-work <steps>', 'with --hyps: work bound of one segment\'s LCS for rougeL/rougeLsum, in word steps (as score --max-work; default 2^34)', workSteps('--max-work'))
    .addOption(formatOption())
    .action(async (opts: CompareCliOptions, command: Command) => {
      if (opts.input) return compareInputs(opts, io, command);
      onlyWith(command, ['--id', '--test', '--cluster', '--adjust', '--fail-if-worse', '--pass-at'], '--input', false);
      if (!opts.refs || !opts.hyps || !opts.metric) throw new UsageError('compare needs --refs, --hyps and --metric (outputs to score), or --input (per-item results)');
      if (Boolean(opts.pairedBs) === Boolean(opts.pairedAr)) throw new UsageError('choose one test: --paired-bs or --paired-ar');
      if (opts.hyps.length < 2) throw new UsageError('compare needs a baseline and at least one system: give --hyps at least twice');
      const language = opts.lang ?? inferLanguage([...opts.hyps, ...opts.refs]);
      const metrics = await loadMetrics(opts.metric, { language, maxWork: opts.maxWork }); // specs checked before reading any data
      const { references, systems } = readSystems(opts.refs, opts.hyps);
      const { compareSystems } = await import('../api/compare.js'); // loaded when the command runs
      const report = await compareSystems({
        references,
        systems,
        metrics,
        test: opts.pairedBs ? 'bs' : 'ar',
        samples: opts.samples,
        seed: opts.seed,
        onProgress: io.progress?.('comparing'),
      });
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatComparisonTable(report));
      if (opts.format === 'json') for (const warning of report.warnings) io.err(`warning: ${warning}\n`);
    });
}

function compareInputs(opts: CompareCliOptions, io: CliIo, command: Command): void {
  if (opts.refs || opts.hyps) throw new UsageError('--input compares per-item results; it cannot be combined with --refs/--hyps');
  onlyWith(command, ['--lang', '--max-work'], '--refs/--hyps', false);
  if (opts.pairedBs && opts.pairedAr) throw new UsageError('choose one test: --paired-bs or --paired-ar');
  const legacy: CompareTest | undefined = opts.pairedBs ? 'paired-bs' : opts.pairedAr ? 'paired-ar' : undefined;
  if (legacy && opts.test && legacy !== opts.test) throw new UsageError(`--${legacy} contradicts --test ${opts.test}`);
  const test = opts.test ?? legacy ?? 'paired-bs';
  if (opts.samples !== undefined && test !== 'paired-bs' && test !== 'paired-ar') throw new UsageError(`--samples does nothing with --test ${test}`);
  const results = readResults(opts.input!, { id: opts.id, metrics: opts.metric, cluster: opts.cluster });
  const report = compareResults({ results, test, samples: opts.samples, seed: opts.seed, adjust: opts.adjust, cluster: opts.cluster, failIfWorse: opts.failIfWorse, passAt: opts.passAt });
  io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatInputComparisonTable(report));
  if (opts.format === 'json') for (const warning of report.warnings) io.err(`warning: ${warning}\n`);
  const failures = report.fail_if_worse?.failures ?? [];
  for (const f of failures) {
    io.err(`codegauge: ${f.system} is worse than the baseline ${report.systems[0].name} on ${f.metric} by more than ${report.fail_if_worse!.delta}: difference ${f.diff.toFixed(2)}, 95% CI [${f.ci[0].toFixed(2)}, ${f.ci[1].toFixed(2)}]\n`);
  }
  if (failures.length) exitRequest.code = 1;
}
