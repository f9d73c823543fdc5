import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { resolveLanguage } from '../code/languages.js';
import { inShard, parseShard, shardDirName, shardLabel, type Shard } from '../config/shard.js';
import { InputError, UsageError } from '../errors.js';
import { lockOutput } from '../io/lock.js';
// The judges are loaded when the command runs, not at CLI start-up.
import type { IceAspect } from '../judges/ice.js';
import type { Judge } from '../judges/judge.js';
import type { LlmClient } from '../llm/client.js';
import { parseModelSpec } from '../llm/model-spec.js';
import { formatScoreTable } from './format.js';
import { addLlmOptions, buildRuntime, checkServers, type LlmCliOptions } from './llm-options.js';
import { exitRequest, type CliIo } from './io.js';
import { collect, formatOption, integerIn, numberIn, onlyWith } from './options.js';
import { inferLanguage, readSystems } from './systems.js';

/**
 * `codegauge judge`: LLM judges (DSA-CQE, its one-step simplification, an ICE-Score style baseline); several
 * `--model`s grade as an ensemble; `--logprobs` weights grades by the grade token's probabilities (G-Eval).
 */
interface JudgeCliOptions extends LlmCliOptions {
  method: 'dsa' | 'dsa-simple' | 'ice';
  model: string[];
  logprobs: boolean;
  storageUpdate?: 'separate' | 'merged';
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
  shard?: Shard;
  batch?: boolean;
  batchPoll: number;
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
      .requiredOption('--model <spec>', 'judge model: openai:MODEL, ollama:MODEL, llama:PATH.gguf or hf:OWNER/REPO[:FILE.gguf]; repeat for an ensemble of judges (each judge\'s scores, their mean/median/majority and agreement)', collect)
      .requiredOption('--refs <file>', 'reference code (.txt or .jsonl); the first reference of each segment is used', collect)
      .requiredOption('--hyps <file>', 'generated code of one system; repeat for several systems', collect)
      .option('--problems <file>', 'problem statements, one per segment (.txt or .jsonl)')
      .option('--lang <language>', 'language of the code (default: from file names such as hyps.py.jsonl)')
      .addOption(new Option('--aspect <aspect>', 'ice: what to grade').choices(['usefulness', 'functional-correctness']).default('functional-correctness'))
      .option('--no-reference', 'ice: judge without the reference code')
      .option('--no-cot', 'ice: ask for the grade only, without step-by-step evaluation')
      .option('--max-depth <n>', 'dsa: deepest nesting of units split off', integerIn('--max-depth', 1, 64), 4)
      .addOption(
        new Option('--storage-update <mode>', 'dsa: the semantic-storage update as its own request after each unit\'s analysis (separate, as in the paper; the default) or in the analysis request (merged: one request fewer per unit)')
          .choices(['separate', 'merged']),
      )
      .option('--logprobs', 'G-Eval grades: the probability-weighted mean of the grades 0-4 at the grade token, where the server returns top_logprobs (else the grade written)', false)
      .option('--repeat <k>', 'grade each sample k times (seeds differ) and report the variance and each judge\'s self-consistency', integerIn('--repeat', 1, 100), 1)
      .option('--explain <dir>', 'write per-sample decompositions, storage snapshots, differences and raw replies here')
      .option('--shard <i/N>', 'only shard i of N of the segments (a deterministic split by segment number); the JSON carries the segment ids, --explain goes to DIR/shard-i-of-N', parseShard)
      .option('--batch', 'send the requests through the OpenAI-compatible Batch API of the first --base-url (one batch per judge step; resumable after a restart: the batch id is kept in --cache-file; answers go to the same cache)')
      .option('--batch-poll <seconds>', 'with --batch: seconds between polls of a batch', numberIn('--batch-poll', 0, 86_400), 30)
      .addOption(formatOption()),
    { embeddings: false },
  ).action(async (opts: JudgeCliOptions, command: Command) => {
    const [{ DsaJudge }, { IceJudge }, { judgeFailures, judgeSystems }] = await Promise.all([import('../judges/dsa.js'), import('../judges/ice.js'), import('../api/judge.js')]);
    onlyWith(command, ['--storage-update'], '--method dsa', opts.method === 'dsa');
    onlyWith(command, ['--batch-poll'], '--batch', opts.batch === true);
    // The Batch API: an OpenAI-compatible endpoint, whose answers and batch ids live in the cache.
    const batchUrl = opts.baseUrl?.[0] ?? process.env.OPENAI_BASE_URL?.split(',')[0];
    if (opts.batch) {
      const other = opts.model.find((m) => parseModelSpec(m).kind !== 'openai');
      if (other) throw new UsageError(`--batch needs openai: models (the OpenAI-compatible Batch API), got --model ${other}`);
      if (!batchUrl) throw new UsageError('--batch needs --base-url (or OPENAI_BASE_URL): the server that runs the batches');
      if (opts.logprobs) throw new UsageError('--batch cannot ask for log-probabilities; drop --logprobs');
      if (!opts.cache) throw new UsageError('--batch keeps the answers and the batch ids in the cache; drop --no-cache');
    }
    const language = opts.lang ?? inferLanguage([...opts.hyps, ...opts.refs]);
    if (!language) throw new InputError('give --lang (or name files like hyps.py.jsonl)');
    resolveLanguage(language); // fail early on an unknown language
    const models = opts.model.map((name) => ({ name, spec: parseModelSpec(name) }));
    checkServers(opts, opts.model.map((spec) => ({ flag: '--model', spec })));
    const repeated = opts.model.find((m, i) => opts.model.indexOf(m) !== i);
    if (repeated) throw new UsageError(`--model ${repeated} is given twice`);
    const all = readSystems(opts.refs, opts.hyps);
    const allProblems = opts.problems ? readProblems(opts.problems) : undefined;
    if (allProblems && allProblems.length !== all.references.length) throw new InputError(`${allProblems.length} problems but ${all.references.length} references`, opts.problems);
    // --shard: the segments whose 1-based number falls in the shard; ids say which they are.
    const shard = opts.shard && opts.shard.count > 1 ? opts.shard : undefined;
    const ids = all.references.map((_, i) => String(i + 1)).filter((id) => inShard(id, shard));
    const keep = <T>(xs: readonly T[]) => (shard ? ids.map((id) => xs[Number(id) - 1]) : [...xs]);
    if (shard && ids.length === 0) throw new UsageError(`--shard ${shardLabel(shard)}: no segment falls in this shard`);
    const references = keep(all.references);
    const systems = all.systems.map((s) => ({ ...s, hypotheses: keep(s.hypotheses) }));
    const problems = allProblems ? keep(allProblems) : undefined;
    if (shard && opts.explain) opts.explain = join(opts.explain, shardDirName(shard));
    const judge: Judge =
      opts.method === 'ice'
        ? new IceJudge({ aspect: opts.aspect, withReference: opts.reference, chainOfThought: opts.cot })
        : new DsaJudge({ simplified: opts.method === 'dsa-simple', maxDepth: opts.maxDepth, storageUpdate: opts.storageUpdate ?? 'separate' });
    const unlock = opts.explain ? lockOutput(opts.explain) : () => {};
    const runtime = await buildRuntime(opts).catch((e) => {
      unlock();
      throw e;
    });
    try {
      const judgeWith = (client: LlmClient, onProgress?: (done: number, total: number) => void) =>
        judgeSystems({
          judge,
          modelName: models[0].name,
          models,
          context: { client, model: models[0].spec, temperature: opts.temperature, seed: opts.seed, maxTokens: opts.maxTokens, logprobs: opts.logprobs },
          references,
          systems,
          problems,
          language,
          repeat: opts.repeat,
          explainDir: opts.explain,
          onProgress,
        });
      let report;
      let batchLine: string | undefined;
      if (opts.batch) {
        // Rounds of batches until every step is answered; the last round builds the report from the cache.
        const { runBatched } = await import('../llm/batch.js');
        const batched = await runBatched((client) => judgeWith(client), { baseUrl: batchUrl!, apiKey: opts.apiKey ?? process.env.OPENAI_API_KEY, store: runtime.store, pollMs: opts.batchPoll * 1000, log: (line) => io.err(`${line}\n`) });
        report = batched.result;
        const s = batched.stats;
        batchLine = `batch: ${s.batches} batch(es) submitted, ${s.requests} request(s), ${s.failed} failed, ${batched.client.usage.cacheHits} answer(s) from the cache`;
      } else report = await judgeWith(runtime.client, io.progress?.(`judge ${opts.method}`, () => runtime.client.counters()));
      const shown = shard ? { ...report, shard: shardLabel(shard), ids } : report;
      io.out(opts.format === 'json' ? JSON.stringify(shown, null, 2) + '\n' : formatScoreTable(report));
      const failures = judgeFailures(report);
      io.err(`${batchLine ?? runtime.client.summary()}\n`);
      for (const r of runtime.client.refusals()) {
        const what = r.refused.map((f) => (f === 'schema' ? 'JSON schemas (asked in JSON mode instead)' : f === 'schema-bounds' ? 'length bounds in JSON schemas (asked without them)' : 'log-probabilities (grades read from the text)')).join(' and ');
        io.err(`codegauge: ${r.endpoint} refused ${what} for ${r.kind}:${r.model}, for the rest of the run\n`);
      }
      if (opts.logprobs) {
        for (const s of report.systems[0]?.scores ?? []) {
          if (s.details?.logprob_grades === 0 && (s.details.graded ?? 0) > 0) io.err(`codegauge: ${s.metric}: the server returned no usable log-probabilities; its grades are the grades written (grade:text)\n`);
        }
      }
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
