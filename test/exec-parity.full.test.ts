import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { execSystems } from '../src/exec/run.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { tempDir } from './exec-fixtures.js';

/**
 * Parity with ICE-Score's recorded execution labels (`npm run test:full`; the whole sets: node
 * scripts/exec-parity.mjs): every 20th sample of the Codex HumanEval runs, Python and JavaScript, split at the
 * boundary as every sample is.
 */
const tmp = () => tempDir('codegauge-parity-');

describe.skipIf(!bwrapAvailable())('execution labels', () => {
  it("agrees with ICE-Score's recorded execution labels on a deterministic subset (every 20th sample)", async () => {
    for (const lang of ['python', 'js'] as const) {
      const ice = JSON.parse(gunzipSync(readFileSync(`data/ice-humaneval/humaneval_${lang}_grade.json.gz`)).toString('utf8')) as Record<string, unknown>[];
      const all: { task_id: string; prompt: string; completion: string; label: boolean }[] = [];
      for (const p of ice) {
        const keys = Object.keys(p).filter((k) => /^\d+$/.test(k) && p[`grade-${k}`]).sort((a, b) => Number(a) - Number(b));
        for (const k of keys) all.push({ task_id: `HumanEval/${p.task_id}`, prompt: p.intent as string, completion: p[k] as string, label: (p[`grade-${k}`] as { execution: number }).execution === 1 });
      }
      // HumanEval_51's recorded JavaScript labels come from a test with a raw newline in a string literal
      const subset = all.filter((s, i) => i % 20 === 0 && !(lang === 'js' && s.task_id === 'HumanEval/51'));
      const dir = tmp();
      const samples = join(dir, `ice-${lang}.jsonl`);
      writeFileSync(samples, subset.map(({ label: _label, ...s }) => JSON.stringify(s)).join('\n') + '\n');
      const { rows } = await execSystems({ problems: readBenchmark(lang === 'js' ? 'humaneval-js' : 'humaneval'), samples: [samples], ks: [1], timeoutMs: 3000, memoryMb: 1024, jobs: 2, sandbox: 'bwrap', outDir: join(dir, 'out') });
      const agree = rows.filter((r, i) => r.passed === subset[i].label).length;
      expect(agree / rows.length, `${lang}: ${agree} of ${rows.length}`).toBeGreaterThanOrEqual(lang === 'js' ? 0.995 : 0.985);
    }
  }, 400_000);

});
