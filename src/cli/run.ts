import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Option, type Command } from 'commander';
// The run pipeline (judges, LLM clients, execution) is loaded when the command runs, not at CLI start-up.
import type { RunResult } from '../api/run.js';
import { findConfig, loadConfig } from '../config/load.js';
import { parseShard, type Shard } from '../config/shard.js';
import { UsageError, writing } from '../errors.js';
import { junitXml } from '../reporters/junit.js';
import { markdownSummary } from '../reporters/markdown.js';
import { exitRequest, type CliIo } from './io.js';
import { formatOption, numberIn } from './options.js';

interface RunCliOptions {
  config?: string;
  out?: string;
  store?: string;
  saveBaseline?: string;
  baseline?: string;
  failIfWorse?: number;
  junit?: string;
  summary?: string;
  shard?: Shard;
  batch?: boolean;
  timeoutRetry?: 'always' | 'starved' | 'never';
  format: 'table' | 'json';
}

const num = (x: number | null) => (x === null ? 'n/a' : x.toFixed(2));

export function formatRunTable(run: RunResult): string {
  // `aggregation`: how the score is made (corpus statistics, or a mean over items); gates compare the same number.
  const header = ['system', 'metric', 'aggregation', 'score', '95% CI'];
  const rows = run.scores.map((s) => [s.system, s.metric, s.aggregation, num(s.score), s.ci ? `${num(s.ci[0])}-${num(s.ci[1])}` : '']);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
  const out = rows.length ? [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)] : [];
  for (const g of run.generation ?? []) out.push(`generate ${g.system} (${g.model}): ${g.problems} problem(s) x ${g.n} sample(s), ${g.reused} reused, ${g.asked} asked`);
  if (run.exec) out.push(`exec: ${run.exec.rows.length} sample(s), ${run.exec.rows.filter((r) => r.passed).length} passed (${run.exec.ran} run, ${run.exec.reused} reused)`);
  if (run.llm) out.push(`llm: ${run.llm.requests} request(s), ${run.llm.cache_hits} from the cache${run.llm.batches !== undefined ? `, ${run.llm.batches} batch(es)` : ''}`);
  if (run.baseline) {
    out.push(`against baseline "${run.baseline.name}" (saved ${run.baseline.created}):`);
    for (const c of run.baseline.comparisons) out.push(`  ${c.status.padEnd(14)} ${c.reason}`);
  }
  if (run.saved_baseline) out.push(`saved baseline "${run.saved_baseline}"`);
  out.push(`results in ${run.out}`);
  return out.join('\n') + '\n';
}

/** `codegauge run`: the config's whole matrix, baselines and gates, and the CI reporters. */
export function addRunCommand(program: Command, io: CliIo): void {
  program
    .command('run')
    .description('run everything codegauge.config.yaml asks for (metrics, comparisons, execution, judges), write every result file and the report; baselines and gates for CI')
    .option('--config <file>', 'the config (default: codegauge.config.yaml, .yml or .json here)')
    .option('--out <dir>', 'results folder (default: the config\'s out)')
    .option('--store <file>', 'SQLite store of baselines and LLM answers (default: the config\'s store, else .codegauge/cache.sqlite)')
    .option('--save-baseline <name>', 'store this run\'s per-item results as baseline NAME')
    .option('--baseline <name>', 'compare with baseline NAME (paired bootstrap per metric, judge and pass@k)')
    .option('--fail-if-worse <delta>', 'with --baseline: exit 1 when a result is worse than the baseline by more than DELTA points with confidence (its own fail_if_worse in the config wins)', numberIn('--fail-if-worse', 0))
    .option('--junit <file>', 'also write JUnit XML (a test case per score, executed sample, judged segment and gate)')
    .option('--summary <file>', 'also write the Markdown summary here (it goes to $GITHUB_STEP_SUMMARY when that is set)')
    .option('--shard <i/N>', 'run only shard i of N (a deterministic split by item id); results go to OUT/shard-i-of-N, join them with codegauge merge', parseShard)
    .option('--batch', 'judge and generate through the OpenAI-compatible Batch API (resumable; answers go to the same cache)')
    .addOption(new Option('--timeout-retry <policy>', 'what an execution timeout leads to (overrides the config\'s exec.timeout_retry): always (once more with twice the time), starved (only when the program had less than half a core) or never').choices(['always', 'starved', 'never']))
    .addOption(formatOption())
    .action(async (opts: RunCliOptions) => {
      if (opts.failIfWorse !== undefined && opts.baseline === undefined) throw new UsageError('--fail-if-worse does nothing without --baseline');
      const loaded = loadConfig(findConfig(opts.config));
      if (opts.timeoutRetry !== undefined && !loaded.config.exec) throw new UsageError('--timeout-retry does nothing: the config has no exec section');
      const { runConfig } = await import('../api/run.js');
      const run = await runConfig({
        config: loaded,
        out: opts.out,
        store: opts.store,
        saveBaseline: opts.saveBaseline,
        baseline: opts.baseline,
        failIfWorse: opts.failIfWorse,
        shard: opts.shard,
        batch: opts.batch,
        timeoutRetry: opts.timeoutRetry,
        log: opts.format === 'table' ? (line) => io.err(`${line}\n`) : undefined,
        onProgress: (label) => io.progress?.(label),
      });
      for (const w of run.warnings) io.err(`warning: ${w}\n`);
      io.out(opts.format === 'json' ? JSON.stringify(run, null, 2) + '\n' : formatRunTable(run));
      const write = (path: string, text: string) =>
        writing(path, () => {
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, text);
        });
      if (opts.junit) write(opts.junit, junitXml(run));
      const markdown = markdownSummary(run);
      if (opts.summary) write(opts.summary, markdown);
      const step = process.env.GITHUB_STEP_SUMMARY;
      if (step) writing(step, () => appendFileSync(step, markdown));
      const comparisons = run.baseline?.comparisons ?? [];
      const failed = comparisons.filter((c) => c.status === 'failed');
      const unusable = comparisons.filter((c) => (c.status === 'not-comparable' || c.status === 'missing') && c.delta !== null);
      for (const c of failed) io.err(`codegauge: gate failed: ${c.reason}\n`);
      for (const c of unusable) io.err(`codegauge: gate not evaluated: ${c.reason}\n`);
      if (failed.length) exitRequest.code = 1;
      else if (unusable.length) exitRequest.code = 2;
    });
}
