import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export function readJson<T = any>(relative: string): T {
  const path = join(ROOT, relative);
  const bytes = readFileSync(path);
  return JSON.parse((path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8')) as T;
}

export function vector<T = any>(name: string): T {
  return readJson<T>(join('test', 'vectors', name));
}

/** Python's round(x, nd): the exact binary value rounded to nd decimals, exact ties to even. */
export function pyRound(x: number, nd: number): number {
  // toFixed rounds the exact binary value (ties away from zero); a tie is only possible for short dyadic values,
  // whose expansion toFixed(nd + 30) shows exactly.
  const expansion = Math.abs(x).toFixed(nd + 30);
  const tail = expansion.slice(expansion.indexOf('.') + 1 + nd);
  if (/^50*$/.test(tail)) {
    const head = expansion.slice(0, expansion.length - tail.length).replace(/\.$/, '');
    const truncated = Number(head);
    const lastDigit = Number(head[head.length - 1]);
    const rounded = lastDigit % 2 === 0 ? truncated : truncated + 10 ** -nd;
    return Math.sign(x) * Number(rounded.toFixed(nd));
  }
  return Number(x.toFixed(nd));
}
