import type { Command } from 'commander';
import { addInitCommand } from './init.js';
import type { CliIo } from './io.js';
import { addMergeCommand } from './merge.js';
import { addRunCommand } from './run.js';

/** The pipeline commands: `init`, `run` (config, baselines, gates, CI reporters) and `merge` (shards). */
export function addPipelineCommands(program: Command, io: CliIo): void {
  addInitCommand(program, io);
  addRunCommand(program, io);
  addMergeCommand(program, io);
}
