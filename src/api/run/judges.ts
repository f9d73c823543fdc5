import { DsaJudge } from '../../judges/dsa.js';
import { IceJudge } from '../../judges/ice.js';
import type { Judge } from '../../judges/judge.js';
import { runBatched } from '../../llm/batch.js';
import type { LlmClient } from '../../llm/client.js';
import { judgeSystems } from '../judge.js';
import type { MetricScore, ScoreReport } from '../score.js';
import { finite, writeJson, type RunContext, type RunData } from './context.js';
import type { JudgeSegments } from './types.js';

/** Stage 5: the LLM judges (the response cache in the store: a rerun with nothing changed sends no request). */
export async function judgeStage(ctx: RunContext, data: RunData): Promise<void> {
  const { config, llm } = ctx;
  for (const [i, j] of config.judges.entries()) {
    const model = llm.model(j.model, ['judges', i, 'model'], ctx.loaded);
    const judge: Judge = j.method === 'ice' ? new IceJudge({}) : new DsaJudge({ simplified: j.method === 'dsa-simple' });
    const systems = j.systems ? data.systems.filter((s) => j.systems!.includes(s.name)) : data.systems;
    ctx.log(`judging ${systems.length} system(s) with ${j.method} (${model.name})`);
    const judgeWith = (c: LlmClient) =>
      judgeSystems({
        judge,
        modelName: model.name,
        context: { client: c, model: model.spec, temperature: config.llm.temperature, seed: config.llm.seed, maxTokens: config.llm.max_tokens },
        references: data.references,
        systems,
        problems: data.problems,
        language: config.data!.lang!,
        repeat: j.repeat,
        onProgress: llm.batch ? undefined : ctx.options.onProgress?.(`judge ${j.method}`),
      });
    let report: ScoreReport;
    if (llm.batch) {
      const batched = await runBatched(judgeWith, llm.batchOptions(model, ctx.log));
      report = batched.result;
      llm.absorb(batched);
    } else report = await judgeWith(model.client);
    const name = config.judges.filter((x) => x.method === j.method).length > 1 ? `judge-${j.method}-${i + 1}.json` : `judge-${j.method}.json`;
    const path = ctx.file(name);
    writeJson(path, ctx.shard ? { ...report, ids: data.ids } : report);
      for (const s of report.systems) {
      for (const m of s.scores) {
        ctx.result.scores.push({ kind: 'judge', system: s.name, metric: m.metric, aggregation: 'mean', score: finite(m.score), ci: null, signature: m.signature });
        ctx.items.push({ kind: 'judge', system: s.name, metric: m.metric, signature: `${m.signature}|refs:${data.refsSha}`, ids: data.ids, values: (m.segments ?? []).map(finite) });
        (ctx.result.judge_segments ??= []).push(judgeSegments(s.name, m, data.ids, j.segment_threshold));
      }
    }
  }
}

/** One judge entry of a system as segments: grade, or the judge's failure with its reason. */
function judgeSegments(system: string, m: MetricScore, ids: readonly string[], threshold: number | undefined): JudgeSegments {
  // judgeEntry lists one error per failed segment, in segment order ("segment N: reason").
  const errors = ((m as MetricScore & { errors?: string[] }).errors ?? []).map((e) => e.replace(/^segment \d+: /, ''));
  let failed = 0;
  const segments = (m.segments ?? []).map((v, i) => {
    const score = finite(v);
    return score === null ? { id: ids[i], score, error: errors[failed++] ?? 'no grade' } : { id: ids[i], score };
  });
  return { system, metric: m.metric, threshold: threshold ?? null, segments };
}
