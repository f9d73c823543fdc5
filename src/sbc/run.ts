import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, writing } from '../errors.js';
import { stringify } from 'csv-stringify/sync';
import type { LlmClient } from '../llm/client.js';
import type { Embedder } from '../llm/embeddings.js';
import { signedModelName } from '../llm/local-model.js';
import type { ModelSpec } from '../llm/model-spec.js';
import { canonicalKey, type LlmStore } from '../llm/store.js';
import { PROMPT_VERSION, extractCode, generationMessages, reverseMessages } from './prompts.js';
import { DEFAULT_SBC_WEIGHTS, sbcScores, sbcSignature, type SbcScore, type SbcWeights } from './score.js';

/**
 * The SBC pipeline end to end (requirement -> code -> reconstructed requirement -> SBC score) over requirements x
 * models x iterations. Rows are appended to results.jsonl and results.csv as they finish and recorded in the run
 * store, so an interrupted run resumes where it stopped; a failing row is written with its reason and the run
 * continues.
 */
export interface SbcRequirement {
  question_id: string | number;
  requirement: string;
  implementation_layer?: string;
  programming_language?: string;
}

export interface SbcRow extends Partial<SbcScore> {
  question_id: string | number;
  model: string;
  iteration: number;
  implementation_layer: string;
  programming_language: string;
  input_requirement: string;
  reverse_generated_requirement: string;
  generated_code: string;
  status: 'ok' | 'failed';
  error?: string;
  signature: string;
}

export const SBC_COLUMNS = [
  'question_id', 'model', 'iteration', 'implementation_layer', 'programming_language', 'input_requirement',
  'reverse_generated_requirement', 'final_accuracy_score', 'semantic_similarity', 'bleu_score', 'completeness_score',
  'missing_elements', 'extra_elements', 'generated_code', 'status', 'error', 'signature',
];

/** Writes rows as JSONL and CSV (list fields joined with ", " as in the reference CSVs). */
export class RowWriter {
  private started = false;
  constructor(
    private readonly dir: string,
    private readonly columns: string[],
  ) {}

  private csvValue(v: unknown): unknown {
    return Array.isArray(v) ? v.join(', ') : v ?? '';
  }

  start(append: boolean): void {
    writing(this.dir, () => mkdirSync(this.dir, { recursive: true }));
    if (!append) {
      writing(join(this.dir, 'results.jsonl'), () => writeFileSync(join(this.dir, 'results.jsonl'), ''));
      writing(join(this.dir, 'results.csv'), () => writeFileSync(join(this.dir, 'results.csv'), stringify([this.columns])));
    }
    this.started = true;
  }

  write(row: Record<string, unknown>): void {
    if (!this.started) this.start(false);
    writing(join(this.dir, 'results.jsonl'), () => appendFileSync(join(this.dir, 'results.jsonl'), JSON.stringify(row) + '\n'));
    writing(join(this.dir, 'results.csv'), () => appendFileSync(join(this.dir, 'results.csv'), stringify([this.columns.map((c) => this.csvValue(row[c]))])));
  }
}

export interface SbcRunOptions {
  requirements: SbcRequirement[];
  models: { name: string; spec: ModelSpec }[];
  iterations: number;
  client: LlmClient;
  embed: Embedder;
  store: LlmStore;
  outDir: string;
  weights?: SbcWeights;
  temperature?: number;
  seed?: number;
  maxTokens?: number;
  onProgress?: (done: number, total: number) => void;
  /** Rows worked on at once (default 4; match the client's concurrency). */
  parallel?: number;
}

export async function runSbc(options: SbcRunOptions): Promise<SbcRow[]> {
  const weights = options.weights ?? DEFAULT_SBC_WEIGHTS;
  const temperature = options.temperature ?? 0;
  // A local model is named with its file's identity, so a replaced GGUF file starts a new run instead of resuming.
  const identities = await Promise.all(options.models.map((m) => options.client.modelSignature(m.spec)));
  const signedNames = new Map(options.models.map((m, i) => [m.name, signedModelName(m.name, identities[i])]));
  const runId = canonicalKey({ requirements: options.requirements, models: [...signedNames.values()], iterations: options.iterations, temperature, seed: options.seed, weights, prompt: PROMPT_VERSION, embed: options.embed.id });
  const writer = new RowWriter(options.outDir, SBC_COLUMNS);
  const previous = options.store.items<SbcRow>(runId);
  writer.start(false);
  for (const p of previous) writer.write(p.result as unknown as Record<string, unknown>); // rewrite what survived
  const done = new Set(previous.map((p) => p.item));
  const rows: SbcRow[] = previous.map((p) => p.result);
  const tasks = options.models.flatMap((model) =>
    Array.from({ length: options.iterations }, (_, it) => options.requirements.map((req) => ({ model, iteration: it + 1, req }))).flat(),
  );
  let finished = done.size;
  options.onProgress?.(finished, tasks.length);
  // A fixed number of workers take rows in order, so rows finish (and are stored) one after another instead of all
  // at the end: an interrupted run keeps what it finished.
  const queue = tasks.values();
  const runTask = async ({ model, iteration, req }: (typeof tasks)[number]) => {
    const item = `${model.name}\u0000${iteration}\u0000${req.question_id}`;
    if (done.has(item)) return;
    const language = req.programming_language ?? '';
    const layer = req.implementation_layer ?? '';
    const signature = sbcSignature(options.embed.id, weights, { model: signedNames.get(model.name)!, temperature, promptVersion: PROMPT_VERSION });
    const base = { question_id: req.question_id, model: model.name, iteration, implementation_layer: layer, programming_language: language, input_requirement: req.requirement, signature };
    let row: SbcRow;
    try {
      if (!req.requirement || !req.requirement.trim()) throw new Error('the dataset row has no requirement');
      // Each iteration is its own request: the iteration number goes into the cache key via the seed.
      const sampling = { temperature, seed: options.seed !== undefined ? options.seed + iteration - 1 : iteration, maxTokens: options.maxTokens };
      const generated = await options.client.chat(model.spec, { messages: generationMessages(req.requirement, language, layer), ...sampling });
      const code = extractCode(generated.text);
      if (!code) throw new Error(`${model.name} returned an empty reply for the code`);
      const reverse = await options.client.chat(model.spec, { messages: reverseMessages(code, language), ...sampling });
      const reconstructed = reverse.text.trim();
      if (!reconstructed) throw new Error(`${model.name} returned an empty reply for the reverse-generated requirement`);
      const [score] = await sbcScores([{ input: req.requirement, reverse: reconstructed }], options.embed, weights);
      row = { ...base, reverse_generated_requirement: reconstructed, generated_code: code, ...score, status: 'ok' };
    } catch (e) {
      // A usage problem (a prompt the model's context cannot hold) stops the run; finished rows are in the store.
      if (e instanceof InputError) throw e;
      row = { ...base, reverse_generated_requirement: '', generated_code: '', status: 'failed', error: (e as Error).message };
    }
    // Only successful rows are final: a failed one is tried again when the run is resumed.
    if (row.status === 'ok') options.store.finish(runId, item, row);
    writer.write(row as unknown as Record<string, unknown>);
    rows.push(row);
    options.onProgress?.(++finished, tasks.length);
  };
  const worker = async () => {
    for (let next = queue.next(); !next.done; next = queue.next()) await runTask(next.value);
  };
  await Promise.all(Array.from({ length: Math.max(1, options.parallel ?? 4) }, worker));
  return rows;
}

interface BatchSummary {
  mean: number;
  n: number;
  failed: number;
}

/** Mean final score per model, per model and iteration, and per model over each question's best iteration. */
export function summarise(rows: SbcRow[]): { perModel: Record<string, BatchSummary>; perBatch: Record<string, Record<number, BatchSummary>>; bestPerQuestion: Record<string, { mean: number; n: number }> } {
  const perBatch: Record<string, Record<number, BatchSummary>> = {};
  const best: Record<string, Map<string | number, number>> = {};
  for (const r of rows) {
    const b = ((perBatch[r.model] ??= {})[r.iteration] ??= { mean: 0, n: 0, failed: 0 });
    if (r.status !== 'ok') {
      b.failed++;
      continue;
    }
    b.mean += r.final_accuracy_score!;
    b.n++;
    const m = (best[r.model] ??= new Map());
    m.set(r.question_id, Math.max(m.get(r.question_id) ?? -Infinity, r.final_accuracy_score!));
  }
  const perModel: Record<string, BatchSummary> = {};
  for (const [name, model] of Object.entries(perBatch)) {
    const total = (perModel[name] = { mean: 0, n: 0, failed: 0 });
    for (const b of Object.values(model)) {
      total.mean += b.mean;
      total.n += b.n;
      total.failed += b.failed;
      b.mean = b.n ? b.mean / b.n : NaN;
    }
    total.mean = total.n ? total.mean / total.n : NaN;
  }
  const bestPerQuestion = Object.fromEntries(Object.entries(best).map(([m, q]) => [m, { mean: [...q.values()].reduce((s, x) => s + x, 0) / q.size, n: q.size }]));
  return { perModel, perBatch, bestPerQuestion };
}
