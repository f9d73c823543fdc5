import type { Command } from 'commander';
import { compareSystems } from '../api/compare.js';
import { UsageError } from '../errors.js';
import { parseMetric } from '../metrics/registry.js';
import { formatComparisonTable } from './format.js';
import type { CliIo } from './io.js';
import { collect, formatOption, integerIn } from './options.js';
import { inferLanguage, readSystems } from './systems.js';

interface CompareCliOptions {
  refs: string[];
  hyps: string[];
  metric: string[];
  pairedBs?: boolean;
  pairedAr?: boolean;
  samples?: number;
  seed: number;
  lang?: string;
  format: 'table' | 'json';
}

/** `codegauge compare`: paired significance tests of each system against the first (the baseline). */
export function addCompareCommand(program: Command, io: CliIo): void {
  program
    .command('compare')
    .description('test whether each system differs from the baseline (the first --hyps): paired bootstrap or approximate randomization, as sacrebleu')
    .requiredOption('--refs <file>', 'reference file; repeat for several references', collect)
    .requiredOption('--hyps <file>', 'hypothesis file; the first is the baseline; repeat for the systems', collect)
    .requiredOption('--metric <spec>', 'metric spec; repeat for several metrics', collect)
    .option('--paired-bs', 'paired bootstrap resampling (default 1000 samples)')
    .option('--paired-ar', 'paired approximate randomization (default 10000 trials)')
    .option('--samples <n>', 'number of resamples or trials', integerIn('--samples', 1, 1_000_000))
    .option('--seed <n>', 'random seed (NumPy default_rng, as sacrebleu)', integerIn('--seed', 0, 2 ** 32 - 1), 12345)
    .option('--lang <language>', 'language of the code for codebleu/ruby when a spec has no lang=')
    .addOption(formatOption())
    .action(async (opts: CompareCliOptions) => {
      if (Boolean(opts.pairedBs) === Boolean(opts.pairedAr)) throw new UsageError('choose one test: --paired-bs or --paired-ar');
      if (opts.hyps.length < 2) throw new UsageError('compare needs a baseline and at least one system: give --hyps at least twice');
      const language = opts.lang ?? inferLanguage([...opts.hyps, ...opts.refs]);
      const metrics = opts.metric.map((m) => parseMetric(m, { language }));
      const { references, systems } = readSystems(opts.refs, opts.hyps);
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
