import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { clopperPearsonInterval, minimumDetectableDifference, wilsonInterval } from '../src/stats/intervals.js';
import { mcnemarExact, signTest, wilcoxonSignedRank } from '../src/stats/tests.js';
import { passAtK } from '../src/exec/pass-at-k.js';
import { cli, vector } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-compare-input-'));
});
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const jsonl = (name: string, rows: object[]) => file(name, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

/** 40 problems; the system passes a few more than the baseline. Exec rows in the order exec writes them. */
const N = 40;
const basePass = Array.from({ length: N }, (_, i) => i % 3 !== 0);
const sysPass = basePass.map((p, i) => (i % 7 === 0 ? true : i % 11 === 5 ? false : p));
const execRows = (system: string, passes: boolean[], order: number[]) =>
  order.map((i, index) => ({ system, index, task_id: `HumanEval/${i}`, status: passes[i] ? 'passed' : 'failed', passed: passes[i], duration_ms: 5 }));

describe('compare --input on pass/fail results', () => {
  it('aligns exec results on task_id, not line order: pass rates, Wilson, Clopper-Pearson, McNemar', async () => {
    const order = Array.from({ length: N }, (_, i) => i);
    const a = jsonl('base.jsonl', execRows('base', basePass, order));
    const b = jsonl('sys.jsonl', execRows('sys', sysPass, order.slice().reverse()));
    const r = await cli('compare', '--input', a, '--input', b, '--test', 'mcnemar', '--format', 'json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.kind).toBe('compare');
    expect(json.id).toBe('task_id');
    const [base, sys] = json.systems;
    expect(base.name).toBe('base');
    const passes = (xs: boolean[]) => xs.filter(Boolean).length;
    expect(base.scores[0].score).toBeCloseTo((100 * passes(basePass)) / N, 12);
    expect(sys.scores[0].score).toBeCloseTo((100 * passes(sysPass)) / N, 12);
    expect(sys.scores[0].pass_fail).toBe(true);
    const w = wilsonInterval(passes(sysPass), N);
    const cp = clopperPearsonInterval(passes(sysPass), N);
    expect(sys.scores[0].wilson).toEqual([100 * w[0], 100 * w[1]]);
    expect(sys.scores[0].clopper_pearson).toEqual([100 * cp[0], 100 * cp[1]]);
    const b01 = basePass.filter((p, i) => p && !sysPass[i]).length;
    const c10 = basePass.filter((p, i) => !p && sysPass[i]).length;
    expect(sys.scores[0].p_value).toBe(mcnemarExact(b01, c10).pValue);
    expect(base.scores[0].p_value).toBeNull();
    expect(base.scores[0].diff).toBeNull();
    expect(sys.scores[0].diff.value).toBeCloseTo(sys.scores[0].score - base.scores[0].score, 12);
    expect(sys.scores[0].diff.ci[0]).toBeLessThanOrEqual(sys.scores[0].diff.value);
    const d = basePass.map((p, i) => 100 * (Number(sysPass[i]) - Number(p)));
    expect(sys.scores[0].mde).toBeCloseTo(minimumDetectableDifference(d)!, 12);
    expect(Object.keys(sys.scores[0]).sort()).toEqual(
      ['metric', 'score', 'mean', 'ci', 'p_value', 'p_adjusted', 'diff', 'mde', 'n', 'units', 'pass_fail', 'wilson', 'clopper_pearson'].sort(),
    );
    const table = await cli('compare', '--input', a, '--input', b);
    expect(table.code).toBe(0);
    expect(table.out).toContain('Baseline: base');
    expect(table.out).toContain('Wilson');
  });

  it('lists the ids missing on either side', async () => {
    const a = jsonl('miss-a.jsonl', execRows('a', basePass, [0, 1, 2, 3]));
    const b = jsonl('miss-b.jsonl', execRows('b', basePass, [0, 1, 2, 9]));
    const r = await cli('compare', '--input', a, '--input', b);
    expect(r.code).toBe(2);
    expect(r.err).toContain('miss-b.jsonl');
    expect(r.err).toContain('1 id(s) only in a');
    expect(r.err).toContain('HumanEval/3');
    expect(r.err).toContain('1 id(s) only in b: HumanEval/9');
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });

  it('--cluster resamples whole problems of several samples; --fail-if-worse exits 1 naming the system', async () => {
    const rows = (system: string, rate: (i: number, k: number) => boolean) =>
      Array.from({ length: 30 }, (_, i) => Array.from({ length: 4 }, (_, k) => ({ system, task_id: `t${i}`, passed: rate(i, k) }))).flat();
    const a = jsonl('cl-a.jsonl', rows('good', (i, k) => (i + k) % 4 !== 0));
    const b = jsonl('cl-b.jsonl', rows('bad', (i, k) => (i + k) % 4 === 0 && i % 2 === 0));
    const r = await cli('compare', '--input', a, '--input', b, '--cluster', 'task_id', '--fail-if-worse', '5', '--format', 'json');
    expect(r.code).toBe(1);
    expect(r.err).toContain('bad is worse than the baseline good on passed by more than 5');
    const json = JSON.parse(r.out);
    expect(json.cluster).toBe('task_id');
    expect(json.systems[1].scores[0].units).toBe(30);
    expect(json.systems[1].scores[0].n).toBe(120);
    expect(json.fail_if_worse.failures).toHaveLength(1);
    // pass@k over problems: pass@1 is the pass rate; pass@5 needs 5 samples of each problem.
    const pk = await cli('compare', '--input', a, '--input', b, '--cluster', 'task_id', '--pass-at', '1', '--pass-at', '2', '--pass-at', '5', '--format', 'json');
    const pass = JSON.parse(pk.out).systems[1].scores[0];
    expect(pass.pass_at['1'].value).toBeCloseTo(pass.score, 12);
    const perProblem = Array.from({ length: 30 }, (_, i) => [0, 1, 2, 3].filter((k) => (i + k) % 4 === 0 && i % 2 === 0).length);
    expect(pass.pass_at['2'].value).toBeCloseTo((100 * perProblem.reduce((s, c) => s + passAtK(4, c, 2)!, 0)) / 30, 12);
    expect(pass.pass_at['2'].ci[0]).toBeLessThanOrEqual(pass.pass_at['2'].value);
    expect(pass.pass_at['2'].diff.value).toBeLessThan(0);
    expect(pass.pass_at['5']).toBeNull();
    expect(pk.err).toContain('pass@5 need at least that many samples');
    const ok = await cli('compare', '--input', a, '--input', b, '--cluster', 'task_id', '--fail-if-worse', '90');
    expect(ok.code).toBe(0);
    expect((await cli('compare', '--input', a, '--input', b, '--cluster', 'task_id', '--test', 'mcnemar')).err).toContain('--test mcnemar pairs single rows');
  });
});

describe('compare --input on scores', () => {
  it('same draws and p-value rule as --refs/--hyps (ROUGE, segment-averaged, from score --segments)', async () => {
    const toy = vector('sacrebleu.json').generated.paired_tests_toy;
    const refs = file('toy-refs.txt', toy.refs_streams[0].join('\n') + '\n');
    const base = file('toy-base.txt', toy.baseline.join('\n') + '\n');
    const sys = file('toy-sys.txt', toy.system.join('\n') + '\n');
    const old = JSON.parse((await cli('compare', '--refs', refs, '--hyps', base, '--hyps', sys, '--metric', 'rougeL', '--paired-bs', '--format', 'json')).out);
    const sa = await cli('score', '--refs', refs, '--hyps', base, '--metric', 'rougeL', '--segments', '--format', 'json');
    const sb = await cli('score', '--refs', refs, '--hyps', sys, '--metric', 'rougeL', '--segments', '--format', 'json');
    const a = file('toy-base.json', sa.out);
    const b = file('toy-sys.json', sb.out);
    const r = await cli('compare', '--input', a, '--input', b, '--format', 'json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.id).toBe('segment');
    for (const s of [0, 1]) {
      const o = old.systems[s].scores[0];
      const n = json.systems[s].scores[0];
      expect(n.score).toBeCloseTo(o.score, 12);
      expect(n.mean).toBeCloseTo(o.mean, 12);
      expect(n.ci).toBeCloseTo(o.ci, 12);
      expect(n.p_value).toBe(o.p_value);
    }
    const ar = JSON.parse((await cli('compare', '--refs', refs, '--hyps', base, '--hyps', sys, '--metric', 'rougeL', '--paired-ar', '--samples', '500', '--format', 'json')).out);
    const nar = JSON.parse((await cli('compare', '--input', a, '--input', b, '--test', 'paired-ar', '--samples', '500', '--format', 'json')).out);
    expect(nar.systems[1].scores[0].p_value).toBe(ar.systems[1].scores[0].p_value);
  });

  it('paired-ar over few differing items: tables show the smallest attainable p-value, JSON keeps sacrebleu\'s', async () => {
    const rows = (name: string, bump: number) => file(name, Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: i, s: 50 + (i < bump ? 10 : 0) })).join('\n') + '\n');
    const a = rows('ar-a.jsonl', 0);
    for (const [differing, star] of [[7, '*'], [4, ' ']] as const) {
      const b = rows(`ar-b${differing}.jsonl`, differing);
      const json = JSON.parse((await cli('compare', '--input', a, '--input', b, '--metric', 's', '--test', 'paired-ar', '--format', 'json')).out);
      const entry = json.systems[1].scores[0];
      expect(entry.p_value).toBe(1 / 10001); // every trial ties or falls short of the observed difference
      expect(entry.p_min).toBe(1 / 2 ** differing);
      const table = await cli('compare', '--input', a, '--input', b, '--metric', 's', '--test', 'paired-ar');
      const line = table.out.split('\n').find((l) => l.startsWith(`ar-b${differing}`))!;
      // 1/128 = 0.0078 is still below 0.05 (a star); 1/16 = 0.0625 is not, whatever the estimate says.
      expect(line).toContain(`≥${(1 / 2 ** differing).toFixed(4)}${star}`);
      expect(line).not.toContain('1.0e-4');
      expect(table.out).toContain(`approximate randomization over ${differing} differing unit(s) has only ${2 ** differing} distinct patterns`);
    }
  });

  it('judge JSON: segments are the ids, ungraded (null) segments are left out with a warning', async () => {
    const report = (name: string, segments: (number | null)[]) => JSON.stringify({ kind: 'judge', systems: [{ name, scores: [{ metric: 'ice', name: 'ice', score: 0, segments }] }] });
    const segs = Array.from({ length: 35 }, (_, i) => ((i * 7) % 5) * 25);
    const a = file('judge-a.json', report('a', segs));
    const b = file('judge-b.json', report('b', segs.map((x, i) => (i === 3 ? null : i % 4 === 0 ? Math.min(100, x + 25) : x))));
    const r = await cli('compare', '--input', a, '--input', b, '--format', 'json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.id).toBe('segment');
    expect(json.systems[1].scores[0].n).toBe(34);
    expect(r.err).toContain('ice: 1 row(s) without a value in some input were left out (ids 4)');
  });

  it('SBC results: question_id, one system per model, iterations as samples; Wilcoxon and sign tests; Holm', async () => {
    const rows = (model: string, shift: number) =>
      Array.from({ length: 12 }, (_, q) =>
        Array.from({ length: 3 }, (_, it) => ({ question_id: q, model, iteration: it, status: 'ok', final_accuracy_score: Math.min(1, 0.4 + ((q * 7 + it * 3) % 10) / 20 + shift * ((q + it) % 3)) })),
      ).flat();
    const a = jsonl('sbc-a.jsonl', rows('m1', 0));
    const b = jsonl('sbc-b.jsonl', rows('m2', 0.05));
    const c = jsonl('sbc-c.jsonl', rows('m3', 0.01));
    const r = await cli('compare', '--input', a, '--input', b, '--input', c, '--test', 'wilcoxon', '--adjust', 'holm', '--format', 'json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.systems.map((s: { name: string }) => s.name)).toEqual(['m1', 'm2', 'm3']);
    const value = (rs: { final_accuracy_score: number }[]) => rs.map((x) => x.final_accuracy_score);
    const va = value(rows('m1', 0));
    const vb = value(rows('m2', 0.05));
    const vc = value(rows('m3', 0.01));
    const pb = wilcoxonSignedRank(vb.map((x, i) => x - va[i])).pValue;
    const pc = wilcoxonSignedRank(vc.map((x, i) => x - va[i])).pValue;
    expect(json.systems[1].scores[0].p_value).toBe(pb);
    expect(json.systems[2].scores[0].p_value).toBe(pc);
    const [lo, hi] = [Math.min(pb, pc), Math.max(pb, pc)];
    const holm = [Math.min(1, 2 * lo), Math.min(1, Math.max(2 * lo, hi))];
    expect([json.systems[1].scores[0].p_adjusted, json.systems[2].scores[0].p_adjusted].sort()).toEqual(holm.sort());
    expect(json.systems[1].scores[0].pass_fail).toBeUndefined();
    const sign = JSON.parse((await cli('compare', '--input', a, '--input', b, '--test', 'sign', '--format', 'json')).out);
    expect(sign.systems[1].scores[0].p_value).toBe(signTest(vb.map((x, i) => x - va[i])).pValue);
  });

  it('plain CSV with --id and --metric; bad values and unknown columns are one clear error', async () => {
    const a = file('a.csv', 'item,score\nx,1.5\ny,2\nz,3\n');
    const b = file('b.csv', 'item,score\nz,3.5\ny,2\nx,1\n');
    const r = await cli('compare', '--input', a, '--input', b, '--id', 'item', '--metric', 'score', '--format', 'json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.systems.map((s: { name: string }) => s.name)).toEqual(['a', 'b']);
    expect(json.systems[1].scores[0].score).toBeCloseTo(6.5 / 3, 12);
    expect(r.err).toContain('only 3 paired rows');
    const bad = file('bad.csv', 'item,score\nx,1\ny,oops\nz,3\n');
    const e = await cli('compare', '--input', a, '--input', bad, '--id', 'item', '--metric', 'score');
    expect(e.code).toBe(2);
    expect(e.err).toContain('bad.csv:3: column "score": expected a number, got "oops"');
    const col = await cli('compare', '--input', a, '--input', b, '--id', 'nope', '--metric', 'score');
    expect(col.code).toBe(2);
    expect(col.err).toContain('no column "nope"');
    const noMetric = await cli('compare', '--input', a, '--input', b, '--id', 'item');
    expect(noMetric.code).toBe(2);
    expect(noMetric.err).toContain('--metric');
  });

  it('usage: --input options without --input, --input with --hyps, one input', async () => {
    const a = file('u.csv', 'id,score\nx,1\n');
    const f = file('u.txt', 'a\n');
    expect((await cli('compare', '--refs', f, '--hyps', f, '--hyps', f, '--metric', 'bleu', '--paired-bs', '--test', 'sign')).err).toContain('--test does nothing without --input');
    expect((await cli('compare', '--input', a, '--hyps', f)).err).toContain('cannot be combined');
    expect((await cli('compare', '--input', a, '--metric', 'score')).err).toContain('at least one system');
    expect((await cli('compare', '--input', a, '--input', a, '--metric', 'score', '--test', 'wilcoxon', '--samples', '10')).err).toContain('--samples does nothing');
  });
});
