import { Option, type Command } from 'commander';
import { readTable } from '../io/table.js';
import type { CliIo } from './io.js';
import { formatOption } from './options.js';

/** `codegauge aggregate`: one label per item from several graders (M-MSR or the mean). */
export function addAggregateCommand(program: Command, io: CliIo): void {
  program
    .command('aggregate')
    .description('aggregate several graders\' labels per item: M-MSR (robust skill-weighted vote, as "Out of the BLEU") or the mean')
    .requiredOption('--input <file>', 'table of answers: .jsonl or .csv, one row per (item, grader)')
    .requiredOption('--task <column>', 'the item column')
    .requiredOption('--worker <column>', 'the grader column')
    .requiredOption('--label <column>', 'the grade column (numbers)')
    .addOption(new Option('--method <method>', 'aggregation').choices(['mmsr', 'mean']).default('mmsr'))
    .addOption(formatOption())
    .action(async (opts: { input: string; task: string; worker: string; label: string; method: 'mmsr' | 'mean'; format: 'table' | 'json' }) => {
      const { aggregateTable } = await import('../api/aggregate.js'); // loaded when the command runs
      const report = aggregateTable(readTable(opts.input), opts.input, opts);
      if (opts.format === 'json') return io.out(JSON.stringify(report, null, 2) + '\n');
      io.out(report.items.map((r) => `${r.task}\t${r.label}`).join('\n') + '\n');
      if (report.skills) io.err(Object.entries(report.skills).map(([w, s]) => `skill ${w}: ${s.toFixed(3)}`).join('\n') + '\n');
    });
}
