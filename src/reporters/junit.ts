import type { RunResult } from '../api/run.js';

/**
 * JUnit XML of a run, as CI systems read it: a suite per part (scores, exec samples, baseline gates), one test case
 * per score, per executed sample and per gate; a failed sample or gate carries the reason.
 */
export function xmlEscape(s: string): string {
  // XML 1.0 forbids most control characters even escaped: drop them.
  return s
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

interface Case {
  classname: string;
  name: string;
  time?: number;
  failure?: { message: string; type: string; text?: string };
  skipped?: string;
  out?: string;
}

function suite(name: string, cases: Case[]): string {
  const failures = cases.filter((c) => c.failure).length;
  const skipped = cases.filter((c) => c.skipped !== undefined).length;
  const time = cases.reduce((t, c) => t + (c.time ?? 0), 0);
  const body = cases
    .map((c) => {
      const attrs = `classname="${xmlEscape(c.classname)}" name="${xmlEscape(c.name)}" time="${(c.time ?? 0).toFixed(3)}"`;
      const inner = [
        c.failure ? `      <failure message="${xmlEscape(c.failure.message)}" type="${xmlEscape(c.failure.type)}">${xmlEscape(c.failure.text ?? c.failure.message)}</failure>` : '',
        c.skipped !== undefined ? `      <skipped message="${xmlEscape(c.skipped)}"/>` : '',
        c.out ? `      <system-out>${xmlEscape(c.out)}</system-out>` : '',
      ].filter(Boolean);
      return inner.length ? `    <testcase ${attrs}>\n${inner.join('\n')}\n    </testcase>` : `    <testcase ${attrs}/>`;
    })
    .join('\n');
  return `  <testsuite name="${xmlEscape(name)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time.toFixed(3)}">\n${body}${body ? '\n' : ''}  </testsuite>`;
}

export function junitXml(run: RunResult): string {
  const suites: string[] = [];
  const fmt = (x: number | null) => (x === null ? 'n/a' : x.toFixed(2));
  const scores: Case[] = run.scores.map((s) => ({
    classname: `codegauge.${s.kind}.${s.system}`,
    name: s.metric,
    out: `${s.metric} = ${fmt(s.score)}${s.ci ? ` (95% CI ${fmt(s.ci[0])}-${fmt(s.ci[1])})` : ''}\n${s.signature}`,
    ...(s.score === null ? { failure: { message: `${s.system} ${s.metric}: no value`, type: 'no-value' } } : {}),
  }));
  if (scores.length) suites.push(suite('codegauge scores', scores));
  if (run.exec) {
    const cases: Case[] = run.exec.rows.map((r) => ({
      classname: `codegauge.exec.${r.system}`,
      name: `${r.task_id} #${r.index}`,
      time: r.duration_ms / 1000,
      ...(r.passed ? {} : { failure: { message: `${r.task_id}: ${r.status}`, type: r.status, text: `${r.task_id} (sample ${r.index}) ${r.status}${r.stderr ? `\n${r.stderr}` : ''}` } }),
    }));
    suites.push(suite('codegauge exec', cases));
  }
  if (run.baseline) {
    const cases: Case[] = run.baseline.comparisons.map((c) => ({
      classname: `codegauge.gate.${c.system}`,
      name: `${c.metric} vs baseline ${run.baseline!.name}${c.delta !== null ? ` (fail if worse by > ${c.delta})` : ''}`,
      ...(c.status === 'failed' ? { failure: { message: c.reason, type: 'regression' } } : {}),
      ...(c.status === 'not-comparable' || c.status === 'missing' ? (c.delta !== null ? { failure: { message: c.reason, type: c.status } } : { skipped: c.reason }) : {}),
      ...(c.status === 'passed' || c.status === 'compared' ? { out: c.reason } : {}),
    }));
    suites.push(suite('codegauge gates', cases));
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="codegauge run">\n${suites.join('\n')}\n</testsuites>\n`;
}
