import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { InputError, UsageError } from '../errors.js';
import { parallelSegments } from '../io/segments.js';
import { parseMetric } from '../metrics/registry.js';
import type { Metric, StatisticsMatrix } from '../metrics/metric.js';
import { ExactSums } from '../stats/exact-sum.js';
import { bootstrapDraws, corpusConfidenceInterval, DEFAULT_SEED, resampledScores } from '../stats/resampling.js';
import { VERSION } from '../version.js';

/** Library entry point behind `codegauge score`: several systems, several metrics, one reference set. */
export interface SystemInput {
  name: string;
  hypotheses: readonly string[];
}

export interface MetricScore {
  metric: string;
  name: string;
  score: number;
  signature: string;
  components?: Record<string, number>;
  details?: Record<string, number>;
  segments?: number[];
  /** The signature of the segment scores where it differs from the corpus score's (BLEU: `eff:yes`). */
  segment_signature?: string;
  segment_details?: string[];
  /** With `confidence`: sacrebleu's bootstrap estimate (`--confidence`): mean of the resampled scores ± half the
   * width of their central 95% range. */
  confidence?: { mean: number; ci: number };
}

export interface ScoreReport {
  /** `judge` reports share this shape: per-system scores with segments. */
  kind: 'score' | 'judge';
  version: string;
  systems: { name: string; scores: MetricScore[] }[];
}

export interface ScoreOptions {
  segments?: boolean;
  /** Bootstrap confidence intervals as sacrebleu's `--confidence` (1000 samples, seed 12345 by default). */
  confidence?: { samples?: number; seed?: number };
}

/** Why a score has no value, in words for tables (NaN never reaches one; JSON has null). */
export function missingScoreReason(x: { details?: Record<string, number> }): string {
  return x.details && x.details.graded === 0 ? 'all samples failed' : 'no value';
}

/** Bootstrap draws are held in memory as samples x segments 32-bit indices; past this many, ask for fewer samples. */
export const MAX_RESAMPLED_CELLS = 250_000_000;

export function checkResamplingSize(samples: number, segments: number, option = '--samples'): void {
  if (samples * segments > MAX_RESAMPLED_CELLS) {
    throw new UsageError(`${option} ${samples} x ${segments} segments needs ${((samples * segments * 4) / 2 ** 30).toFixed(1)} GiB of draws; use at most ${Math.floor(MAX_RESAMPLED_CELLS / segments)} samples for this input`);
  }
}

/** A Float64 matrix that grows by doubling as segments stream in (only kept when resampling needs the rows). */
class GrowingMatrix implements StatisticsMatrix {
  rows = 0;
  data: Float64Array;
  constructor(readonly size: number) {
    this.data = new Float64Array(size * 1024);
  }
  push(row: Float64Array): void {
    if ((this.rows + 1) * this.size > this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data.set(row, this.rows * this.size);
    this.rows++;
  }
}

/**
 * Scores segments as they arrive and keeps only what the report needs: the summed statistics per (metric,
 * system), each segment's score when asked for, and the statistics rows only for bootstrap intervals. This is
 * the spine of `score`: segment -> sufficient statistics -> corpus score from the sum.
 */
export class ScoreAccumulator {
  private readonly sums: ExactSums[][];
  private readonly matrices: GrowingMatrix[][] | null;
  private readonly segmentScores: number[][][] | null;
  private readonly segmentLabels: (string[] | null)[][] | null;
  private readonly row: Float64Array[];
  private nrefs: number | 'var' | null = null;
  segments = 0;

  constructor(
    private readonly metrics: readonly Metric<any>[],
    private readonly systemNames: readonly string[],
    private readonly options: ScoreOptions = {},
  ) {
    const each = <T>(make: (m: Metric<any>) => T) => metrics.map((m) => systemNames.map(() => make(m)));
    this.sums = each((m) => new ExactSums(m.statsSize));
    this.matrices = options.confidence ? each((m) => new GrowingMatrix(m.statsSize)) : null;
    this.segmentScores = options.segments ? each(() => []) : null;
    this.segmentLabels = options.segments ? each((m) => (m.segmentLabel ? [] : null)) : null;
    this.row = metrics.map((m) => new Float64Array(m.statsSize));
  }

  /** Adds one segment: its references and each system's hypothesis, in system order. */
  add(refs: readonly string[], hyps: readonly string[]): void {
    this.nrefs = this.nrefs === null ? refs.length : this.nrefs === refs.length ? this.nrefs : 'var';
    this.metrics.forEach((metric, m) => {
      const refInfo = metric.prepareReferences(refs); // shared by every system
      const row = this.row[m];
      hyps.forEach((hyp, s) => {
        row.fill(0);
        metric.segmentStatistics(hyp, refInfo, row, 0);
        this.sums[m][s].add(row);
        this.matrices?.[m][s].push(row);
        if (this.segmentScores) {
          this.segmentScores[m][s].push(metric.sentenceScoreFromStatistics ? metric.sentenceScoreFromStatistics(row) : metric.scoreFromStatistics(row));
          this.segmentLabels![m][s]?.push(metric.segmentLabel!(row));
        }
      });
    });
    this.segments++;
  }

  /** What a worker sends back: its sums, its segments' scores and statistics rows, in its own order. */
  partial(): PartialScores {
    return {
      segments: this.segments,
      nrefs: this.nrefs,
      sums: this.sums.map((row) => row.map((a) => a.state())),
      segmentScores: this.segmentScores,
      segmentLabels: this.segmentLabels,
      matrices: this.matrices?.map((row) => row.map((m) => m.data.slice(0, m.rows * m.size))) ?? null,
    };
  }

  /**
   * Joins the partial results of `workers` workers that took stripes of `stripe` segments in turn, restoring the
   * input order of segment scores and statistics rows.
   */
  absorb(partials: PartialScores[], stripe: number): void {
    const workers = partials.length;
    const total = partials.reduce((n, p) => n + p.segments, 0);
    for (const p of partials) {
      if (p.nrefs !== null) this.nrefs = this.nrefs === null || this.nrefs === p.nrefs ? p.nrefs : 'var';
      p.sums.forEach((row, m) => row.forEach((state, s) => this.sums[m][s].merge(state)));
    }
    const source = (i: number) => {
      const batch = Math.floor(i / stripe);
      return { worker: batch % workers, local: Math.floor(batch / workers) * stripe + (i % stripe) };
    };
    for (let i = 0; i < total; i++) {
      const { worker, local } = source(i);
      const p = partials[worker];
      this.metrics.forEach((metric, m) =>
        this.systemNames.forEach((_, s) => {
          if (this.segmentScores) {
            this.segmentScores[m][s].push(p.segmentScores![m][s][local]);
            this.segmentLabels![m][s]?.push(p.segmentLabels![m][s]![local]);
          }
          if (this.matrices) this.matrices[m][s].push(p.matrices![m][s].subarray(local * metric.statsSize, (local + 1) * metric.statsSize));
        }),
      );
    }
    this.segments += total;
  }

  report(): ScoreReport {
    if (this.segments === 0) throw new InputError('no segments to score');
    const report: ScoreReport = { kind: 'score', version: VERSION, systems: this.systemNames.map((name) => ({ name, scores: [] })) };
    const samples = this.options.confidence?.samples ?? 1000;
    const seed = this.options.confidence?.seed ?? DEFAULT_SEED;
    if (this.matrices) checkResamplingSize(samples, this.segments, '--confidence-n');
    const draws = this.matrices ? bootstrapDraws(this.segments, samples, seed) : null;
    this.metrics.forEach((metric, m) => {
      const signature = metric.signature(this.nrefs ?? 1);
      this.systemNames.forEach((_, s) => {
        const sum = this.sums[m][s].values();
        const entry: MetricScore = { metric: metric.spec, name: metric.name, score: metric.scoreFromStatistics(sum), signature };
        if (draws) {
          entry.confidence = corpusConfidenceInterval(resampledScores(metric, this.matrices![m][s], draws, samples), metric.float32Scores === true);
          entry.signature = withResamplingSignature(signature, 'bs', samples, seed);
        }
        if (metric.components) entry.components = metric.components(sum);
        if (metric.summary) entry.details = metric.summary(sum);
        if (this.segmentScores) {
          entry.segments = this.segmentScores[m][s];
          const sentence = metric.sentenceSignature?.(this.nrefs ?? 1);
          if (sentence && sentence !== signature) entry.segment_signature = sentence;
          const labels = this.segmentLabels![m][s];
          if (labels) entry.segment_details = labels;
        }
        report.systems[s].scores.push(entry);
      });
    });
    return report;
  }
}

export interface PartialScores {
  segments: number;
  nrefs: number | 'var' | null;
  /** Exact partial sums per metric, system and statistic. */
  sums: number[][][][];
  segmentScores: number[][][] | null;
  segmentLabels: (string[] | null)[][] | null;
  matrices: Float64Array[][] | null;
}

/** What one worker of a parallel `score` is asked to do. */
export interface WorkerTask {
  refPaths: string[];
  hypPaths: string[];
  systems: string[];
  specs: string[];
  language?: string;
  options: ScoreOptions;
  worker: number;
  workers: number;
  stripe: number;
}

/** Segments per stripe: large enough that consecutive samples of one problem share a worker (and its caches). */
export const STRIPE_SEGMENTS = 512;
/** Below this much input (about 70k code pairs), one thread is faster than starting workers that each load their metrics (WordNet, grammars). */
export const PARALLEL_MIN_BYTES = 32 << 20;

/**
 * Scores files on several worker threads when the input is large enough to pay for them: statistics are additive,
 * so the workers' sums give exactly the single-thread corpus scores, and segment scores and resampling rows are
 * put back in input order. Metrics are given as specs (each worker builds its own).
 */
export async function scoreFiles(input: {
  refPaths: string[];
  hypPaths: string[];
  systems: string[];
  specs: string[];
  language?: string;
  workers: number;
  /** Inputs smaller than this many bytes are scored on one thread (default PARALLEL_MIN_BYTES). */
  parallelMinBytes?: number;
  /** Receives the metric instances before they load (to attach progress reporters, or keep them, e.g. to write
   * CrystalBLEU's ignored n-grams after scoring). */
  onMetrics?: (metrics: readonly Metric<any>[]) => void;
  onSegment?: (done: number) => void;
} & ScoreOptions): Promise<ScoreReport> {
  const options: ScoreOptions = { segments: input.segments, confidence: input.confidence };
  const bytes = [...input.refPaths, ...input.hypPaths].reduce((n, p) => n + fileSize(p), 0);
  const parsed = input.specs.map((spec) => parseMetric(spec, { language: input.language }));
  input.onMetrics?.(parsed); // before loading, so a caller can attach progress reporters
  const metrics = await readyMetrics(parsed);
  fitOnFiles(metrics, input.refPaths, input.hypPaths);
  // A metric that runs a model on a thread of its own (CodeBERTScore) is scored on this thread only.
  const singleThreadOnly = metrics.some((m) => m.name.startsWith('CodeBERTScore'));
  if (input.workers <= 1 || singleThreadOnly || bytes < (input.parallelMinBytes ?? PARALLEL_MIN_BYTES)) {
    return accumulate(metrics, { stream: parallelSegments(input.refPaths, input.hypPaths), systems: input.systems, onSegment: input.onSegment, ...options });
  }
  const done = new Array<number>(input.workers).fill(0);
  const partials = await Promise.all(
    Array.from({ length: input.workers }, (_, worker) => {
      const task: WorkerTask = { refPaths: input.refPaths, hypPaths: input.hypPaths, systems: input.systems, specs: input.specs, language: input.language, options, worker, workers: input.workers, stripe: STRIPE_SEGMENTS };
      return new Promise<PartialScores>((resolve, reject) => {
        // Workers inherit the parent's execArgv; `--input-type` (a parent started with -e) is refused for a file.
        const thread = new Worker(WORKER_URL, { workerData: task, execArgv: process.execArgv.filter((a) => !a.startsWith('--input-type')) });
        thread.on('message', (message: { type: string; done?: number; partial?: PartialScores; error?: { name: string; message: string; file?: string; line?: number; stack?: string } }) => {
          if (message.type === 'progress') {
            done[worker] = message.done!;
            input.onSegment?.(done.reduce((a, b) => a + b, 0));
          } else if (message.type === 'done') resolve(message.partial!);
          else reject(rebuildError(message.error!));
          if (message.type !== 'progress') void thread.terminate();
        });
        thread.on('error', reject);
      });
    }),
  );
  const accumulator = new ScoreAccumulator(metrics, input.systems, options);
  accumulator.absorb(partials, STRIPE_SEGMENTS);
  return accumulator.report();
}

/** Metrics that weigh by the whole reference set see it first: one extra pass over the reference files. */
export function fitOnFiles(metrics: readonly Metric<any>[], refPaths: string[], hypPaths: string[]): void {
  for (const m of metrics) {
    if (!m.fitReferences) continue;
    m.fitReferences((function* () {
      for (const { refs } of parallelSegments(refPaths, hypPaths)) yield refs;
    })());
  }
}

// Under the TypeScript sources (tests), the worker runs from the build, which `npm test` makes first.
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? '../../dist/api/score-worker.js' : './score-worker.js', import.meta.url);

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // the reader reports a missing file with its own message
  }
}

/** A worker's error as the typed error it was, so the CLI maps it as usual. */
function rebuildError(e: { name: string; message: string; file?: string; line?: number; stack?: string }): Error {
  const error = e.name === 'UsageError' || e.name === 'SpecError' || e.name === 'UnknownLanguageError' ? new UsageError(e.message) : e.name === 'InputError' ? new InputError(e.message) : new Error(e.message);
  if (error instanceof InputError) Object.assign(error, { file: e.file, line: e.line });
  if (e.stack) error.stack = e.stack;
  return error;
}

/** Parses metric specs and loads what each metric needs (grammars, word lists) before any scoring. */
export async function readyMetrics(metrics: readonly (string | Metric<any>)[]): Promise<Metric<any>[]> {
  const ready = metrics.map((m) => (typeof m === 'string' ? parseMetric(m) : m));
  for (const m of ready) await m.ready?.();
  return ready;
}

/** Scores a stream of segments (e.g. `parallelSegments` over files) in bounded memory. */
export async function scoreSegments(
  input: { stream: Iterable<{ refs: readonly string[]; hyps: readonly string[] }>; systems: readonly string[]; metrics: readonly (string | Metric<any>)[]; onSegment?: (done: number) => void } & ScoreOptions,
): Promise<ScoreReport> {
  return accumulate(await readyMetrics(input.metrics), input);
}

/** The streaming loop over metrics that are already loaded (callers that loaded them do not load them again). */
function accumulate(
  metrics: Metric<any>[],
  input: { stream: Iterable<{ refs: readonly string[]; hyps: readonly string[] }>; systems: readonly string[]; onSegment?: (done: number) => void } & ScoreOptions,
): ScoreReport {
  const accumulator = new ScoreAccumulator(metrics, input.systems, input);
  for (const { refs, hyps } of input.stream) {
    accumulator.add(refs, hyps);
    input.onSegment?.(accumulator.segments);
  }
  return accumulator.report();
}

/** Scores systems held in memory: the same path as the stream. */
export async function scoreSystems(
  input: { references: readonly (readonly string[])[]; systems: readonly SystemInput[]; metrics: readonly (string | Metric<any>)[] } & ScoreOptions,
): Promise<ScoreReport> {
  for (const s of input.systems) {
    if (s.hypotheses.length !== input.references.length) {
      throw new InputError(`system ${s.name}: ${s.hypotheses.length} hypotheses but ${input.references.length} references`);
    }
  }
  const metrics = await readyMetrics(input.metrics);
  for (const m of metrics) m.fitReferences?.(input.references);
  const stream = input.references.map((refs, i) => ({ refs, hyps: input.systems.map((s) => s.hypotheses[i]) }));
  return accumulate(metrics, { ...input, stream, systems: input.systems.map((s) => s.name) });
}

/** sacrebleu puts the resampling settings right after the number of references: `nrefs:1|bs:1000|seed:12345|...`. */
export function withResamplingSignature(signature: string, test: 'bs' | 'ar', samples: number, seed: number): string {
  const i = signature.indexOf('|');
  return `${signature.slice(0, i)}|${test}:${samples}|seed:${seed}${signature.slice(i)}`;
}

