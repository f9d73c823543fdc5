import { Command } from 'commander';
import { VERSION } from '../version.js';
import type { CliIo } from './io.js';

/** A command file's entry: adds its command(s) to the program. */
export type AddCommands = (program: Command, io: CliIo) => void;

/** The root program with the given commands; every subcommand shares the root's exit override and output. */
export function makeProgram(io: CliIo, commands: AddCommands[]): Command {
  const program = new Command('codegauge')
    .description('Exact reference-based metrics, honest statistics and LLM judges for generated code')
    .version(VERSION)
    .option('--debug', 'on an internal error, print the stack trace')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });
  for (const add of commands) add(program, io);
  // Subcommands take the same exit override and output as the root, so their usage errors are ours too.
  const inherit = (command: Command) => {
    for (const sub of command.commands) {
      sub.exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}
