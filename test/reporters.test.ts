import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RunResult } from '../src/api/run.js';
import { buildProgram } from '../src/cli/program.js';
import { junitXml, xmlEscape } from '../src/reporters/junit.js';
import { markdownSummary } from '../src/reporters/markdown.js';
import { ROOT } from './helpers.js';

/** JUnit XML and the GitHub step summary of a run; the example workflow invokes commands that exist. */
const run: RunResult = {
  kind: 'run',
  version: '0.1.0',
  config: 'codegauge.config.yaml',
  out: 'codegauge-results',
  shard: null,
  scores: [
    { kind: 'metric', system: 'codex', metric: 'chrf', aggregation: 'corpus', score: 41.11, ci: [39.5, 42.7], signature: 'chrF2|nrefs:var' },
    { kind: 'exec', system: 'canonical', metric: 'pass@1', aggregation: 'mean', score: 50, ci: null, signature: 'exec|runner' },
  ],
  exec: {
    ran: 2,
    reused: 0,
    rows: [
      { system: 'canonical', index: 0, task_id: 'HumanEval/0', status: 'passed', passed: true, stderr: '', duration_ms: 120 },
      { system: 'canonical', index: 1, task_id: 'HumanEval/1', status: 'failed', passed: false, stderr: 'AssertionError <x> & "y"\u0007', duration_ms: 80 },
    ],
  },
  llm: null,
  baseline: {
    name: 'main',
    created: '2026-01-01T00:00:00.000Z',
    comparisons: [
      { kind: 'metric', system: 'codex', metric: 'chrf', aggregation: 'corpus', baseline_score: 44, score: 41.11, diff: -2.89, ci: [-4, -1.8], p_value: 0.001, delta: 1, status: 'failed', reason: 'codex chrf is worse than baseline "main" by more than 1: difference -2.89, 95% CI [-4.00, -1.80]' },
      { kind: 'exec', system: 'canonical', metric: 'passed', aggregation: 'mean', baseline_score: 50, score: 50, diff: 0, ci: [0, 0], p_value: 1, delta: 0, status: 'passed', reason: 'not worse' },
      { kind: 'judge', system: 'codex', metric: 'dsa@openai:j', aggregation: 'mean', baseline_score: null, score: 70, diff: null, ci: null, p_value: null, delta: null, status: 'not-comparable', reason: 'signatures differ' },
    ],
  },
  saved_baseline: null,
  warnings: [],
  files: [],
};

describe('JUnit XML', () => {
  it('one test case per score, sample and gate; failures carry the reason; text is escaped', () => {
    const xml = junitXml(run);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(xml).toContain('<testsuite name="codegauge scores" tests="2" failures="0"');
    expect(xml).toContain('<testsuite name="codegauge exec" tests="2" failures="1"');
    expect(xml).toContain('<testsuite name="codegauge gates" tests="3" failures="1" errors="0" skipped="1"');
    expect(xml).toContain('<failure message="HumanEval/1: failed" type="failed">');
    expect(xml).toContain('AssertionError &lt;x&gt; &amp; &quot;y&quot;');
    expect(xml).not.toContain('\u0007');
    expect(xml).toContain('message="codex chrf is worse than baseline &quot;main&quot; by more than 1: difference -2.89, 95% CI [-4.00, -1.80]" type="regression"');
    expect((xml.match(/<testcase /g) ?? []).length).toBe(7);
    expect(xmlEscape("a'b")).toBe('a&apos;b');
  });
});

describe('GitHub step summary', () => {
  it('a Markdown table of scores with CIs and the gates', () => {
    const md = markdownSummary(run);
    expect(md).toContain('| codex | chrf | corpus | 41.11 | 39.50 – 42.70 |');
    expect(md).toContain('| codex | chrf | corpus | 44.00 | 41.11 | -2.89 | -4.00 – -1.80 | ❌ failed (Δ 1) |');
    expect(md).toContain('⚠️ not comparable');
    expect(md).toContain('- codex chrf is worse than baseline "main"');
  });
});

describe('the example workflow', () => {
  it('parses, and every codegauge invocation names a command and options that exist', () => {
    const workflow = parse(readFileSync(join(ROOT, 'examples', 'github-actions', 'codegauge.yml'), 'utf8'));
    expect(Object.keys(workflow.jobs)).toEqual(['evaluate', 'sharded', 'merge']);
    const program = buildProgram({ out: () => {}, err: () => {} });
    const lines = Object.values<any>(workflow.jobs).flatMap((job) => job.steps.map((s: any) => s.run).filter((r: unknown): r is string => typeof r === 'string' && r.includes('codegauge')));
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const line of lines) {
      const args = line.replace(/^.*npx codegauge\s+/, '').split(/\s+/);
      const command = program.commands.find((c: Command) => c.name() === args[0]);
      expect(command, line).toBeDefined();
      for (const flag of args.filter((a: string) => a.startsWith('--'))) expect(command!.options.some((o) => o.long === flag), `${line}: ${flag}`).toBe(true);
    }
  });
});

describe('the Kubernetes and Slurm examples', () => {
  it('an Indexed Job and a job array, each running its shard of codegauge run', () => {
    const job = parse(readFileSync(join(ROOT, 'examples', 'kubernetes', 'codegauge-job.yaml'), 'utf8'));
    expect(job.kind).toBe('Job');
    expect(job.spec.completionMode).toBe('Indexed');
    const args: string = job.spec.template.spec.containers[0].args[0];
    expect(args).toContain(`--shard $((JOB_COMPLETION_INDEX + 1))/${job.spec.completions}`);
    const slurm = readFileSync(join(ROOT, 'examples', 'slurm', 'codegauge.sbatch'), 'utf8');
    const array = /#SBATCH --array=1-(\d+)/.exec(slurm)![1];
    expect(slurm).toContain(`--shard "\${SLURM_ARRAY_TASK_ID}/${array}"`);
    const program = buildProgram({ out: () => {}, err: () => {} });
    const run = program.commands.find((c: Command) => c.name() === 'run')!;
    for (const line of [args, slurm.split('\n').find((l) => l.startsWith('npx codegauge run'))!]) {
      for (const flag of line.match(/--[a-z-]+/g)!) expect(run.options.some((o) => o.long === flag), flag).toBe(true);
    }
  });
});

/**
 * A strict XML 1.0 well-formedness check (no parser ships with the project): one root, balanced tags, quoted
 * attributes, only the five entities and character references, only characters XML allows. Returns the tree, with
 * attribute values and text decoded.
 */
interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}
function parseXml(xml: string): XmlNode {
  const invalid = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u.exec(xml);
  if (invalid) throw new Error(`character U+${invalid[0].charCodeAt(0).toString(16)} at ${invalid.index}`);
  const decode = (s: string, at: number) =>
    s.replace(/&([^;]*);|&/g, (_, ref: string | undefined) => {
      const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
      if (ref === undefined) throw new Error(`bare & near ${at}`);
      if (ref in named) return named[ref];
      const num = /^#(\d+)$/.exec(ref) ?? /^#x([0-9a-fA-F]+)$/.exec(ref);
      if (!num) throw new Error(`unknown entity &${ref}; near ${at}`);
      return String.fromCodePoint(parseInt(num[1], ref.startsWith('#x') ? 16 : 10));
    });
  let i = 0;
  const prolog = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/.exec(xml);
  if (!prolog) throw new Error('no XML declaration');
  i = prolog[0].length;
  const stack: XmlNode[] = [{ name: '#document', attrs: {}, children: [], text: '' }];
  const name = /[A-Za-z_][\w.-]*/y;
  while (i < xml.length) {
    if (xml[i] !== '<') {
      const end = xml.indexOf('<', i);
      const text = xml.slice(i, end < 0 ? xml.length : end);
      if (text.includes('>') && text.includes(']]>')) throw new Error(`]]> in text at ${i}`);
      if (stack.length === 1 && text.trim()) throw new Error(`text outside the root at ${i}`);
      stack[stack.length - 1].text += decode(text, i);
      i = end < 0 ? xml.length : end;
      continue;
    }
    if (xml[i + 1] === '/') {
      name.lastIndex = i + 2;
      const m = name.exec(xml);
      const top = stack.pop()!;
      if (!m || m[0] !== top.name || xml[i + 2 + m[0].length] !== '>') throw new Error(`unbalanced </${m?.[0]}> for <${top.name}> at ${i}`);
      i += 3 + m[0].length;
      continue;
    }
    name.lastIndex = i + 1;
    const m = name.exec(xml);
    if (!m) throw new Error(`bad tag at ${i}`);
    const node: XmlNode = { name: m[0], attrs: {}, children: [], text: '' };
    i += 1 + m[0].length;
    for (;;) {
      const ws = /\s*/y;
      ws.lastIndex = i;
      i += ws.exec(xml)![0].length;
      if (xml.startsWith('/>', i) || xml[i] === '>') break;
      const a = /([A-Za-z_][\w.-]*)="([^"<]*)"/y;
      a.lastIndex = i;
      const am = a.exec(xml);
      if (!am) throw new Error(`bad attribute at ${i}: ${xml.slice(i, i + 40)}`);
      if (am[1] in node.attrs) throw new Error(`attribute ${am[1]} twice at ${i}`);
      node.attrs[am[1]] = decode(am[2], i);
      i += am[0].length;
    }
    if (stack.length === 1 && stack[0].children.length) throw new Error('a second root element');
    stack[stack.length - 1].children.push(node);
    if (xml.startsWith('/>', i)) i += 2;
    else {
      i += 1;
      stack.push(node);
    }
  }
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1].name}>`);
  return stack[0].children[0];
}

describe('JUnit test cases per judged segment', () => {
  it('one case per system x segment: a failure where the judge gave no score or one under the threshold, with the reason', () => {
    const judged: RunResult = {
      ...run,
      judge_segments: [
        { system: 'codex', metric: 'dsa', threshold: 50, segments: [{ id: '1', score: 100 }, { id: '2', score: 25 }, { id: '3', score: null, error: 'unreadable reply after 2 reminders' }] },
        { system: 'baseline', metric: 'dsa', threshold: null, segments: [{ id: '1', score: 0 }, { id: '2', score: null, error: 'HTTP 500 <boom> & "more"' }] },
      ],
    };
    const xml = junitXml(judged);
    const root = parseXml(xml);
    const suite = root.children.find((s) => s.attrs.name === 'codegauge judge segments')!;
    expect(suite.attrs).toMatchObject({ tests: '5', failures: '3' });
    const cases = suite.children;
    expect(cases.map((c) => `${c.attrs.classname} ${c.attrs.name}`)).toEqual(['codegauge.judge.codex.dsa segment 1', 'codegauge.judge.codex.dsa segment 2', 'codegauge.judge.codex.dsa segment 3', 'codegauge.judge.baseline.dsa segment 1', 'codegauge.judge.baseline.dsa segment 2']);
    const failure = (c: XmlNode) => c.children.find((x) => x.name === 'failure');
    expect(failure(cases[0])).toBeUndefined();
    expect(failure(cases[1])!.attrs).toEqual({ message: 'codex dsa segment 2: scored 25.00, under the threshold 50', type: 'below-threshold' });
    expect(failure(cases[2])!.attrs).toEqual({ message: 'codex dsa segment 3: the judge produced no score: unreadable reply after 2 reminders', type: 'judge-failure' });
    expect(failure(cases[3])).toBeUndefined(); // no threshold: a low grade is no failure
    expect(failure(cases[4])!.attrs.message).toBe('baseline dsa segment 2: the judge produced no score: HTTP 500 <boom> & "more"');
    expect(markdownSummary(judged)).toContain('Judged segments: 5; 2 without a score, 1 under their threshold.');
  });

  it('stays well-formed on a large run with hostile text (control characters, cut surrogate pairs, ]]>, line breaks)', () => {
    const nasty = ['a\u0000b\u0007c', 'cut \uD83D', '\uDE00 tail', ']]> <![CDATA[ x ]]>', 'line 1\nline 2\r\n\ttab', '&amp; &#0; &bogus;', 'x'.repeat(5000)];
    const n = 10_000;
    const judged: RunResult = {
      ...run,
      judge_segments: [
        {
          system: 'sys <1> & "q"',
          metric: 'ice@openai:m',
          threshold: 50,
          segments: Array.from({ length: n }, (_, i) => (i % 3 === 0 ? { id: String(i + 1), score: null, error: nasty[i % nasty.length] } : { id: String(i + 1), score: (i % 5) * 25 })),
        },
      ],
    };
    const root = parseXml(junitXml(judged));
    const suite = root.children.find((s) => s.attrs.name === 'codegauge judge segments')!;
    expect(suite.children).toHaveLength(n);
    const failures = suite.children.filter((c) => c.children.some((x) => x.name === 'failure'));
    expect(Number(suite.attrs.failures)).toBe(failures.length);
    const first = suite.children[0];
    expect(first.attrs.classname).toBe('codegauge.judge.sys <1> & "q".ice@openai:m');
    expect(first.children[0].attrs.message).toBe('sys <1> & "q" ice@openai:m segment 1: the judge produced no score: abc');
    // segment i (0-based) failed with nasty[i % 7] when i % 3 == 0
    const failureOf = (k: number) => suite.children[[0, 1, 2, 3, 4, 5, 6].map((j) => j * 7 + k).find((i) => i % 3 === 0)!].children[0];
    // line breaks survive in attributes; a message is cut at 500 characters, the text keeps the whole reason
    expect(failureOf(4).attrs.message).toContain('line 1\nline 2\r\n\ttab');
    expect(failureOf(6).attrs.message.length).toBeLessThanOrEqual(501);
    expect(failureOf(6).text).toContain('x'.repeat(5000));
    expect(failureOf(1).attrs.message).toContain('cut \uFFFD');
    expect(failureOf(2).attrs.message).toContain('\uFFFD tail');
    expect(failureOf(3).text).toContain(']]> <![CDATA[ x ]]>');
    expect(failureOf(5).attrs.message).toContain('&amp; &#0; &bogus;');
  });
});
