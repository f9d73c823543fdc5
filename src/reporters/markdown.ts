import type { RunResult } from '../api/run.js';

/**
 * The GitHub Actions step summary of a run (Markdown): a table of scores with their 95% intervals, pass@k, and the
 * gates against the baseline. Written to $GITHUB_STEP_SUMMARY when that is set.
 */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const num = (x: number | null) => (x === null ? 'n/a' : x.toFixed(2));

export function markdownSummary(run: RunResult): string {
  const out: string[] = [`## codegauge run${run.shard ? ` (shard ${run.shard})` : ''}`, ''];
  if (run.scores.length) {
    out.push('| system | metric | aggregation | score | 95% CI |', '| --- | --- | --- | ---: | --- |');
    for (const s of run.scores) out.push(`| ${cell(s.system)} | ${cell(s.metric)} | ${s.aggregation} | ${num(s.score)} | ${s.ci ? `${num(s.ci[0])} – ${num(s.ci[1])}` : ''} |`);
    out.push('');
  }
  for (const g of run.generation ?? []) out.push(`Generation of \`${g.system}\` by ${cell(g.model)}: ${g.problems} problem(s) x ${g.n} sample(s); ${g.reused} reused, ${g.asked} asked now.`, '');
  if (run.exec) out.push(`Execution: ${run.exec.rows.length} sample(s), ${run.exec.rows.filter((r) => r.passed).length} passed; ${run.exec.ran} run now, ${run.exec.reused} reused.`, '');
  if (run.llm) out.push(`LLM: ${run.llm.requests} request(s) sent, ${run.llm.cache_hits} answered from the cache.`, '');
  if (run.judge_segments?.length) {
    const segments = run.judge_segments.flatMap((j) => j.segments.map((s) => ({ s, threshold: j.threshold })));
    const failed = segments.filter(({ s }) => s.score === null).length;
    const under = segments.filter(({ s, threshold }) => s.score !== null && threshold !== null && s.score < threshold).length;
    out.push(`Judged segments: ${segments.length}; ${failed} without a score, ${under} under their threshold.`, '');
  }
  if (run.baseline) {
    const icon: Record<string, string> = { passed: '✅ passed', failed: '❌ failed', 'not-comparable': '⚠️ not comparable', missing: '⚠️ missing', compared: '—' };
    out.push(`### Against baseline \`${run.baseline.name}\` (saved ${run.baseline.created})`, '', '| system | metric | aggregation | baseline | now | difference | 95% CI | gate |', '| --- | --- | --- | ---: | ---: | ---: | --- | --- |');
    for (const c of run.baseline.comparisons) {
      out.push(`| ${cell(c.system)} | ${cell(c.metric)} | ${c.aggregation} | ${num(c.baseline_score)} | ${num(c.score)} | ${num(c.diff)} | ${c.ci ? `${num(c.ci[0])} – ${num(c.ci[1])}` : ''} | ${icon[c.status]}${c.delta !== null ? ` (Δ ${c.delta})` : ''} |`);
    }
    const bad = run.baseline.comparisons.filter((c) => c.status === 'failed' || ((c.status === 'not-comparable' || c.status === 'missing') && c.delta !== null));
    if (bad.length) out.push('', ...bad.map((c) => `- ${cell(c.reason)}`));
    out.push('');
  }
  if (run.warnings.length) out.push('<details><summary>warnings</summary>', '', ...run.warnings.map((w) => `- ${cell(w)}`), '', '</details>', '');
  return out.join('\n') + '\n';
}
