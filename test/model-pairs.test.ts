import { describe, expect, it } from 'vitest';
import { Bleu, corpusStatistics, prepareAll } from '../src/index.js';
import { agreementByBin, bootstrapStudy, dropDuplicateSystems, synthesizeSystems, type StudyData } from '../src/stats/model-pairs.js';
import { PythonRandom } from '../src/compat/python-random.js';
import { readJson } from './helpers.js';

/** The study's input from a codegen-metrics `*-all-grades.json`: M-MSR grades, per-snippet values, corpus BLEU. */
function studyData(file: string, systems: string[]): StudyData {
  const items = readJson<any[]>(file);
  const bleu = new Bleu({ tokenize: 'code' });
  const refInfos = prepareAll(bleu, items.map((x) => x.snippet));
  const data: StudyData = {
    items: items.length,
    systems: systems.slice(),
    outputs: {},
    human: { name: 'grade', perItem: {} },
    metrics: [...['rougel', 'codebleu', 'chrf', 'meteor', 'ruby'].map((name) => ({ name, perItem: {} as Record<string, number[]> })), { name: 'bleu', corpus: { metric: bleu, statistics: {} } }],
  };
  for (const s of systems) {
    data.outputs[s] = items.map((x) => x[s]);
    data.human.perItem![s] = items.map((x) => x[`grade-${s}`]);
    for (const m of data.metrics) if (m.perItem) m.perItem[s] = items.map((x) => x[`${m.name}-${s}`]);
    data.metrics[5].corpus!.statistics[s] = corpusStatistics(bleu, items.map((x) => x[s]), refInfos);
  }
  return data;
}

/** The study on one data set, run once per file and shared by the tests that read it (it takes seconds). */
const studies = new Map<string, { data: StudyData; result: ReturnType<typeof bootstrapStudy> }>();
function study(file: string, systems: readonly string[]) {
  let done = studies.get(file);
  if (!done) {
    const data = studyData(file, [...systems]);
    synthesizeSystems(data, [...systems]);
    dropDuplicateSystems(data);
    done = { data, result: bootstrapStudy(data, { samples: 500, pythonRandom: new PythonRandom(42) }) };
    studies.set(file, done);
  }
  return done;
}

describe('"Out of the BLEU" model-pair study, replayed with Python\'s random.seed(42)', () => {
  for (const [name, file, systems, scoresFile, pairsFile] of [
    ['CoNaLa', 'data/codegen-metrics/conala-all-grades.json.gz', ['baseline', 'tranx-annot', 'best-tranx', 'best-tranx-rerank', 'codex'], 'data/codegen-metrics/conala-model-scores.json.gz', 'data/codegen-metrics/conala-model-pairs.json.gz'],
    ['HearthStone', 'data/codegen-metrics/hs-all-grades.json.gz', ['gcnn', 'nl2code'], 'data/codegen-metrics/hs-model-scores.json.gz', 'data/codegen-metrics/hs-model-pairs.json.gz'],
  ] as const) {
    it(`${name}: every published per-model median and CI, and every pairwise win rate`, () => {
      const { data, result } = study(file, systems);
      const expectedScores = readJson<Record<string, Record<string, number>>>(scoresFile);
      expect(data.systems).toEqual(Object.keys(expectedScores));
      const wrong: string[] = [];
      for (const [s, values] of Object.entries(expectedScores)) {
        for (const [k, v] of Object.entries(values)) if (Math.abs(result.scores[s][k] - v) > 1e-12) wrong.push(`${s} ${k}`);
      }
      const expectedPairs = readJson<Record<string, Record<string, Record<string, number>>>>(pairsFile);
      for (const [a, row] of Object.entries(expectedPairs)) {
        for (const [b, values] of Object.entries(row)) {
          for (const [k, v] of Object.entries(values)) if (Math.abs(result.pairs[a][b][k] - v) > 1e-12) wrong.push(`${a}>${b} ${k}`);
        }
      }
      expect(wrong.slice(0, 5)).toEqual([]);
    });
  }

  it('bins the CoNaLa pairs by metric difference and counts agreement with the graders', () => {
    const systems = ['baseline', 'tranx-annot', 'best-tranx', 'best-tranx-rerank', 'codex'];
    const { data, result } = study('data/codegen-metrics/conala-all-grades.json.gz', systems);
    const bins = agreementByBin(result, data.systems, 'grade', ['bleu', 'chrf', 'rougel'], [2, 5, 10]);
    for (const metric of ['bleu', 'chrf', 'rougel']) {
      expect(bins[metric].map((b) => b.bin)).toEqual(['<2', '[2,5)', '[5,10)', '>=10']);
      expect(bins[metric].reduce((s, b) => s + b.pairs, 0)).toBe((82 * 81) / 2);
      for (const b of bins[metric]) expect(b.agree + b.metric_only + b.human_only + b.opposite).toBe(b.pairs);
      // The paper's point: differences of 10+ points agree with humans far more often than those under 2.
      const rate = (b: (typeof bins)[string][number]) => b.agree / Math.max(1, b.pairs);
      expect(rate(bins[metric][3])).toBeGreaterThan(rate(bins[metric][0]));
    }
  });
});
