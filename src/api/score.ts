import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { InputError, UsageError, WorkBoundError } from '../errors.js';
import { parallelSegments } from '../io/segments.js';
import { loadMetrics, parseSpec } from '../metrics/specs.js';
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

  /**
   * Adds one segment: its references and each system's hypothesis, in system order. `index` (0-based, the line of
   * every input file) names the segment in a WorkBoundError.
   */
  add(refs: readonly string[], hyps: readonly string[], index?: number): void {
    this.nrefs = this.nrefs === null ? refs.length : this.nrefs === refs.length ? this.nrefs : 'var';
    // Indexed loops, not nested forEach callbacks: this runs once per segment, and optimized code that inlines
    // forEach and its callbacks was deoptimized and compiled again in short (cold) runs.
    const metrics = this.metrics;
    for (let m = 0; m < metrics.length; m++) {
      const metric = metrics[m];
      let refInfo;
      try {
        refInfo = metric.prepareReferences(refs); // shared by every system
      } catch (e) {
        throw atSegment(e, metric, index);
      }
      const row = this.row[m];
      for (let s = 0; s < hyps.length; s++) {
        const hyp = hyps[s];
        row.fill(0);
        try {
          metric.segmentStatistics(hyp, refInfo, row, 0);
        } catch (e) {
          throw atSegment(e, metric, index);
        }
        this.sums[m][s].add(row);
        this.matrices?.[m][s].push(row);
        if (this.segmentScores) {
          this.segmentScores[m][s].push(metric.sentenceScoreFromStatistics ? metric.sentenceScoreFromStatistics(row) : metric.scoreFromStatistics(row));
          this.segmentLabels![m][s]?.push(metric.segmentLabel!(row));
        }
      }
    }
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
   * Appends the partial results of the segments that follow this accumulator's (a worker's windows, in input
   * order): sums add exactly, segment scores and statistics rows go on in order.
   */
  absorb(partials: readonly PartialScores[]): void {
    for (const p of partials) {
      if (p.nrefs !== null) this.nrefs = this.nrefs === null || this.nrefs === p.nrefs ? p.nrefs : 'var';
      p.sums.forEach((row, m) => row.forEach((state, s) => this.sums[m][s].merge(state)));
      this.metrics.forEach((metric, m) =>
        this.systemNames.forEach((_, s) => {
          if (this.segmentScores) {
            for (const x of p.segmentScores![m][s]) this.segmentScores[m][s].push(x);
            const labels = this.segmentLabels![m][s];
            if (labels) for (const x of p.segmentLabels![m][s]!) labels.push(x);
          }
          if (this.matrices) {
            const rows = p.matrices![m][s];
            for (let r = 0; r < rows.length; r += metric.statsSize) this.matrices[m][s].push(rows.subarray(r, r + metric.statsSize));
          }
        }),
      );
      this.segments += p.segments;
    }
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

/** The error to throw for one thrown by a metric on a segment: a WorkBoundError gains the metric and the line. */
function atSegment(e: unknown, metric: Metric<any>, index: number | undefined): unknown {
  if (!(e instanceof WorkBoundError) || index === undefined) return e;
  return new WorkBoundError(`segment ${index + 1} (line ${index + 1} of the input files): ${metric.name}: ${e.message}`);
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
  /** ROUGE-L/Lsum's work bound per segment (`--max-work`). */
  maxWork?: number;
  options: ScoreOptions;
  /** Byte offsets in the first reference file where the windows of lines start (see `segmentWindows`). */
  starts: number[];
  /** Shared with the other threads: see `Claims`. */
  shared: SharedArrayBuffer;
  /** This worker's mark in the claims (2, 3, ...). */
  id: number;
}

/**
 * The threads of a parallel `score` share the input as windows of whole lines: the main thread reads from the first
 * window on, in order, and the workers take windows from the last one back, so that each thread reads contiguous
 * lines and the faster threads take more; the threads meet where they meet. A window belongs to the thread that
 * marks it first (compare-and-exchange on its slot).
 */
export class Claims {
  static readonly MAIN = 1;
  /** Slots after the windows': the next window from the back, segments scored by the workers, a worker failed. */
  private static readonly EXTRA = 3;
  readonly slots: Int32Array;
  constructor(
    readonly windows: number,
    shared = new SharedArrayBuffer((windows + Claims.EXTRA) * 4),
  ) {
    this.slots = new Int32Array(shared);
    if (shared.byteLength !== (windows + Claims.EXTRA) * 4) throw new Error('claims: size mismatch');
  }
  static create(windows: number): Claims {
    const claims = new Claims(windows);
    claims.slots[0] = Claims.MAIN; // the first window is the main thread's from the start
    claims.slots[windows] = windows;
    return claims;
  }
  get shared(): SharedArrayBuffer {
    return this.slots.buffer as SharedArrayBuffer;
  }
  /** Marks window `w` as `who`'s; false if another thread has it. */
  claim(w: number, who: number): boolean {
    return Atomics.compareExchange(this.slots, w, 0, who) === 0;
  }
  /** The next window from the back for a worker (claimed, or -1 when none is left). */
  claimFromBack(who: number): number {
    const w = Atomics.sub(this.slots, this.windows, 1) - 1;
    return w > 0 && this.claim(w, who) ? w : -1;
  }
  /** Segments the workers have scored so far (reported in steps of 1000, for progress). */
  get workerSegments(): number {
    return Atomics.load(this.slots, this.windows + 1);
  }
  addWorkerSegments(n: number): void {
    Atomics.add(this.slots, this.windows + 1, n);
  }
  get failed(): boolean {
    return Atomics.load(this.slots, this.windows + 2) !== 0;
  }
  fail(): void {
    Atomics.store(this.slots, this.windows + 2, 1);
  }
}

/** What a worker sends back: the windows it scored, in its own order, and the first error in one (or in starting). */
export interface WorkerResult {
  windows: { window: number; partial: PartialScores }[];
  /** `window` -1: the worker failed before scoring (loading, reading); `short`: a file has too few lines for that
   * window (an earlier window then reports the difference in length). */
  error?: { window: number; short?: boolean; name: string; message: string; file?: string; line?: number; stack?: string };
}

/**
 * Below this much input, one thread: a worker (a thread, its modules and metrics, a scan of the files: ~0.15 s of
 * CPU for BLEU/chrF, more for METEOR's WordNet or CodeBLEU's grammars) joins too late to pay for itself. Measured
 * for BLEU + chrF on two otherwise idle cores: `--jobs 2` is slower than one thread on 2 MB of input, even at 4 MB,
 * 10-15% faster at 8 MB and 1.4-1.6x at 16 MB.
 */
export const PARALLEL_MIN_BYTES = 8 << 20;
/** Bytes of the first reference file per window: a window is the unit the threads share out (so the threads
 * finish within a window's time of each other). */
export const WINDOW_BYTES = 128 << 10;
const MAX_WINDOWS = 4096;

/**
 * Scores files on several threads when the input is large enough to pay for them: the main thread and `workers -
 * 1` worker threads share the input as windows of whole lines (see `Claims`). Statistics are additive, so the
 * threads' sums give exactly the single-thread corpus scores; segment scores and resampling rows are put back in
 * input order, and an input error is the one a single thread would report (the first in input order). Metrics are
 * given as specs (each worker builds its own).
 */
export async function scoreFiles(input: {
  refPaths: string[];
  hypPaths: string[];
  systems: string[];
  specs: string[];
  language?: string;
  /** ROUGE-L/Lsum's work bound per segment, in LCS word steps (`--max-work`; default 2^34). */
  maxWork?: number;
  workers: number;
  /** Inputs smaller than this many bytes are scored on one thread (default PARALLEL_MIN_BYTES). */
  parallelMinBytes?: number;
  /** Bytes of the first reference file per window shared out between threads (default WINDOW_BYTES). */
  windowBytes?: number;
  /** At most this many windows scored on the main thread (tests: to leave the rest to the workers). */
  mainWindows?: number;
  /** Receives the metric instances before they load (to attach progress reporters, or keep them, e.g. to write
   * CrystalBLEU's ignored n-grams after scoring). */
  onMetrics?: (metrics: readonly Metric<any>[]) => void;
  onSegment?: (done: number) => void;
} & ScoreOptions): Promise<ScoreReport> {
  const options: ScoreOptions = { segments: input.segments, confidence: input.confidence };
  const bytes = [...input.refPaths, ...input.hypPaths].reduce((n, p) => n + fileSize(p), 0);
  // Every spec is checked before a thread starts; the metrics' modules load while the workers start.
  const specs = input.specs.map((spec) => parseSpec(spec, { language: input.language }));
  // A metric that runs a model on a thread of its own (CodeBERTScore) is scored on this thread only.
  const singleThreadOnly = specs.some((s) => s.name === 'codebertscore');
  const firstSize = input.refPaths.length ? fileSize(input.refPaths[0]) : 0;
  const windows = Math.min(MAX_WINDOWS, Math.ceil(firstSize / (input.windowBytes ?? WINDOW_BYTES)));
  const parallel = input.workers > 1 && !singleThreadOnly && bytes >= (input.parallelMinBytes ?? PARALLEL_MIN_BYTES) && windows > 1;
  // The workers start first, so that their start-up (thread, modules, metrics) overlaps this thread's.
  const claims = parallel ? Claims.create(windows) : null;
  const starts = Array.from({ length: windows }, (_, w) => Math.floor((w * firstSize) / windows));
  const threads: ReturnType<typeof startWorker>[] = [];
  try {
    for (let i = 0; claims && i < Math.min(input.workers, windows) - 1; i++) {
      threads.push(startWorker({ refPaths: input.refPaths, hypPaths: input.hypPaths, systems: input.systems, specs: input.specs, language: input.language, maxWork: input.maxWork, options, starts, shared: claims.shared, id: i + 2 }, claims));
    }
    const parsed = await loadMetrics(input.specs, { language: input.language, maxWork: input.maxWork });
    input.onMetrics?.(parsed); // before loading, so a caller can attach progress reporters
    const metrics = await readyMetrics(parsed);
    fitOnFiles(metrics, input.refPaths, input.hypPaths);
    if (!claims) return accumulate(metrics, { stream: parallelSegments(input.refPaths, input.hypPaths), systems: input.systems, onSegment: input.onSegment, ...options });
    // This thread: the windows from the first on, read in order as one run of lines (no scan needed), until the next
    // window is another thread's (or a worker failed to start).
    let next = 1;
    const last = Math.min(windows, input.mainWindows ?? windows);
    const atLineStart = (offset: number): boolean => {
      for (; next < windows && offset >= starts[next]; next++) if (next >= last || claims.failed || !claims.claim(next, Claims.MAIN)) return false;
      return true;
    };
    const accumulator = new ScoreAccumulator(metrics, input.systems, options);
    for (const { refs, hyps, index } of parallelSegments(input.refPaths, input.hypPaths, { atLineStart })) {
      accumulator.add(refs, hyps, index);
      input.onSegment?.(accumulator.segments + claims.workerSegments);
    }
    const results = await Promise.all(threads.map((t) => t.result));
    // The first error in input order is the one a single thread would have met; windows before it were all scored.
    // A worker that failed to start stopped this thread early: its error, as the windows are not all scored.
    const errors = results.flatMap((r) => (r.error ? [r.error] : [])).sort((a, b) => a.window - b.window);
    const first = errors[0];
    if (first) {
      if (first.short) throw new Error(`parallel score: window ${first.window} found a short file with no error before it`);
      throw rebuildError(first);
    }
    const parts = results.flatMap((r) => r.windows).sort((a, b) => a.window - b.window);
    if (parts.some((p, i) => p.window !== next + i) || next + parts.length !== windows) throw new Error('parallel score: windows missing');
    accumulator.absorb(parts.map((p) => p.partial));
    return accumulator.report();
  } finally {
    for (const t of threads) void t.thread.terminate();
  }
}

/** Starts a worker; its result comes when it is done (its errors in scoring are part of the result). */
function startWorker(task: WorkerTask, claims: Claims): { thread: Worker; result: Promise<WorkerResult> } {
  // Workers inherit the parent's execArgv (V8 flags such as --max-old-space-size included, which a worker refuses
  // when they are given to it), except `--input-type` (a parent started with -e), which is refused for a file.
  const execArgv = process.execArgv.some((a) => a.startsWith('--input-type')) ? process.execArgv.filter((a) => !a.startsWith('--input-type')) : undefined;
  const thread = new Worker(WORKER_URL, { workerData: task, execArgv });
  const result = new Promise<WorkerResult>((resolve, reject) => {
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      claims.fail();
      reject(e);
    };
    thread.once('message', (message: WorkerResult) => {
      settled = true;
      resolve(message);
    });
    thread.once('error', fail);
    thread.once('exit', (code) => fail(new Error(`score worker stopped (exit code ${code}) before its result`)));
  });
  result.catch(() => {}); // awaited once this thread is done; not an unhandled rejection meanwhile
  return { thread, result };
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
function rebuildError(e: NonNullable<WorkerResult['error']>): Error {
  const error =
    e.name === 'UsageError' || e.name === 'SpecError' || e.name === 'UnknownLanguageError'
      ? new UsageError(e.message)
      : e.name === 'WorkBoundError'
        ? new WorkBoundError(e.message)
        : e.name === 'InputError'
          ? new InputError(e.message)
          : new Error(e.message);
  if (error instanceof InputError) Object.assign(error, { file: e.file, line: e.line });
  if (e.stack) error.stack = e.stack;
  return error;
}

/** Parses metric specs, imports their metrics, and loads what each needs (grammars, word lists) before any scoring. */
export async function readyMetrics(metrics: readonly (string | Metric<any>)[]): Promise<Metric<any>[]> {
  const ready = await loadMetrics(metrics);
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
  input: { stream: Iterable<{ refs: readonly string[]; hyps: readonly string[]; index?: number }>; systems: readonly string[]; onSegment?: (done: number) => void } & ScoreOptions,
): ScoreReport {
  const accumulator = new ScoreAccumulator(metrics, input.systems, input);
  for (const { refs, hyps, index } of input.stream) {
    accumulator.add(refs, hyps, index);
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
  const stream = input.references.map((refs, i) => ({ refs, hyps: input.systems.map((s) => s.hypotheses[i]), index: i }));
  return accumulate(metrics, { ...input, stream, systems: input.systems.map((s) => s.name) });
}

/** sacrebleu puts the resampling settings right after the number of references: `nrefs:1|bs:1000|seed:12345|...`. */
export function withResamplingSignature(signature: string, test: 'bs' | 'ar', samples: number, seed: number): string {
  const i = signature.indexOf('|');
  return `${signature.slice(0, i)}|${test}:${samples}|seed:${seed}${signature.slice(i)}`;
}

