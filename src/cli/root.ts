import { Command } from 'commander';
import { VERSION } from '../version.js';
import type { CliIo } from './io.js';

const output = (io: CliIo) => ({ writeOut: io.out, writeErr: io.err, outputError: (text: string) => io.err(commanderErrorLine(text)) });

/** A command file's entry: adds its command(s) to the program. */
export type AddCommands = (program: Command, io: CliIo) => void;

/**
 * Commander's own usage errors in codegauge's one style: `codegauge: error: <what>`, on one line. Commander writes
 * `error: option '--timeout <seconds>' argument '-1' is invalid. <our parser's message>` (the parser's message already
 * names the option and value, so it stands alone), `... Allowed choices are table, json.` for choices, and a
 * suggestion on a line of its own (`(Did you mean score?)`), which joins the line.
 */
export function commanderErrorLine(text: string): string {
  const [first, ...rest] = text.trim().split('\n');
  let message = first.replace(/^error: /, '');
  const invalid = /^option '([^']+)' argument '(.*)' is invalid\. (.*)$/.exec(message);
  if (invalid) {
    const flag = invalid[1].split(/[\s,]+/).find((f) => f.startsWith('--')) ?? invalid[1];
    const choices = /^Allowed choices are (.*)\.$/.exec(invalid[3]);
    message = choices ? `${flag} must be one of ${choices[1]}, got "${invalid[2]}"` : invalid[3];
  }
  const hint = rest.map((l) => l.trim().replace(/^\((.*)\)$/, '$1')).filter(Boolean).join(' ');
  return `codegauge: error: ${message}${hint ? ` (${hint.charAt(0).toLowerCase()}${hint.slice(1)})` : ''}\n`;
}

/** The root program with the given commands; every subcommand shares the root's exit override and output. */
export function makeProgram(io: CliIo, commands: AddCommands[]): Command {
  const program = new Command('codegauge')
    .description('Exact reference-based metrics, honest statistics and LLM judges for generated code')
    .version(VERSION)
    .option('--debug', 'on an internal error, print the stack trace')
    .exitOverride()
    .configureOutput(output(io));
  for (const add of commands) add(program, io);
  // Subcommands take the same exit override and output as the root, so their usage errors are ours too.
  const inherit = (command: Command) => {
    for (const sub of command.commands) {
      sub.exitOverride().configureOutput(output(io));
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}
