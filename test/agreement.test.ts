import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { addAgreementCommand } from '../src/cli/agreement.js';
import { exitCodeOf } from '../src/cli/main.js';
import { auroc, cohenKappa, roganGladen } from '../src/stats/agreement.js';
import { krippendorffAlpha } from '../src/stats/krippendorff.js';
import { cli } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-agreement-'));
});
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const jsonl = (name: string, rows: object[]) => file(name, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

/** The `agreement` command on its own program (main.ts registers it beside the others). */
async function agreementCli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io = { out: (s: string) => void (out += s), err: (s: string) => void (err += s) };
  const program = new Command('codegauge').exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  addAgreementCommand(program, io);
  for (const sub of program.commands) sub.exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  try {
    await program.parseAsync(['agreement', ...argv], { from: 'user' });
    return { code: 0, out, err };
  } catch (e) {
    return { code: exitCodeOf(e, io, false), out, err };
  }
}

const _ = null;
/** Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x 12 units, missing values. */
const KRIPPENDORFF_2011 = [
  [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
  [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
  [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
  [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
];

describe('codegauge agreement', () => {
  it("Krippendorff's worked example from a CSV with empty cells, every level", async () => {
    const csv = 'A,B,C,D\n' + KRIPPENDORFF_2011[0].map((_, u) => KRIPPENDORFF_2011.map((r) => r[u] ?? '').join(',')).join('\n') + '\n';
    const path = file('k2011.csv', csv);
    for (const [level, expected] of [['nominal', 0.743], ['ordinal', 0.815], ['interval', 0.849], ['ratio', 0.797]] as const) {
      const r = await agreementCli('--input', path, '--rater', 'A', '--rater', 'B', '--rater', 'C', '--rater', 'D', '--level', level, '--format', 'json');
      expect(r.code).toBe(0);
      const json = JSON.parse(r.out);
      expect(json.kind).toBe('agreement');
      expect(json.krippendorff_alpha.toFixed(3)).toBe(expected.toFixed(3));
      expect(json).toMatchObject({ level, units: 11, rows: 12, ratings: 41, raters: ['A', 'B', 'C', 'D'] });
    }
    const table = await agreementCli('--input', path, '--rater', 'A', '--rater', 'B', '--level', 'ordinal');
    expect(table.out).toContain("Krippendorff's alpha (ordinal)");
  });
  it('nominal ratings may be words; bad ratings are one clear error', async () => {
    const path = jsonl('words.jsonl', [{ a: 'yes', b: 'yes' }, { a: 'no', b: 'no' }, { a: 'yes', b: 'no' }, { a: 'no', b: null }]);
    const r = JSON.parse((await agreementCli('--input', path, '--rater', 'a', '--rater', 'b', '--level', 'nominal', '--format', 'json')).out);
    expect(r.krippendorff_alpha).toBeCloseTo(krippendorffAlpha([['yes', 'yes'], ['no', 'no'], ['yes', 'no']], 'nominal').alpha, 15);
    const bad = await agreementCli('--input', path, '--rater', 'a', '--rater', 'b', '--level', 'interval');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('words.jsonl:1: column "a": expected a number, got "yes"');
    const neg = jsonl('neg.jsonl', [{ a: 1, b: 2 }, { a: -1, b: 2 }]);
    expect((await agreementCli('--input', neg, '--rater', 'a', '--rater', 'b', '--level', 'ratio')).err).toContain('neg.jsonl:2: column "a": ratio ratings cannot be negative');
    expect((await agreementCli('--input', neg, '--rater', 'a', '--level', 'ratio')).err).toContain('at least two --rater');
    expect((await agreementCli('--input', path, '--rater', 'zz', '--rater', 'a', '--level', 'nominal')).err).toContain('no column "zz"');
    expect((await agreementCli('--input', neg, '--rater', 'a', '--rater', 'b')).code).toBe(2);
  });
});

describe('meta --agreement', () => {
  it('a judge score against 0/1 execution: AUROC, confusion, Rogan-Gladen over unlabelled rows', async () => {
    const labelled = Array.from({ length: 40 }, (_, i) => ({ passed: i % 2, judge: (i % 2 ? 0.55 : 0.1) + ((i * 37) % 10) / 25 }));
    const unlabelled = Array.from({ length: 60 }, (_, i) => ({ passed: null, judge: ((i * 13) % 20) / 20 }));
    const path = jsonl('judge.jsonl', [...labelled, ...unlabelled]);
    const r = await cli('meta', '--input', path, '--truth', 'passed', '--metric-column', 'judge', '--agreement', '--threshold', '0.5', '--samples', '200', '--format', 'json');
    expect(r.code).toBe(0);
    const a = JSON.parse(r.out).metrics[0].agreement;
    const truth = labelled.map((x) => x.passed);
    const judge = labelled.map((x) => x.judge);
    expect(a.auroc.value).toBeCloseTo(auroc(truth, judge), 15);
    expect(a.auroc.ci[0]).toBeLessThanOrEqual(a.auroc.value);
    expect(a.cohen_kappa).toBeNull();
    expect(a.krippendorff_alpha).toBeNull();
    expect(a.threshold).toBe(0.5);
    const tp = labelled.filter((x) => x.passed === 1 && x.judge >= 0.5).length;
    const fp = labelled.filter((x) => x.passed === 0 && x.judge >= 0.5).length;
    expect(a.confusion).toEqual({ tp, fp, tn: 20 - fp, fn: 20 - tp });
    expect(a.sensitivity).toBe(tp / 20);
    expect(a.specificity).toBe((20 - fp) / 20);
    const all = [...labelled, ...unlabelled].map((x) => x.judge);
    const rg = roganGladen({ positives: all.filter((v) => v >= 0.5).length, n: 100, sensitivity: tp / 20, specificity: (20 - fp) / 20, labelledPositives: 20, labelledNegatives: 20 });
    expect(a.corrected_pass_rate.value).toBeCloseTo(100 * rg.value!, 12);
    expect(a.corrected_pass_rate).toMatchObject({ n: 100, labelled: 40 });
    const youden = JSON.parse((await cli('meta', '--input', path, '--truth', 'passed', '--metric-column', 'judge', '--agreement', '--samples', '0', '--format', 'json')).out);
    expect(youden.metrics[0].agreement.auroc.ci).toBeNull();
    expect(youden.metrics[0].agreement.threshold).toBeTypeOf('number');
    const table = await cli('meta', '--input', path, '--truth', 'passed', '--metric-column', 'judge', '--agreement', '--samples', '0');
    expect(table.out).toContain('best Youden');
    expect(table.out).toContain('Rogan-Gladen');
    // The threshold is printed rounded (the JSON keeps it exact).
    const t = youden.metrics[0].agreement.threshold;
    expect(table.out).toContain(`at threshold ${Number(t.toPrecision(4))} (best Youden)`);
  });
  it("a 0-4 judge against 0/1 truth: kappa and alpha of the judge binarised at the stated threshold, not of 0-4 against 0/1", async () => {
    const passed = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1];
    const judge = [0, 1, 2, 1, 3, 2, 3, 4, 4, 2, 3, 4];
    const path = jsonl('judge04.jsonl', passed.map((p, i) => ({ passed: p, judge: judge[i] })));
    const json = JSON.parse((await cli('meta', '--input', path, '--truth', 'passed', '--metric-column', 'judge', '--agreement', '--threshold', '3', '--samples', '0', '--format', 'json')).out);
    const a = json.metrics[0].agreement;
    const verdicts = judge.map((g) => (g >= 3 ? 1 : 0));
    expect(a.kappa_threshold).toBe(3);
    expect(a.cohen_kappa).toBeCloseTo(cohenKappa(passed, verdicts), 15);
    expect(a.cohen_kappa).not.toBeCloseTo(cohenKappa(passed, judge), 3); // what the scales mixed up gave
    expect(a.krippendorff_level).toBe('nominal');
    expect(a.krippendorff_alpha).toBeCloseTo(krippendorffAlpha(passed.map((p, i) => [p, verdicts[i]]), 'nominal').alpha, 15);
    const table = await cli('meta', '--input', path, '--truth', 'passed', '--metric-column', 'judge', '--agreement', '--threshold', '3', '--samples', '0');
    expect(table.out).toContain('agreement of "passed" with judge >= 3  kappa');
  });
  it('grades on different scales (1-5 against 0-4): no kappa or alpha, and a note saying why', async () => {
    const person = [1, 2, 3, 4, 5, 5, 4, 3];
    const judge = [0, 1, 2, 3, 4, 4, 3, 2];
    const path = jsonl('scales.jsonl', person.map((p, i) => ({ person: p, judge: judge[i] })));
    const json = JSON.parse((await cli('meta', '--input', path, '--truth', 'person', '--metric-column', 'judge', '--agreement', '--samples', '0', '--format', 'json')).out);
    const m = json.metrics[0];
    expect([m.agreement.cohen_kappa, m.agreement.krippendorff_alpha]).toEqual([null, null]);
    expect(m.notes).toContain("agreement: the truth's grades run 1 to 5, the metric's 0 to 4: no kappa or alpha across different scales");
  });
  it("a judge's 0-4 grades against a person's: kappa (three weightings) and ordinal alpha", async () => {
    const person = [0, 1, 2, 3, 4, 4, 3, 2, 1, 0, 2, 3];
    const judge = [0, 1, 3, 3, 4, 3, 3, 2, 0, 0, 2, 4];
    const path = jsonl('grades.jsonl', person.map((p, i) => ({ person: p, judge: judge[i] })));
    const r = await cli('meta', '--input', path, '--truth', 'person', '--metric-column', 'judge', '--agreement', '--samples', '0', '--format', 'json');
    const a = JSON.parse(r.out).metrics[0].agreement;
    expect(a.cohen_kappa).toBeCloseTo(cohenKappa(person, judge), 15);
    expect(a.kappa_quadratic).toBeCloseTo(cohenKappa(person, judge, 'quadratic'), 15);
    expect(a.krippendorff_level).toBe('ordinal');
    expect(a.krippendorff_alpha).toBeCloseTo(krippendorffAlpha(person.map((p, i) => [p, judge[i]]), 'ordinal').alpha, 15);
    expect(a.auroc).toBeNull();
    expect(a.confusion).toBeNull();
    expect((await cli('meta', '--input', path, '--truth', 'person', '--metric-column', 'judge', '--threshold', '2')).err).toContain('--threshold does nothing without --agreement');
  });
});
