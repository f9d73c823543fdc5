import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { z } from 'zod';
import { inShard, parseShard, shardDirName, type Shard } from '../config/shard.js';
import { InputError, UsageError } from '../errors.js';
import { lockOutput } from '../io/lock.js';
import { readTable } from '../io/table.js';
import { parseModelSpec } from '../llm/model-spec.js';
// SBC runs and checks are loaded when their command runs, not at CLI start-up.
import type { SbcRequirement } from '../sbc/run.js';
import { DEFAULT_SBC_WEIGHTS, sbcScores, sbcSignature, type SbcWeights } from '../sbc/score.js';
import { addLlmOptions, buildRuntime, checkServers, type LlmCliOptions } from './llm-options.js';
import { exitRequest, type CliIo } from './io.js';
import { collect, existingFile, formatOption, integerIn, numberIn } from './options.js';

/** `codegauge sbc run | score | check`. */
const requirementSchema = z.object({
  question_id: z.union([z.string(), z.number()]).optional(),
  requirement: z.string({ required_error: 'is required', invalid_type_error: 'must be a string' }),
  implementation_layer: z.string().optional(),
  programming_language: z.string().optional(),
});
const datasetSchema = z.array(requirementSchema, { invalid_type_error: 'expected a JSON array of requirements' });

/** The SBC dataset: validated with its schema, so a wrong field is named with its item and key. */
function readDataset(path: string): SbcRequirement[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new InputError(existsSync(path) ? `invalid JSON (${(e as Error).message})` : 'file not found', path);
  }
  const parsed = datasetSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? `item ${issue.path[0]}${issue.path.length > 1 ? `, field "${issue.path.slice(1).join('.')}"` : ''}: ` : '';
    throw new InputError(`${where}${issue.message}`, path);
  }
  return parsed.data.map((r, i) => ({
    question_id: r.question_id ?? i + 1,
    requirement: r.requirement,
    implementation_layer: r.implementation_layer ?? '',
    programming_language: r.programming_language ?? '',
  }));
}

/** Rows of a CSV or JSONL file (optionally gzipped) with input_requirement and reverse_generated_requirement. */
function readPairs(path: string): Record<string, unknown>[] {
  const table = readTable(path);
  table.rows.forEach((r, i) => {
    for (const field of ['input_requirement', 'reverse_generated_requirement']) {
      if (typeof r[field] !== 'string') throw new InputError(`missing field "${field}"`, path, table.lines[i]);
    }
  });
  return table.rows;
}

/** `--weights S,B,C`: semantic, BLEU and completeness weights (the reference's 0.7,0.1,0.2 by default). */
function parseWeights(value: string): SbcWeights {
  const parts = value.split(',').map((x) => Number(x.trim()));
  if (parts.length !== 3 || parts.some((x) => !Number.isFinite(x) || x < 0)) {
    throw new InvalidArgumentError(`expected three non-negative numbers SEMANTIC,BLEU,COMPLETENESS such as 0.7,0.1,0.2, got "${value}"`);
  }
  return { semantic: parts[0], bleu: parts[1], completeness: parts[2] };
}

/** Options every sbc command shares: the LLM runtime and the score weights. */
function addSbcOptions(command: Command): Command {
  return addLlmOptions(command).addOption(
    new Option('--weights <s,b,c>', 'weights of semantic similarity, BLEU and completeness').default(DEFAULT_SBC_WEIGHTS, '0.7,0.1,0.2').argParser(parseWeights),
  );
}

export function addSbcCommands(program: Command, io: CliIo): void {
  const sbc = program.command('sbc').description('reverse generation + SBC score: code from a requirement, the requirement back from the code, and how much survived');

  addSbcOptions(
    sbc
      .command('run')
      .description('generate code for each requirement, reverse-generate the requirement, score (requirements x models x iterations)')
      .requiredOption('--dataset <file>', 'JSON array of {question_id, requirement, implementation_layer, programming_language}')
      .requiredOption('--model <spec>', 'openai:MODEL, ollama:MODEL, llama:PATH.gguf or hf:OWNER/REPO[:FILE.gguf]; repeat for several', collect)
      .option('--iterations <n>', 'runs per requirement and model', integerIn('--iterations', 1, 1000), 3)
      .option('--limit <n>', 'only the first n requirements', integerIn('--limit', 1))
      .option('--shard <i/N>', 'only shard i of N of the requirements (a deterministic split by question_id); results go to OUT/shard-i-of-N', parseShard)
      .requiredOption('--out <dir>', 'output folder (results.jsonl, results.csv)'),
  ).action(async (opts: LlmCliOptions & { weights: SbcWeights; dataset: string; model: string[]; iterations: number; limit?: number; shard?: Shard; out: string }) => {
    const { runSbc, summarise } = await import('../sbc/run.js');
    const models = opts.model.map((m) => ({ name: m, spec: parseModelSpec(m) }));
    checkServers(opts, opts.model.map((spec) => ({ flag: '--model', spec })));
    let requirements = readDataset(opts.dataset);
    if (opts.limit !== undefined) requirements = requirements.slice(0, opts.limit);
    if (opts.shard && opts.shard.count > 1) {
      requirements = requirements.filter((r) => inShard(String(r.question_id), opts.shard));
      opts.out = join(opts.out, shardDirName(opts.shard));
      if (requirements.length === 0) throw new UsageError(`--shard ${opts.shard.index}/${opts.shard.count}: no requirement of ${opts.dataset} falls in this shard`);
    }
    const unlock = lockOutput(opts.out);
    const runtime = await buildRuntime(opts).catch((e) => {
      unlock();
      throw e;
    });
    // Ctrl-C: finished rows are already in the run store; say how to resume and leave with the shell's 130.
    const onInterrupt = () => {
      io.err(`\ncodegauge: interrupted; finished rows are kept in ${opts.cacheFile}, rerun the same command to resume\n`);
      runtime.close();
      process.exit(130);
    };
    process.once('SIGINT', onInterrupt);
    try {
      const rows = await runSbc({
        requirements,
        models,
        iterations: opts.iterations,
        weights: opts.weights,
        parallel: opts.concurrency,
        client: runtime.client,
        embed: runtime.embed!,
        store: runtime.store,
        outDir: opts.out,
        temperature: opts.temperature,
        seed: opts.seed,
        maxTokens: opts.maxTokens,
        onProgress: io.progress?.('sbc run', () => runtime.client.counters()),
      });
      const s = summarise(rows);
      const lines: string[] = [];
      for (const [model, batches] of Object.entries(s.perBatch)) {
        const m = s.perModel[model];
        lines.push(`${model}: mean SBC ${m.mean.toFixed(4)} over ${m.n} rows${m.failed ? `, ${m.failed} failed` : ''}`);
        for (const [it, b] of Object.entries(batches)) lines.push(`  ${model} iteration ${it}: mean SBC ${b.mean.toFixed(4)} over ${b.n} requirements${b.failed ? `, ${b.failed} failed` : ''}`);
      }
      lines.push('', 'cross-model comparison on each question\'s best iteration:');
      for (const [model, b] of Object.entries(s.bestPerQuestion).sort((a, b) => b[1].mean - a[1].mean)) lines.push(`  ${model}: ${b.mean.toFixed(4)} (${b.n} questions)`);
      lines.push('', runtime.client.summary(), `rows written to ${opts.out}/results.jsonl and results.csv`);
      io.out(lines.join('\n') + '\n');
      const failed = rows.filter((r) => r.status === 'failed');
      if (failed.length) {
        // Finished rows are kept; rerunning the same command retries only the failed ones.
        const reasons = new Map<string, number>();
        for (const r of failed) reasons.set(r.error ?? 'unknown', (reasons.get(r.error ?? 'unknown') ?? 0) + 1);
        io.err(`codegauge: ${failed.length} of ${rows.length} rows failed (rerun the same command to retry them):\n${[...reasons].map(([why, n]) => `  ${n} x ${why}`).join('\n')}\n`);
        exitRequest.code = 1;
      }
    } finally {
      process.off('SIGINT', onInterrupt);
      runtime.close();
      unlock();
    }
  });

  addSbcOptions(
    sbc
      .command('score')
      .description('re-score existing pairs (columns input_requirement, reverse_generated_requirement; other columns kept)')
      .requiredOption('--input <file>', '.csv, .csv.gz or .jsonl', existingFile('--input'))
      .requiredOption('--out <dir>', 'output folder (results.jsonl, results.csv)'),
  ).action(async (opts: LlmCliOptions & { weights: SbcWeights; input: string; out: string }) => {
    const { RowWriter } = await import('../sbc/run.js');
    const rows = readPairs(opts.input);
    const unlock = lockOutput(opts.out);
    const runtime = await buildRuntime(opts).catch((e) => {
      unlock();
      throw e;
    });
    try {
      const scores = await sbcScores(rows.map((r) => ({ input: String(r.input_requirement), reverse: String(r.reverse_generated_requirement) })), runtime.embed!, opts.weights);
      const signature = sbcSignature(runtime.embed!.id, opts.weights);
      const columns = [...new Set([...Object.keys(rows[0] ?? {}), 'final_accuracy_score', 'semantic_similarity', 'bleu_score', 'completeness_score', 'missing_elements', 'extra_elements', 'signature'])];
      const writer = new RowWriter(opts.out, columns);
      writer.start(false);
      rows.forEach((r, i) => writer.write({ ...r, ...scores[i], signature }));
      const mean = scores.reduce((s, x) => s + x.final_accuracy_score, 0) / Math.max(1, scores.length);
      io.out(`${rows.length} pairs scored, mean SBC ${mean.toFixed(4)}; ${signature}\nrows written to ${opts.out}/results.jsonl and results.csv\n`);
    } finally {
      runtime.close();
      unlock();
    }
  });

  addSbcOptions(
    sbc
      .command('check')
      .description('does this code still say what the requirement says? Reverse-generates the requirement from your code and scores it (exit 1 below --min-score)')
      .option('--requirement <file>', 'the requirement, in a file', existingFile('--requirement'))
      .option('--requirement-text <text>', 'the requirement itself, instead of --requirement')
      .requiredOption('--code <file>', 'the code to check', existingFile('--code'))
      .option('--model <spec>', 'model for reverse generation', 'ollama:qwen2.5-coder:14b')
      .option('--language <name>', 'technology of the code (e.g. react, SpringBoot)', '')
      .option('--min-score <x>', 'fail below this SBC score (0-1)', numberIn('--min-score', 0, 1), 0.55)
      .addOption(formatOption()),
  ).action(async (opts: LlmCliOptions & { weights: SbcWeights; requirement?: string; requirementText?: string; code: string; model: string; language: string; minScore: number; format: string }) => {
    const { sbcCheck } = await import('../sbc/check.js');
    if ((opts.requirement === undefined) === (opts.requirementText === undefined)) throw new UsageError('give the requirement with --requirement FILE or --requirement-text TEXT (one of them)');
    const requirement = opts.requirement !== undefined ? readFileSync(opts.requirement, 'utf8') : opts.requirementText!;
    if (!requirement.trim()) throw new InputError('the requirement is empty', opts.requirement);
    const code = readFileSync(opts.code, 'utf8');
    const spec = parseModelSpec(opts.model);
    checkServers(opts, [{ flag: '--model', spec: opts.model }]);
    const runtime = await buildRuntime(opts);
    try {
      const score = await sbcCheck({
        requirement,
        code,
        technology: opts.language,
        client: runtime.client,
        model: spec,
        modelName: opts.model,
        embed: runtime.embed!,
        weights: opts.weights,
        minScore: opts.minScore,
        temperature: opts.temperature,
        seed: opts.seed,
        maxTokens: opts.maxTokens,
      });
      const { passed, reverse_generated_requirement: reconstructed } = score;
      if (opts.format === 'json') io.out(JSON.stringify(score, null, 2) + '\n');
      else {
        io.out(
          [
            `SBC score ${score.final_accuracy_score.toFixed(4)} (${passed ? 'pass' : 'FAIL'}, minimum ${opts.minScore})`,
            `  semantic ${score.semantic_similarity.toFixed(4)}  bleu ${score.bleu_score.toFixed(4)}  completeness ${score.completeness_score.toFixed(4)}`,
            `reconstructed requirement:\n  ${reconstructed}`,
            `missing (possible omissions): ${score.missing_elements.join(', ') || '-'}`,
            `extra (possible hallucinations): ${score.extra_elements.join(', ') || '-'}`,
          ].join('\n') + '\n',
        );
      }
      if (!passed) exitRequest.code = 1;
    } finally {
      runtime.close();
    }
  });
}
