import type { Command } from 'commander';
import { availableParallelism } from 'node:os';
import { scoreFiles } from '../api/score.js';
import { describeMetrics, parseMetric } from '../metrics/registry.js';
import { formatScoreTable } from './format.js';
import type { CliIo } from './io.js';
import { collect, formatOption, integerIn, onlyWith } from './options.js';
import { inferLanguage, systemName } from './systems.js';

interface ScoreCliOptions {
  refs: string[];
  hyps: string[];
  metric: string[];
  lang?: string;
  segments: boolean;
  confidence: boolean;
  confidenceN: number;
  seed: number;
  jobs: number;
  format: 'table' | 'json';
}

/**
 * `codegauge score`: streams the files, so memory holds per-segment statistics only, never the texts; large
 * inputs are split over worker threads.
 */
export function addScoreCommand(program: Command, io: CliIo): void {
  program
    .command('score')
    .description('score one or more systems against references with one or more metrics')
    .requiredOption('--refs <file>', 'reference file (.txt: one segment per line; .jsonl: one JSON string, or array of strings, per line); repeat for several references', collect)
    .requiredOption('--hyps <file>', 'hypothesis file of one system (.txt or .jsonl); repeat for several systems', collect)
    .requiredOption('--metric <spec>', 'metric spec, name or name:key=value,...; repeat for several metrics', collect)
    .option('--lang <language>', 'language of the code for codebleu/ruby when a spec has no lang= (default: from file names such as hyps.py.jsonl)')
    .option('--segments', 'also output sentence-level scores (JSON)', false)
    .option('--confidence', 'bootstrap 95% confidence interval of each score, as sacrebleu --confidence', false)
    .option('--confidence-n <n>', 'bootstrap samples for --confidence', integerIn('--confidence-n', 1, 1_000_000), 1000)
    .option('--seed <n>', 'random seed for --confidence', integerIn('--seed', 0, 2 ** 32 - 1), 12345)
    .option('--jobs <n>', 'worker threads for large inputs (results are identical for any number)', integerIn('--jobs', 1, 64), Math.min(availableParallelism(), 8))
    .addOption(formatOption())
    .addHelpText('after', `\nMetrics and their keys:\n${describeMetrics()}\n`)
    .action(async (opts: ScoreCliOptions, command: Command) => {
      onlyWith(command, ['--confidence-n', '--seed'], '--confidence', opts.confidence);
      const language = opts.lang ?? inferLanguage([...opts.hyps, ...opts.refs]);
      for (const m of opts.metric) parseMetric(m, { language }); // validate specs before reading any data
      const taken = new Set<string>();
      const systems = opts.hyps.map((path) => systemName(path, taken));
      const progress = io.progress?.('scoring');
      const report = await scoreFiles({
        refPaths: opts.refs,
        hypPaths: opts.hyps,
        systems,
        specs: opts.metric,
        language,
        workers: opts.jobs,
        segments: opts.segments,
        confidence: opts.confidence ? { samples: opts.confidenceN, seed: opts.seed } : undefined,
        // The total is unknown while streaming: show the count so far.
        onSegment: progress && ((done) => void (done % 1000 === 0 && progress(done, 0))),
      });
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatScoreTable(report));
    });
}
