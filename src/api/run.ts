import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { InputError, UsageError, writing } from '../errors.js';
import { readBenchmark, readProblems, readSamples, type ProblemSet } from '../exec/problems.js';
import { execSystems, type ExecRow, type ExecSummary } from '../exec/run.js';
import { resolveSandboxMode } from '../exec/sandbox.js';
import { lockOutput } from '../io/lock.js';
import { readHypotheses, readReferences } from '../io/segments.js';
import { DsaJudge } from '../judges/dsa.js';
import { IceJudge } from '../judges/ice.js';
import type { Judge } from '../judges/judge.js';
import { judgeSystems } from '../judges/judge-run.js';
import { runBatched } from '../llm/batch.js';
import { LlmClient } from '../llm/client.js';
import { parseModelSpec } from '../llm/model-spec.js';
import { LlmStore } from '../llm/store.js';
import { renderReport } from '../report/html.js';
import { readReportInput } from '../report/inputs.js';
import { VERSION } from '../version.js';
import { BaselineStore, itemKey, type ItemResults } from '../config/baselines.js';
import { loadConfig, metricSpec, type LoadedConfig } from '../config/load.js';
import type { CodegaugeConfig } from '../config/schema.js';
import { inShard, shardDirName, shardLabel, type Shard } from '../config/shard.js';
import { compareSystems } from './compare.js';
import { compareResults, type ResultsSystem } from './compare-input.js';
import { scoreSystems, type ScoreReport } from './score.js';

/**
 * `codegauge run`: the whole matrix of a config through the library (score, compare, exec, judges, report), with
 * the existing resume (exec results.jsonl, the LLM response cache), optional baselines in the SQLite store and
 * gates on them. Results: OUT/score.json, compare.json, exec/{results.jsonl,summary.json}, judge-*.json,
 * items.jsonl (every per-item result, what baselines and `merge` use), run.json and report.html.
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
  /** Judges through the Batch API (overrides the config's llm.batch). */
  batch?: boolean;
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

export interface RunResult {
  kind: 'run';
  version: string;
  config: string;
  out: string;
  shard: string | null;
  scores: RunScore[];
  exec: { ran: number; reused: number; rows: Pick<ExecRow, 'system' | 'index' | 'task_id' | 'status' | 'passed' | 'stderr' | 'duration_ms'>[] } | null;
  llm: { requests: number; cache_hits: number; batches?: number } | null;
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
  const items: ItemResults[] = [];
  const reportFiles: string[] = [];
  const notes: string[] = [];
  const file = (name: string) => {
    const path = join(out, name);
    result.files.push(path);
    return path;
  };
  try {
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
      const { parseMetric } = await import('../metrics/registry.js');
      const metrics = specs.map((s) => parseMetric(s, { language: config.data!.lang }));
      const report: ScoreReport & { ids?: string[] } = await scoreSystems({
        references: data.references,
        systems: data.systems,
        metrics,
        segments: true,
        confidence: config.confidence > 0 ? { samples: config.confidence } : undefined,
      });
      if (shard) report.ids = data.ids;
      const path = file('score.json');
      writeJson(path, report);
      reportFiles.push(path);
      for (const s of report.systems) {
        for (const m of s.scores) {
          const score = finite(m.score);
          result.scores.push({ kind: 'metric', system: s.name, metric: m.metric, score, ci: m.confidence && score !== null ? [m.confidence.mean - m.confidence.ci, m.confidence.mean + m.confidence.ci] : null, signature: m.signature });
          items.push({ kind: 'metric', system: s.name, metric: m.metric, signature: `${baseSignature(m.signature)}|refs:${data.refsSha}`, ids: data.ids, values: (m.segments ?? []).map(finite) });
        }
      }
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

    // Execution (resumes from OUT/exec/results.jsonl: a rerun with nothing changed runs no program).
    if (config.exec) {
      const e = config.exec;
      const problems: ProblemSet = e.benchmark ? readBenchmark(e.benchmark) : readProblems(loaded.resolvePath(e.problems!), e.lang);
      const limited = new Set((e.limit ? problems.problems.slice(0, e.limit) : problems.problems).filter((p) => inShard(p.taskId, shard)).map((p) => p.key));
      const execDir = join(out, 'exec');
      const samplesDir = join(execDir, 'samples');
      writing(samplesDir, () => mkdirSync(samplesDir, { recursive: true }));
      const samplePaths: string[] = [];
      for (const [name, source] of Object.entries(e.systems)) {
        if (!/^[\w.@-]+$/.test(name)) throw loaded.error(['exec', 'systems', name], 'a system name of letters, digits, . _ - @');
        let lines: string[];
        if (source === 'canonical') {
          lines = problems.problems.filter((p) => limited.has(p.key)).map((p) => {
            if (p.canonicalSolution === undefined) throw loaded.error(['exec', 'systems', name], `problem ${p.taskId} has no canonical solution`);
            return JSON.stringify({ task_id: p.taskId, completion: p.canonicalSolution });
          });
        } else {
          const { problemKey } = await import('../exec/problems.js');
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
      const llmStore = new LlmStore(storePath);
      try {
        const clients = new Map<string, LlmClient>();
        let requests = 0;
        let cacheHits = 0;
        let batches = 0;
        const batch = options.batch ?? config.llm.batch;
        for (const [i, j] of config.judges.entries()) {
          const named = config.models[j.model];
          const spec = parseModelSpec(named?.model ?? j.model);
          const baseUrls = named?.base_url ? (Array.isArray(named.base_url) ? named.base_url : [named.base_url]) : process.env.OPENAI_BASE_URL ? process.env.OPENAI_BASE_URL.split(',') : [];
          const clientKey = JSON.stringify([baseUrls, named?.ollama_host, named?.api_key_env]);
          let client = clients.get(clientKey);
          if (!client) {
            client = new LlmClient({
              baseUrls,
              apiKey: named?.api_key_env ? process.env[named.api_key_env] : process.env.OPENAI_API_KEY,
              ollamaHosts: [named?.ollama_host ?? process.env.OLLAMA_HOST ?? 'http://127.0.0.1:11434'],
              concurrency: config.llm.concurrency,
              timeoutMs: config.llm.timeout * 1000,
              retries: config.llm.retries,
              store: llmStore,
            });
            clients.set(clientKey, client);
          }
          const judge: Judge = j.method === 'ice' ? new IceJudge({}) : new DsaJudge({ simplified: j.method === 'dsa-simple' });
          const systems = j.systems ? data.systems.filter((s) => j.systems!.includes(s.name)) : data.systems;
          const modelName = named?.model ?? j.model;
          log(`judging ${systems.length} system(s) with ${j.method} (${modelName})`);
          const judgeWith = (c: LlmClient) =>
            judgeSystems({
              judge,
              modelName,
              context: { client: c, model: spec, temperature: config.llm.temperature, seed: config.llm.seed, maxTokens: config.llm.max_tokens },
              references: data!.references,
              systems,
              problems: data!.problems,
              language: config.data!.lang!,
              repeat: j.repeat,
              onProgress: batch ? undefined : options.onProgress?.(`judge ${j.method}`),
            });
          let report;
          if (batch) {
            if (spec.kind !== 'openai' || baseUrls.length === 0) throw loaded.error(['judges', i, 'model'], 'batch judging needs an openai: model with a base_url (or OPENAI_BASE_URL)');
            const batched = await runBatched(judgeWith, { baseUrl: baseUrls[0], apiKey: named?.api_key_env ? process.env[named.api_key_env] : process.env.OPENAI_API_KEY, store: llmStore, pollMs: config.llm.batch_poll * 1000, log });
            report = batched.result;
            batches += batched.stats.batches;
            cacheHits += batched.client.usage.cacheHits;
          } else report = await judgeWith(client);
          const name = config.judges.filter((x) => x.method === j.method).length > 1 ? `judge-${j.method}-${i + 1}.json` : `judge-${j.method}.json`;
          const path = file(name);
          writeJson(path, shard ? { ...report, ids: data.ids } : report);
          reportFiles.push(path);
          for (const s of report.systems) {
            for (const m of s.scores) {
              result.scores.push({ kind: 'judge', system: s.name, metric: m.metric, score: finite(m.score), ci: null, signature: m.signature });
              items.push({ kind: 'judge', system: s.name, metric: m.metric, signature: `${m.signature}|refs:${data.refsSha}`, ids: data.ids, values: (m.segments ?? []).map(finite) });
            }
          }
        }
        for (const c of clients.values()) {
          requests += c.usage.requests;
          cacheHits += c.usage.cacheHits;
        }
        result.llm = { requests, cache_hits: cacheHits, ...(batch ? { batches } : {}) };
      } finally {
        llmStore.close();
      }
    }

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
    baselineStore?.close();
    unlock();
  }
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
