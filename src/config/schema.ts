import { z } from 'zod';
import { BENCHMARKS } from '../exec/problems.js';

/**
 * The schema of `codegauge.config.yaml` (or `.json`): what `codegauge run` executes. Every object is strict, so a
 * misspelt key is an error naming the file, the line and the keys allowed there (see `load.ts`).
 *
 * Paths are relative to the config file's folder; `bundled:PATH` names a file of codegauge's own `data/` folder
 * (`bundled:conala/refs.jsonl`), so the starter config runs from any project.
 */
const path = z.string().min(1);
const delta = z.number().min(0);

/** A metric spec (`chrf`, `bleu:tok=code`), or one with its gate: `{metric: chrf, fail_if_worse: 1}`. */
export const metricEntrySchema = z.union([z.string().min(1), z.object({ metric: z.string().min(1), fail_if_worse: delta.optional() }).strict()]);

export const dataSchema = z
  .object({
    /** Reference file(s): one reference stream per file, as `score --refs`. */
    refs: z.union([path, z.array(path).min(1)]),
    /** System name -> hypothesis file (the first system is the baseline of `compare`). */
    systems: z.record(z.string().min(1), path),
    /** Language of the code (codebleu, ruby, judges) when a spec has no `lang=`. */
    lang: z.string().optional(),
    /** Problem statements, one per segment (judges). */
    problems: path.optional(),
  })
  .strict();

export const compareSchema = z
  .object({
    /** The system the others are compared with (default: the first of data.systems). */
    baseline: z.string().optional(),
    test: z.enum(['paired-bs', 'paired-ar']).default('paired-bs'),
    samples: z.number().int().min(1).max(1_000_000).optional(),
    seed: z.number().int().min(0).max(2 ** 32 - 1).default(12345),
  })
  .strict();

export const execSchema = z
  .object({
    benchmark: z.enum(Object.keys(BENCHMARKS) as [string, ...string[]]).optional(),
    problems: path.optional(),
    lang: z.string().optional(),
    /** System name -> samples file (.jsonl: task_id + completion or solution), or `canonical` (the problems' own solutions). */
    systems: z.record(z.string().min(1), path),
    /** Only the first N problems (by the order of the problem file). */
    limit: z.number().int().min(1).optional(),
    k: z.array(z.number().int().min(1)).min(1).default([1]),
    timeout: z.number().min(0.1).max(600).default(3),
    memory: z.number().int().min(64).max(65536).default(1024),
    jobs: z.number().int().min(1).max(256).default(2),
    sandbox: z.enum(['auto', 'bwrap', 'process']).default('auto'),
    fail_if_worse: delta.optional(),
  })
  .strict();

export const modelSchema = z
  .object({
    /** `openai:MODEL` or `ollama:MODEL`. */
    model: z.string().min(1),
    base_url: z.union([z.string().url(), z.array(z.string().url()).min(1)]).optional(),
    /** Name of the environment variable that holds the API key (never the key itself). */
    api_key_env: z.string().optional(),
    ollama_host: z.string().url().optional(),
  })
  .strict();

export const llmSchema = z
  .object({
    concurrency: z.number().int().min(1).max(4096).default(4),
    timeout: z.number().min(0.001).default(120),
    retries: z.number().int().min(0).max(100).default(4),
    temperature: z.number().min(0).max(10).default(0),
    seed: z.number().int().optional(),
    max_tokens: z.number().int().min(1).optional(),
    /** Judge through the OpenAI-compatible Batch API (files + batches), resumable, with the same cache. */
    batch: z.boolean().default(false),
    /** Seconds between polls of a batch. */
    batch_poll: z.number().min(0).default(30),
  })
  .strict();

export const judgeSchema = z
  .object({
    method: z.enum(['dsa', 'dsa-simple', 'ice']),
    /** A name from `models`, or a model spec. */
    model: z.string().min(1),
    /** Only these systems of data.systems (default all). */
    systems: z.array(z.string()).optional(),
    repeat: z.number().int().min(1).max(100).default(1),
    fail_if_worse: delta.optional(),
  })
  .strict();

export const configSchema = z
  .object({
    version: z.literal(1).default(1),
    /** Output folder of every result file (relative to the config file). */
    out: path.default('codegauge-results'),
    /** SQLite store of baselines, LLM responses and runs (default .codegauge/cache.sqlite). */
    store: path.optional(),
    title: z.string().optional(),
    data: dataSchema.optional(),
    metrics: z.array(metricEntrySchema).default([]),
    /** Score bootstrap CIs (sacrebleu --confidence) with this many samples; 0 for none. */
    confidence: z.number().int().min(0).max(100_000).default(1000),
    compare: compareSchema.optional(),
    exec: execSchema.optional(),
    models: z.record(z.string().min(1), modelSchema).default({}),
    llm: llmSchema.default({}),
    judges: z.array(judgeSchema).default([]),
  })
  .strict();

export type CodegaugeConfig = z.infer<typeof configSchema>;
export type MetricEntry = z.infer<typeof metricEntrySchema>;
export type ExecConfig = z.infer<typeof execSchema>;
export type JudgeConfig = z.infer<typeof judgeSchema>;
