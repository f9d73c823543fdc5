import { CommanderError, type Command } from 'commander';
import { asOutputError, InputError, OutputError, ServerError } from '../errors.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, exitRequest, type CliIo } from './io.js';
import { terminalProgress } from './progress.js';
import { makeProgram, type AddCommands } from './root.js';

export type { CliIo } from './io.js';
export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

/**
 * Each command's module, loaded only when that command runs: a `codegauge score` process does not load the judges,
 * the SQLite store, the config schema or the sandbox (start-up time is most of a small job). Help, version and
 * unknown commands load the whole tree (`program.ts`).
 */
const COMMANDS: Record<string, () => Promise<AddCommands>> = {
  score: async () => (await import('./score.js')).addScoreCommand,
  compare: async () => (await import('./compare.js')).addCompareCommand,
  meta: async () => (await import('./meta.js')).addMetaCommand,
  agreement: async () => (await import('./agreement.js')).addAgreementCommand,
  sbc: async () => (await import('./sbc.js')).addSbcCommands,
  judge: async () => (await import('./judge.js')).addJudgeCommand,
  exec: async () => (await import('./exec.js')).addExecCommand,
  eval: async () => (await import('./eval.js')).addEvalCommand,
  report: async () => (await import('./report.js')).addReportCommands,
  demo: async () => (await import('./report.js')).addReportCommands,
  aggregate: async () => (await import('./aggregate.js')).addAggregateCommand,
  init: async () => (await import('./init.js')).addInitCommand,
  run: async () => (await import('./run.js')).addRunCommand,
  merge: async () => (await import('./merge.js')).addMergeCommand,
};

/** The program for `argv`: only the named command when there is one, else every command. */
async function programFor(argv: string[], io: CliIo): Promise<Command> {
  const name = argv.find((a) => !a.startsWith('-'));
  const wanted = name !== undefined && Object.hasOwn(COMMANDS, name) && !argv.slice(0, argv.indexOf(name)).some((a) => a !== '--debug') ? COMMANDS[name] : undefined;
  // `--version` alone needs no command at all (the whole tree costs ~0.15 s of start-up).
  if (wanted || (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V'))) return makeProgram(io, wanted ? [await wanted()] : []);
  return (await import('./program.js')).buildProgram(io);
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
  exitRequest.code = 0;
  try {
    const program = await programFor(argv, io);
    await program.parseAsync(argv, { from: 'user' });
    return exitRequest.code || EXIT_OK;
  } catch (e) {
    return exitCodeOf(e, io, argv.includes('--debug'));
  }
}
