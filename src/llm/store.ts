import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { asOutputError, OutputError } from '../errors.js';
import type { HashMemo } from './local-model.js';

/**
 * One SQLite file (better-sqlite3, WAL) for two things:
 * - the response cache, content-addressed: the key is a SHA-256 of the canonical request (API kind, model, messages,
 *   sampling settings), so an identical request is never sent twice, whichever server would have answered it;
 * - the run store: one row per finished unit of work in a named run, written in a transaction as soon as it is done,
 *   so an interrupted run (Ctrl-C, kill -9) resumes with nothing lost or done twice;
 * - the SHA-256 of local model files by path, size and modification time (a GGUF file is hashed once, not per run).
 */
export function canonicalKey(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
      : Array.isArray(v)
        ? v.map(canonical)
        : v;
  return createHash('sha256').update(JSON.stringify(canonical(value))).digest('hex');
}

export class LlmStore implements HashMemo {
  private readonly db: Database.Database;
  private readonly getResponse: Database.Statement;
  private readonly putResponse: Database.Statement;
  private readonly getItem: Database.Statement;
  private readonly putItem: Database.Statement;
  private readonly listItems: Database.Statement;
  private readonly getHash: Database.Statement;
  private readonly putHash: Database.Statement;

  constructor(readonly path: string) {
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.db = new Database(path);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, request TEXT NOT NULL, response TEXT NOT NULL, created TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS run_items (run TEXT NOT NULL, item TEXT NOT NULL, result TEXT NOT NULL, created TEXT NOT NULL, PRIMARY KEY (run, item));
        CREATE TABLE IF NOT EXISTS file_hashes (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime REAL NOT NULL, sha256 TEXT NOT NULL);
      `);
    } catch (e) {
      // SQLite says "unable to open database file" or "attempt to write a readonly database": name the file.
      const code = (e as { code?: string }).code ?? '';
      if (asOutputError(e) || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_FULL')) {
        throw new OutputError(path, `cache file (${(e as Error).message}); choose another with --cache-file`);
      }
      throw e;
    }
    this.getResponse = this.db.prepare('SELECT response FROM responses WHERE key = ?');
    this.putResponse = this.db.prepare('INSERT OR REPLACE INTO responses (key, request, response, created) VALUES (?, ?, ?, ?)');
    this.getItem = this.db.prepare('SELECT result FROM run_items WHERE run = ? AND item = ?');
    this.putItem = this.db.prepare('INSERT OR REPLACE INTO run_items (run, item, result, created) VALUES (?, ?, ?, ?)');
    this.listItems = this.db.prepare('SELECT item, result FROM run_items WHERE run = ? ORDER BY rowid');
    this.getHash = this.db.prepare('SELECT sha256 FROM file_hashes WHERE path = ? AND size = ? AND mtime = ?');
    this.putHash = this.db.prepare('INSERT OR REPLACE INTO file_hashes (path, size, mtime, sha256) VALUES (?, ?, ?, ?)');
  }

  fileHash(path: string, size: number, mtimeMs: number): string | undefined {
    return (this.getHash.get(path, size, mtimeMs) as { sha256: string } | undefined)?.sha256;
  }

  rememberFileHash(path: string, size: number, mtimeMs: number, sha256: string): void {
    this.putHash.run(path, size, mtimeMs, sha256);
  }

  cachedResponse<T>(key: string): T | undefined {
    const row = this.getResponse.get(key) as { response: string } | undefined;
    return row ? (JSON.parse(row.response) as T) : undefined;
  }

  cacheResponse(key: string, request: unknown, response: unknown): void {
    this.putResponse.run(key, JSON.stringify(request), JSON.stringify(response), new Date().toISOString());
  }

  finished<T>(run: string, item: string): T | undefined {
    const row = this.getItem.get(run, item) as { result: string } | undefined;
    return row ? (JSON.parse(row.result) as T) : undefined;
  }

  finish(run: string, item: string, result: unknown): void {
    this.putItem.run(run, item, JSON.stringify(result), new Date().toISOString());
  }

  items<T>(run: string): { item: string; result: T }[] {
    return (this.listItems.all(run) as { item: string; result: string }[]).map((r) => ({ item: r.item, result: JSON.parse(r.result) as T }));
  }

  close(): void {
    this.db.close();
  }
}
