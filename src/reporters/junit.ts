import type { RunResult } from '../api/run.js';

/**
 * JUnit XML of a run, as CI systems read it: a suite per part (scores, exec samples, judged segments, baseline
 * gates), one test case per score, per executed sample, per judged segment and per gate; a failed sample, segment
 * or gate carries the reason.
 */
const NEEDS_ESCAPE = /[&<>"'\u0000-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

export function xmlEscape(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return s; // most names and numbers: a large run writes many of them
  // XML 1.0 forbids most control characters even escaped: drop them; a lone surrogate (text cut inside a pair)
  // cannot be encoded at all: replace it.
  return s
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
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

/** An attribute value: also keeps line breaks and tabs, which a parser would otherwise turn into spaces. */
const attr = (s: string) => {
  const x = xmlEscape(s);
  return /[\t\n\r]/.test(x) ? x.replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;') : x;
};

/** Failure messages are attributes, shown on one line by CI systems: the whole reason goes in the element's text. */
const MESSAGE_CHARS = 500;
const clip = (s: string) => (s.length > MESSAGE_CHARS ? `${s.slice(0, MESSAGE_CHARS)}…` : s);

function suite(name: string, cases: Case[]): string {
  const failures = cases.filter((c) => c.failure).length;
  const skipped = cases.filter((c) => c.skipped !== undefined).length;
  const time = cases.reduce((t, c) => t + (c.time ?? 0), 0);
  const body = cases
    .map((c) => {
      const attrs = `classname="${attr(c.classname)}" name="${attr(c.name)}" time="${(c.time ?? 0).toFixed(3)}"`;
      const inner = [
        c.failure ? `      <failure message="${attr(clip(c.failure.message))}" type="${attr(c.failure.type)}">${xmlEscape(c.failure.text ?? c.failure.message)}</failure>` : '',
        c.skipped !== undefined ? `      <skipped message="${attr(clip(c.skipped))}"/>` : '',
        c.out ? `      <system-out>${xmlEscape(c.out)}</system-out>` : '',
      ].filter(Boolean);
      return inner.length ? `    <testcase ${attrs}>\n${inner.join('\n')}\n    </testcase>` : `    <testcase ${attrs}/>`;
    })
    .join('\n');
  return `  <testsuite name="${attr(name)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time.toFixed(3)}">\n${body}${body ? '\n' : ''}  </testsuite>`;
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
  if (run.judge_segments?.length) {
    // One case per system x segment of each judge: a failure where the judge gave no grade or one under the
    // judge's segment_threshold.
    const cases: Case[] = run.judge_segments.flatMap((j) =>
      j.segments.map((seg): Case => {
        const classname = `codegauge.judge.${j.system}.${j.metric}`;
        const name = `segment ${seg.id}`;
        const what = `${j.system} ${j.metric} segment ${seg.id}`;
        if (seg.score === null) return { classname, name, failure: { message: `${what}: the judge produced no score: ${seg.error ?? 'no grade'}`, type: 'judge-failure' } };
        if (j.threshold !== null && seg.score < j.threshold) return { classname, name, failure: { message: `${what}: scored ${fmt(seg.score)}, under the threshold ${j.threshold}`, type: 'below-threshold' } };
        return { classname, name, out: `${j.metric} = ${fmt(seg.score)}` };
      }),
    );
    suites.push(suite('codegauge judge segments', cases));
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
