import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { NltkBleu, parseMetric, scoreCorpus } from '../src/index.js';
import { ROOT, pyRound } from './helpers.js';

/** The SBC paper's recorded runs: bleu_score = round(sentence_bleu([input.split()], reverse.split()), 4). */
function rows(file: string): Record<string, string>[] {
  return parse(gunzipSync(readFileSync(join(ROOT, 'data/sbc', file))), { columns: true });
}

describe('nltk-bleu reproduces the SBC recorded bleu_score', () => {
  for (const file of ['SBC_scores_summary-codellama.csv.gz', 'SBC_scores_summary_deepseek.csv.gz']) {
    it(file, () => {
      const metric = new NltkBleu();
      const data = rows(file);
      expect(data.length).toBe(270);
      const wrong: string[] = [];
      for (const row of data) {
        const stats = new Float64Array(metric.statsSize);
        metric.segmentStatistics(row.reverse_generated_requirement, metric.prepareReferences([row.input_requirement]), stats, 0);
        const got = pyRound(metric.fraction(stats), 4);
        if (got !== Number(row.bleu_score)) wrong.push(`batch ${row.batch} q${row.question_id}: ${got} != ${row.bleu_score}`);
      }
      expect(wrong).toEqual([]);
    });
  }

  it('is 0 without a unigram match and uses the smallest double for other zero precisions', () => {
    const m = parseMetric('nltk-bleu');
    expect(scoreCorpus(m, ['x y z'], [['a b c']]).score).toBe(0);
    // 2 unigram matches of 2, no bigram: exp(0.25*log(1) + 0.75*log(2.2250738585072014e-308)).
    expect(scoreCorpus(m, ['a c'], [['a b c']]).score).toBeCloseTo(100 * Math.exp(1 - 3 / 2) * Math.exp(0.75 * Math.log(2.2250738585072014e-308)), 300);
  });
});
