import { ServerError } from '../errors.js';
/** What codegauge asks of a language model, independent of the server that answers. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  temperature?: number;
  seed?: number;
  maxTokens?: number;
  /** Ask for a JSON object (JSON mode where the server supports it). */
  json?: boolean;
  /**
   * Ask for a reply that follows this JSON schema (OpenAI-compatible `response_format: json_schema` with
   * `strict: true`, which vLLM and llama.cpp servers also take; Ollama's `format: <schema>`). A server that refuses
   * the schema is asked in JSON mode instead, and remembered for the rest of the run (see LlmClient).
   */
  schema?: JsonSchemaFormat;
  /** Ask for the log-probabilities of the reply's tokens with this many alternatives per token (1-20). */
  topLogprobs?: number;
}

/** A named JSON schema for structured replies. Strict mode: every object lists all its properties as required and
 * sets additionalProperties false. */
export interface JsonSchemaFormat {
  name: string;
  schema: Record<string, unknown>;
}

/** One reply token with its log-probability and the most likely alternatives at its position. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  top: { token: string; logprob: number }[];
}

export interface ChatResult {
  text: string;
  promptTokens: number;
  completionTokens: number;
  /** Served from the response cache, without a request. */
  cached: boolean;
  /** Token log-probabilities, when they were asked for and the server returned them. */
  logprobs?: TokenLogprob[];
  /** How the reply's format was asked for when the request had a schema: `schema`, or `json` after a refusal. */
  format?: 'schema' | 'json';
}

/** One server of one API kind. */
export interface Provider {
  readonly kind: 'openai' | 'ollama';
  readonly endpoint: string;
  chat(model: string, request: ChatRequest, signal: AbortSignal): Promise<Omit<ChatResult, 'cached'>>;
  embed(model: string, texts: string[], signal: AbortSignal): Promise<number[][]>;
}

/** An error with the HTTP status and Retry-After (seconds) when the server gave them. */
export class LlmError extends ServerError {
  override name = 'LlmError';
  constructor(
    message: string,
    readonly status?: number,
    readonly retryAfterSeconds?: number,
    readonly retryable = false,
  ) {
    super(message);
  }
}
