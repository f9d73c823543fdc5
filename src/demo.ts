import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { writing } from './errors.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { compareSystems } from './api/compare.js';
import { completeness, sbcBleu } from './sbc/score.js';
import { metaEvaluate } from './api/meta.js';
import { renderReport } from './report/html.js';
import type { ReportInput } from './report/inputs.js';
import { scoreSystems } from './api/score.js';

/**
 * The one-command demo on data bundled in the repository, with no network and no LLM: every reference metric on
 * the five CoNaLa systems of "Out of the BLEU", paired bootstrap against the baseline, agreement of each metric
 * with the human grades, the SBC paper's recorded runs re-scored, and one HTML report of it all.
 */
const DATA = fileURLToPath(new URL('../data/', import.meta.url));
const SYSTEMS = ['baseline', 'tranx-annot', 'best-tranx', 'best-tranx-rerank', 'codex'];
export const DEMO_METRICS = ['bleu:tok=code', 'chrf', 'rougeL:tok=code', 'meteor:tok=code', 'codebleu:lang=python', 'ruby:lang=python'];

const jsonl = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

export interface DemoResult {
  report: string;
  files: string[];
  best_agreeing: string[];
  notes: string[];
}

export async function runDemo(options: { outDir: string; log?: (line: string) => void; onProgress?: (done: number, total: number) => void }): Promise<DemoResult> {
  const log = options.log ?? (() => {});
  // Fail before the work, not after it: the folder must exist and take a file.
  writing(options.outDir, () => {
    mkdirSync(options.outDir, { recursive: true });
    writeFileSync(join(options.outDir, '.codegauge-write-test'), '');
    rmSync(join(options.outDir, '.codegauge-write-test'));
  });
  const files: string[] = [];
  const write = (name: string, value: unknown) => {
    const path = join(options.outDir, name);
    writing(path, () => writeFileSync(path, JSON.stringify(value, null, 2) + '\n'));
    files.push(path);
    return path;
  };

  const references = jsonl(join(DATA, 'conala/refs.jsonl')) as string[][];
  const systems = SYSTEMS.map((name) => ({ name, hypotheses: jsonl(join(DATA, `conala/${name}.jsonl`)) as string[] }));
  log(`scoring ${systems.length} CoNaLa systems x ${references.length} intents with ${DEMO_METRICS.join(', ')}`);
  const scores = await scoreSystems({ references, systems, metrics: DEMO_METRICS, segments: true });
  const scorePath = write('scores.json', scores);

  log('paired bootstrap resampling against the baseline (1000 samples)');
  const comparison = await compareSystems({ references, systems, metrics: DEMO_METRICS, test: 'bs', onProgress: options.onProgress });
  const comparePath = write('compare.json', comparison);

  log('agreement of each metric with the human grades (M-MSR aggregated, 0-4)');
  const graded = JSON.parse(gunzipSync(readFileSync(join(DATA, 'codegen-metrics/conala-all-grades.json.gz'))).toString()) as Record<string, unknown>[];
  const truth = graded.flatMap((item) => SYSTEMS.map((s) => item[`grade-${s}`] as number));
  const groups = graded.flatMap((_, i) => SYSTEMS.map(() => String(i)));
  const metricValues = DEMO_METRICS.map((metric) => ({
    name: metric,
    values: graded.flatMap((_, i) => SYSTEMS.map((s) => scores.systems.find((x) => x.name === s)!.scores.find((m) => m.metric === metric)!.segments![i])),
  }));
  const meta = metaEvaluate({ truthName: 'human grade', truth, metrics: metricValues, groups, samples: 1000 });
  const points = Object.fromEntries(metricValues.map((m) => [m.name, m.values.map((v, i) => [truth[i], Number(v.toFixed(2))] as [number, number])]));
  const metaPath = write('meta.json', { ...meta, points });
  const bestAgreeing = [...meta.metrics].sort((a, b) => b.corpus.kendall_b.tau - a.corpus.kendall_b.tau).slice(0, 2).map((m) => m.metric);

  log('re-scoring the SBC paper\'s recorded reverse-generated requirements (Codellama 13B, Deepseek Coder 6.7B)');
  const sbcRows: Record<string, unknown>[] = [];
  // The recorded CSVs lack the layer and technology of each question; the dataset has them.
  const dataset = new Map((JSON.parse(readFileSync(join(DATA, 'sbc/dataset.json'), 'utf8')) as Record<string, unknown>[]).map((q) => [Number(q.question_id), q]));
  for (const [model, file] of [['codellama:13b', 'SBC_scores_summary-codellama.csv.gz'], ['deepseek-coder:6.7b', 'SBC_scores_summary_deepseek.csv.gz']]) {
    const rows = parse(gunzipSync(readFileSync(join(DATA, 'sbc', file))), { columns: true }) as Record<string, string>[];
    for (const r of rows) {
      const c = completeness(r.input_requirement, r.reverse_generated_requirement);
      sbcRows.push({
        question_id: Number(r.question_id),
        model,
        iteration: Number(r.batch),
        implementation_layer: dataset.get(Number(r.question_id))?.implementation_layer ?? '',
        programming_language: dataset.get(Number(r.question_id))?.programming_language ?? '',
        input_requirement: r.input_requirement,
        reverse_generated_requirement: r.reverse_generated_requirement,
        // No embedding model is bundled: the semantic part (and so the final score) is the paper's recorded value.
        final_accuracy_score: Number(r.final_accuracy_score),
        semantic_similarity: Number(r.semantic_similarity),
        semantic_source: 'recorded',
        bleu_score: sbcBleu(r.input_requirement, r.reverse_generated_requirement),
        completeness_score: c.score,
        missing_elements: c.missing,
        extra_elements: c.extra,
      });
    }
  }
  const sbcPath = join(options.outDir, 'sbc-rescored.jsonl');
  writing(sbcPath, () => writeFileSync(sbcPath, sbcRows.map((r) => JSON.stringify(r)).join('\n') + '\n'));
  files.push(sbcPath);

  const notes = [
    `Metrics agreeing best with the human grades (corpus Kendall τ-b): ${bestAgreeing.join(' and ')}.`,
    'SBC: no embedding model is bundled and the demo does not download one, so the semantic similarity and final SBC scores shown are the values recorded in the paper\'s runs; BLEU, completeness and the missing/extra elements are recomputed by codegauge. Run `codegauge sbc score --embed local` on a machine with network access (or --embed-model-dir) to recompute all of it.',
  ];
  const inputs: ReportInput[] = [
    { kind: 'score', path: scorePath, data: scores },
    { kind: 'compare', path: comparePath, data: comparison },
    { kind: 'meta', path: metaPath, data: { ...meta, points } },
    { kind: 'sbc', path: sbcPath, rows: sbcRows as Record<string, any>[] },
  ];
  const report = join(options.outDir, 'report.html');
  writing(report, () => writeFileSync(report, renderReport(inputs, { title: 'codegauge demo: CoNaLa ("Out of the BLEU") and SBC', notes })));
  files.push(report);
  return { report, files, best_agreeing: bestAgreeing, notes };
}
