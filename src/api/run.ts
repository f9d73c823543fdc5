import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { InputError, UsageError, writing } from '../errors.js';
import { generateSamples } from './generate.js';
import { loadExtractor } from '../extract/extract.js';
import { readBenchmark } from '../exec/benchmarks/bundled.js';
import { readProblems, type ProblemSet } from '../exec/benchmarks/problems.js';
import { readSamples } from '../exec/benchmarks/samples.js';
import { execSystems, type ExecRow, type ExecSummary, type TimeoutRetry } from '../exec/run.js';
import { runnerFor } from '../exec/runners/registry.js';
import { resolveSandboxMode } from '../exec/sandbox/mode.js';
import { lockOutput } from '../io/lock.js';
import { readHypotheses, readReferences } from '../io/segments.js';
import { DsaJudge } from '../judges/dsa.js';
import { IceJudge } from '../judges/ice.js';
import type { Judge } from '../judges/judge.js';
import { judgeSystems } from '../judges/judge-run.js';
import { runBatched, type BatchOptions } from '../llm/batch.js';
import { LlmClient } from '../llm/client.js';
import { parseModelSpec, type ModelSpec } from '../llm/model-spec.js';
import { LlmStore } from '../llm/store.js';
import type { Metric } from '../metrics/metric.js';
import { ExactSums } from '../stats/exact-sum.js';
import { renderReport } from '../report/html.js';
import { readReportInput } from '../report/inputs.js';
import { VERSION } from '../version.js';
import { BaselineStore, itemKey, type ItemResults } from '../config/baselines.js';
import { loadConfig, metricSpec, type LoadedConfig } from '../config/load.js';
import type { CodegaugeConfig, GeneratedSystemConfig } from '../config/schema.js';
import { inShard, shardDirName, shardLabel, type Shard } from '../config/shard.js';
import { compareSystems } from './compare.js';
import { compareResults, type ResultsSystem } from './compare-input.js';
import type { ItemStatistics } from './merge.js';
import { scoreSystems, type MetricScore, type ScoreReport } from './score.js';

/**
 * `codegauge run`: the whole matrix of a config through the library (score, compare, generation, exec, judges,
 * report), with the existing resume (exec/generations/*.jsonl, exec/results.jsonl, the LLM response cache), optional
 * baselines in the SQLite store and gates on them. Results: OUT/score.json, compare.json,
 * exec/{results.jsonl,summary.json}, judge-*.json, items.jsonl (every per-item result, what baselines and `merge`
 * use; metric items carry their summed sufficient statistics), run.json and report.html.
 */
export interface RunOptions {
  config: string | LoadedConfig;
  /** Overrides the config's `out`. */
  out?: string;
  /** SQLite store (default: config `store`, else .codegauge/cache.sqlite). */
  store?: string;
  saveBaseline?: string;
  baseline?: string;
  /** Gate delta for every compared result without its own `fail_if_worse`. */
  failIfWorse?: number;
  shard?: Shard;
  /** Judges and generation through the Batch API (overrides the config's llm.batch). */
  batch?: boolean;
  /** What an execution timeout leads to (overrides the config's exec.timeout_retry). */
  timeoutRetry?: TimeoutRetry;
  log?: (line: string) => void;
  onProgress?: (label: string) => ((done: number, total: number) => void) | undefined;
}

export interface RunScore {
  kind: ItemResults['kind'];
  system: string;
  metric: string;
  /** 0-100; null where nothing could be scored. */
  score: number | null;
  /** 95% interval where one is computed (bootstrap for metrics: mean ± half-width). */
  ci: [number, number] | null;
  signature: string;
}

export type GateStatus = 'passed' | 'failed' | 'not-comparable' | 'missing' | 'compared';

export interface BaselineComparison {
  kind: ItemResults['kind'];
  system: string;
  metric: string;
  baseline_score: number | null;
  score: number | null;
  diff: number | null;
  ci: [number, number] | null;
  p_value: number | null;
  /** The gate's delta; null when the result is compared but not gated. */
  delta: number | null;
  status: GateStatus;
  reason: string;
}

/** One judge's grades of one system, segment by segment (JUnit's test cases per judged segment). */
export interface JudgeSegments {
  system: string;
  metric: string;
  /** The judge's `segment_threshold` (0-100): a segment graded under it is a failed test case. */
  threshold: number | null;
  /** `id`: the segment's 1-based number in data.refs; `score`: 0-100, null where the judge failed (`error` says why). */
  segments: { id: string; score: number | null; error?: string }[];
}

/** What generation did for an exec system written by a model. */
export interface RunGeneration {
  system: string;
  model: string;
  n: number;
  problems: number;
  /** Replies taken from exec/generations/SYSTEM.jsonl (a resumed run). */
  reused: number;
  /** Replies asked for now (answered by the server or by the response cache). */
  asked: number;
}

export interface RunResult {
  kind: 'run';
  version: string;
  config: string;
  out: string;
  shard: string | null;
  scores: RunScore[];
  exec: { ran: number; reused: number; rows: Pick<ExecRow, 'system' | 'index' | 'task_id' | 'status' | 'passed' | 'stderr' | 'duration_ms'>[] } | null;
  llm: { requests: number; cache_hits: number; batches?: number } | null;
  /** Exec systems generated by a model (exec.systems entries with `model`). */
  generation?: RunGeneration[];
  judge_segments?: JudgeSegments[];
  baseline: { name: string; created: string; comparisons: BaselineComparison[] } | null;
  saved_baseline: string | null;
  warnings: string[];
  files: string[];
}

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex').slice(0, 12);
/** The resampling settings are no part of what makes two runs comparable. */
const baseSignature = (s: string) => s.replace(/\|bs:\d+\|seed:\d+/, '');
const finite = (x: number | null | undefined) => (typeof x === 'number' && Number.isFinite(x) ? x : null);

function writeJson(path: string, value: unknown): void {
  writing(path, () => writeFileSync(path, JSON.stringify(value, null, 2) + '\n'));
}

export async function runConfig(options: RunOptions): Promise<RunResult> {
  const loaded = typeof options.config === 'string' ? loadConfig(options.config) : options.config;
  const { config } = loaded;
  const shard = options.shard && options.shard.count > 1 ? options.shard : undefined;
  const baseOut = options.out ?? loaded.resolvePath(config.out);
  const out = shard ? join(baseOut, shardDirName(shard)) : baseOut;
  const log = options.log ?? (() => {});
  if (options.saveBaseline !== undefined && !/^[\w.@-]{1,100}$/.test(options.saveBaseline)) throw new UsageError(`--save-baseline: a name of letters, digits, . _ - @, got "${options.saveBaseline}"`);
  const storePath = options.store ?? (config.store ? loaded.resolvePath(config.store) : join('.codegauge', 'cache.sqlite'));
  // Look the baseline up before any work: a typo in its name fails fast.
  let baselineStore: BaselineStore | undefined;
  let baseline: { results: ItemResults[]; created: string } | undefined;
  if (options.baseline !== undefined || options.saveBaseline !== undefined) baselineStore = new BaselineStore(storePath);
  if (options.baseline !== undefined) {
    baseline = baselineStore!.load(options.baseline);
    if (!baseline) {
      const names = baselineStore!.names();
      baselineStore!.close();
      throw new UsageError(`--baseline: no baseline "${options.baseline}" in ${storePath}; saved: ${names.join(', ') || 'none (save one with --save-baseline NAME)'}`);
    }
  }
  const unlock = lockOutput(out);
  const result: RunResult = {
    kind: 'run',
    version: VERSION,
    config: loaded.file,
    out,
    shard: shard ? shardLabel(shard) : null,
    scores: [],
    exec: null,
    llm: null,
    baseline: null,
    saved_baseline: null,
    warnings: [],
    files: [],
  };
  const items: (ItemResults & { statistics?: ItemStatistics })[] = [];
  const reportFiles: string[] = [];
  const notes: string[] = [];
  const file = (name: string) => {
    const path = join(out, name);
    result.files.push(path);
    return path;
  };
  const llm = new LlmModels(config, storePath, options.batch ?? config.llm.batch);
  try {
    // Every model this run uses, checked before any work (--batch needs openai: models with a server).
    for (const [name, source] of Object.entries(config.exec?.systems ?? {})) if (typeof source !== 'string') llm.model(source.model, ['exec', 'systems', name, 'model'], loaded);
    if (config.data) config.judges.forEach((j, i) => llm.model(j.model, ['judges', i, 'model'], loaded));
    // Data: references and systems, cut to the shard (segment ids are 1-based line numbers).
    let data: { references: string[][]; systems: { name: string; hypotheses: string[] }[]; ids: string[]; refsSha: string; problems?: string[] } | undefined;
    if (config.data) {
      const d = config.data;
      const refPaths = (Array.isArray(d.refs) ? d.refs : [d.refs]).map(loaded.resolvePath);
      const { references, files } = readReferences(refPaths);
      const allIds = references.map((_, i) => String(i + 1));
      const keep = allIds.map((id) => inShard(id, shard));
      const pick = <T>(xs: readonly T[]) => xs.filter((_, i) => keep[i]);
      const systems = Object.entries(d.systems).map(([name, path]) => ({ name, hypotheses: pick(readHypotheses(loaded.resolvePath(path), files[0])) }));
      let problems: string[] | undefined;
      if (d.problems) {
        const path = loaded.resolvePath(d.problems);
        const lines = readFileSync(path, 'utf8').replace(/\n$/, '').split('\n');
        problems = path.endsWith('.jsonl') ? lines.map((l, i) => { try { return String(JSON.parse(l)); } catch { throw new InputError('invalid JSON string', path, i + 1); } }) : lines;
        if (problems.length !== references.length) throw loaded.error(['data', 'problems'], `${problems.length} problems but ${references.length} references`);
        problems = pick(problems);
      }
      data = { references: pick(references), systems, ids: pick(allIds), refsSha: sha(refPaths.map((p) => readFileSync(p)).join('\u0000')), problems };
      if (data.ids.length === 0) throw new UsageError(`--shard ${shardLabel(shard!)}: no segment of ${d.refs} falls in this shard`);
    }

    // Metrics.
    if (data && config.metrics.length) {
      log(`scoring ${data.systems.length} system(s) x ${config.metrics.length} metric(s) on ${data.ids.length} segment(s)`);
      const specs = config.metrics.map(metricSpec);
      const { loadMetrics } = await import('../metrics/specs.js');
      const taps = (await loadMetrics(specs, { language: config.data!.lang })).map((m) => tapStatistics(m, data!.systems.length));
      const report: ScoreReport & { ids?: string[] } = await scoreSystems({
        references: data.references,
        systems: data.systems,
        metrics: taps.map((t) => t.metric),
        segments: true,
        confidence: config.confidence > 0 ? { samples: config.confidence } : undefined,
      });
      if (shard) report.ids = data.ids;
      const path = file('score.json');
      writeJson(path, report);
      reportFiles.push(path);
      report.systems.forEach((s, si) => {
        s.scores.forEach((m, mi) => {
          const score = finite(m.score);
          result.scores.push({ kind: 'metric', system: s.name, metric: m.metric, score, ci: m.confidence && score !== null ? [m.confidence.mean - m.confidence.ci, m.confidence.mean + m.confidence.ci] : null, signature: m.signature });
          const statistics = taps[mi].statistics(si, m, config.data!.lang);
          items.push({ kind: 'metric', system: s.name, metric: m.metric, signature: `${baseSignature(m.signature)}|refs:${data!.refsSha}`, ids: data!.ids, values: (m.segments ?? []).map(finite), ...(statistics ? { statistics } : {}) });
        });
      });
    }

    // Comparisons within the run (sacrebleu's paired tests on corpus scores).
    if (data && config.compare) {
      const c = config.compare;
      const baseName = c.baseline ?? data.systems[0].name;
      const ordered = [data.systems.find((s) => s.name === baseName)!, ...data.systems.filter((s) => s.name !== baseName)];
      log(`comparing ${ordered.length - 1} system(s) with ${baseName} (${c.test})`);
      const report = await compareSystems({ references: data.references, systems: ordered, metrics: config.metrics.map(metricSpec).map((s) => s), test: c.test === 'paired-ar' ? 'ar' : 'bs', samples: c.samples, seed: c.seed, onProgress: options.onProgress?.('comparing') });
      const path = file('compare.json');
      writeJson(path, report);
      reportFiles.push(path);
      result.warnings.push(...report.warnings);
    }

    // Execution (resumes from OUT/exec/results.jsonl: a rerun with nothing changed runs no program), of samples
    // files, canonical solutions, or samples a model generates (resumed from OUT/exec/generations/SYSTEM.jsonl and
    // the response cache: a rerun with nothing changed sends no request).
    if (config.exec) {
      const e = config.exec;
      const problems: ProblemSet = e.benchmark ? readBenchmark(e.benchmark) : readProblems(loaded.resolvePath(e.problems!), e.lang);
      const limited = new Set((e.limit ? problems.problems.slice(0, e.limit) : problems.problems).filter((p) => inShard(p.taskId, shard)).map((p) => p.key));
      const chosen = problems.problems.filter((p) => limited.has(p.key));
      const execDir = join(out, 'exec');
      const samplesDir = join(execDir, 'samples');
      writing(samplesDir, () => mkdirSync(samplesDir, { recursive: true }));
      const generated = Object.entries(e.systems).filter((x): x is [string, GeneratedSystemConfig] => typeof x[1] !== 'string');
      if (generated.length) {
        // A missing toolchain or grammar stops before any request.
        for (const language of new Set(chosen.map((p) => p.language))) {
          runnerFor(language);
          await loadExtractor(language);
        }
      }
      const samplePaths: string[] = [];
      for (const [name, source] of Object.entries(e.systems)) {
        if (!/^[\w.@-]+$/.test(name)) throw loaded.error(['exec', 'systems', name], 'a system name of letters, digits, . _ - @');
        let lines: string[];
        if (typeof source !== 'string') {
          const model = llm.model(source.model, ['exec', 'systems', name, 'model'], loaded);
          const temperature = source.temperature ?? config.llm.temperature;
          log(`generating ${source.n} sample(s) per problem for ${name} on ${chosen.length} problem(s) with ${model.name}${llm.batch ? ' (batch)' : ''}`);
          const g = await generateSamples({
            problems: chosen,
            model,
            client: model.client,
            n: source.n,
            temperature,
            seed: source.seed,
            maxTokens: source.max_tokens ?? config.llm.max_tokens,
            path: join(execDir, 'generations', `${name}.jsonl`),
            batch: llm.batch ? llm.batchOptions(model, log) : undefined,
            onProgress: options.onProgress?.(`generate ${name}`),
          });
          llm.absorb(g.batch);
          (result.generation ??= []).push({ system: name, model: model.name, n: source.n, problems: chosen.length, reused: g.reused, asked: g.asked });
          lines = g.lines;
        } else if (source === 'canonical') {
          lines = chosen.map((p) => {
            if (p.canonicalSolution === undefined) throw loaded.error(['exec', 'systems', name], `problem ${p.taskId} has no canonical solution`);
            return JSON.stringify({ task_id: p.taskId, completion: p.canonicalSolution });
          });
        } else {
          const { problemKey } = await import('../exec/benchmarks/problems.js');
          lines = readSamples(loaded.resolvePath(source))
            .filter((s) => limited.has(problemKey(s.taskId)))
            .map((s) => JSON.stringify({ task_id: s.taskId, ...(s.completion !== undefined ? { completion: s.completion } : {}), ...(s.solution !== undefined ? { solution: s.solution } : {}), ...(s.prompt !== undefined ? { prompt: s.prompt } : {}) }));
        }
        if (lines.length === 0) throw loaded.error(['exec', 'systems', name], 'no sample for the problems of this run');
        const path = join(samplesDir, `${name}.jsonl`);
        const text = lines.join('\n') + '\n';
        if (!existsSync(path) || readFileSync(path, 'utf8') !== text) writing(path, () => writeFileSync(path, text));
        samplePaths.push(path);
      }
      const sandbox = resolveSandboxMode(e.sandbox, (m) => result.warnings.push(m.trim()));
      let first: number | undefined;
      let total = 0;
      const progress = options.onProgress?.('exec');
      log(`executing ${samplePaths.length} system(s) on ${limited.size} problem(s) (sandbox ${sandbox})`);
      const { summary, rows } = await execSystems({
        problems,
        samples: samplePaths,
        ks: [...new Set(e.k)].sort((a, b) => a - b),
        timeoutMs: Math.round(e.timeout * 1000),
        timeoutRetry: options.timeoutRetry ?? e.timeout_retry,
        memoryMb: e.memory,
        jobs: e.jobs,
        sandbox,
        outDir: execDir,
        onProgress: (done, all) => {
          first ??= done;
          total = all;
          progress?.(done, all);
        },
      });
      result.files.push(join(execDir, 'results.jsonl'), join(execDir, 'summary.json'));
      if (generated.length) result.files.push(...generated.map(([name]) => join(execDir, 'generations', `${name}.jsonl`)));
      result.exec = { ran: total - (first ?? 0), reused: first ?? 0, rows: rows.map((r) => ({ system: r.system, index: r.index, task_id: r.task_id, status: r.status, passed: r.passed, stderr: r.stderr, duration_ms: r.duration_ms })) };
      for (const s of summary.systems) {
        for (const [k, v] of Object.entries(s.pass_at)) result.scores.push({ kind: 'exec', system: s.name, metric: `pass@${k}`, score: v === null ? null : 100 * v, ci: null, signature: s.signature });
        const mine = rows.filter((r) => r.system === s.name);
        items.push({ kind: 'exec', system: s.name, metric: 'passed', signature: baseSignature(s.signature), ids: mine.map((r) => r.task_id), values: mine.map((r) => (r.passed ? 1 : 0)) });
      }
      notes.push(...execNotes(summary));
    }

    // LLM judges (the response cache in the store: a rerun with nothing changed sends no request).
    if (data && config.judges.length) {
      for (const [i, j] of config.judges.entries()) {
        const model = llm.model(j.model, ['judges', i, 'model'], loaded);
        const judge: Judge = j.method === 'ice' ? new IceJudge({}) : new DsaJudge({ simplified: j.method === 'dsa-simple' });
        const systems = j.systems ? data.systems.filter((s) => j.systems!.includes(s.name)) : data.systems;
        log(`judging ${systems.length} system(s) with ${j.method} (${model.name})`);
        const judgeWith = (c: LlmClient) =>
          judgeSystems({
            judge,
            modelName: model.name,
            context: { client: c, model: model.spec, temperature: config.llm.temperature, seed: config.llm.seed, maxTokens: config.llm.max_tokens },
            references: data!.references,
            systems,
            problems: data!.problems,
            language: config.data!.lang!,
            repeat: j.repeat,
            onProgress: llm.batch ? undefined : options.onProgress?.(`judge ${j.method}`),
          });
        let report: ScoreReport;
        if (llm.batch) {
          const batched = await runBatched(judgeWith, llm.batchOptions(model, log));
          report = batched.result;
          llm.absorb(batched);
        } else report = await judgeWith(model.client);
        const name = config.judges.filter((x) => x.method === j.method).length > 1 ? `judge-${j.method}-${i + 1}.json` : `judge-${j.method}.json`;
        const path = file(name);
        writeJson(path, shard ? { ...report, ids: data.ids } : report);
        reportFiles.push(path);
        for (const s of report.systems) {
          for (const m of s.scores) {
            result.scores.push({ kind: 'judge', system: s.name, metric: m.metric, score: finite(m.score), ci: null, signature: m.signature });
            items.push({ kind: 'judge', system: s.name, metric: m.metric, signature: `${m.signature}|refs:${data.refsSha}`, ids: data.ids, values: (m.segments ?? []).map(finite) });
            (result.judge_segments ??= []).push(judgeSegments(s.name, m, data.ids, j.segment_threshold));
          }
        }
      }
    }
    result.llm = llm.usage();

    // Baselines.
    if (baseline) result.baseline = { name: options.baseline!, created: baseline.created, comparisons: compareWithBaseline(config, items, baseline.results, { ...options, subset: shard !== undefined }) };
    if (options.saveBaseline !== undefined) {
      baselineStore!.save(options.saveBaseline, items);
      result.saved_baseline = options.saveBaseline;
    }

    const itemsPath = file('items.jsonl');
    writing(itemsPath, () => writeFileSync(itemsPath, items.map((r) => JSON.stringify(r) + '\n').join('')));
    if (reportFiles.length) {
      const html = renderReport(reportFiles.map(readReportInput), { title: config.title ?? 'codegauge run', notes });
      const path = file('report.html');
      writing(path, () => writeFileSync(path, html));
    }
    const runPath = file('run.json');
    writeJson(runPath, { ...result, files: result.files.map((f) => relative(out, f)) });
    return result;
  } finally {
    llm.close();
    baselineStore?.close();
    unlock();
  }
}

interface RunModel {
  /** The model spec as written (`openai:MODEL`): names the model in signatures and generations. */
  name: string;
  spec: ModelSpec;
  baseUrls: string[];
  apiKey?: string;
  client: LlmClient;
}

/**
 * The config's models for generation and judges: one client per server set (its pool, retries and the response
 * cache in the store, opened when a model is first needed), and what was sent.
 */
class LlmModels {
  private store: LlmStore | undefined;
  private readonly clients = new Map<string, LlmClient>();
  private batches = 0;
  private batchCacheHits = 0;

  constructor(
    private readonly config: CodegaugeConfig,
    private readonly storePath: string,
    readonly batch: boolean,
  ) {}

  /** A name in `models` or a model spec; `at` locates it in the config for errors. */
  model(ref: string, at: (string | number)[], loaded: LoadedConfig): RunModel {
    const named = this.config.models[ref];
    const name = named?.model ?? ref;
    const spec = parseModelSpec(name);
    const baseUrls = named?.base_url ? (Array.isArray(named.base_url) ? named.base_url : [named.base_url]) : process.env.OPENAI_BASE_URL ? process.env.OPENAI_BASE_URL.split(',') : [];
    const apiKey = named?.api_key_env ? process.env[named.api_key_env] : process.env.OPENAI_API_KEY;
    if (this.batch && (spec.kind !== 'openai' || baseUrls.length === 0)) throw loaded.error(at, '--batch (llm.batch) needs an openai: model with a base_url (or OPENAI_BASE_URL)');
    this.store ??= new LlmStore(this.storePath);
    const key = JSON.stringify([baseUrls, named?.ollama_host, named?.api_key_env]);
    let client = this.clients.get(key);
    if (!client) {
      const llm = this.config.llm;
      client = new LlmClient({
        baseUrls,
        apiKey,
        ollamaHosts: [named?.ollama_host ?? process.env.OLLAMA_HOST ?? 'http://127.0.0.1:11434'],
        concurrency: llm.concurrency,
        timeoutMs: llm.timeout * 1000,
        retries: llm.retries,
        store: this.store,
      });
      this.clients.set(key, client);
    }
    return { name, spec, baseUrls, apiKey, client };
  }

  batchOptions(model: RunModel, log: (line: string) => void): BatchOptions {
    // Batches go to the first server of the model's list (a batch is one job on one endpoint).
    return { baseUrl: model.baseUrls[0], apiKey: model.apiKey, store: this.store!, pollMs: this.config.llm.batch_poll * 1000, log };
  }

  /** Counts a batched run's batches and the answers its last round took from the cache. */
  absorb(batched: { stats: { batches: number }; client: LlmClient } | undefined): void {
    if (!batched) return;
    this.batches += batched.stats.batches;
    this.batchCacheHits += batched.client.usage.cacheHits;
  }

  usage(): RunResult['llm'] {
    if (!this.store) return null;
    let requests = 0;
    let cacheHits = this.batchCacheHits;
    for (const c of this.clients.values()) {
      requests += c.usage.requests;
      cacheHits += c.usage.cacheHits;
    }
    return { requests, cache_hits: cacheHits, ...(this.batch ? { batches: this.batches } : {}) };
  }

  close(): void {
    this.store?.close();
  }
}

/**
 * A metric whose per-system sums of sufficient statistics are kept as they are computed (the score path itself is
 * unchanged), so that `merge` can recompute corpus scores of shards exactly. Statistics are only additive across
 * shards when a segment's vector does not depend on the rest of the reference set (not CrystalBLEU's corpus=refs
 * nor CodeBERTScore's idf=yes, whose weights are fitted on the references they see).
 */
function tapStatistics(metric: Metric<any>, systems: number): { metric: Metric<any>; statistics(system: number, score: MetricScore, lang?: string): ItemStatistics | undefined } {
  const sums = Array.from({ length: systems }, () => new ExactSums(metric.statsSize));
  let call = 0;
  const tapped = new Proxy(metric, {
    get(target, prop) {
      if (prop === 'segmentStatistics') {
        // The accumulator asks for each segment's systems in system order.
        return (hyp: string, refs: unknown, row: Float64Array, offset: number) => {
          target.segmentStatistics(hyp, refs, row, offset);
          sums[call++ % systems].add(row.subarray(offset, offset + target.statsSize));
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    metric: tapped,
    statistics(system, score, lang) {
      if (metric.fitReferences && /\|(idf|corpus):refs\|/.test(`|${score.signature}|`)) return undefined;
      const state = sums[system];
      // Guard: the kept sums must give the very score the report holds.
      if (!Object.is(metric.scoreFromStatistics(state.values()), score.score)) return undefined;
      return { sums: state.state(), ...(lang ? { lang } : {}) };
    },
  };
}

/** One judge entry of a system as segments: grade, or the judge's failure with its reason. */
function judgeSegments(system: string, m: MetricScore, ids: readonly string[], threshold: number | undefined): JudgeSegments {
  // judgeEntry lists one error per failed segment, in segment order ("segment N: reason").
  const errors = ((m as MetricScore & { errors?: string[] }).errors ?? []).map((e) => e.replace(/^segment \d+: /, ''));
  let failed = 0;
  const segments = (m.segments ?? []).map((v, i) => {
    const score = finite(v);
    return score === null ? { id: ids[i], score, error: errors[failed++] ?? 'no grade' } : { id: ids[i], score };
  });
  return { system, metric: m.metric, threshold: threshold ?? null, segments };
}

function execNotes(summary: ExecSummary): string[] {
  return summary.systems.map((s) => `exec ${s.name}: ${Object.entries(s.pass_at).map(([k, v]) => `pass@${k} ${v === null ? 'n/a' : (100 * v).toFixed(2)}`).join(', ')} over ${s.problems} problem(s), ${s.n} sample(s)`);
}

/** The gate delta of a result: its own `fail_if_worse` in the config, else the command line's. */
export function gateDelta(config: CodegaugeConfig, r: Pick<ItemResults, 'kind' | 'metric'>, fallback: number | undefined): number | undefined {
  if (r.kind === 'metric') {
    const entry = config.metrics.find((m) => metricSpec(m) === r.metric);
    if (entry && typeof entry !== 'string' && entry.fail_if_worse !== undefined) return entry.fail_if_worse;
  } else if (r.kind === 'exec') {
    if (config.exec?.fail_if_worse !== undefined) return config.exec.fail_if_worse;
  } else {
    const method = r.metric.split('@')[0];
    const j = config.judges.find((x) => x.method === method && x.fail_if_worse !== undefined);
    if (j) return j.fail_if_worse;
  }
  return fallback;
}

const mean = (xs: readonly (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
};

/** compare's paired bootstrap of every current per-item result against the baseline's, and the gates. */
export function compareWithBaseline(
  config: CodegaugeConfig,
  current: readonly ItemResults[],
  saved: readonly ItemResults[],
  options: { failIfWorse?: number; baseline?: string; /** A shard: compare with the baseline's items of this shard only. */ subset?: boolean },
): BaselineComparison[] {
  const byKey = new Map(saved.map((r) => [itemKey(r), r]));
  const name = options.baseline ?? 'baseline';
  return current.map((r) => {
    const deltaValue = gateDelta(config, r, options.failIfWorse);
    const delta = deltaValue ?? null;
    const scale = r.kind === 'exec' ? 100 : 1;
    const score = mean(r.values) === null ? null : mean(r.values)! * scale;
    const base: BaselineComparison = { kind: r.kind, system: r.system, metric: r.metric, baseline_score: null, score, diff: null, ci: null, p_value: null, delta, status: 'missing', reason: '' };
    const whole = byKey.get(itemKey(r));
    const mine = new Set(r.ids);
    const old = whole && options.subset ? { ...whole, ids: whole.ids.filter((id) => mine.has(id)), values: whole.values.filter((_, i) => mine.has(whole.ids[i])) } : whole;
    if (!old) return { ...base, reason: `baseline "${name}" has no ${r.metric} for ${r.system}` };
    base.baseline_score = mean(old.values) === null ? null : mean(old.values)! * scale;
    if (old.signature !== r.signature) return { ...base, status: 'not-comparable', reason: `baseline "${name}" is not comparable: signatures differ (baseline ${old.signature}, this run ${r.signature})` };
    const system = (label: string, x: ItemResults): ResultsSystem => {
      const seen = new Map<string, number>();
      const keys = x.ids.map((id) => {
        const k = seen.get(id) ?? 0;
        seen.set(id, k + 1);
        return JSON.stringify([id, k]);
      });
      return { name: label, file: label, keys, ids: [...x.ids], lines: x.ids.map((_, i) => i + 1), values: { [r.metric]: [...x.values] }, clusters: [...x.ids] };
    };
    const clustered = r.kind === 'exec' && new Set(r.ids).size < r.ids.length;
    try {
      const report = compareResults({
        results: { id: 'id', metrics: [r.metric], systems: [system(`baseline ${name}`, old), system(r.system, r)] },
        test: 'paired-bs',
        cluster: clustered ? 'task_id' : undefined,
        failIfWorse: delta ?? undefined,
      });
      const s = report.systems[1].scores[0];
      const failure = report.fail_if_worse?.failures[0];
      const diffText = s.diff ? `difference ${s.diff.value.toFixed(2)}, 95% CI [${s.diff.ci[0].toFixed(2)}, ${s.diff.ci[1].toFixed(2)}]` : 'no difference';
      const status: GateStatus = delta === null ? 'compared' : failure ? 'failed' : 'passed';
      const reason =
        status === 'failed'
          ? `${r.system} ${r.metric} is worse than baseline "${name}" by more than ${delta}: ${diffText}`
          : status === 'passed'
            ? `${r.system} ${r.metric} is not worse than baseline "${name}" by more than ${delta} with confidence: ${diffText}`
            : `${r.system} ${r.metric} against baseline "${name}": ${diffText}`;
      return { ...base, baseline_score: report.systems[0].scores[0].score, score: s.score, diff: s.diff?.value ?? null, ci: s.diff?.ci ?? null, p_value: s.p_value, status, reason };
    } catch (e) {
      if (e instanceof InputError) return { ...base, status: 'not-comparable', reason: `baseline "${name}" is not comparable for ${r.system} ${r.metric}: ${e.message}` };
      throw e;
    }
  });
}
