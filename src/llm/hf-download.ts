import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { UsageError, writing } from '../errors.js';
import { lockOutput } from '../io/lock.js';
import { LlmError } from './types.js';

/**
 * `hf:OWNER/REPO[:FILE.gguf]`: a GGUF file of a Hugging Face repository, downloaded once into the model cache
 * (CODEGAUGE_MODELS, else the platform's cache folder) and read from there afterwards with no network at all. A
 * model is only ever downloaded because a spec named it. The download:
 * - learns the file's size and SHA-256 from the repository's file list (the LFS object id is the SHA-256);
 * - writes FILE.part and resumes it with an HTTP Range request after an interrupted transfer (in this run, a few
 *   times, and in the next run: the .part file stays);
 * - checks the size and the SHA-256 before the file takes its name; a mismatch removes the download and fails;
 * - records `FILE.json` (repository, file, size, SHA-256), so later runs need neither the network nor a hash pass.
 * Folders are locked while a download runs, so two processes do not write the same .part file.
 */
export interface HfFileRequest {
  repo: string;
  /** Omitted: the repository's only GGUF file, or its Q4_K_M one. */
  file?: string;
  revision?: string;
}

export interface DownloadOptions {
  /** The model cache folder (default modelsDir()). */
  dir?: string;
  /** The hub (default HF_ENDPOINT or https://huggingface.co). */
  endpoint?: string;
  /** A token for gated repositories (default HF_TOKEN). */
  token?: string;
  fetch?: typeof fetch;
  /** Transfers retried (resumed) after a dropped connection, in this run (default 4). */
  retries?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Bytes written so far and the file's size. */
  onProgress?: (done: number, total: number, file: string) => void;
}

export interface HfModelFile {
  repo: string;
  file: string;
  path: string;
  size: number;
  sha256: string;
}

interface Manifest {
  repo: string;
  revision: string;
  file: string;
  size: number;
  sha256: string;
  url: string;
  downloaded: string;
}

/** The model cache: CODEGAUGE_MODELS, else the platform's cache folder + codegauge/models. */
export function modelsDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home = homedir()): string {
  if (env.CODEGAUGE_MODELS) return env.CODEGAUGE_MODELS;
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'codegauge', 'models');
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'codegauge', 'models');
  return join(env.XDG_CACHE_HOME || join(home, '.cache'), 'codegauge', 'models');
}

const DEFAULT_QUANT = /q4_k_m/i;

/** Which GGUF file of a repository `hf:OWNER/REPO` means: the only one, else the Q4_K_M one; else the user names it. */
export function chooseGguf(repo: string, files: readonly string[]): string {
  const ggufs = files.filter((f) => /\.gguf$/i.test(f));
  const whole = ggufs.filter((f) => !/-\d{5}-of-\d{5}\.gguf$/i.test(f));
  if (whole.length === 1) return whole[0];
  const preferred = whole.filter((f) => DEFAULT_QUANT.test(f));
  if (preferred.length === 1) return preferred[0];
  if (ggufs.length === 0) throw new UsageError(`hf:${repo} has no .gguf file; llama.cpp runs GGUF models (look for a "-GGUF" repository of the model)`);
  if (whole.length === 0) throw new UsageError(`hf:${repo} has only split GGUF files (${ggufs[0]}, ...), which codegauge does not download; merge them with llama-gguf-split and use llama:PATH.gguf`);
  const shown = whole.slice(0, 8).join(', ') + (whole.length > 8 ? `, ... (${whole.length} in all)` : '');
  throw new UsageError(`hf:${repo} has ${whole.length} GGUF files; name one as hf:${repo}:FILE.gguf: ${shown}`);
}

/** The file `hf:OWNER/REPO` was resolved to before, if any. */
function readChoice(path: string): string | undefined {
  try {
    const file = (JSON.parse(readFileSync(path, 'utf8')) as { file?: unknown }).file;
    return typeof file === 'string' ? file : undefined;
  } catch {
    return undefined;
  }
}

/** The SHA-256 of a file, read once. */
export function sha256File(path: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolvePromise(hash.digest('hex')));
  });
}

interface Listing {
  path: string;
  size: number;
  sha256?: string;
}

export class HfDownloader {
  private readonly dir: string;
  private readonly endpoint: string;
  private readonly token?: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: DownloadOptions = {}) {
    this.dir = options.dir ?? modelsDir();
    this.endpoint = (options.endpoint ?? process.env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
    this.token = options.token ?? process.env.HF_TOKEN;
    this.fetch = options.fetch ?? fetch;
  }

  private repoDir(repo: string): string {
    return join(this.dir, 'hf', ...repo.split('/'));
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), 'user-agent': 'codegauge', ...extra };
  }

  private async request(url: string, headers: Record<string, string> = {}): Promise<Response> {
    try {
      return await this.fetch(url, { headers: this.headers(headers), redirect: 'follow' });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new LlmError(`${url}: ${(e as Error).message}${cause?.code ? ` (${cause.code})` : cause?.message ? ` (${cause.message})` : ''}`, undefined, undefined, true);
    }
  }

  /** The repository's files with their sizes and, for LFS files, SHA-256. */
  private async listing(repo: string, revision: string): Promise<Listing[]> {
    const url = `${this.endpoint}/api/models/${repo}/tree/${encodeURIComponent(revision)}?recursive=true`;
    const response = await this.request(url);
    if (response.status === 401 || response.status === 403) throw new UsageError(`hf:${repo}: the hub refused access (HTTP ${response.status}); a gated repository needs HF_TOKEN with access to it`);
    if (response.status === 404) throw new UsageError(`hf:${repo}: no such repository (or revision ${revision}) on ${this.endpoint}`);
    if (!response.ok) throw new LlmError(`${url}: HTTP ${response.status}`, response.status, undefined, response.status >= 500 || response.status === 429);
    const body = (await response.json().catch(() => null)) as { type?: string; path?: string; size?: number; lfs?: { oid?: string; size?: number } }[] | null;
    if (!Array.isArray(body)) throw new LlmError(`${url}: the file list is not JSON`);
    return body
      .filter((e) => e && e.type === 'file' && typeof e.path === 'string')
      .map((e) => ({ path: e.path!, size: e.lfs?.size ?? e.size ?? -1, sha256: typeof e.lfs?.oid === 'string' && /^[0-9a-f]{64}$/.test(e.lfs.oid) ? e.lfs.oid : undefined }));
  }

  private readManifest(path: string): Manifest | undefined {
    try {
      const m = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
      return typeof m.sha256 === 'string' && typeof m.size === 'number' ? m : undefined;
    } catch {
      return undefined;
    }
  }

  /** The local file of `hf:REPO[:FILE]`, downloading it first when it is not in the cache. */
  async resolve(request: HfFileRequest): Promise<HfModelFile> {
    const revision = request.revision ?? 'main';
    const repoDir = this.repoDir(request.repo);
    // hf:OWNER/REPO without a file: the choice made when it was downloaded, so a rerun needs no network.
    const choicePath = join(repoDir, `.default-${revision}.json`);
    let file = request.file;
    if (file === undefined) file = readChoice(choicePath);
    if (file !== undefined) {
      const cached = this.cached(request.repo, revision, file);
      if (cached) return cached;
    }
    const listing = await this.listing(request.repo, revision);
    if (file === undefined) {
      file = chooseGguf(request.repo, listing.map((e) => e.path));
      writing(choicePath, () => {
        mkdirSync(repoDir, { recursive: true });
        writeFileSync(choicePath, JSON.stringify({ file }) + '\n');
      });
      const cached = this.cached(request.repo, revision, file);
      if (cached) return cached;
    }
    const entry = listing.find((e) => e.path === file);
    if (!entry) {
      const ggufs = listing.filter((e) => /\.gguf$/i.test(e.path)).map((e) => e.path);
      throw new UsageError(`hf:${request.repo} has no file ${file}${ggufs.length ? `; its GGUF files: ${ggufs.slice(0, 8).join(', ')}` : ''}`);
    }
    return this.download(request.repo, revision, entry);
  }

  /** The cached file when its manifest and size say it is complete. */
  private cached(repo: string, revision: string, file: string): HfModelFile | undefined {
    const path = join(this.repoDir(repo), revision, ...file.split('/'));
    const manifest = this.readManifest(`${path}.json`);
    if (!manifest || !existsSync(path)) return undefined;
    if (statSync(path).size !== manifest.size) return undefined;
    return { repo, file, path, size: manifest.size, sha256: manifest.sha256 };
  }

  private async download(repo: string, revision: string, entry: Listing): Promise<HfModelFile> {
    const path = join(this.repoDir(repo), revision, ...entry.path.split('/'));
    const part = `${path}.part`;
    const unlock = lockOutput(dirname(path));
    try {
      const url = `${this.endpoint}/${repo}/resolve/${encodeURIComponent(revision)}/${entry.path.split('/').map(encodeURIComponent).join('/')}`;
      const retries = this.options.retries ?? 4;
      const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
      let size = entry.size;
      for (let attempt = 0; ; attempt++) {
        try {
          size = await this.transfer(url, part, entry.size, entry.path);
          break;
        } catch (e) {
          // A dropped connection resumes from what the .part file holds; anything else stops.
          if (!(e instanceof LlmError) || !e.retryable || attempt >= retries) throw e;
          await sleep(Math.min(8000, 500 * 2 ** attempt));
        }
      }
      if (entry.size >= 0 && size !== entry.size) {
        rmSync(part, { force: true });
        throw new LlmError(`hf:${repo}:${entry.path}: downloaded ${size} bytes where the hub lists ${entry.size}; the download was removed`);
      }
      const sha256 = await sha256File(part);
      if (entry.sha256 && sha256 !== entry.sha256) {
        rmSync(part, { force: true });
        throw new LlmError(`hf:${repo}:${entry.path}: SHA-256 mismatch (the hub lists ${entry.sha256}, the download is ${sha256}); the download was removed, nothing is used`);
      }
      renameSync(part, path);
      const manifest: Manifest = { repo, revision, file: entry.path, size, sha256, url, downloaded: new Date().toISOString() };
      writing(`${path}.json`, () => writeFileSync(`${path}.json`, JSON.stringify(manifest, null, 2) + '\n'));
      return { repo, file: entry.path, path, size, sha256 };
    } finally {
      unlock();
    }
  }

  /** One transfer into the .part file, resumed from its length with a Range request; returns its final length. */
  private async transfer(url: string, part: string, total: number, file: string): Promise<number> {
    writing(dirname(part), () => mkdirSync(dirname(part), { recursive: true }));
    let have = existsSync(part) ? statSync(part).size : 0;
    if (total >= 0 && have > total) {
      rmSync(part, { force: true });
      have = 0;
    }
    if (total >= 0 && have === total) return have;
    const response = await this.request(url, have > 0 ? { range: `bytes=${have}-` } : {});
    if (response.status === 401 || response.status === 403) throw new UsageError(`${url}: the hub refused access (HTTP ${response.status}); a gated repository needs HF_TOKEN with access to it`);
    if (response.status === 416 && total >= 0 && have === total) return have;
    if (!response.ok || !response.body) throw new LlmError(`${url}: HTTP ${response.status}`, response.status, undefined, response.status >= 500 || response.status === 429);
    // 206: the server resumes; 200: it sends the whole file, so start over.
    const append = response.status === 206 && have > 0;
    if (!append) have = 0;
    const out = createWriteStream(part, { flags: append ? 'a' : 'w' });
    const closed = once(out, 'close');
    let done = have;
    this.options.onProgress?.(done, total, file);
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        done += chunk.length;
        if (!out.write(chunk)) await once(out, 'drain');
        this.options.onProgress?.(done, total, file);
      }
    } catch (e) {
      out.end();
      await closed;
      throw new LlmError(`${url}: the transfer broke off after ${done} bytes (${(e as Error).message}); it resumes from there`, undefined, undefined, true);
    }
    out.end();
    await closed;
    if (total >= 0 && done < total) throw new LlmError(`${url}: the transfer ended after ${done} of ${total} bytes; it resumes from there`, undefined, undefined, true);
    return done;
  }
}
