import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { meanAggregation, mmsr, type Answer } from '../src/stats/aggregation.js';
import { cli, readJson } from './helpers.js';

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
  it('codegauge aggregate lists items in natural order (0, 1, 2, 10, not 0, 1, 10, 2), with either method', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codegauge-aggregate-'));
    const path = join(dir, 'grades.jsonl');
    const ids = [10, 2, 1, 0, 11, 'HumanEval/10', 'HumanEval/9'];
    writeFileSync(path, ids.flatMap((t, i) => ['a', 'b'].map((w) => JSON.stringify({ task: t, worker: w, label: i % 3 }))).join('\n') + '\n');
    for (const method of ['mmsr', 'mean']) {
      const r = await cli('aggregate', '--input', path, '--task', 'task', '--worker', 'worker', '--label', 'label', '--method', method);
      expect(r.code, r.err).toBe(0);
      expect(r.out.split('\n').filter((l) => l.includes('\t')).map((l) => l.split('\t')[0])).toEqual(['0', '1', '2', '10', '11', 'HumanEval/9', 'HumanEval/10']);
    }
  });
  it('mean aggregation', () => {
    const m = meanAggregation([{ task: 'a', worker: 'x', label: 4 }, { task: 'a', worker: 'y', label: 1 }, { task: 'b', worker: 'x', label: 2 }]);
    expect([...m]).toEqual([['a', 2.5], ['b', 2]]);
  });
});
