import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { LlmError, type ChatRequest, type Provider, type TokenLogprob } from './types.js';

/**
 * The two API kinds, through their official clients. Retries are codegauge's own (see client.ts), so the clients'
 * built-in retries are turned off; errors become LlmError with status and Retry-After.
 */
function retryAfter(headers: unknown): number | undefined {
  const get = (name: string): string | null | undefined => {
    if (!headers) return undefined;
    if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
    return (headers as Record<string, string>)[name];
  };
  const value = get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, (date - Date.now()) / 1000) : undefined;
}

function toLlmError(e: unknown, endpoint: string): LlmError {
  if (e instanceof LlmError) return e;
  const err = e as { status?: number; headers?: unknown; message?: string; name?: string; code?: string; cause?: { code?: string } };
  const status = typeof err.status === 'number' ? err.status : undefined;
  if (status !== undefined) {
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    return new LlmError(`${endpoint}: HTTP ${status}: ${err.message ?? ''}`.trim(), status, retryAfter(err.headers), retryable);
  }
  if (err.name === 'AbortError') return new LlmError(`${endpoint}: request timed out or was aborted`, undefined, undefined, true);
  // Network failures: refused, reset, dropped connections, DNS.
  return new LlmError(`${endpoint}: ${err.message ?? String(e)}${err.cause?.code ? ` (${err.cause.code})` : ''}`, undefined, undefined, true);
}

/**
 * Token log-probabilities in one shape from either API: OpenAI's `choices[0].logprobs.content[i]` and Ollama's
 * `logprobs[i]` both carry {token, logprob, top_logprobs: [{token, logprob}]}. Undefined when the server sent none.
 */
function readLogprobs(content: unknown): TokenLogprob[] | undefined {
  if (!Array.isArray(content) || content.length === 0) return undefined;
  const out: TokenLogprob[] = [];
  for (const item of content as { token?: unknown; logprob?: unknown; top_logprobs?: unknown }[]) {
    if (!item || typeof item.token !== 'string' || typeof item.logprob !== 'number') return undefined;
    const top = Array.isArray(item.top_logprobs)
      ? (item.top_logprobs as { token?: unknown; logprob?: unknown }[])
          .filter((t) => t && typeof t.token === 'string' && typeof t.logprob === 'number')
          .map((t) => ({ token: t.token as string, logprob: t.logprob as number }))
      : [];
    out.push({ token: item.token, logprob: item.logprob, top });
  }
  return out;
}

export class OpenAIProvider implements Provider {
  readonly kind = 'openai';
  private readonly client: OpenAI;

  constructor(
    readonly endpoint: string,
    apiKey: string | undefined,
    timeoutMs: number,
  ) {
    this.client = new OpenAI({ baseURL: endpoint, apiKey: apiKey || 'not-needed', maxRetries: 0, timeout: timeoutMs });
  }

  async chat(model: string, request: ChatRequest, signal: AbortSignal) {
    try {
      const response = await this.client.chat.completions.create(
        {
          model,
          messages: request.messages,
          temperature: request.temperature ?? 0,
          ...(request.seed !== undefined ? { seed: request.seed } : {}),
          ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
          ...(request.schema
            ? { response_format: { type: 'json_schema' as const, json_schema: { name: request.schema.name, schema: request.schema.schema, strict: true } } }
            : request.json
              ? { response_format: { type: 'json_object' as const } }
              : {}),
          ...(request.topLogprobs !== undefined ? { logprobs: true, top_logprobs: request.topLogprobs } : {}),
        },
        { signal },
      );
      const text = response.choices?.[0]?.message?.content;
      if (typeof text !== 'string') throw new LlmError(`${this.endpoint}: malformed reply (no message content)`, undefined, undefined, true);
      const logprobs = request.topLogprobs !== undefined ? readLogprobs(response.choices[0].logprobs?.content) : undefined;
      return { text, promptTokens: response.usage?.prompt_tokens ?? 0, completionTokens: response.usage?.completion_tokens ?? 0, ...(logprobs ? { logprobs } : {}) };
    } catch (e) {
      throw toLlmError(e, this.endpoint);
    }
  }

  async embed(model: string, texts: string[], signal: AbortSignal) {
    try {
      // Explicit float format: the client otherwise asks for base64, which not every compatible server supports.
      const response = await this.client.embeddings.create({ model, input: texts, encoding_format: 'float' }, { signal });
      return response.data.sort((a, b) => a.index - b.index).map((d) => d.embedding);
    } catch (e) {
      throw toLlmError(e, this.endpoint);
    }
  }
}

export class OllamaProvider implements Provider {
  readonly kind = 'ollama';
  private readonly client: Ollama;

  constructor(
    readonly endpoint: string,
    private readonly timeoutMs: number,
  ) {
    this.client = new Ollama({ host: endpoint });
  }

  private async withTimeout<T>(signal: AbortSignal, run: () => Promise<T>): Promise<T> {
    // The ollama client aborts all of its requests at once; time out this one by racing it.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LlmError(`${this.endpoint}: request timed out`, undefined, undefined, true)), this.timeoutMs);
      signal.addEventListener('abort', () => reject(new LlmError(`${this.endpoint}: aborted`, undefined, undefined, false)), { once: true });
    });
    try {
      return await Promise.race([run(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async chat(model: string, request: ChatRequest, signal: AbortSignal) {
    try {
      const response = await this.withTimeout(signal, () =>
        this.client.chat({
          model,
          messages: request.messages,
          stream: false,
          ...(request.schema ? { format: request.schema.schema } : request.json ? { format: 'json' } : {}),
          ...(request.topLogprobs !== undefined ? { logprobs: true, top_logprobs: request.topLogprobs } : {}),
          options: {
            temperature: request.temperature ?? 0,
            ...(request.seed !== undefined ? { seed: request.seed } : {}),
            ...(request.maxTokens !== undefined ? { num_predict: request.maxTokens } : {}),
          },
        }),
      );
      const logprobs = request.topLogprobs !== undefined ? readLogprobs(response.logprobs) : undefined;
      return { text: response.message.content, promptTokens: response.prompt_eval_count ?? 0, completionTokens: response.eval_count ?? 0, ...(logprobs ? { logprobs } : {}) };
    } catch (e) {
      const err = e as { status_code?: number };
      if (typeof err.status_code === 'number') throw toLlmError({ status: err.status_code, message: (e as Error).message }, this.endpoint);
      throw toLlmError(e, this.endpoint);
    }
  }

  async embed(model: string, texts: string[], signal: AbortSignal) {
    try {
      const response = await this.withTimeout(signal, () => this.client.embed({ model, input: texts }));
      return response.embeddings;
    } catch (e) {
      throw toLlmError(e, this.endpoint);
    }
  }
}
