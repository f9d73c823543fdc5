import { describe, expect, it } from 'vitest';
import { Bleu, Chrf, Meteor, Rouge, codeTokens, scoreCorpus } from '../src/index.js';
import { pyRound, readJson, vector } from './helpers.js';

/**
 * Every per-snippet bleu/chrf/rougel/meteor value of the "Out of the BLEU" data, recomputed with the recipe in
 * codegen_metrics_recipes.json and compared to the 3 stored decimals.
 */
const recipes = vector('codegen_metrics_recipes.json');
const DATASETS: [string, string, string[]][] = [
  ['CoNaLa', 'data/codegen-metrics/conala-all-grades.json.gz', ['baseline', 'tranx-annot', 'best-tranx', 'best-tranx-rerank', 'codex']],
  ['HearthStone', 'data/codegen-metrics/hs-all-grades.json.gz', ['gcnn', 'nl2code']],
];

const bleu = new Bleu({ tokenize: 'code', effectiveOrder: true });
const chrf = new Chrf();
const rougeL = new Rouge('rougeL', { tokenize: 'code' });
const meteor = new Meteor({ tokenize: 'code' });

/** Value on the 0-1 scale, computed as the recipe says (max over snippets for ROUGE-L and METEOR). */
const COLUMNS: Record<string, (hyp: string, snippets: string[]) => number> = {
  bleu: (hyp, snippets) => scoreCorpus(bleu, [hyp], [snippets]).score / 100,
  chrf: (hyp, snippets) => scoreCorpus(chrf, [hyp], [snippets]).score / 100,
  rougel: (hyp, snippets) => rougeL.scoreSegment(hyp, rougeL.prepareReferences(snippets)).fmeasure,
  meteor: (hyp, snippets) => Math.max(0, ...snippets.map((s) => meteor.align(codeTokens(s), codeTokens(hyp)).score)),
};

describe('"Out of the BLEU" per-snippet metric values', () => {
  it('the recipe is the one these tests implement', () => {
    const how = recipes["how_each_column_was_computed (value = round(x,3); for per-snippet metrics: max over item['snippet'] list, starting from 0)"];
    expect(how['bleu-<model>']).toMatch(/tokenize='code'.*use_effective_order=True, all snippets as multi-refs/);
    expect(how['chrf-<model>']).toMatch(/chrF2 defaults/);
    expect(how['rougel-<model>']).toMatch(/_score_lcs\(tokenize_tranx/);
    expect(how['meteor-<model>']).toMatch(/single_meteor_score\(tokenize_tranx/);
  });

  for (const [name, file, systems] of DATASETS) {
    const items = readJson<any[]>(file);
    for (const column of Object.keys(COLUMNS)) {
      it(`${name}: ${column} for ${systems.length} systems x ${items.length} items, all to 3 decimals`, () => {
        const wrong: string[] = [];
        let checked = 0;
        for (const system of systems) {
          items.forEach((item, i) => {
            const got = pyRound(COLUMNS[column](item[system], item.snippet), 3);
            checked++;
            if (got !== item[`${column}-${system}`]) wrong.push(`${system}#${i}: ${got} != ${item[`${column}-${system}`]}`);
          });
        }
        expect(wrong).toEqual([]);
        expect(checked).toBe(systems.length * items.length);
      });
    }
  }

  it('the 0-100 corpus path gives the same METEOR segment values as the 0-1 alignment', () => {
    const items = readJson<any[]>(DATASETS[0][1]).slice(0, 50);
    const r = scoreCorpus(meteor, items.map((x) => x.codex), items.map((x) => x.snippet), { segments: true });
    items.forEach((item, i) => expect(r.segments![i]).toBeCloseTo(100 * COLUMNS.meteor(item.codex, item.snippet), 9));
  });
});
