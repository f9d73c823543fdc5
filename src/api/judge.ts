import { InputError, UsageError, writing } from '../errors.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricScore, ScoreReport } from './score.js';
import { VERSION } from '../version.js';
import { signedModelName } from '../llm/local-model.js';
import type { ModelSpec } from '../llm/model-spec.js';
import { COMBINATIONS, krippendorffAlphaInterval, selfConsistency, type Combination } from '../judges/ensemble.js';
import type { Judge, JudgeContext, JudgeOutcome } from '../judges/judge.js';

/**
 * Runs a judge over systems x segments x repeats and reports in the shape of `codegauge score`: one metric entry
 * per system whose score is the mean 0-100 grade over the samples the judge could grade, with per-segment values
 * (null where the judge failed), the failures counted and, with repeats, the spread of the grades and the judge's
 * self-consistency.
 *
 * With several judge models (an ensemble) every model grades every sample through the same client and cache, and
 * each system gets one entry per judge (`<method>@<model>`) followed by the judges' per-sample mean, median and
 * majority grade (`<method>-mean`, `-median`, `-majority`), whose details carry the judges' agreement
 * (Krippendorff's alpha, interval level, judges as raters, over this system's samples and over all systems').
 */
export interface JudgeModel {
  /** As given on the command line, e.g. `openai:gpt-4o-mini`; names the judge in metrics and signatures. */
  name: string;
  spec: ModelSpec;
}

export interface JudgeRunInput {
  judge: Judge;
  modelName: string;
  context: JudgeContext;
  /** Several judge models (an ensemble); replaces `modelName` and `context.model` when given. */
  models?: readonly JudgeModel[];
  references: readonly (readonly string[])[];
  systems: readonly { name: string; hypotheses: readonly string[] }[];
  problems?: readonly string[];
  language: string;
  repeat?: number;
  explainDir?: string;
  onProgress?: (done: number, total: number) => void;
}

/**
 * `grading`: `logprob` when grades are the probability-weighted mean of the grade tokens (G-Eval), else `text`.
 * `localModel`: for a llama: or hf: model, its identity (`gguf(sha256=...,quant=...,ctx=...)`, after the name) and
 * `grammar:json-schema`: its structured replies were decoded under the schema's grammar, not merely asked for.
 */
export function judgeSignature(judge: Judge, modelName: string, temperature: number, repeat: number, grading: 'text' | 'logprob' = 'text', localModel?: string): string {
  const model = localModel ? `${signedModelName(modelName, localModel)}|grammar:json-schema` : modelName;
  return `${judge.method}|model:${model}|temp:${temperature}|prompt:${judge.promptVersion}|${judge.settings}|grade:${grading}|repeat:${repeat}|version:${VERSION}`;
}

const safeName = (s: string) => s.replace(/[^\w.-]+/g, '_');

/** One judge's grade of each segment: the mean over its repeats, NaN where every repeat failed. */
function segmentGrades(outcomes: readonly (readonly JudgeOutcome[])[]): number[] {
  return outcomes.map((runs) => {
    const grades = runs.map((r) => r.grade).filter((g): g is number => g !== null);
    return grades.length ? grades.reduce((a, b) => a + b, 0) / grades.length : NaN;
  });
}

function judgeEntry(metric: string, signature: string, outcomes: readonly (readonly JudgeOutcome[])[], repeat: number, logprobs: boolean): MetricScore {
  const segments: number[] = [];
  const errors: string[] = [];
  let failures = 0;
  let varianceSum = 0;
  let varianceCount = 0;
  outcomes.forEach((runs, i) => {
    const grades = runs.map((r) => r.grade).filter((g): g is number => g !== null);
    if (grades.length === 0) {
      failures++;
      segments.push(NaN); // written as null in JSON
      errors.push(`segment ${i + 1}: ${runs[0]?.error ?? 'no grade'}`);
      return;
    }
    const mean = grades.reduce((a, b) => a + b, 0) / grades.length;
    segments.push(mean * 25);
    if (grades.length > 1) {
      varianceSum += grades.reduce((a, g) => a + (g * 25 - mean * 25) ** 2, 0) / (grades.length - 1);
      varianceCount++;
    }
  });
  const graded = segments.filter((x) => !Number.isNaN(x));
  const details: Record<string, number> = { graded: graded.length, failures };
  if (repeat > 1) {
    details.mean_variance = varianceCount ? varianceSum / varianceCount : 0;
    const ok = outcomes.map((runs) => runs.filter((r) => r.grade !== null));
    const stability = selfConsistency(
      ok.map((runs) => runs.map((r) => r.grade!)),
      ok.map((runs) => runs.map((r) => r.textGrade ?? Math.round(r.grade!))),
    );
    details.self_consistency = stability.agreement;
    details.mean_std = stability.meanStd;
    details.mean_range = stability.meanRange;
  }
  if (logprobs) details.logprob_grades = outcomes.reduce((n, runs) => n + runs.filter((r) => r.grade !== null && r.gradeSource === 'logprob').length, 0);
  const entry: MetricScore = {
    metric,
    name: metric,
    score: graded.length ? graded.reduce((a, b) => a + b, 0) / graded.length : NaN,
    signature,
    details,
    segments,
  };
  if (errors.length) (entry as MetricScore & { errors: string[] }).errors = errors;
  return entry;
}

/** The judges' failures in a report (ensemble entries, which carry `judges` in their details, are not counted). */
export function judgeFailures(report: ScoreReport): number {
  return report.systems.reduce((n, s) => n + s.scores.reduce((m, x) => m + (x.details && x.details.judges === undefined ? (x.details.failures ?? 0) : 0), 0), 0);
}

export async function judgeSystems(input: JudgeRunInput): Promise<ScoreReport> {
  const repeat = input.repeat ?? 1;
  const n = input.references.length;
  for (const s of input.systems) {
    if (s.hypotheses.length !== n) throw new InputError(`system ${s.name}: ${s.hypotheses.length} hypotheses but ${n} references`);
  }
  if (input.problems && input.problems.length !== n) throw new InputError(`${input.problems.length} problems but ${n} references`);
  const models: readonly JudgeModel[] = input.models?.length ? input.models : [{ name: input.modelName, spec: input.context.model }];
  const names = models.map((m) => m.name);
  if (new Set(names).size !== names.length) throw new UsageError(`the same judge model is given twice: ${names.join(', ')}`);
  const ensemble = models.length > 1;
  const logprobs = input.context.logprobs === true;
  const grading = logprobs ? 'logprob' : 'text';
  const total = models.length * input.systems.length * n * repeat;
  let done = 0;
  input.onProgress?.(0, total);
  // A local model's file is resolved here (an hf: one downloaded), before any request: a file that is not GGUF
  // stops the run at once.
  const identities = await Promise.all(models.map((m) => input.context.client.modelSignature(m.spec)));
  const signatures = models.map((m, i) => judgeSignature(input.judge, m.name, input.context.temperature, repeat, grading, identities[i]));
  const method = input.judge.method;
  // outcomes[system][model][segment][repeat]
  const outcomes: JudgeOutcome[][][][] = [];
  for (const system of input.systems) {
    outcomes.push(
      await Promise.all(
        models.map((model) =>
          Promise.all(
            system.hypotheses.map((code, i) =>
              Promise.all(
                Array.from({ length: repeat }, async (_, k) => {
                  // Repeats differ by seed, so each is its own request (and its own cache entry).
                  const seed = repeat > 1 ? (input.context.seed ?? 0) + k : input.context.seed;
                  const sample = { code, reference: input.references[i][0], problem: input.problems?.[i], language: input.language };
                  const outcome = await input.judge.judge(sample, { ...input.context, model: model.spec, seed });
                  input.onProgress?.(++done, total);
                  return outcome;
                }),
              ),
            ),
          ),
        ),
      ),
    );
  }
  // Agreement over every system's samples: units are (system, segment), raters the judges.
  const perSystemGrades = outcomes.map((bySystem) => bySystem.map(segmentGrades)); // [system][model][segment]
  const units = (grades: number[][]) => Array.from({ length: n }, (_, i) => grades.map((g) => (Number.isNaN(g[i]) ? null : g[i])));
  const alphaAll = ensemble ? krippendorffAlphaInterval(perSystemGrades.flatMap(units)) : NaN;
  const report: ScoreReport = { kind: 'judge', version: VERSION, systems: [] };
  input.systems.forEach((system, s) => {
    const scores = models.map((model, m) => judgeEntry(ensemble ? `${method}@${model.name}` : method, signatures[m], outcomes[s][m], repeat, logprobs));
    if (ensemble) {
      const alpha = krippendorffAlphaInterval(units(perSystemGrades[s]));
      for (const combination of Object.keys(COMBINATIONS) as Combination[]) {
        const segments = Array.from({ length: n }, (_, i) => {
          const grades = perSystemGrades[s].map((g) => g[i]).filter((g) => !Number.isNaN(g));
          return grades.length ? COMBINATIONS[combination](grades) * 25 : NaN;
        });
        const graded = segments.filter((x) => !Number.isNaN(x));
        const metric = `${method}-${combination}`;
        scores.push({
          metric,
          name: metric,
          score: graded.length ? graded.reduce((a, b) => a + b, 0) / graded.length : NaN,
          signature: `${metric}|judges:${models.map((m, i) => signedModelName(m.name, identities[i])).join('+')}${identities.some(Boolean) ? '|grammar:json-schema' : ''}|temp:${input.context.temperature}|prompt:${input.judge.promptVersion}|${input.judge.settings}|grade:${grading}|repeat:${repeat}|version:${VERSION}`,
          details: { graded: graded.length, failures: n - graded.length, judges: models.length, krippendorff_alpha: alpha, krippendorff_alpha_all: alphaAll },
          segments,
        });
      }
    }
    report.systems.push({ name: system.name, scores });
    if (input.explainDir) {
      const dir = join(input.explainDir, safeName(system.name));
      writing(dir, () => mkdirSync(dir, { recursive: true }));
      const runs = (m: number, i: number) => outcomes[s][m][i].map((r) => ({ grade: r.grade, error: r.error, ...(r.gradeSource ? { grade_source: r.gradeSource, text_grade: r.textGrade } : {}), ...r.trace }));
      for (let i = 0; i < n; i++) {
        const file = join(dir, `${i + 1}.json`);
        const content = ensemble
          ? { segment: i + 1, judges: models.map((model, m) => ({ model: model.name, signature: signatures[m], runs: runs(m, i) })) }
          : { segment: i + 1, signature: signatures[0], runs: runs(0, i) };
        writing(file, () => writeFileSync(file, JSON.stringify(content, null, 2) + '\n'));
      }
    }
  });
  return report;
}
