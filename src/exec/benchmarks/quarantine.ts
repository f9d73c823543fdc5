import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir } from './bundled.js';

/**
 * The shipped list of bundled tasks that no sample can pass because of the benchmark itself
 * (data/exec/quarantine.json, each with its reason): `exec --self-test` reports them apart, and `--exclude-broken`
 * leaves them out of pass@k (never silently: the summary lists what was left out).
 */
let list: Record<string, Record<string, string>> | undefined;

export function quarantine(benchmark: string): Record<string, string> {
  list ??= JSON.parse(readFileSync(join(dataDir(), 'exec', 'quarantine.json'), 'utf8')) as Record<string, Record<string, string>>;
  const entry = list[benchmark];
  return entry && typeof entry === 'object' ? entry : {};
}
