import { InputError, writing } from '../errors.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricScore, ScoreReport } from '../api/score.js';
import { VERSION } from '../version.js';
import type { Judge, JudgeContext, JudgeOutcome } from './judge.js';

/**
 * Runs a judge over systems x segments x repeats and reports in the shape of `codegauge score`: one metric entry
 * per system whose score is the mean 0-100 grade over the samples the judge could grade, with per-segment values
 * (null where the judge failed), the failures counted and, with repeats, the spread of the grades.
 */
export interface JudgeRunInput {
  judge: Judge;
  modelName: string;
  context: JudgeContext;
  references: readonly (readonly string[])[];
  systems: readonly { name: string; hypotheses: readonly string[] }[];
  problems?: readonly string[];
  language: string;
  repeat?: number;
  explainDir?: string;
  onProgress?: (done: number, total: number) => void;
}

export function judgeSignature(judge: Judge, modelName: string, temperature: number, repeat: number): string {
  return `${judge.method}|model:${modelName}|temp:${temperature}|prompt:${judge.promptVersion}|${judge.settings}|repeat:${repeat}|version:${VERSION}`;
}

const safeName = (s: string) => s.replace(/[^\w.-]+/g, '_');

export async function judgeSystems(input: JudgeRunInput): Promise<ScoreReport> {
  const repeat = input.repeat ?? 1;
  const n = input.references.length;
  for (const s of input.systems) {
    if (s.hypotheses.length !== n) throw new InputError(`system ${s.name}: ${s.hypotheses.length} hypotheses but ${n} references`);
  }
  if (input.problems && input.problems.length !== n) throw new InputError(`${input.problems.length} problems but ${n} references`);
  const total = input.systems.length * n * repeat;
  let done = 0;
  input.onProgress?.(0, total);
  const signature = judgeSignature(input.judge, input.modelName, input.context.temperature, repeat);
  const report: ScoreReport = { kind: 'judge', version: VERSION, systems: [] };
  for (const system of input.systems) {
    const outcomes: JudgeOutcome[][] = await Promise.all(
      system.hypotheses.map((code, i) =>
        Promise.all(
          Array.from({ length: repeat }, async (_, k) => {
            // Repeats differ by seed, so each is its own request (and its own cache entry).
            const seed = repeat > 1 ? (input.context.seed ?? 0) + k : input.context.seed;
            const outcome = await input.judge.judge({ code, reference: input.references[i][0], problem: input.problems?.[i], language: input.language }, { ...input.context, seed });
            input.onProgress?.(++done, total);
            return outcome;
          }),
        ),
      ),
    );
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
    const entry: MetricScore = {
      metric: input.judge.method,
      name: input.judge.method,
      score: graded.length ? graded.reduce((a, b) => a + b, 0) / graded.length : NaN,
      signature,
      details: { graded: graded.length, failures, ...(repeat > 1 ? { mean_variance: varianceCount ? varianceSum / varianceCount : 0 } : {}) },
      segments,
    };
    if (errors.length) (entry as MetricScore & { errors: string[] }).errors = errors;
    report.systems.push({ name: system.name, scores: [entry] });
    if (input.explainDir) {
      const dir = join(input.explainDir, safeName(system.name));
      writing(dir, () => mkdirSync(dir, { recursive: true }));
      outcomes.forEach((runs, i) =>
        writing(join(dir, `${i + 1}.json`), () => writeFileSync(join(dir, `${i + 1}.json`), JSON.stringify({ segment: i + 1, signature, runs: runs.map((r) => ({ grade: r.grade, error: r.error, ...r.trace })) }, null, 2) + '\n')),
      );
    }
  }
  return report;
}
