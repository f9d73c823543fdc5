import { existsSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UsageError, writing } from '../errors.js';
import { STARTER_CONFIG } from '../config/starter.js';
import type { CliIo } from './io.js';

/** `codegauge init`: a commented starter config that runs as it is on the bundled data, offline. */
export function addInitCommand(program: Command, io: CliIo): void {
  program
    .command('init')
    .description('write a commented starter codegauge.config.yaml that runs offline on the bundled data (then: codegauge run)')
    .option('--config <file>', 'the file to write', 'codegauge.config.yaml')
    .option('--force', 'overwrite an existing file', false)
    .action((opts: { config: string; force: boolean }) => {
      if (existsSync(opts.config) && !opts.force) throw new UsageError(`${opts.config} exists; use --force to overwrite it`);
      writing(opts.config, () => writeFileSync(opts.config, STARTER_CONFIG));
      io.out(`wrote ${opts.config}; run it with: codegauge run${opts.config === 'codegauge.config.yaml' ? '' : ` --config ${opts.config}`}\n`);
    });
}
