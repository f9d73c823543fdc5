import { ServerError } from '../errors.js';
import { createHash } from 'node:crypto';
import type { LlmClient } from '../llm/client.js';
import type { ModelSpec } from '../llm/model-spec.js';
import type { ChatMessage, ChatResult, JsonSchemaFormat, TokenLogprob } from '../llm/types.js';
import { locateScore } from './replies.js';

/**
 * What every LLM judge shares: one sample in, a 0-4 grade (or a recorded failure) and a trace out; structured
 * replies asked for with a JSON schema (JSON mode where a server refuses schemas), read tolerantly and asked again
 * when unreadable; grades optionally weighted by the grade token's probabilities (G-Eval); the prompt version as a
 * hash of the prompt templates.
 */
export interface JudgeSample {
  code: string;
  reference?: string;
  problem?: string;
  language: string;
}

export interface JudgeContext {
  client: LlmClient;
  model: ModelSpec;
  temperature: number;
  seed?: number;
  maxTokens?: number;
  /** Extra requests when a reply cannot be read (default 2). */
  parseRetries?: number;
  /**
   * G-Eval grading: ask for the grade token's top log-probabilities and report the probability-weighted mean of the
   * grades 0-4 instead of the grade written (the written grade when the server sends no log-probabilities).
   */
  logprobs?: boolean;
}

/** How many alternatives per token are asked for with `logprobs` (OpenAI, vLLM and Ollama allow up to 20). */
export const TOP_LOGPROBS = 10;

export interface JudgeOutcome {
  /** 0-4, or null when the judge failed (unreadable replies, server errors). */
  grade: number | null;
  error?: string;
  /** The grade as the reply wrote it (an integer), where `grade` is logprob-weighted. */
  textGrade?: number;
  /** `logprob`: `grade` is the probability-weighted mean of the grade tokens; `text`: the grade written. */
  gradeSource?: 'logprob' | 'text';
  /** Everything needed to explain the grade: prompts' parts, intermediate results, raw replies. */
  trace: Record<string, unknown>;
}

export interface Judge {
  readonly method: string;
  /** Hash of the prompt templates. */
  readonly promptVersion: string;
  /** Method settings for the signature, e.g. `aspect:usefulness|ref:yes|cot:yes`. */
  readonly settings: string;
  judge(sample: JudgeSample, ctx: JudgeContext): Promise<JudgeOutcome>;
}

/** The judge could not produce a grade (unreadable replies after re-asking): a model failure, exit 1. */
export class JudgeFailure extends ServerError {
  override name = 'JudgeFailure';
}

export function promptHash(...templates: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(templates)).digest('hex').slice(0, 12);
}

/**
 * Asks and reads the reply with `read`; an unreadable reply is asked again with a reminder of the format (a
 * different request, so the cache does not hand back the same reply), then fails. Raw replies go into `replies`.
 * With `schema` the server is asked for a reply following it (JSON mode where it refuses schemas; see LlmClient);
 * `reaskSchema` asks the re-asks only for a schema (a free-text format on the first attempt, as ICE-Score's).
 */
export async function askStructured<T>(
  ctx: JudgeContext,
  messages: ChatMessage[],
  read: (reply: string, result: ChatResult) => T | null,
  replies: string[],
  options: { json?: boolean; schema?: JsonSchemaFormat; reaskSchema?: JsonSchemaFormat; reminder?: string; topLogprobs?: number } = {},
): Promise<T> {
  const retries = ctx.parseRetries ?? 2;
  let conversation = messages;
  for (let attempt = 0; attempt <= retries; attempt++) {
    const reply = await ctx.client.chat(ctx.model, {
      messages: conversation,
      temperature: ctx.temperature,
      seed: ctx.seed,
      maxTokens: ctx.maxTokens,
      json: options.json || (attempt > 0 && options.reaskSchema !== undefined) || undefined,
      schema: attempt > 0 ? (options.reaskSchema ?? options.schema) : options.schema,
      topLogprobs: options.topLogprobs,
    });
    replies.push(reply.text);
    const value = read(reply.text, reply);
    if (value !== null) return value;
    // The conversation grows with each re-ask, so every attempt is a new request, not a cache hit.
    conversation = [
      ...conversation,
      { role: 'assistant', content: reply.text },
      { role: 'user', content: options.reminder ?? 'Your reply could not be read. Answer again in exactly the requested format.' },
    ];
  }
  throw new JudgeFailure(`unreadable reply after ${retries + 1} attempts: ${JSON.stringify(replies.at(-1)?.slice(0, 200) ?? '')}`);
}

/** A grade read from a reply: `grade` is what the judge reports, `text` the integer the reply wrote. */
export interface GradeReading {
  grade: number;
  text: number;
  source: 'logprob' | 'text';
  /** With `logprob`: the probabilities of the grades 0..max at the grade token, normalised to sum to 1. */
  distribution?: number[];
}

/** The grade digit a token stands for ("3", " 3", "3," or "\"3"), or null. */
function gradeDigit(token: string, max: number): number | null {
  const m = /^[\s"':*]*(\d)[\s"',.}\]*]*$/.exec(token);
  return m && Number(m[1]) <= max ? Number(m[1]) : null;
}

/**
 * G-Eval's probability-weighted grade: at the token that writes the grade (the token covering character `index`
 * of the reply, which must write `written`), Σ g·p(g) / Σ p(g) over the grade tokens 0..max among the token's top
 * alternatives (the same grade spelt differently, "3" and " 3", adds up). Null when the tokens do not spell the
 * reply, the grade is not a token of its own, or no alternative is a grade.
 */
export function logprobGrade(logprobs: readonly TokenLogprob[] | undefined, reply: string, index: number, written: number, max = 4): { grade: number; distribution: number[] } | null {
  if (!logprobs?.length || index < 0) return null;
  let offset = 0;
  let at = -1;
  for (let i = 0; i < logprobs.length; i++) {
    const end = offset + logprobs[i].token.length;
    if (offset <= index && index < end) {
      at = i;
      break;
    }
    offset = end;
  }
  if (at < 0 || !reply.startsWith(logprobs.slice(0, at + 1).map((t) => t.token).join(''))) return null;
  const token = logprobs[at];
  if (gradeDigit(token.token, max) !== written) return null;
  const mass = new Array<number>(max + 1).fill(0);
  const alternatives = token.top.some((t) => t.token === token.token) ? token.top : [...token.top, { token: token.token, logprob: token.logprob }];
  for (const t of alternatives) {
    const g = gradeDigit(t.token, max);
    if (g !== null && Number.isFinite(t.logprob)) mass[g] += Math.exp(t.logprob);
  }
  const total = mass.reduce((a, b) => a + b, 0);
  if (!(total > 0)) return null;
  const distribution = mass.map((p) => p / total);
  return { grade: distribution.reduce((a, p, g) => a + g * p, 0), distribution };
}

/**
 * Asks for a 0-4 grade: read as parseScore reads it (a JSON `score` or "<aspect>: N"); with `ctx.logprobs`, the
 * grade token's top log-probabilities are asked for and the grade is their weighted mean where the server sent them.
 */
export async function askGrade(
  ctx: JudgeContext,
  messages: ChatMessage[],
  replies: string[],
  options: { aspect?: string; json?: boolean; schema?: JsonSchemaFormat; reaskSchema?: JsonSchemaFormat; reminder?: string; max?: number } = {},
): Promise<GradeReading> {
  const max = options.max ?? 4;
  return askStructured<GradeReading>(
    ctx,
    messages,
    (reply, result) => {
      const located = locateScore(reply, { max, aspect: options.aspect });
      if (!located || located.value === null) return null;
      const weighted = ctx.logprobs && Number.isInteger(located.value) ? logprobGrade(result.logprobs, reply, located.index, located.value, max) : null;
      return weighted
        ? { grade: weighted.grade, text: located.value, source: 'logprob', distribution: weighted.distribution }
        : { grade: located.value, text: located.value, source: 'text' };
    },
    replies,
    { json: options.json, schema: options.schema, reaskSchema: options.reaskSchema, reminder: options.reminder, topLogprobs: ctx.logprobs ? TOP_LOGPROBS : undefined },
  );
}

/** A strict JSON schema for an object whose properties are all required. */
export function objectSchema(name: string, properties: Record<string, Record<string, unknown>>): JsonSchemaFormat {
  return { name, schema: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false } };
}

/**
 * Schemas are written for grammar-constrained decoding (a local llama.cpp model follows them token by token, and a
 * weak one cannot answer outside them), so every part is bounded:
 * - grades are an `enum` of the integers 0-4: llama.cpp's JSON-schema grammar ignores minimum/maximum and lets an
 *   integer take an exponent ({"score": 9E204817});
 * - every string has a maxLength and every array a maxItems: at temperature 0 a weak model never closes a free-text
 *   field on its own, and the reply would run to the end of the context.
 * Servers that do not take the length bounds are asked without them (see LlmClient).
 */
export const GRADES = [0, 1, 2, 3, 4];
export const boundedString = (maxLength: number) => ({ type: 'string', maxLength });

/** The schema of a grade reply: {"score": 0-4, "reason": "..."}. */
export const GRADE_SCHEMA = objectSchema('grade', { score: { type: 'integer', enum: GRADES }, reason: boundedString(300) });

/** The schema of a re-asked free-text grade: the evaluation first, then the grade. */
export const EVALUATED_GRADE_SCHEMA = objectSchema('evaluated_grade', { evaluation: boundedString(1000), score: { type: 'integer', enum: GRADES } });
