import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ItemResults } from '../../config/baselines.js';
import type { LoadedConfig } from '../../config/load.js';
import type { CodegaugeConfig } from '../../config/schema.js';
import type { Shard } from '../../config/shard.js';
import { writing } from '../../errors.js';
import type { ItemStatistics } from '../merge.js';
import type { StatisticsScorer } from '../../stats/statistics.js';
import type { LlmModels } from './models.js';
import type { RunOptions, RunResult } from './types.js';

/** A per-item result as items.jsonl holds it (metric items with their summed sufficient statistics). */
export type RunItem = ItemResults & { statistics?: ItemStatistics };

/** The data section read and cut to the shard: segment ids are 1-based line numbers of data.refs. */
export interface RunData {
  references: string[][];
  systems: { name: string; hypotheses: string[] }[];
  ids: string[];
  /** Names the reference files' contents in item signatures: a baseline on other references is not comparable. */
  refsSha: string;
  problems?: string[];
}

/** What every stage of a run reads and adds to. */
export interface RunContext {
  loaded: LoadedConfig;
  config: CodegaugeConfig;
  options: RunOptions;
  out: string;
  shard: Shard | undefined;
  log: (line: string) => void;
  llm: LlmModels;
  /** The loaded metrics by spec: a baseline gate rescores their statistics. */
  scorers: Map<string, StatisticsScorer>;
  result: RunResult;
  items: RunItem[];
  /** A path in the results folder, listed in run.json's files. */
  file(name: string): string;
}

export function writeJson(path: string, value: unknown): void {
  writing(path, () => writeFileSync(path, JSON.stringify(value, null, 2) + '\n'));
}

export function outFile(out: string, result: RunResult): (name: string) => string {
  return (name) => {
    const path = join(out, name);
    result.files.push(path);
    return path;
  };
}

export const finite = (x: number | null | undefined) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
/** The resampling settings are no part of what makes two runs comparable. */
export const baseSignature = (s: string) => s.replace(/\|bs:\d+\|seed:\d+/, '');
