import type { Command } from 'commander';
import { mergeShards } from '../api/merge.js';
import { BaselineStore } from '../config/baselines.js';
import { UsageError } from '../errors.js';
import { exitRequest, type CliIo } from './io.js';
import { formatOption } from './options.js';

/** `codegauge merge DIR...`: one result set from `--shard i/N` runs. */
export function addMergeCommand(program: Command, io: CliIo): void {
  program
    .command('merge')
    .description('join the results of --shard i/N runs into one result set: corpus scores recomputed from the shards\' summed statistics where a metric has them, other results as means of items; exec and eval shards: their rows together and pass@k from them (refuses mismatched signatures; reports missing shards and items; exit 1 when incomplete)')
    .argument('<dirs...>', 'shard results folders (run: OUT/shard-i-of-N, or OUT holding them; exec, eval: the --out folders of the shards)')
    .option('--out <dir>', 'write the merged items.jsonl and merge.json here')
    .option('--save-baseline <name>', 'store the merged per-item results as baseline NAME (complete merges only)')
    .option('--store <file>', 'SQLite store for --save-baseline', '.codegauge/cache.sqlite')
    .addOption(formatOption())
    .action(async (dirs: string[], opts: { out?: string; saveBaseline?: string; store: string; format: 'table' | 'json' }) => {
      const { mergeExecShards, readExecRun, shardFolders } = await import('../exec/merge.js');
      if (shardFolders(dirs).some((dir) => readExecRun(dir) !== undefined)) {
        // exec and eval shards: their rows together, pass@k from them, as one unsharded run writes it
        if (opts.saveBaseline !== undefined) throw new UsageError('--save-baseline: exec and eval results are not kept as baselines (run codegauge run for that)');
        const merged = mergeExecShards(dirs, { out: opts.out });
        const { formatExecTable } = await import('./exec.js');
        io.out(opts.format === 'json' ? JSON.stringify(merged.summary, null, 2) + '\n' : `merged ${merged.shards.present.length} of ${merged.shards.count} shard(s)\n${formatExecTable(merged.summary)}`);
        for (const m of merged.missing) io.err(`codegauge: incomplete: ${m}\n`);
        if (!merged.complete) exitRequest.code = 1;
        return;
      }
      const report = mergeShards(dirs, { out: opts.out });
      if (opts.saveBaseline !== undefined) {
        if (!report.complete) throw new UsageError(`--save-baseline: the merge is incomplete (${report.missing[0]}); a baseline must hold every item`);
        const store = new BaselineStore(opts.store);
        try {
          store.save(opts.saveBaseline, report.items);
        } finally {
          store.close();
        }
        io.err(`saved baseline "${opts.saveBaseline}" in ${opts.store}\n`);
      }
      if (opts.format === 'json') {
        const { items: _items, ...rest } = report;
        void _items;
        io.out(JSON.stringify(rest, null, 2) + '\n');
      } else {
        const lines = [`merged ${report.shards.present.length} of ${report.shards.count} shard(s)`];
        for (const s of report.scores) lines.push(`${s.system.padEnd(20)} ${s.metric.padEnd(24)} ${s.score === null ? 'n/a' : s.score.toFixed(2)}  (n=${s.n}, ${s.aggregation === 'corpus' ? 'corpus score from the summed statistics' : 'mean of items'})`);
        io.out(lines.join('\n') + '\n');
      }
      for (const m of report.missing) io.err(`codegauge: incomplete: ${m}\n`);
      if (!report.complete) exitRequest.code = 1;
    });
}
