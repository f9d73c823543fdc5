import { describe, expect, it } from 'vitest';
import { meanAggregation, mmsr, type Answer } from '../src/stats/aggregation.js';
import { readJson } from './helpers.js';

describe('human grade aggregation', () => {
  for (const [name, dataset, models] of [
    ['CoNaLa', 'conala', ['grade-baseline', 'grade-tranx-annot', 'grade-best-tranx', 'grade-best-tranx-rerank', 'grade-codex']],
    ['HearthStone', 'hs', ['grade-gcnn', 'grade-nl2code']],
  ] as const) {
    it(`M-MSR reproduces every published ${name} aggregated grade`, () => {
      const human = readJson<any[]>(`data/codegen-metrics/${dataset}-human-grades.json.gz`);
      const aggregated = readJson<any[]>(`data/codegen-metrics/${dataset}-aggregated-grades.json.gz`);
      const n = human.length;
      // The task numbering of the original notebook: item i of model j is task i + j * n.
      const answers: Answer[] = [];
      human.forEach((item, i) => models.forEach((m, j) => Object.entries<number>(item[m]).forEach(([worker, label]) => answers.push({ task: i + j * n, worker, label }))));
      const { labels, skills } = mmsr(answers);
      const wrong: string[] = [];
      human.forEach((_, i) => models.forEach((m, j) => {
        if (labels.get(i + j * n) !== aggregated[i][m]) wrong.push(`${i} ${m}`);
      }));
      expect(wrong).toEqual([]);
      for (const s of skills.values()) expect(Number.isFinite(s)).toBe(true);
    });
  }
  it('mean aggregation', () => {
    const m = meanAggregation([{ task: 'a', worker: 'x', label: 4 }, { task: 'a', worker: 'y', label: 1 }, { task: 'b', worker: 'x', label: 2 }]);
    expect([...m]).toEqual([['a', 2.5], ['b', 2]]);
  });
});
