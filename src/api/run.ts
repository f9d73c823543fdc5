import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaselineStore, type ItemResults } from '../config/baselines.js';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { shardDirName, shardLabel } from '../config/shard.js';
import { UsageError, writing } from '../errors.js';
import { lockOutput } from '../io/lock.js';
import { writeReport } from '../report/build.js';
import { VERSION } from '../version.js';
import { compareWithBaseline } from './run/baseline.js';
import { outFile, writeJson, type RunContext, type RunItem } from './run/context.js';
import { readRunData } from './run/data.js';
import { execStage } from './run/exec.js';
import { judgeStage } from './run/judges.js';
import { compareStage, scoreStage } from './run/metrics.js';
import { LlmModels } from './run/models.js';
import type { RunOptions, RunResult } from './run/types.js';

export type { Aggregation, BaselineComparison, GateStatus, JudgeSegments, RunGeneration, RunOptions, RunResult, RunScore } from './run/types.js';
export { compareWithBaseline, gateDelta } from './run/baseline.js';

/**
 * `codegauge run`: the whole matrix of a config through the library, stage by stage (`src/api/run/`: data, metrics
 * and comparisons, execution with generation, judges, baselines), with the existing resume (exec/generations/*.jsonl,
 * exec/results.jsonl, the LLM response cache), optional baselines in the SQLite store and gates on them. Results:
 * OUT/score.json, compare.json, exec/{results.jsonl,summary.json}, judge-*.json, items.jsonl (every per-item result,
 * what baselines and `merge` use; metric items carry their summed sufficient statistics), run.json and report.html.
 */
export async function runConfig(options: RunOptions): Promise<RunResult> {
  const loaded: LoadedConfig = typeof options.config === 'string' ? loadConfig(options.config) : options.config;
  const { config } = loaded;
  const shard = options.shard && options.shard.count > 1 ? options.shard : undefined;
  const baseOut = options.out ?? loaded.resolvePath(config.out);
  const out = shard ? join(baseOut, shardDirName(shard)) : baseOut;
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
  const items: RunItem[] = [];
  const llm = new LlmModels(config, storePath, options.batch ?? config.llm.batch);
  const ctx: RunContext = { loaded, config, options, out, shard, log: options.log ?? (() => {}), llm, scorers: new Map(), result, items, file: outFile(out, result) };
  try {
    // Every model this run uses, checked before any work (--batch needs openai: models with a server).
    for (const [name, source] of Object.entries(config.exec?.systems ?? {})) if (typeof source !== 'string') llm.model(source.model, ['exec', 'systems', name, 'model'], loaded);
    if (config.data) config.judges.forEach((j, i) => llm.model(j.model, ['judges', i, 'model'], loaded));
    const data = readRunData(loaded, shard);
    if (data && config.metrics.length) await scoreStage(ctx, data);
    if (data && config.compare) await compareStage(ctx, data);
    if (config.exec) await execStage(ctx);
    if (data && config.judges.length) await judgeStage(ctx, data);
    result.llm = llm.usage();
    for (const line of llm.localLines()) ctx.log(line);

    // Baselines.
    if (baseline) result.baseline = { name: options.baseline!, created: baseline.created, comparisons: compareWithBaseline(config, items, baseline.results, { ...options, subset: shard !== undefined, scorers: ctx.scorers }) };
    if (options.saveBaseline !== undefined) {
      baselineStore!.save(options.saveBaseline, items);
      result.saved_baseline = options.saveBaseline;
    }

    const itemsPath = ctx.file('items.jsonl');
    writing(itemsPath, () => writeFileSync(itemsPath, items.map((r) => JSON.stringify(r) + '\n').join('')));
    // The report of the whole folder, as `codegauge report OUT` builds it.
    if ((data && (config.metrics.length || config.compare || config.judges.length)) || config.exec) writeReport([out], { out: ctx.file('report.html'), title: config.title ?? 'codegauge run' });
    writeJson(ctx.file('run.json'), { ...result, files: result.files.map((f) => relative(out, f)) });
    return result;
  } finally {
    llm.close();
    baselineStore?.close();
    unlock();
  }
}
