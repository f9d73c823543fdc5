import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { writing } from '../errors.js';
import { runBatched, type BatchOptions } from '../llm/batch.js';
import type { LlmClient } from '../llm/client.js';
import type { ModelSpec } from '../llm/model-spec.js';
import type { Problem } from '../exec/benchmarks/problems.js';
import { runnerIn } from '../exec/runners/registry.js';
import type { SandboxMode } from '../exec/sandbox/types.js';
import { extractCode, type Extraction } from '../extract/extract.js';

/**
 * Samples written by a model, shared by `eval` and `run`: n per problem, sample s asked with seed `seed + s` (so a
 * repeat is a new request, never a cache hit), replies appended to a generations file as they arrive (a rerun asks
 * only for what is missing, and the response cache answers what was asked before), the code extracted from each.
 */
export interface Generation {
  task_id: string;
  sample: number;
  seed: number;
  model: string;
  temperature: number;
  prompt_sha: string;
  reply: string;
  max_tokens?: number;
}

const LANGUAGE_NAMES: Record<string, string> = { python: 'Python', javascript: 'JavaScript', typescript: 'TypeScript', java: 'Java', cpp: 'C++', rust: 'Rust', php: 'PHP', ruby: 'Ruby', go: 'Go', csharp: 'C#' };
const FENCE: Record<string, string> = { python: 'python', javascript: 'javascript', typescript: 'typescript', java: 'java', cpp: 'cpp', rust: 'rust', php: 'php', ruby: 'ruby', go: 'go', csharp: 'csharp' };

/** The chat request for a problem: its prompt in a fenced block and the ask to complete it in one block. */
export function generationPrompt(problem: Problem): string {
  const lang = LANGUAGE_NAMES[problem.language] ?? problem.language;
  const fence = FENCE[problem.language] ?? problem.language;
  // MBPP's prompt is the task in words (the paper's): the reply is the whole program
  if (problem.format === 'mbpp') return `${problem.prompt.replace(/\s+$/, '')}\n\nReply with the complete ${lang} code in a single \`\`\`${fence} code block.\n`;
  return `Complete the following ${lang} code. Reply with the complete function (signature included) in a single \`\`\`${fence} code block.\n\n\`\`\`${fence}\n${problem.prompt.replace(/\s+$/, '')}\n\`\`\`\n`;
}

export function readGenerations(path: string): Map<string, Generation> {
  const rows = new Map<string, Generation>();
  if (!existsSync(path)) return rows;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const g = JSON.parse(line) as Generation;
      if (typeof g.task_id === 'string' && typeof g.reply === 'string') rows.set(`${g.task_id}\u0000${g.sample}`, g);
    } catch {
      // a line cut short by a kill
    }
  }
  return rows;
}

/** One generated sample: the raw reply and what extraction made of it. */
export interface GeneratedSample {
  problem: Problem;
  sample: number;
  raw: string;
  extraction: Extraction;
}

/**
 * Asks for every missing reply and returns all samples in problem x sample order, with `lines`: the samples file
 * (task_id, sample, completion or solution, the extraction steps, the raw reply, the code as it stands in the
 * program run). A failed request throws after the others are kept.
 */
export async function generateSamples(input: {
  /** The generations file (JSONL), read to resume and appended to. */
  path: string;
  problems: readonly Problem[];
  model: { name: string; spec: ModelSpec };
  client: LlmClient;
  n: number;
  temperature: number;
  seed: number;
  maxTokens?: number;
  batch?: BatchOptions;
  /** Whose runner writes the code as run (default bwrap: the host toolchains). */
  sandbox?: SandboxMode;
  onProgress?: (done: number, total: number) => void;
}): Promise<{ samples: GeneratedSample[]; lines: string[]; reused: number; asked: number; batch?: { stats: { batches: number }; client: LlmClient } }> {
  const { model, n, temperature, maxTokens, path } = input;
  writing(dirname(path), () => mkdirSync(dirname(path), { recursive: true }));
  const previous = readGenerations(path);
  const replies = new Map<string, string>();
  const kept: Generation[] = [];
  const todo: { key: string; problem: Problem; sample: number; seed: number; prompt: string; sha: string }[] = [];
  for (const problem of input.problems) {
    const prompt = generationPrompt(problem);
    const promptSha = createHash('sha256').update(prompt).digest('hex').slice(0, 16);
    for (let s = 0; s < n; s++) {
      const key = `${problem.taskId}\u0000${s}`;
      const old = previous.get(key);
      if (old && old.prompt_sha === promptSha && old.seed === input.seed + s && old.model === model.name && old.temperature === temperature && old.max_tokens === maxTokens) {
        replies.set(key, old.reply);
        kept.push(old);
      } else todo.push({ key, problem, sample: s, seed: input.seed + s, prompt, sha: promptSha });
    }
  }
  // Keep the reused rows only (a clean file: nothing stale, no half line), then append as replies arrive.
  writing(path, () => writeFileSync(path, kept.map((g) => JSON.stringify(g) + '\n').join('')));
  const total = input.problems.length * n;
  let done = replies.size;
  input.onProgress?.(done, total);
  // Every missing reply, each failure kept (with a batch, a round's unanswered requests fail as "deferred").
  const ask = async (client: LlmClient): Promise<unknown[]> => {
    const failures: unknown[] = [];
    await Promise.all(
      todo
        .filter((t) => !replies.has(t.key))
        .map(async (t) => {
          try {
            const r = await client.chat(model.spec, { messages: [{ role: 'user', content: t.prompt }], temperature, seed: t.seed, maxTokens });
            replies.set(t.key, r.text);
            const row: Generation = { task_id: t.problem.taskId, sample: t.sample, seed: t.seed, model: model.name, temperature, prompt_sha: t.sha, reply: r.text, max_tokens: maxTokens };
            writing(path, () => appendFileSync(path, JSON.stringify(row) + '\n'));
            input.onProgress?.(++done, total);
          } catch (e) {
            failures.push(e);
          }
        }),
    );
    return failures;
  };
  let batch: { stats: { batches: number }; client: LlmClient } | undefined;
  let failures: unknown[];
  if (input.batch && todo.length) {
    const batched = await runBatched(ask, input.batch);
    failures = batched.result;
    batch = batched;
  } else failures = await ask(input.client);
  // What was answered is kept: a rerun asks only for the rest.
  if (failures.length) throw failures[0];
  const samples: GeneratedSample[] = [];
  const lines: string[] = [];
  for (const problem of input.problems) {
    const runner = runnerIn(input.sandbox ?? 'bwrap', problem.language);
    for (let s = 0; s < n; s++) {
      const raw = replies.get(`${problem.taskId}\u0000${s}`)!;
      const extraction = extractCode(raw, problem);
      samples.push({ problem, sample: s, raw, extraction });
      lines.push(
        JSON.stringify({
          task_id: problem.taskId,
          sample: s,
          ...(extraction.solution !== undefined ? { solution: extraction.solution } : { completion: extraction.completion ?? '' }),
          extraction: extraction.steps,
          raw,
          // the code as it stands in the program run (the problem's tests and the harness's epilogue follow it)
          code: runner.code(problem, { index: 0, taskId: problem.taskId, line: 1, ...extraction }),
        }),
      );
    }
  }
  return { samples, lines, reused: kept.length, asked: todo.length, batch };
}
