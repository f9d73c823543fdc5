import type { Command } from 'commander';
import { availableParallelism } from 'node:os';
import { writeFileSync } from 'node:fs';
import { scoreFiles } from '../api/score.js';
import { InputError, UsageError, writing } from '../errors.js';
import { parallelSegments, readSegmentFile } from '../io/segments.js';
// Types only: a metric's module loads when a spec names it (see metrics/specs.ts).
import type { CodeBertScore } from '../metrics/codebertscore.js';
import type { CrystalBleu } from '../metrics/crystalbleu.js';
import type { Metric } from '../metrics/metric.js';
import { describeMetrics, parseSpec, specName } from '../metrics/specs.js';
import { formatScoreTable } from './format.js';
import type { CliIo } from './io.js';
import { collect, existingFile, formatOption, integerIn, onlyWith, workSteps } from './options.js';
import { inferLanguage, systemName } from './systems.js';

interface ScoreCliOptions {
  refs: string[];
  hyps: string[];
  metric: string[];
  lang?: string;
  segments: boolean;
  confidence: boolean;
  confidenceN: number;
  seed: number;
  jobs: number;
  writeNgrams?: string;
  problems?: string;
  maxWork?: number;
  format: 'table' | 'json';
}

/** Problem statements keyed by their segment's references, for CodeBERTScore's sources=yes. */
function problemsByReferences(problemsPath: string, refPaths: string[]): Map<string, string> {
  const problems = readSegmentFile(problemsPath).segments.map((s) => s[0]);
  const byRefs = new Map<string, string>();
  let i = 0;
  for (const { refs } of parallelSegments(refPaths, [])) {
    if (i >= problems.length) throw new InputError(`${problems.length} problem statements but more segments in ${refPaths[0]}`, problemsPath);
    byRefs.set(JSON.stringify(refs), problems[i++]);
  }
  if (i !== problems.length) throw new InputError(`${problems.length} problem statements but ${i} segments in ${refPaths[0]}`, problemsPath);
  return byRefs;
}

/**
 * `codegauge score`: streams the files, so memory holds per-segment statistics only, never the texts; large
 * inputs are split over worker threads.
 */
export function addScoreCommand(program: Command, io: CliIo): void {
  program
    .command('score')
    .description('score one or more systems against references with one or more metrics')
    .requiredOption('--refs <file>', 'reference file (.txt: one segment per line; .jsonl: one JSON string, or array of strings, per line); repeat for several references', collect)
    .requiredOption('--hyps <file>', 'hypothesis file of one system (.txt or .jsonl); repeat for several systems', collect)
    .requiredOption('--metric <spec>', 'metric spec, name or name:key=value,...; repeat for several metrics', collect)
    .option('--lang <language>', 'language of the code for codebleu/ruby when a spec has no lang= (default: from file names such as hyps.py.jsonl)')
    .option('--segments', 'also output sentence-level scores (JSON)', false)
    .option('--confidence', 'bootstrap 95% confidence interval of each score, as sacrebleu --confidence', false)
    .option('--confidence-n <n>', 'bootstrap samples for --confidence', integerIn('--confidence-n', 1, 1_000_000), 1000)
    .option('--seed <n>', 'random seed for --confidence', integerIn('--seed', 0, 2 ** 32 - 1), 12345)
    .option('--write-ngrams <file>', 'crystalbleu: write the ignored n-grams here (read back with crystalbleu:ngrams=FILE)')
    .option('--problems <file>', 'codebertscore sources=yes: the problem statements, one JSON string per line (.jsonl) or one per line (.txt), in segment order', existingFile('--problems'))
    .option('--jobs <n>', 'worker threads for large inputs (results are identical for any number)', integerIn('--jobs', 1, 64), Math.min(availableParallelism(), 8))
    .option('--max-work <steps>', 'work bound of one segment\'s LCS for rougeL/rougeLsum, in word steps (2^N or a number; default 2^34, about a minute on one core); past it the segment is refused, never approximated', workSteps('--max-work'))
    .addOption(formatOption())
    .addHelpText('after', `\nMetrics and their keys:\n${describeMetrics()}\n`)
    .action(async (opts: ScoreCliOptions, command: Command) => {
      onlyWith(command, ['--confidence-n', '--seed'], '--confidence', opts.confidence);
      const language = opts.lang ?? inferLanguage([...opts.hyps, ...opts.refs]);
      const parsed = opts.metric.map((m) => parseSpec(m, { language })); // validate specs before reading any data
      // Checked before scoring, so a long run is not wasted on a usage error.
      const crystal = parsed.filter((s) => s.name === 'crystalbleu').length;
      if (opts.writeNgrams && crystal !== 1) throw new UsageError(`--write-ngrams needs exactly one crystalbleu metric, got ${crystal}`);
      const taken = new Set<string>();
      const systems = opts.hyps.map((path) => systemName(path, taken));
      const progress = io.progress?.('scoring');
      let used: readonly Metric<any>[] = [];
      const problems = opts.problems ? problemsByReferences(opts.problems, opts.refs) : undefined;
      const report = await scoreFiles({
        refPaths: opts.refs,
        hypPaths: opts.hyps,
        systems,
        specs: opts.metric,
        language,
        maxWork: opts.maxWork,
        workers: opts.jobs,
        onMetrics: (metrics) => {
          used = metrics;
          for (const metric of metrics) {
            if (specName(metric.spec) !== 'codebertscore') continue;
            const m = metric as CodeBertScore;
            if (problems) m.setSourceOf((refs) => problems.get(JSON.stringify(refs)));
            // A first use on a networked machine downloads the model: show it on a terminal.
            if (process.stderr.isTTY && !process.env.CI) m.setProgress((line) => io.err(`\r${line}   `));
          }
        },
        segments: opts.segments,
        confidence: opts.confidence ? { samples: opts.confidenceN, seed: opts.seed } : undefined,
        // The total is unknown while streaming: show the count so far.
        onSegment: progress && ((done) => void (done % 1000 === 0 && progress(done, 0))),
      });
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatScoreTable(report));
      // After the scores are out, so that an unwritable path loses nothing already computed.
      if (opts.writeNgrams) {
        const metric = used.find((m) => specName(m.spec) === 'crystalbleu') as CrystalBleu;
        const path = opts.writeNgrams;
        writing(path, () => writeFileSync(path, JSON.stringify(metric.ngramsFile(), null, 1) + '\n'));
      }
    });
}
