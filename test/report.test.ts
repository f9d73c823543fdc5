import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, ROOT } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
let dir: string;
let demo: { report: string; best_agreeing: string[]; files: string[]; seconds: number };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-report-'));
  const r = await cli('demo', '--out', join(dir, 'demo'), '--format', 'json');
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  demo = JSON.parse(r.out);
}, 120_000);

describe('codegauge demo', () => {
  it('runs the main job offline and reproduces "Out of the BLEU": chrF and ROUGE-L agree best with the graders', () => {
    expect([...demo.best_agreeing].sort()).toEqual(['chrf', 'rougeL:tok=code']);
    for (const name of ['scores.json', 'compare.json', 'meta.json', 'sbc-rescored.jsonl', 'report.html']) expect(existsSync(join(dir, 'demo', name))).toBe(true);
    const compare = JSON.parse(readFileSync(join(dir, 'demo', 'compare.json'), 'utf8'));
    const codex = compare.systems.find((s: any) => s.name === 'codex').scores.find((m: any) => m.metric === 'chrf');
    expect(codex.p_value).toBeLessThan(0.05); // codex beats the baseline on chrF
    const sbc = readFileSync(join(dir, 'demo', 'sbc-rescored.jsonl'), 'utf8').trim().split('\n');
    expect(sbc).toHaveLength(540);
  });

  it('writes tables readable without JavaScript and says where SBC values come from', () => {
    const html = readFileSync(demo.report, 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=["']?https?:|@import/); // nothing from the network
    expect(html).toContain('<td>best-tranx-rerank</td>');
    expect(html).toContain('(baseline)');
    expect(html).toContain('Kendall τ-b');
    expect(html).toContain('no embedding model is bundled');
    expect(html).toContain('most frequent missing (omissions)');
    expect(html).toContain('<th>layer</th>');
    expect(html).toContain('<td>Node-API</td>'); // omissions by technology
  });
});

describe('codegauge report', () => {
  it('builds a report from judge explanations and SBC rows, and rejects what it cannot read with the file named', async () => {
    const explain = join(dir, 'explain', 'sys.py');
    mkdirSync(explain, { recursive: true });
    writeFileSync(join(explain, '1.json'), JSON.stringify({ segment: 1, runs: [{ grade: 1, differences: ['returns the sum, not the maximum'], reference: { semantics: 'max', units: [{ kind: 'for', lines: [2, 3], retrieved: { dp: 'zeros' }, summary: 'fills dp' }] }, generated: { semantics: 'sum', units: [] }, replies: ['{"score": 1}'] }] }));
    const out = join(dir, 'r.html');
    const r = await cli('report', join(dir, 'explain'), join(dir, 'demo', 'sbc-rescored.jsonl'), '--out', out);
    expect(r.code).toBe(0);
    expect(r.out).toContain('explain, sbc');
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('<summary>sample 1: grade 1/4</summary>');
    expect(html).toContain('returns the sum, not the maximum');
    expect(html).toContain('dp: zeros');
    // A meta report with the model-pair study gets its agreement-by-bin table and chart.
    const meta = join(dir, 'pairs.json');
    writeFileSync(meta, JSON.stringify({ truth: 'grade', metrics: [{ metric: 'chrf', n: 3, corpus: { pearson: { r: 0.5, p: 0.1 }, spearman: { r: 0.5, p: 0.1 }, kendall_b: { tau: 0.4, p: 0.1 }, kendall_c: { tau: 0.4, p: 0.1 } } }], model_pairs: { systems: ['a', 'b'], synthetic: 0, samples: 10, bins: { chrf: [{ bin: '<2', pairs: 4, agree: 3, metric_only: 1, human_only: 0, opposite: 0 }, { bin: '>=2', pairs: 0, agree: 0, metric_only: 0, human_only: 0, opposite: 0 }] } } }));
    expect((await cli('report', meta, '--out', join(dir, 'pairs.html'))).code).toBe(0);
    const pairsHtml = readFileSync(join(dir, 'pairs.html'), 'utf8');
    expect(pairsHtml).toContain('<td>75% of 4</td>');
    expect(pairsHtml).toContain('does the metric pick the same winner as grade?');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"hello": 1}');
    const e = await cli('report', bad, '--out', join(dir, 'x.html'));
    expect(e.code).toBe(2);
    expect(e.err).toContain(bad);
  });
});

describe.skipIf(!existsSync(CHROMIUM))('the report in a real browser (Debian chromium via playwright-core)', () => {
  it('renders every chart with no console errors; screenshot in test-output/', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] }); // containers: root, small /dev/shm
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`file://${demo.report}`);
      const charts = await page.locator('.chart').count();
      expect(charts).toBeGreaterThanOrEqual(5);
      await page.waitForFunction((n) => document.querySelectorAll('.chart svg path').length > 0 && document.querySelectorAll('.chart svg').length === n, charts);
      expect(await page.evaluate(() => (window as any).codegaugeCharts.length)).toBe(charts);
      mkdirSync(join(ROOT, 'test-output'), { recursive: true });
      await page.screenshot({ path: join(ROOT, 'test-output', 'report.png'), fullPage: false });
      expect(errors).toEqual([]);
      // With JavaScript off the tables are all there and the page says the charts need JavaScript.
      const noJs = await browser.newContext({ javaScriptEnabled: false });
      const plain = await noJs.newPage();
      await plain.goto(`file://${demo.report}`);
      expect(await plain.locator('table').count()).toBeGreaterThanOrEqual(5);
      expect(await plain.locator('noscript').count()).toBe(1);
      expect(await plain.locator('td', { hasText: 'best-tranx-rerank' }).first().isVisible()).toBe(true);
      await noJs.close();
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe('docs/cli.md', () => {
  it('carries the CLI reference generated from the command definitions (run `npm run docs` after changing a command)', async () => {
    const { withCliReference, CLI_REFERENCE_PAGE, REFERENCE_START } = await import('../src/cli/reference.js');
    expect(CLI_REFERENCE_PAGE).toBe('docs/cli.md');
    const page = readFileSync(join(ROOT, CLI_REFERENCE_PAGE), 'utf8');
    expect(withCliReference(page)).toBe(page);
    expect(page).toContain('### `codegauge sbc run`');
    expect(page).toContain('### `codegauge judge`');
    // one generated copy only: the README links to it
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).not.toContain(REFERENCE_START);
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('(docs/cli.md)');
  });
});
