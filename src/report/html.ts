import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { missingScoreReason, type MetricScore } from '../api/score.js';
import { VERSION } from '../version.js';
import type { ReportInput } from './inputs.js';
import { execSectionData } from '../exec/report-data.js';

/**
 * One self-contained HTML file: tables are plain HTML (readable with JavaScript off), charts are ECharts options
 * rendered by the ECharts build inlined into the page. Nothing is fetched from the network.
 */
const require = createRequire(import.meta.url);

const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const num = (x: unknown, digits = 2) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '–');

function table(headers: string[], rows: unknown[][], caption?: string): string {
  return `<table>${caption ? `<caption>${esc(caption)}</caption>` : ''}<thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${typeof c === 'object' && c !== null && 'html' in (c as object) ? (c as { html: string }).html : esc(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

class Charts {
  private readonly options: unknown[] = [];
  add(option: unknown, height = 360): string {
    const id = this.options.length;
    this.options.push(option);
    return `<div class="chart" id="chart-${id}" style="height:${height}px" role="img"></div>`;
  }
  script(): string {
    // `<` is escaped so that no data can close the script element.
    return `<script type="application/json" id="chart-options">${JSON.stringify(this.options).replace(/</g, '\\u003c')}</script>`;
  }
}

function scoreSection(input: Extract<ReportInput, { kind: 'score' }>, charts: Charts): string {
  const metrics = [...new Set(input.data.systems.flatMap((s) => s.scores.map((m) => m.metric)))];
  // With bootstrap intervals (score --confidence, run's confidence): sacrebleu's mean ± half-width, as run prints it.
  const withCi = input.data.systems.some((s) => s.scores.some((m) => m.confidence));
  const interval = (x: MetricScore) => (x.confidence ? ` [${num(x.confidence.mean - x.confidence.ci)}, ${num(x.confidence.mean + x.confidence.ci)}]` : '');
  const cell = (x: MetricScore | undefined) => (!x ? '–' : typeof x.score === 'number' && Number.isFinite(x.score) ? num(x.score) + interval(x) : missingScoreReason(x));
  const rows = input.data.systems.map((s) => [s.name, ...metrics.map((m) => cell(s.scores.find((x) => x.metric === m)))]);
  const signatures = input.data.systems[0]?.scores.map((m) => `<li><code>${esc(m.metric)}</code>: <code>${esc(m.signature)}</code></li>`).join('') ?? '';
  const chart = charts.add({
    tooltip: {},
    legend: { top: 0 },
    grid: { top: 60 },
    xAxis: { type: 'category', data: input.data.systems.map((s) => s.name) },
    yAxis: { type: 'value', name: 'score (0-100)' },
    series: metrics.map((m) => ({ type: 'bar', name: m, data: input.data.systems.map((s) => s.scores.find((x) => x.metric === m)?.score ?? null) })),
  });
  const failures = input.data.systems.flatMap((s) => s.scores.filter((m) => m.details?.failures).map((m) => `${s.name} ${m.metric}: ${m.details!.failures} judge failures (left out of the mean)`));
  return `<h2>Scores <small>${esc(input.path)}</small></h2>${table(['system', ...metrics], rows, withCi ? 'score [95% CI: bootstrap over segments, mean ± half-width]' : undefined)}${failures.length ? `<p class="warn">${failures.map(esc).join('<br>')}</p>` : ''}${chart}<details><summary>Signatures</summary><ul>${signatures}</ul></details>`;
}

const TEST_NAMES: Record<string, string> = {
  bs: 'paired bootstrap resampling',
  'paired-bs': 'paired bootstrap resampling',
  ar: 'approximate randomization',
  'paired-ar': 'approximate randomization',
  mcnemar: 'exact McNemar test',
  wilcoxon: 'Wilcoxon signed-rank test',
  sign: 'sign test',
};

function compareSection(input: Extract<ReportInput, { kind: 'compare' }>): string {
  // Reports of `compare --input` add adjusted p-values and differences; `--refs/--hyps` reports have neither.
  const r = input.data as typeof input.data & { adjust?: string; test: string; samples: number | null };
  const metrics = r.systems[0].scores.map((s) => s.metric);
  const baseline = r.systems[0];
  const rows = r.systems.map((s, i) => [
    i === 0 ? `${s.name} (baseline)` : s.name,
    ...metrics.map((m) => {
      const x = s.scores.find((y) => y.metric === m)! as (typeof s.scores)[number] & { p_adjusted?: number | null; diff?: { value: number; ci: [number, number] } | null; p_min?: number };
      if (x.identical) return { html: `<span>${esc(num(x.score))} identical to the baseline</span>` };
      // Significance after adjustment for multiple comparisons where the report has it; never below what
      // approximate randomization over few differing items can resolve (p_min).
      const raw = x.p_adjusted ?? x.p_value;
      const p = raw === null || raw === undefined ? raw : Math.max(raw, x.p_min ?? 0);
      const significant = i > 0 && p !== null && p !== undefined && p < 0.05;
      // Colour by direction: a significantly worse system must not look like an improvement.
      const base = baseline.scores.find((y) => y.metric === m)!.score;
      const direction = significant ? (x.score > base ? 'better' : x.score < base ? 'worse' : '') : '';
      const ci = x.mean !== null && x.ci !== null ? ` (${num(x.mean)} ± ${num(x.ci)})` : '';
      const diff = i > 0 && x.diff ? ` Δ ${num(x.diff.value)} [${num(x.diff.ci[0])}, ${num(x.diff.ci[1])}]` : '';
      const shown = i > 0 && p !== null && p !== undefined ? ` p${p !== raw ? '≥' : '='}${num(p, 4)}${significant ? ` * ${direction}` : ''}` : '';
      return { html: `<span class="${direction}">${esc(num(x.score))}${esc(ci)}${esc(diff)}${esc(shown)}</span>` };
    }),
  ]);
  const name = TEST_NAMES[r.test] ?? r.test;
  const test = r.samples ? `${name} (${r.samples} ${/ar$/.test(r.test) ? 'trials' : 'samples'}, seed ${r.seed})` : name;
  const adjusted = r.adjust && r.adjust !== 'none' ? `, p-values adjusted (${r.adjust})` : '';
  const warnings = (r.warnings ?? []).map((w) => `<p class="warn">${esc(w)}</p>`).join('');
  return `<h2>Is the difference real? <small>${esc(input.path)}</small></h2><p>${esc(test + adjusted)}; score (mean ± 95% CI), difference from the baseline, p-value; <b>*</b> p &lt; 0.05, <span class="better">better</span> or <span class="worse">worse</span> than the baseline.</p>${table(['system', ...metrics], rows)}${warnings}`;
}

function metaSection(input: Extract<ReportInput, { kind: 'meta' }>, charts: Charts): string {
  const r = input.data;
  const corr = (c: { r?: number; tau?: number; ci?: [number, number] } | undefined) =>
    c ? `${num(c.r ?? c.tau, 3)}${c.ci ? ` [${num(c.ci[0], 3)}, ${num(c.ci[1], 3)}]` : ''}` : '–';
  const rows = r.metrics.map((m) => [m.metric, m.n, corr(m.corpus.pearson), corr(m.corpus.spearman), corr(m.corpus.kendall_b), m.example ? corr(m.example.kendall_b) : '–', m.pairwise_kendall ? num(m.pairwise_kendall.tau, 3) : '–', (m.notes ?? []).join('; ')]);
  const sorted = [...r.metrics].sort((a, b) => b.corpus.kendall_b.tau - a.corpus.kendall_b.tau);
  let html = `<h2>Agreement with ${esc(r.truth)} <small>${esc(input.path)}</small></h2>${table(['metric', 'n', 'Pearson', 'Spearman', 'Kendall τ-b', 'Kendall τ-b (per item)', 'pairwise Kendall', 'notes'], rows)}`;
  html += charts.add({
    tooltip: {},
    grid: { bottom: 70 },
    xAxis: { type: 'category', data: sorted.map((m) => m.metric), axisLabel: { interval: 0, rotate: 20 } },
    yAxis: { type: 'value', name: `Kendall τ-b with ${r.truth}` },
    series: [{ type: 'bar', data: sorted.map((m) => Number(m.corpus.kendall_b.tau.toFixed(4))) }],
  }, 300);
  if (r.points) {
    html += '<div class="grid">';
    for (const [metric, points] of Object.entries(r.points)) {
      html += `<div><h3>${esc(metric)} vs ${esc(r.truth)}</h3>${charts.add({ tooltip: {}, xAxis: { type: 'value', name: r.truth }, yAxis: { type: 'value', name: metric }, series: [{ type: 'scatter', symbolSize: 4, data: points }] }, 280)}</div>`;
    }
    html += '</div>';
  }
  if (r.model_pairs) {
    html += `<h3>Model pairs: does the metric pick the same winner as ${esc(r.truth)}?</h3><p>${r.model_pairs.systems.length} systems (${r.model_pairs.synthetic} synthetic), ${r.model_pairs.samples} bootstrap samples; share of pairs where both agree, by metric difference.</p>`;
    const metrics = Object.keys(r.model_pairs.bins);
    const bins = r.model_pairs.bins[metrics[0]].map((b) => b.bin);
    html += table(['metric', ...bins], metrics.map((m) => [m, ...r.model_pairs!.bins[m].map((b) => (b.pairs ? `${num((100 * b.agree) / b.pairs, 0)}% of ${b.pairs}` : '–'))]));
    html += charts.add({
      tooltip: {},
      legend: {},
      xAxis: { type: 'category', data: bins, name: 'metric difference (points)' },
      yAxis: { type: 'value', name: 'agreement %', max: 100 },
      series: metrics.map((m) => ({ type: 'bar', name: m, data: r.model_pairs!.bins[m].map((b) => (b.pairs ? Number(((100 * b.agree) / b.pairs).toFixed(1)) : null)) })),
    });
  }
  return html;
}

function topCounts(lists: string[][], n: number): [string, number][] {
  const counts = new Map<string, number>();
  for (const list of lists) for (const x of list) counts.set(x, (counts.get(x) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, n);
}

const asList = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' && v ? v.split(', ') : []);

function sbcSection(input: Extract<ReportInput, { kind: 'sbc' }>, charts: Charts): string {
  const rows = input.rows.filter((r) => r.status !== 'failed' && r.final_accuracy_score !== undefined && r.final_accuracy_score !== null && r.final_accuracy_score !== '');
  const score = (r: Record<string, any>) => Number(r.final_accuracy_score);
  const modelOf = (r: Record<string, any>) => String(r.model ?? 'recorded');
  const iterationOf = (r: Record<string, any>) => String(r.iteration ?? r.batch ?? 1);
  const questions = [...new Set(rows.map((r) => String(r.question_id)))].sort((a, b) => Number(a) - Number(b));
  const series = new Map<string, Map<string, number>>();
  const best = new Map<string, Map<string, number>>();
  for (const r of rows) {
    const key = `${modelOf(r)} / iteration ${iterationOf(r)}`;
    if (!series.has(key)) series.set(key, new Map());
    series.get(key)!.set(String(r.question_id), score(r));
    const m = best.get(modelOf(r)) ?? new Map<string, number>();
    best.set(modelOf(r), m);
    m.set(String(r.question_id), Math.max(m.get(String(r.question_id)) ?? -Infinity, score(r)));
  }
  const line = (data: Map<string, Map<string, number>>) => ({
    tooltip: { trigger: 'axis' },
    legend: { type: 'scroll', top: 0 },
    grid: { top: 60, bottom: 80 },
    dataZoom: [{ type: 'inside' }, { type: 'slider' }],
    xAxis: { type: 'category', data: questions, name: 'question' },
    yAxis: { type: 'value', min: 0, max: 1, name: 'SBC score' },
    series: [...data].map(([name, values]) => ({ type: 'line', name, showSymbol: false, data: questions.map((q) => values.get(q) ?? null) })),
  });
  const failed = input.rows.length - rows.length;
  const semanticMissing = rows.some((r) => r.semantic_similarity === null || r.semantic_similarity === undefined || r.semantic_similarity === '');
  let html = `<h2>SBC: reverse-generated requirements <small>${esc(input.path)}</small></h2>`;
  if (semanticMissing) html += '<p class="warn">No embedding model was available: semantic similarity (70% of the SBC score) is missing, so these scores are not comparable to the paper\'s.</p>';
  if (failed) html += `<p class="warn">${failed} rows failed and are not shown.</p>`;
  const perModel = [...best].map(([m, q]) => [m, q.size, num([...q.values()].reduce((a, b) => a + b, 0) / q.size, 4)]);
  html += table(['model', 'questions', 'mean of each question\'s best score'], perModel, 'Cross-model comparison on the maximum score per question');
  html += `<h3>Per question, per model and iteration</h3>${charts.add(line(series), 380)}<h3>Consolidated: best iteration per question</h3>${charts.add(line(best), 380)}`;
  // Omissions (missing) and hallucinations (extra), by model, layer and language.
  const group = (key: (r: Record<string, any>) => string, title: string) => {
    const groups = new Map<string, Record<string, any>[]>();
    for (const r of rows) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
    return table(
      [title, 'most frequent missing (omissions)', 'most frequent extra (hallucinations)'],
      [...groups].map(([g, rs]) => [g, topCounts(rs.map((r) => asList(r.missing_elements)), 8).map(([w, c]) => `${w} (${c})`).join(', '), topCounts(rs.map((r) => asList(r.extra_elements)), 8).map(([w, c]) => `${w} (${c})`).join(', ')]),
    );
  };
  html += `<h3>Omissions and hallucinations</h3>${group(modelOf, 'model')}`;
  if (rows.some((r) => r.implementation_layer)) html += group((r) => String(r.implementation_layer || '–'), 'layer');
  if (rows.some((r) => r.programming_language)) html += group((r) => String(r.programming_language || '–'), 'technology');
  html += `<details><summary>Every row: missing and extra elements per question</summary>${table(
    ['question', 'model', 'iteration', 'score', 'missing', 'extra'],
    rows.map((r) => [r.question_id, modelOf(r), iterationOf(r), num(score(r), 4), asList(r.missing_elements).join(', '), asList(r.extra_elements).join(', ')]),
  )}</details>`;
  return html;
}

function explainSection(input: Extract<ReportInput, { kind: 'explain' }>): string {
  let html = `<h2>Judge explanations <small>${esc(input.path)}</small></h2><p>Click a sample to see its decomposition, the semantics of both programs and their differences.</p>`;
  for (const system of input.systems) {
    html += `<h3>${esc(system.name)}</h3>`;
    for (const sample of system.samples) {
      for (const [k, run] of (sample.runs ?? []).entries()) {
        const grade = run.grade === null || run.grade === undefined ? `failed: ${run.error ?? ''}` : `grade ${run.grade}/4`;
        const units = (side: string) =>
          run[side]?.units?.length
            ? table(['unit', 'lines', 'retrieved from storage', 'analysis'], run[side].units.map((u: any) => [u.kind, `${u.lines?.[0]}-${u.lines?.[1]}`, Object.entries(u.retrieved ?? {}).map(([n, d]) => `${n}: ${d}`).join('; '), u.summary]))
            : '';
        html += `<details><summary>sample ${esc(sample.segment)}${sample.runs.length > 1 ? ` run ${k + 1}` : ''}: ${esc(grade)}</summary>`;
        if (run.differences) html += `<p><b>Differences</b></p><ul>${(run.differences as string[]).map((d) => `<li>${esc(d)}</li>`).join('') || '<li>none</li>'}</ul>`;
        for (const side of ['reference', 'generated']) {
          if (run[side]) html += `<p><b>${side} semantics:</b> ${esc(run[side].semantics)}</p>${units(side)}`;
        }
        html += `<details><summary>raw replies (${(run.replies ?? []).length})</summary>${(run.replies ?? []).map((r: string) => `<pre>${esc(r)}</pre>`).join('')}</details></details>`;
      }
    }
  }
  return html;
}

const pct = (x: number | null | undefined) => (typeof x === 'number' && Number.isFinite(x) ? (100 * x).toFixed(1) : '–');

/**
 * Sample statuses in Okabe & Ito's palette, safe for the common colour-vision deficiencies: passing blue against
 * failing vermillion (told apart by every type of colour blindness, unlike green against red), the other failures in
 * warm or muted hues, never in passing's blue. A status added later gets grey.
 */
export const STATUS_COLOURS: Record<string, string> = {
  passed: '#0072B2', // blue
  failed: '#D55E00', // vermillion
  timeout: '#E69F00', // orange
  compile_error: '#CC79A7', // reddish purple
  runtime_error: '#882255', // wine
  memory: '#F0E442', // yellow
  output_limit: '#AA4499', // purple
  sandbox_error: '#000000',
};
/**
 * The pass-rate heatmap: 0 (every sample failed) in failing's vermillion, 1 in passing's blue, through mid grey (on
 * a white background, so that half passing is not mistaken for an empty cell).
 */
export const PASS_RATE_COLOURS = ['#D55E00', '#CCCCCC', '#0072B2'];

/** An eval folder's metric and judge columns: their means, on passing and failing samples too, and judge failures. */
function evalColumnsTable(columns: NonNullable<Extract<ReportInput, { kind: 'exec' }>['columns']>): string {
  const rows = columns.scores.map((s) => {
    const values = (keep: (r: { passed: boolean }) => boolean) => (columns.table ?? []).filter(keep).map((r) => r[s.column]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    const mean = (xs: number[]) => (xs.length ? num(xs.reduce((a, b) => a + b, 0) / xs.length) : '–');
    return [s.column, s.mean === null ? 'n/a' : num(s.mean), ...(columns.table ? [mean(values((r) => r.passed)), mean(values((r) => !r.passed)), values(() => true).length] : []), s.failures ?? 0, { html: `<code>${esc(s.signature)}</code>` }];
  });
  const headers = ['column', 'mean (0-100)', ...(columns.table ? ['mean on passing samples', 'mean on failing samples', 'samples scored'] : []), 'judge failures', 'signature'];
  return `<h3>Metric and judge columns</h3>${table(headers, rows, 'each sample scored against the canonical solution (table.jsonl, what meta --truth passed reads)')}`;
}

/** exec / eval results: pass@k with bootstrap CIs over problems, pass^k, statuses, per-problem pass rates. */
function execSection(input: Extract<ReportInput, { kind: 'exec' }>, charts: Charts): string {
  const d = execSectionData(input.data);
  const hatKs = d.ks.filter((k) => Number(k) > 1 && d.systems.some((s) => s.passHat[k] !== null && s.passHat[k] !== undefined));
  const passRows = d.systems.map((s) => [
    s.name,
    s.n,
    s.problems,
    ...d.ks.map((k) => (s.passAt[k].value === null ? 'n/a' : `${pct(s.passAt[k].value)}${s.passAt[k].ci ? ` [${pct(s.passAt[k].ci![0])}, ${pct(s.passAt[k].ci![1])}]` : ''}`)),
    ...hatKs.map((k) => pct(s.passHat[k])),
  ]);
  const passTable = table(['system', 'samples', 'problems', ...d.ks.map((k) => `pass@${k} % [95% CI]`), ...hatKs.map((k) => `pass^${k} %`)], passRows, 'pass@k (unbiased estimator of Chen et al. 2021); CIs: percentile bootstrap over problems, 1000 draws');
  const passChart = charts.add({
    tooltip: {},
    legend: { top: 0 },
    grid: { top: 60 },
    xAxis: { type: 'category', data: d.systems.map((s) => s.name) },
    yAxis: { type: 'value', name: 'pass@k (%)', max: 100 },
    series: d.ks.map((k) => ({ type: 'bar', name: `pass@${k}`, data: d.systems.map((s) => (s.passAt[k].value === null ? null : 100 * s.passAt[k].value!)) })),
  });
  const used = d.statuses.filter((st) => d.systems.some((s) => (s.statuses[st] ?? 0) > 0));
  const statusTable = table(['system', ...used], d.systems.map((s) => [s.name, ...used.map((st) => s.statuses[st] ?? 0)]), 'status of every sample');
  const statusChart = charts.add({
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid: { top: 60 },
    xAxis: { type: 'category', data: d.systems.map((s) => s.name) },
    yAxis: { type: 'value', name: 'samples' },
    series: used.map((st) => ({ type: 'bar', stack: 'status', name: st, itemStyle: { color: STATUS_COLOURS[st] ?? '#999999' }, data: d.systems.map((s) => s.statuses[st] ?? 0) })),
  }, 300);
  // The colour legend sits above the grid, and the grid keeps room for the problem names below it (rotated, at
  // most 24 characters shown), so neither covers the other.
  const longest = Math.min(24, Math.max(1, ...d.problems.map((p) => p.length)));
  const labelRoom = 12 + 6 * longest;
  const heat = charts.add(
    {
      tooltip: { position: 'top' },
      grid: { top: 64, left: 16, right: 16, bottom: 8, containLabel: true },
      xAxis: { type: 'category', data: d.problems, axisLabel: { rotate: 90, fontSize: 9, interval: 0, width: 6 * 24, overflow: 'truncate' } },
      yAxis: { type: 'category', data: d.systems.map((s) => s.name) },
      visualMap: { min: 0, max: 1, calculable: true, orient: 'horizontal', left: 'center', top: 0, itemHeight: 160, text: ['all pass', 'all fail'], inRange: { color: PASS_RATE_COLOURS } },
      series: [{ type: 'heatmap', name: 'pass rate', data: d.rates.flatMap((row, y) => row.map((r, x) => [x, y, r === null ? '-' : r])) }],
    },
    72 + 28 * Math.max(2, d.systems.length) + labelRoom,
  );
  const perProblem = table(['problem', ...d.systems.map((s) => `${s.name} (passed/n)`)], d.problems.map((p, x) => [p, ...d.counts.map((row) => (row[x] ? `${row[x]!.c}/${row[x]!.n}` : '–'))]));
  const notes = d.systems.flatMap((s) => s.notes.map((n) => `${s.name}: ${n}`));
  const signatures = d.systems.map((s) => `<li><code>${esc(s.name)}</code>: <code>${esc(s.signature)}</code></li>`).join('');
  const columns = input.columns ? evalColumnsTable(input.columns) : '';
  return `<h2>Execution <small>${esc(input.path)}</small></h2>${passTable}${notes.length ? `<p class="warn">${notes.map(esc).join('<br>')}</p>` : ''}${passChart}${columns}${statusTable}${statusChart}<h3>Pass rate per problem</h3>${heat}<details><summary>Per-problem table (${d.problems.length} problems)</summary>${perProblem}</details><details><summary>Signatures</summary><ul>${signatures}</ul></details>`;
}

const STYLE = `body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:0 24px 48px;color:#1d1d1f}
h1{margin:24px 0 4px}h2{margin-top:40px;border-bottom:1px solid #ddd;padding-bottom:4px}h2 small{font-weight:normal;color:#888;font-size:12px;margin-left:8px}
table{border-collapse:collapse;margin:12px 0;font-variant-numeric:tabular-nums}th,td{border:1px solid #ddd;padding:4px 10px;text-align:left;vertical-align:top}
th{background:#f5f5f7}caption{text-align:left;font-weight:600;padding:4px 0}.better{font-weight:600;color:#0a6}.worse{font-weight:600;color:#c62828}.warn{background:#fff4e5;border-left:4px solid #f90;padding:8px 12px}
.chart{width:100%;margin:8px 0}.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:8px}details{margin:6px 0}summary{cursor:pointer}
pre{white-space:pre-wrap;background:#f5f5f7;padding:8px}code{font-size:12px}footer{margin-top:48px;color:#888;font-size:12px}`;

export function renderReport(inputs: ReportInput[], options: { title?: string; notes?: string[] } = {}): string {
  const charts = new Charts();
  const sections = inputs.map((input) => {
    switch (input.kind) {
      case 'score':
        return scoreSection(input, charts);
      case 'compare':
        return compareSection(input);
      case 'meta':
        return metaSection(input, charts);
      case 'sbc':
        return sbcSection(input, charts);
      case 'explain':
        return explainSection(input);
      case 'exec':
        return execSection(input, charts);
    }
  });
  const echarts = readFileSync(require.resolve('echarts/dist/echarts.min.js'), 'utf8');
  const title = options.title ?? 'codegauge report';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>${STYLE}</style></head>
<body><h1>${esc(title)}</h1>${(options.notes ?? []).map((n) => `<p>${esc(n)}</p>`).join('')}
<noscript><p class="warn">JavaScript is off: the tables below are complete; the charts need JavaScript.</p></noscript>
${sections.join('\n')}
<footer>codegauge ${esc(VERSION)}; every chart's data is in the tables above it.</footer>
${charts.script()}
<script>${echarts.replace(/<\/script/gi, '<\\/script')}</script>
<script>
(function () {
  var options = JSON.parse(document.getElementById('chart-options').textContent);
  window.codegaugeCharts = options.map(function (option, i) {
    var chart = echarts.init(document.getElementById('chart-' + i), null, { renderer: 'svg' });
    option.animation = false;
    chart.setOption(option);
    return chart;
  });
  window.addEventListener('resize', function () { window.codegaugeCharts.forEach(function (c) { c.resize(); }); });
})();
</script>
</body></html>
`;
}
