import type { Command } from 'commander';
import { VERSION } from '../version.js';
// The report renderer and the demo are loaded when their command runs, not at CLI start-up.
import type { CliIo } from './io.js';
import { formatOption } from './options.js';

/** `codegauge report` and `codegauge demo`. */
export function addReportCommands(program: Command, io: CliIo): void {
  program
    .command('report')
    .description('one self-contained HTML report (no network) from results: score/compare/meta/judge JSON, exec and eval folders (or their summary.json, results.jsonl, eval.json), SBC results.jsonl, judge --explain folders, run folders')
    .argument('<results...>', 'result files or folders (exec/eval/sbc: the --out folder; run: its results folder, read whole)')
    .requiredOption('--out <file>', 'the HTML file to write')
    .option('--title <title>', 'report title', 'codegauge report')
    .action(async (results: string[], opts: { out: string; title: string }) => {
      const { writeReport } = await import('../report/build.js');
      const inputs = writeReport(results, { out: opts.out, title: opts.title });
      io.out(`report written to ${opts.out} (${inputs.map((i) => (i.kind === 'exec' && i.columns ? 'eval' : i.kind)).join(', ')})\n`);
    });

  program
    .command('demo')
    .description('the main job end to end on bundled data, offline: metrics on CoNaLa, significance, agreement with human grades, SBC re-scoring, HTML report')
    .requiredOption('--out <dir>', 'output folder')
    .addOption(formatOption())
    .action(async (opts: { out: string; format: 'table' | 'json' }) => {
      const started = Date.now();
      const { runDemo } = await import('../demo.js');
      const result = await runDemo({ outDir: opts.out, log: (line) => opts.format === 'table' && io.err(`${line}\n`), onProgress: io.progress?.('paired bootstrap') });
      const seconds = (Date.now() - started) / 1000;
      if (opts.format === 'json') io.out(JSON.stringify({ kind: 'demo', version: VERSION, ...result, seconds }, null, 2) + '\n');
      else io.out(`${result.notes.join('\n')}\nfiles: ${result.files.join(', ')}\nopen ${result.report} (${seconds.toFixed(1)} s)\n`);
    });
}
