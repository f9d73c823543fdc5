import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PASS_RATE_COLOURS, STATUS_COLOURS } from '../src/report/html.js';
import { cli, ROOT } from './helpers.js';

/**
 * The execution section of the report on an `eval` folder, written by hand (no model, no sandbox): three systems
 * over 40 problems with long names, every kind of verdict, and a metric and a judge column.
 */
const CHROMIUM = '/usr/bin/chromium';
const SYSTEMS = ['model-a', 'model-b', 'a-much-longer-model-name'];
const PROBLEMS = Array.from({ length: 40 }, (_, i) => `HumanEval/${i}`);
const N = 4;
const STATUS_CYCLE = ['passed', 'failed', 'passed', 'timeout', 'runtime_error', 'passed', 'compile_error', 'failed'];
let dir: string;
let html: string;

function writeEvalFolder(folder: string): void {
  mkdirSync(folder, { recursive: true });
  const results: object[] = [];
  const table: object[] = [];
  const systems = SYSTEMS.map((name, s) => {
    const statuses: Record<string, number> = { passed: 0, failed: 0, timeout: 0, compile_error: 0, runtime_error: 0, memory: 0, sandbox_error: 0 };
    const perProblem: Record<string, { n: number; c: number }> = {};
    PROBLEMS.forEach((task, p) => {
      perProblem[task] = { n: N, c: 0 };
      for (let k = 0; k < N; k++) {
        // Some problems always pass, some never do (for one system or another), the rest are mixed.
        const cycled = STATUS_CYCLE[(p * 3 + k + s * 5) % STATUS_CYCLE.length];
        const status = (p + s) % 5 === 0 ? 'passed' : (p + s) % 7 === 1 ? (cycled === 'passed' ? 'failed' : cycled) : cycled;
        const passed = status === 'passed';
        statuses[status]++;
        if (passed) perProblem[task].c++;
        results.push({ system: name, index: results.length, task_id: task, status, passed, duration_ms: 10, exit_code: passed ? 0 : 1, stderr: '', sha: `s${results.length}` });
        table.push({ system: name, task_id: task, sample: k, passed, status, chrf: passed ? 60 + k : 30 + k, ice: k === 3 ? null : passed ? 75 : 25 });
      }
    });
    const rate = Object.values(perProblem).reduce((a, x) => a + x.c / x.n, 0) / PROBLEMS.length;
    return { name, file: `samples/${name}.jsonl`, pass_at: { '1': rate, '4': null }, n: PROBLEMS.length * N, problems: PROBLEMS.length, statuses, per_problem: perProblem, signature: 'exec|runner:python-3.11.7|sandbox:bwrap|timeout:3s|memory:1024MB|problems:000000000000|version:0.1.0' };
  });
  const summary = { kind: 'exec', version: '0.1.0', systems };
  const scores = [
    { column: 'chrf', mean: 45.5, signature: 'chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:0.1.0' },
    { column: 'ice', mean: 50, signature: 'ice|model:openai:judge|temp:0|grade:text|repeat:1|version:0.1.0', failures: 120, errors: ['segment 4: no grade'] },
  ];
  writeFileSync(join(folder, 'summary.json'), JSON.stringify(summary));
  writeFileSync(join(folder, 'eval.json'), JSON.stringify({ kind: 'eval', version: '0.1.0', model: 'openai:coder', n: N, temperature: 0.8, problems: PROBLEMS.length, exec: summary, scores }));
  writeFileSync(join(folder, 'results.jsonl'), results.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(join(folder, 'table.jsonl'), table.map((r) => JSON.stringify(r)).join('\n') + '\n');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-report-exec-'));
  writeEvalFolder(join(dir, 'eval'));
  const r = await cli('report', join(dir, 'eval'), '--out', join(dir, 'report.html'));
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  html = readFileSync(join(dir, 'report.html'), 'utf8');
});

describe('the execution section of an eval folder', () => {
  it('shows the metric and judge columns, split by passing and failing samples, with the judge failures', () => {
    expect(html).toContain('<h3>Metric and judge columns</h3>');
    // chrf: 60-63 on passing samples, 30-33 on failing ones; ice: 75 / 25 where graded, every fourth sample not.
    const row = (column: string) => new RegExp(`<tr><td>${column}</td>((?:<td>[^<]*</td>){5})`).exec(html)![1].match(/<td>([^<]*)<\/td>/g)!.map((c) => c.slice(4, -5));
    const table = readFileSync(join(dir, 'eval', 'table.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const mean = (xs: number[]) => (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2);
    expect(row('chrf')).toEqual(['45.50', mean(table.filter((r) => r.passed).map((r) => r.chrf)), mean(table.filter((r) => !r.passed).map((r) => r.chrf)), String(table.length), '0']);
    expect(row('ice')).toEqual(['50.00', '75.00', '25.00', String(table.filter((r) => r.ice !== null).length), '120']);
  });

  it('draws failing statuses in a colour that reads as bad, told apart from passing under colour blindness', () => {
    const options = JSON.parse(/<script type="application\/json" id="chart-options">([\s\S]*?)<\/script>/.exec(html)![1]);
    const statusChart = options.find((o: any) => o.series?.some((s: any) => s.stack === 'status'));
    const colour = Object.fromEntries(statusChart.series.map((s: any) => [s.name, s.itemStyle.color]));
    expect(colour).toMatchObject({ passed: STATUS_COLOURS.passed, failed: STATUS_COLOURS.failed, timeout: STATUS_COLOURS.timeout });
    const heatmap = options.find((o: any) => o.series?.[0]?.type === 'heatmap');
    expect(heatmap.visualMap.inRange.color).toEqual(PASS_RATE_COLOURS);
    // Failing is warm (red over blue), passing cool; and the two stay far apart for protanopes and deuteranopes
    // (Machado et al. 2009, severity 1, on linear RGB), where the old lime green against blue, or red against green,
    // would not be the point: both must be told apart *and* failing must not look like passing.
    const rgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
    const linear = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    const simulate = (hex: string, m: number[][]) => {
      const l = rgb(hex).map(linear);
      return m.map((row) => Math.min(1, Math.max(0, row[0] * l[0] + row[1] * l[1] + row[2] * l[2])));
    };
    const PROTAN = [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]];
    const DEUTAN = [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]];
    const IDENTITY = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
    for (const m of [IDENTITY, PROTAN, DEUTAN]) {
      const [failed, passed] = [simulate(STATUS_COLOURS.failed, m), simulate(STATUS_COLOURS.passed, m)];
      expect(failed[0]).toBeGreaterThan(failed[2]); // warm
      expect(passed[2]).toBeGreaterThan(passed[0]); // cool
      expect(Math.hypot(...failed.map((x, i) => x - passed[i]))).toBeGreaterThan(0.4);
    }
  });
});

describe.skipIf(!existsSync(CHROMIUM))('the execution section in Chromium', () => {
  it('the heatmap legend covers no problem label, every label is inside the chart; screenshots in test-output/', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`file://${join(dir, 'report.html')}`);
      const charts = await page.locator('.chart').count();
      await page.waitForFunction((n) => document.querySelectorAll('.chart svg').length === n, charts);
      const index = await page.evaluate(() => (window as any).codegaugeCharts.findIndex((c: any) => c.getOption().series[0]?.type === 'heatmap'));
      expect(index).toBeGreaterThanOrEqual(0);
      const heat = page.locator(`#chart-${index}`);
      await heat.scrollIntoViewIfNeeded();
      const geometry = await page.evaluate((id) => {
        const root = document.getElementById(id)!;
        const box = (e: Element) => {
          const r = e.getBoundingClientRect();
          return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
        };
        const texts = [...root.querySelectorAll('text')];
        const labels = texts.filter((t) => /^HumanEval\//.test(t.textContent ?? '')).map(box);
        // The continuous legend: its gradient bar, handles and end texts.
        const legend = [...root.querySelectorAll('path, rect')].filter((e) => (e.getAttribute('fill') ?? '').startsWith('url(')).map(box);
        legend.push(...texts.filter((t) => /^all (pass|fail)$/.test(t.textContent ?? '')).map(box));
        return { labels, legend, chart: box(root) };
      }, `chart-${index}`);
      expect(geometry.labels).toHaveLength(PROBLEMS.length);
      expect(geometry.legend.length).toBeGreaterThanOrEqual(3);
      const overlaps = (a: { left: number; right: number; top: number; bottom: number }, b: typeof a) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      for (const l of geometry.legend) for (const t of geometry.labels) expect(overlaps(l, t)).toBe(false);
      for (const t of geometry.labels) {
        expect(t.bottom).toBeLessThanOrEqual(geometry.chart.bottom + 0.5);
        expect(t.left).toBeGreaterThanOrEqual(geometry.chart.left - 0.5);
      }
      mkdirSync(join(ROOT, 'test-output'), { recursive: true });
      await heat.screenshot({ path: join(ROOT, 'test-output', 'report-exec-heatmap.png') });
      const statuses = page.locator('h2:has-text("Execution") ~ .chart').nth(1);
      await statuses.screenshot({ path: join(ROOT, 'test-output', 'report-exec-statuses.png') });
      await page.locator('h3:has-text("Metric and judge columns")').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ROOT, 'test-output', 'report-exec-columns.png') });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
