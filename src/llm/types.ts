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
}

export interface ChatResult {
  text: string;
  promptTokens: number;
  completionTokens: number;
  /** Served from the response cache, without a request. */
  cached: boolean;
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
