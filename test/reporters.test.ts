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
    { kind: 'metric', system: 'codex', metric: 'chrf', score: 41.11, ci: [39.5, 42.7], signature: 'chrF2|nrefs:var' },
    { kind: 'exec', system: 'canonical', metric: 'pass@1', score: 50, ci: null, signature: 'exec|runner' },
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
      { kind: 'metric', system: 'codex', metric: 'chrf', baseline_score: 44, score: 41.11, diff: -2.89, ci: [-4, -1.8], p_value: 0.001, delta: 1, status: 'failed', reason: 'codex chrf is worse than baseline "main" by more than 1: difference -2.89, 95% CI [-4.00, -1.80]' },
      { kind: 'exec', system: 'canonical', metric: 'passed', baseline_score: 50, score: 50, diff: 0, ci: [0, 0], p_value: 1, delta: 0, status: 'passed', reason: 'not worse' },
      { kind: 'judge', system: 'codex', metric: 'dsa@openai:j', baseline_score: null, score: 70, diff: null, ci: null, p_value: null, delta: null, status: 'not-comparable', reason: 'signatures differ' },
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
    expect(md).toContain('| codex | chrf | 41.11 | 39.50 – 42.70 |');
    expect(md).toContain('| codex | chrf | 44.00 | 41.11 | -2.89 | -4.00 – -1.80 | ❌ failed (Δ 1) |');
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
