import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { runCli } from '../src/cli/main.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export function readJson<T = any>(relative: string): T {
  const path = join(ROOT, relative);
  const bytes = readFileSync(path);
  return JSON.parse((path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8')) as T;
}

export function vector<T = any>(name: string): T {
  return readJson<T>(join('test', 'vectors', name));
}

export { pyRound } from '../src/compat/python-strings.js';

/** Runs the CLI in-process, capturing what it prints and its exit code. */
export async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (s) => void (out += s), err: (s) => void (err += s) });
  return { code, out, err };
}
