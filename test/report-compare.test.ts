import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './helpers.js';

/** The report shows a significantly worse system as worse (never in an improvement's colour), whatever the test. */
describe('report of compare --input', () => {
  it('names the test, marks the direction and shows the difference', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codegauge-report-compare-'));
    const rows = (passRate: (i: number) => boolean) => Array.from({ length: 200 }, (_, i) => JSON.stringify({ task_id: `t${i}`, passed: passRate(i) })).join('\n') + '\n';
    writeFileSync(join(dir, 'base.jsonl'), rows((i) => i % 10 !== 0)); // 90% pass
    writeFileSync(join(dir, 'worse.jsonl'), rows((i) => i % 2 === 0)); // 50% pass
    const compare = await cli('compare', '--input', join(dir, 'base.jsonl'), '--input', join(dir, 'worse.jsonl'), '--metric', 'passed', '--test', 'mcnemar', '--format', 'json');
    expect(compare.code, compare.err).toBe(0);
    writeFileSync(join(dir, 'compare.json'), compare.out);
    const report = await cli('report', join(dir, 'compare.json'), '--out', join(dir, 'report.html'));
    expect(report.code, report.err).toBe(0);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    // Booleans, not the page itself, so that a failure does not print the inlined chart library.
    expect(html.includes('exact McNemar test')).toBe(true);
    expect(/<span class="worse">50\.00[^<]*Δ -40\.00[^<]*\* worse<\/span>/.test(html)).toBe(true);
    expect(/<span class="better">\d/.test(html)).toBe(false);
  });
});
