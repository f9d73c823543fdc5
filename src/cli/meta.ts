import { Option, type Command } from 'commander';
import { InputError } from '../errors.js';
import { joinTables, numericColumn, readTable, stringColumn } from '../io/table.js';
import { formatMetaTable } from './format.js';
import type { CliIo } from './io.js';
import { collect, formatOption, integerIn, numberIn, onlyWith } from './options.js';
import { InvalidArgumentError } from 'commander';

interface MetaCliOptions {
  input: string;
  join?: string[];
  truth: string;
  metricColumn: string[];
  group?: string;
  samples: number;
  seed: number;
  modelPairs?: boolean;
  system?: string;
  outputColumn?: string;
  bins: number[];
  studySamples: number;
  rng: 'numpy' | 'python';
  agreement?: boolean;
  threshold?: number;
  format: 'table' | 'json';
}

/** `--bins 2,5,10`: increasing positive metric-difference edges in points. */
function binEdges(value: string): number[] {
  const edges = value.split(',').map((x) => (x.trim() === '' ? NaN : Number(x)));
  if (edges.some((x) => !Number.isFinite(x) || x <= 0) || edges.some((x, i) => i > 0 && x <= edges[i - 1])) {
    throw new InvalidArgumentError(`--bins must be increasing positive numbers such as 2,5,10, got "${value}"`);
  }
  return edges;
}

/** `codegauge meta`: how well metrics agree with a ground truth, and the model-pair study of "Out of the BLEU". */
export function addMetaCommand(program: Command, io: CliIo): void {
  program
    .command('meta')
    .description('how well metrics agree with a ground truth (human grades, execution results): Pearson, Spearman, Kendall tau-b/tau-c with p-values and bootstrap CIs')
    .requiredOption('--input <file>', 'table: .jsonl (one object per line), .csv (header row), or a score --segments / judge JSON report')
    .option('--join <file>', 'add the columns of another table (e.g. execution labels), matched on shared columns such as system and segment, else by row; repeatable', collect)
    .requiredOption('--truth <column>', 'the ground-truth column')
    .requiredOption('--metric-column <column>', 'a metric column; repeat for several', collect)
    .option('--group <column>', 'group rows (e.g. by problem) for example-level and pairwise correlations')
    .option('--samples <n>', 'bootstrap resamples for confidence intervals (0 for none)', integerIn('--samples', 0, 100_000), 1000)
    .option('--seed <n>', 'random seed', integerIn('--seed', 0, 2 ** 32 - 1), 12345)
    .option('--model-pairs', 'also run the "Out of the BLEU" model-pair study (needs --group for items and --system)')
    .option('--system <column>', 'the system column, for --model-pairs')
    .option('--output-column <column>', 'the system output column: identical synthetic systems are merged by it (--model-pairs)')
    .option('--bins <edges>', 'metric-difference bin edges in points, for --model-pairs', binEdges, [2, 5, 10])
    .option('--study-samples <n>', 'bootstrap samples of the model-pair study', integerIn('--study-samples', 1, 100_000), 500)
    .addOption(new Option('--rng <rng>', 'random generator of the study: numpy (default_rng) or python (random, as the paper)').choices(['numpy', 'python']).default('numpy'))
    .option('--agreement', "also report Cohen's kappa, Krippendorff's alpha, AUROC, the confusion matrix and the Rogan-Gladen corrected pass rate of each metric")
    .option('--threshold <x>', 'with --agreement: a metric value >= X is a pass (default: the best Youden threshold)', numberIn('--threshold', -1e9, 1e9))
    .addOption(formatOption())
    .action(async (opts: MetaCliOptions, command: Command) => {
      // The meta-evaluation library is loaded when the command runs, not at CLI start-up.
      const { metaEvaluate, modelPairStudyOfTable } = await import('../api/meta.js');
      onlyWith(command, ['--system', '--output-column', '--bins', '--study-samples', '--rng'], '--model-pairs', Boolean(opts.modelPairs));
      onlyWith(command, ['--threshold'], '--agreement', Boolean(opts.agreement));
      if (opts.modelPairs && (!opts.group || !opts.system)) throw new InputError('--model-pairs needs --group (the item column) and --system');
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
        agreement: opts.agreement ? { threshold: opts.threshold } : undefined,
      });
      if (opts.modelPairs) {
        report.model_pairs = modelPairStudyOfTable(table, opts.input, {
          truth: opts.truth,
          metrics: opts.metricColumn,
          group: opts.group!,
          system: opts.system!,
          outputColumn: opts.outputColumn,
          samples: opts.studySamples,
          seed: opts.seed,
          rng: opts.rng,
          edges: opts.bins,
        });
      }
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatMetaTable(report));
    });
}
