import { basename, extname } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { InputError, readHypotheses, readReferences } from '../io/segments.js';
import { languageOfFile, UnknownLanguageError } from '../code/languages.js';
import { describeMetrics, parseMetric, SpecError } from '../metrics/registry.js';
import { scoreSystems } from '../score.js';
import { VERSION } from '../version.js';
import { formatScoreTable } from './format.js';

/** Exit codes: 0 success, 1 unexpected failure, 2 bad input or usage. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

function systemName(path: string, taken: Set<string>): string {
  const base = basename(path, extname(path));
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}#${i}`;
  taken.add(name);
  return name;
}

/** A language named by a file's inner extension: `codex.py.jsonl`, `refs.ts.txt`. */
function inferLanguage(paths: string[]): string | undefined {
  for (const path of paths) {
    const inner = basename(path, extname(path));
    const language = languageOfFile(inner);
    if (language) return language;
  }
  return undefined;
}

export function buildProgram(io: { out: (s: string) => void; err: (s: string) => void }): Command {
  const program = new Command('codegauge')
    .description('Exact reference-based metrics, honest statistics and LLM judges for generated code')
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });

  program
    .command('score')
    .description('score one or more systems against references with one or more metrics')
    .requiredOption('--refs <file>', 'reference file (.txt: one segment per line; .jsonl: one JSON string, or array of strings, per line); repeat for several references', collect)
    .requiredOption('--hyps <file>', 'hypothesis file of one system (.txt or .jsonl); repeat for several systems', collect)
    .requiredOption('--metric <spec>', 'metric spec, name or name:key=value,...; repeat for several metrics', collect)
    .option('--lang <language>', 'language of the code for codebleu/ruby when a spec has no lang= (default: from file names such as hyps.py.jsonl)')
    .option('--segments', 'also output sentence-level scores (JSON)', false)
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .addHelpText('after', `\nMetrics and their keys:\n${describeMetrics()}\n`)
    .action(async (opts: { refs: string[]; hyps: string[]; metric: string[]; lang?: string; segments: boolean; format: 'table' | 'json' }) => {
      const language = opts.lang ?? inferLanguage([...opts.hyps, ...opts.refs]);
      const metrics = opts.metric.map((m) => parseMetric(m, { language })); // validate specs before reading any data
      const { references, files } = readReferences(opts.refs);
      const taken = new Set<string>();
      const systems = opts.hyps.map((path) => ({ name: systemName(path, taken), hypotheses: readHypotheses(path, files[0]) }));
      const report = await scoreSystems({ references, systems, metrics, segments: opts.segments });
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatScoreTable(report));
    });

  return program;
}

/** Runs the CLI and returns its exit code; errors are reported on `err`, never thrown. */
export async function runCli(argv: string[], io = { out: (s: string) => void process.stdout.write(s), err: (s: string) => void process.stderr.write(s) }): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT_OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT_OK;
      return EXIT_USAGE;
    }
    if (e instanceof InputError || e instanceof SpecError || e instanceof UnknownLanguageError) {
      io.err(`codegauge: error: ${e.message}\n`);
      return EXIT_USAGE;
    }
    io.err(`codegauge: internal error: ${(e as Error).stack ?? e}\n`);
    return EXIT_FAILURE;
  }
}
