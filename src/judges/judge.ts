import { ServerError } from '../errors.js';
import { createHash } from 'node:crypto';
import type { LlmClient } from '../llm/client.js';
import type { ModelSpec } from '../llm/model-spec.js';
import type { ChatMessage } from '../llm/types.js';

/**
 * What every LLM judge shares: one sample in, a 0-4 grade (or a recorded failure) and a trace out; structured
 * replies read tolerantly and asked again when unreadable; the prompt version as a hash of the prompt templates.
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
}

export interface JudgeOutcome {
  /** 0-4, or null when the judge failed (unreadable replies, server errors). */
  grade: number | null;
  error?: string;
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
 */
export async function askStructured<T>(
  ctx: JudgeContext,
  messages: ChatMessage[],
  read: (reply: string) => T | null,
  replies: string[],
  options: { json?: boolean; reminder?: string } = {},
): Promise<T> {
  const retries = ctx.parseRetries ?? 2;
  let conversation = messages;
  for (let attempt = 0; attempt <= retries; attempt++) {
    const reply = await ctx.client.chat(ctx.model, { messages: conversation, temperature: ctx.temperature, seed: ctx.seed, maxTokens: ctx.maxTokens, json: options.json });
    replies.push(reply.text);
    const value = read(reply.text);
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
