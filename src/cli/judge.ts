import { existsSync, readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { resolveLanguage } from '../code/languages.js';
import { InputError } from '../errors.js';
import { lockOutput } from '../io/lock.js';
import { DsaJudge } from '../judges/dsa.js';
import { IceJudge, type IceAspect } from '../judges/ice.js';
import type { Judge } from '../judges/judge.js';
import { judgeSystems } from '../judges/judge-run.js';
import { parseModelSpec } from '../llm/model-spec.js';
import { formatScoreTable } from './format.js';
import { addLlmOptions, buildRuntime, type LlmCliOptions } from './llm-options.js';
import { exitRequest, type CliIo } from './io.js';
import { collect, formatOption, integerIn } from './options.js';
import { inferLanguage, readSystems } from './systems.js';

/** `codegauge judge`: LLM judges (DSA-CQE, its one-step simplification, an ICE-Score style baseline). */
interface JudgeCliOptions extends LlmCliOptions {
  method: 'dsa' | 'dsa-simple' | 'ice';
  model: string;
  refs: string[];
  hyps: string[];
  problems?: string;
  lang?: string;
  aspect: IceAspect;
  reference: boolean;
  cot: boolean;
  maxDepth: number;
  repeat: number;
  explain?: string;
  format: 'table' | 'json';
}

/** Problem statements: .jsonl (a JSON string per line) or .txt (one per line). */
function readProblems(path: string): string[] {
  if (!existsSync(path)) throw new InputError('file not found', path);
  const lines = readFileSync(path, 'utf8').replace(/\n$/, '').split('\n');
  if (!path.endsWith('.jsonl')) return lines;
  return lines.map((line, i) => {
    try {
      const value = JSON.parse(line);
      if (typeof value !== 'string') throw new Error('expected a JSON string');
      return value;
    } catch (e) {
      throw new InputError(`invalid problem statement (${(e as Error).message})`, path, i + 1);
    }
  });
}

export function addJudgeCommand(program: Command, io: CliIo): void {
  addLlmOptions(
    program
      .command('judge')
      .description('grade generated code with an LLM judge: DSA-CQE (decompositional), dsa-simple (one-step analysis) or ice (single-step, ICE-Score style)')
      .addOption(new Option('--method <method>', 'judge').choices(['dsa', 'dsa-simple', 'ice']).makeOptionMandatory())
      .requiredOption('--model <spec>', 'judge model: openai:MODEL or ollama:MODEL')
      .requiredOption('--refs <file>', 'reference code (.txt or .jsonl); the first reference of each segment is used', collect)
      .requiredOption('--hyps <file>', 'generated code of one system; repeat for several systems', collect)
      .option('--problems <file>', 'problem statements, one per segment (.txt or .jsonl)')
      .option('--lang <language>', 'language of the code (default: from file names such as hyps.py.jsonl)')
      .addOption(new Option('--aspect <aspect>', 'ice: what to grade').choices(['usefulness', 'functional-correctness']).default('functional-correctness'))
      .option('--no-reference', 'ice: judge without the reference code')
      .option('--no-cot', 'ice: ask for the grade only, without step-by-step evaluation')
      .option('--max-depth <n>', 'dsa: deepest nesting of units split off', integerIn('--max-depth', 1, 64), 4)
      .option('--repeat <k>', 'grade each sample k times (seeds differ) and report the variance', integerIn('--repeat', 1, 100), 1)
      .option('--explain <dir>', 'write per-sample decompositions, storage snapshots, differences and raw replies here')
      .addOption(formatOption()),
    { embeddings: false },
  ).action(async (opts: JudgeCliOptions) => {
    const language = opts.lang ?? inferLanguage([...opts.hyps, ...opts.refs]);
    if (!language) throw new InputError('give --lang (or name files like hyps.py.jsonl)');
    resolveLanguage(language); // fail early on an unknown language
    const spec = parseModelSpec(opts.model);
    const { references, systems } = readSystems(opts.refs, opts.hyps);
    const problems = opts.problems ? readProblems(opts.problems) : undefined;
    if (problems && problems.length !== references.length) throw new InputError(`${problems.length} problems but ${references.length} references`, opts.problems);
    const judge: Judge =
      opts.method === 'ice'
        ? new IceJudge({ aspect: opts.aspect, withReference: opts.reference, chainOfThought: opts.cot })
        : new DsaJudge({ simplified: opts.method === 'dsa-simple', maxDepth: opts.maxDepth });
    const unlock = opts.explain ? lockOutput(opts.explain) : () => {};
    const runtime = await buildRuntime(opts).catch((e) => {
      unlock();
      throw e;
    });
    try {
      const report = await judgeSystems({
        judge,
        modelName: opts.model,
        context: { client: runtime.client, model: spec, temperature: opts.temperature, seed: opts.seed, maxTokens: opts.maxTokens },
        references,
        systems,
        problems,
        language,
        repeat: opts.repeat,
        explainDir: opts.explain,
        onProgress: io.progress?.(`judge ${opts.method}`, () => runtime.client.counters()),
      });
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatScoreTable(report));
      const failures = report.systems.reduce((n, s) => n + (s.scores[0].details?.failures ?? 0), 0);
      io.err(`${runtime.client.summary()}\n`);
      if (failures) {
        io.err(`codegauge: the judge failed on ${failures} sample(s); they are null in the segments and left out of the means (see "errors" in --format json)\n`);
        exitRequest.code = 1;
      }
    } finally {
      runtime.close();
      unlock();
    }
  });
}
