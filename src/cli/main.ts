import { Command, CommanderError } from 'commander';
import { asOutputError, InputError, OutputError, ServerError } from '../errors.js';
import { VERSION } from '../version.js';
import { addAggregateCommand } from './aggregate.js';
import { addPipelineCommands } from './pipeline.js';
import { addAgreementCommand } from './agreement.js';
import { addCompareCommand } from './compare.js';
import { addEvalCommand } from './eval.js';
import { addExecCommand } from './exec.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, exitRequest, type CliIo } from './io.js';
import { addJudgeCommand } from './judge.js';
import { addMetaCommand } from './meta.js';
import { terminalProgress } from './progress.js';
import { addReportCommands } from './report.js';
import { addSbcCommands } from './sbc.js';
import { addScoreCommand } from './score.js';

export type { CliIo } from './io.js';
export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

/** The whole command tree; each command lives in its own file and is a thin layer over the library. */
export function buildProgram(io: CliIo): Command {
  const program = new Command('codegauge')
    .description('Exact reference-based metrics, honest statistics and LLM judges for generated code')
    .version(VERSION)
    .option('--debug', 'on an internal error, print the stack trace')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });
  addScoreCommand(program, io);
  addCompareCommand(program, io);
  addMetaCommand(program, io);
  addAgreementCommand(program, io);
  addSbcCommands(program, io);
  addJudgeCommand(program, io);
  addExecCommand(program, io);
  addEvalCommand(program, io);
  addReportCommands(program, io);
  addAggregateCommand(program, io);
  addPipelineCommands(program, io);
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

/**
 * The error contract at the edge: input and usage errors and unwritable outputs are one line and exit 2, server
 * failures one line and exit 1; anything else is a bug, reported as such with its stack behind --debug.
 */
export function exitCodeOf(error: unknown, io: CliIo, debug: boolean): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT_OK;
    return EXIT_USAGE; // commander has printed its one line
  }
  if (error instanceof OutputError) {
    io.err(`codegauge: error: ${error.message}\n`);
    return EXIT_USAGE;
  }
  // A file-system error that escaped a wrapper still names its path: the user's to fix, not a bug.
  const fsError = asOutputError(error);
  if (fsError) {
    io.err(`codegauge: error: ${fsError.path}: ${fsError.reason}\n`);
    return EXIT_USAGE;
  }
  if (error instanceof InputError) {
    io.err(`codegauge: error: ${error.message}\n`);
    return EXIT_USAGE;
  }
  if (error instanceof ServerError) {
    io.err(`codegauge: error: ${error.message}\n`);
    return EXIT_FAILURE;
  }
  const e = error as Error;
  io.err(debug ? `codegauge: internal error: ${e?.stack ?? e}\n` : `codegauge: internal error: ${e?.message ?? e} (a bug; rerun with --debug for the stack trace and report it)\n`);
  return EXIT_FAILURE;
}

/** Runs the CLI and returns its exit code; errors are reported on `err`, never thrown. */
export async function runCli(
  argv: string[],
  io: CliIo = { out: (s) => void process.stdout.write(s), err: (s) => void process.stderr.write(s), progress: terminalProgress },
): Promise<number> {
  const program = buildProgram(io);
  exitRequest.code = 0;
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitRequest.code || EXIT_OK;
  } catch (e) {
    return exitCodeOf(e, io, argv.includes('--debug'));
  }
}
