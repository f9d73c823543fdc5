import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { asOutputError, OutputError } from '../errors.js';

/**
 * Named baselines in the SQLite store (the same file as the LLM cache, its own table): one row per per-item result
 * set, i.e. per (kind, system, metric), holding its signature, item ids and values. `--save-baseline NAME`
 * replaces the whole baseline in one transaction.
 */
export interface ItemResults {
  kind: 'metric' | 'judge' | 'exec';
  system: string;
  /** Metric spec, judge name (`dsa@openai:model`) or `passed`. */
  metric: string;
  /** What must match for two runs to be comparable: metric/judge/exec signature and the data (references, problems). */
  signature: string;
  ids: string[];
  values: (number | null)[];
  /** Metric items: each segment's sufficient statistics, so a baseline gate compares corpus scores. */
  segment_statistics?: number[][];
}

export const itemKey = (r: Pick<ItemResults, 'kind' | 'system' | 'metric'>) => `${r.kind}\u0000${r.system}\u0000${r.metric}`;

export class BaselineStore {
  private readonly db: Database.Database;

  constructor(readonly path: string) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      this.db = new Database(path);
      this.db.pragma('journal_mode = WAL');
      this.db.exec('CREATE TABLE IF NOT EXISTS baselines (name TEXT NOT NULL, key TEXT NOT NULL, result TEXT NOT NULL, created TEXT NOT NULL, PRIMARY KEY (name, key))');
    } catch (e) {
      const code = (e as { code?: string }).code ?? '';
      if (asOutputError(e) || code.startsWith('SQLITE_')) throw new OutputError(path, `store (${(e as Error).message}); choose another with --store`);
      throw e;
    }
  }

  save(name: string, results: readonly ItemResults[]): void {
    const created = new Date().toISOString();
    const del = this.db.prepare('DELETE FROM baselines WHERE name = ?');
    const put = this.db.prepare('INSERT OR REPLACE INTO baselines (name, key, result, created) VALUES (?, ?, ?, ?)');
    this.db.transaction(() => {
      del.run(name);
      for (const r of results) put.run(name, itemKey(r), JSON.stringify(r), created);
    })();
  }

  /** The baseline's results, or undefined when no baseline has this name. */
  load(name: string): { results: ItemResults[]; created: string } | undefined {
    const rows = this.db.prepare('SELECT result, created FROM baselines WHERE name = ? ORDER BY rowid').all(name) as { result: string; created: string }[];
    if (rows.length === 0) return undefined;
    return { results: rows.map((r) => JSON.parse(r.result) as ItemResults), created: rows[0].created };
  }

  names(): string[] {
    return (this.db.prepare('SELECT DISTINCT name FROM baselines ORDER BY name').all() as { name: string }[]).map((r) => r.name);
  }

  close(): void {
    this.db.close();
  }
}
