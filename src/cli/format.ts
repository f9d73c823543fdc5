import type { ComparisonReport } from '../api/compare.js';
import type { InputComparisonReport } from '../api/compare-input.js';
import { missingScoreReason, type ScoreReport } from '../api/score.js';
import type { MetaReport } from '../api/meta.js';

/** Aligned human-readable table: one row per system, one column per metric, signatures below. */
export function formatScoreTable(report: ScoreReport): string {
  if (report.systems.length === 0) return '';
  const metrics = report.systems[0].scores.map((s) => s.metric);
  const header = ['system', ...metrics];
  // With --confidence, as sacrebleu prints it: score (μ = mean ± ci).
  const cell = (x: ScoreReport['systems'][number]['scores'][number]) =>
    !Number.isFinite(x.score)
      ? missingScoreReason(x)
      : x.confidence
        ? `${x.score.toFixed(2)} (μ = ${x.confidence.mean.toFixed(2)} ± ${x.confidence.ci.toFixed(2)})`
        : x.score.toFixed(2);
  const rows = report.systems.map((s) => [s.name, ...s.scores.map(cell)]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line), ''];
  // sacrebleu's `name|signature`; a judge's signature already starts with its method (`ice|model:...`).
  for (const s of report.systems[0].scores) out.push(`${s.metric}: ${s.signature.startsWith(`${s.name}|`) ? s.signature : `${s.name}|${s.signature}`}`);
  // Components (CodeBLEU) and details (RUBY levels) per system.
  for (const system of report.systems) {
    for (const s of system.scores) {
      const parts = [
        ...Object.entries(s.components ?? {}).map(([k, v]) => `${k}=${v.toFixed(2)}`),
        ...Object.entries(s.details ?? {}).map(([k, v]) => `${k}=${v}`),
      ];
      if (parts.length) out.push(`  ${system.name} ${s.metric}: ${parts.join(' ')}`);
    }
  }
  return out.join('\n') + '\n';
}

/**
 * sacrebleu-style significance table: score (mean ± CI) and p-value, `*` where p < 0.05 and the system differs
 * from the baseline; a system identical to the baseline says so instead of showing a p-value.
 */
export function formatComparisonTable(report: ComparisonReport): string {
  const metrics = report.systems[0].scores.map((s) => s.metric);
  const header = ['system', ...metrics];
  const rows = report.systems.map((system, si) => [
    (si === 0 ? 'Baseline: ' : '') + system.name,
    ...system.scores.map((s) => {
      if (s.identical) return `${s.score.toFixed(2)} identical to the baseline`;
      const ci = s.mean !== null && s.ci !== null ? ` (μ = ${s.mean.toFixed(2)} ± ${s.ci.toFixed(2)})` : '';
      const shown = s.p_value === null ? null : Math.max(s.p_value, s.p_min ?? 0);
      const p = shown !== null ? ` p ${shown === s.p_min && s.p_value! < shown ? '≥' : '='} ${shown.toFixed(4)}${shown < 0.05 ? '*' : ' '}` : '';
      return `${s.score.toFixed(2)}${ci}${p}`;
    }),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  const test = report.test === 'bs' ? `paired bootstrap resampling, ${report.samples} samples` : `paired approximate randomization, ${report.samples} trials`;
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line), ''];
  out.push(`${test}, seed ${report.seed}; * marks p < 0.05 against the baseline (a difference unlikely to be chance alone).`);
  for (const warning of report.warnings ?? []) out.push(`warning: ${warning}`);
  for (const s of report.systems[0].scores) out.push(`${s.metric}: ${s.name}|${s.signature}`);
  return out.join('\n') + '\n';
}

/**
 * `compare --input`: one row per system and score; the difference with its 95% bootstrap interval, the p-value,
 * the adjusted p-value and the minimum detectable difference; `*` where the (adjusted) p-value is below 0.05.
 */
export function formatInputComparisonTable(report: InputComparisonReport): string {
  const header = ['system', 'metric', 'score', '95% CI', 'diff [95% CI]', 'p', report.adjust === 'none' ? '' : `p (${report.adjust})`, 'mde'];
  const num = (x: number) => x.toFixed(2);
  const signed = (x: number) => (x >= 0 ? '+' : '') + x.toFixed(2);
  // Below p_min (approximate randomization over few differing units) a p-value means nothing: "≥ p_min" instead.
  const p = (x: number | null, min = 0) => (x === null ? '' : x < min ? `≥${min.toFixed(4)}` : x < 1e-4 ? x.toExponential(1) : x.toFixed(4));
  const rows = report.systems.flatMap((system, si) =>
    system.scores.map((s) => {
      const interval = s.wilson ? `[${num(s.wilson[0])}, ${num(s.wilson[1])}] Wilson` : s.mean !== null && s.ci !== null ? `μ = ${num(s.mean)} ± ${num(s.ci)}` : '';
      const significant = s.p_adjusted !== null && Math.max(s.p_adjusted, s.p_min ?? 0) < 0.05 && !s.identical ? '*' : ' ';
      return [
        (si === 0 ? 'Baseline: ' : '') + system.name,
        s.metric,
        num(s.score),
        interval,
        s.identical ? 'identical to the baseline' : s.diff ? `${signed(s.diff.value)} [${signed(s.diff.ci[0])}, ${signed(s.diff.ci[1])}]` : '',
        s.identical ? '' : p(s.p_value, s.p_min) + (report.adjust === 'none' ? significant : ''),
        report.adjust === 'none' || s.identical ? '' : p(s.p_adjusted, s.p_min) + significant,
        s.mde === null ? '' : num(s.mde),
      ];
    }),
  );
  const keep = header.map((h, c) => h !== '' || rows.some((r) => r[c] !== ''));
  const cols = (cells: string[]) => cells.filter((_, c) => keep[c]);
  const widths = cols(header).map((h, c) => Math.max(h.length, ...rows.map((r) => cols(r)[c].length)));
  const line = (cells: string[]) => cols(cells).map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  const tests: Record<string, string> = {
    'paired-bs': `paired bootstrap resampling, ${report.samples} samples`,
    'paired-ar': `paired approximate randomization, ${report.samples} trials`,
    mcnemar: 'exact McNemar test',
    wilcoxon: 'Wilcoxon signed-rank test',
    sign: 'sign test',
  };
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line), ''];
  out.push(
    `${tests[report.test]}${report.cluster ? ` over clusters of "${report.cluster}"` : ''}, seed ${report.seed}; intervals from ${report.bootstrap_samples} paired bootstrap resamples; ` +
      `* marks p < 0.05 against the baseline${report.adjust === 'none' ? ' (not adjusted for multiple comparisons)' : ` after ${report.adjust === 'holm' ? "Holm's" : 'Benjamini-Hochberg'} adjustment`}; mde: the smallest difference detectable at α 0.05 with power 0.8.`,
  );
  for (const system of report.systems) {
    for (const s of system.scores) {
      for (const [k, v] of Object.entries(s.pass_at ?? {})) {
        if (!v) continue;
        const diff = v.diff ? `, diff ${signed(v.diff.value)} [${signed(v.diff.ci[0])}, ${signed(v.diff.ci[1])}]` : '';
        out.push(`pass@${k} ${system.name} ${s.metric}: ${num(v.value)} [${num(v.ci[0])}, ${num(v.ci[1])}]${diff} (95% bootstrap over problems)`);
      }
    }
  }
  for (const warning of report.warnings) out.push(`warning: ${warning}`);
  return out.join('\n') + '\n';
}

const fmt = (x: number | null) => (x === null || !Number.isFinite(x) ? '–' : x.toFixed(3));
const pfmt = (p: number | null) => (p === null ? '' : p < 1e-4 ? ` (p=${p.toExponential(1)})` : ` (p=${p.toFixed(4)})`);
const cifmt = (ci?: [number, number]) => (ci ? ` [${fmt(ci[0])}, ${fmt(ci[1])}]` : '');
/** A threshold for reading (4 significant digits; the JSON keeps it exact). */
const rounded = (x: number) => String(Number(x.toPrecision(4)));

/** Correlation table: one row per metric, corpus level (and example level when grouped). */
export function formatMetaTable(report: MetaReport): string {
  const out: string[] = [`agreement with "${report.truth}" (95% bootstrap CIs in brackets)`, ''];
  for (const m of report.metrics) {
    const c = m.corpus;
    out.push(`${m.metric}  (n = ${m.n})`);
    out.push(`  corpus   pearson ${fmt(c.pearson.r)}${cifmt(c.pearson.ci)}${pfmt(c.pearson.p)}  spearman ${fmt(c.spearman.r)}${cifmt(c.spearman.ci)}${pfmt(c.spearman.p)}  kendall-b ${fmt(c.kendall_b.tau)}${cifmt(c.kendall_b.ci)}${pfmt(c.kendall_b.p)}  kendall-c ${fmt(c.kendall_c.tau)}${pfmt(c.kendall_c.p)}`);
    if (m.example) {
      const e = m.example;
      out.push(`  example  pearson ${fmt(e.pearson.r)}${cifmt(e.pearson.ci)}  spearman ${fmt(e.spearman.r)}${cifmt(e.spearman.ci)}  kendall-b ${fmt(e.kendall_b.tau)}${cifmt(e.kendall_b.ci)}  (${e.groups} groups)`);
    }
    if (m.pairwise_kendall) out.push(`  pairwise kendall ${fmt(m.pairwise_kendall.tau)}`);
    const a = m.agreement;
    if (a) {
      if (a.krippendorff_level) out.push(`  agreement${a.kappa_threshold !== null ? ` of "${report.truth}" with ${m.metric} >= ${rounded(a.kappa_threshold)}` : ''}  kappa ${fmt(a.cohen_kappa)}  linear ${fmt(a.kappa_linear)}  quadratic ${fmt(a.kappa_quadratic)}  krippendorff alpha (${a.krippendorff_level}) ${fmt(a.krippendorff_alpha)}`);
      if (a.auroc) out.push(`  auroc ${fmt(a.auroc.value)}${cifmt(a.auroc.ci ?? undefined)}`);
      if (a.confusion) {
        const c = a.confusion;
        out.push(`  at threshold ${rounded(a.threshold!)}${report.threshold === undefined ? ' (best Youden)' : ''}: tp ${c.tp} fp ${c.fp} tn ${c.tn} fn ${c.fn}  sensitivity ${fmt(a.sensitivity)}  specificity ${fmt(a.specificity)}  precision ${fmt(a.precision)}  f1 ${fmt(a.f1)}`);
      }
      const r = a.corrected_pass_rate;
      if (r) out.push(`  pass rate ${r.observed.toFixed(2)} by the metric over ${r.n} rows, ${r.value === null ? 'not correctable (sensitivity + specificity <= 1)' : `${r.value.toFixed(2)} corrected (Rogan-Gladen, 95% CI [${r.ci![0].toFixed(2)}, ${r.ci![1].toFixed(2)}])`} from ${r.labelled} labelled rows`);
    }
    for (const note of m.notes ?? []) out.push(`  note: ${note}`);
  }
  const mp = report.model_pairs;
  if (mp) {
    out.push('', `model pairs: ${mp.systems.length} systems (${mp.synthetic} synthetic), ${mp.samples} bootstrap samples; per metric-difference bin: pairs, agreeing with "${report.truth}", significant only for the metric, only for the truth, opposite`);
    for (const [metric, bins] of Object.entries(mp.bins)) {
      out.push(`  ${metric}: ` + bins.map((b) => `${b.bin}: ${b.pairs} pairs, ${b.pairs ? ((100 * b.agree) / b.pairs).toFixed(0) : '-'}% agree (${b.metric_only}/${b.human_only}/${b.opposite})`).join('; '));
    }
  }
  return out.join('\n') + '\n';
}
