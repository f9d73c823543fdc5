import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decompose } from '../src/code/decompose.js';
import { krippendorffAlphaInterval, majority, median, selfConsistency } from '../src/judges/ensemble.js';
import { logprobGrade } from '../src/judges/judge.js';
import { locateScore } from '../src/judges/replies.js';
import { krippendorffAlpha } from '../src/stats/krippendorff.js';
import { gradeLogprobs, refuseSchemas, startFakeLlmServer, type FakeServer } from './fixtures/fake-llm-server.js';
import { cli } from './helpers.js';

/** Sturdier judges: JSON schemas with fallback, G-Eval logprob grades, ensembles, DSA-CQE's separate storage update, repeat stability. */
let dir: string;
const servers: FakeServer[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-judge-sturdy-'));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});
async function server(options: Parameters<typeof startFakeLlmServer>[0]) {
  const s = await startFakeLlmServer(options);
  servers.push(s);
  return s;
}

const KNAPSACK = `def knapsack(weights, values, cap):
    dp = [0] * (cap + 1)
    for i in range(len(weights)):
        for w in range(cap, weights[i] - 1, -1):
            dp[w] = max(dp[w], dp[w - weights[i]] + values[i])
    return dp[cap]
`;
const SUM = 'def knapsack(weights, values, cap):\n    total = 0\n    for v in values:\n        total += v\n    return total\n';

/** A DSA-CQE judge model: structured replies for every step; the grade 4 when the semantics agree, else 1. */
function dsaScript(body: any): string {
  const user: string = body.messages.at(-1).content;
  const lines = /lines (\d+-\d+)/.exec(user)?.[1];
  const names = /such as ([^)]*)\)/.exec(user)?.[1].split(', ') ?? [];
  const entities = names.map((name) => ({ name, description: `${name} as of lines ${lines}` }));
  if (user.startsWith('Analyse one part')) return JSON.stringify(user.includes('"entities"') ? { summary: `part ${lines}`, entities } : { summary: `part ${lines}` });
  if (user.startsWith('Update the semantic storage')) return JSON.stringify({ entities });
  if (user.startsWith('Describe the semantics')) return JSON.stringify({ semantics: user.includes('max(') ? 'best value per weight' : 'sum of values' });
  if (user.includes('List every behavioural difference')) {
    const [, ref, gen] = /reference program:\n(.*)\n\nSemantics of the generated program:\n(.*)\n/.exec(user)!;
    return JSON.stringify({ differences: ref === gen ? [] : [`${gen} instead of ${ref}`] });
  }
  if (user.includes('Grade the generated program')) return user.includes('(none)') ? '{"score": 4, "reason": "same"}' : '{"score": 1, "reason": "different"}';
  throw new Error(`unexpected prompt: ${user.slice(0, 80)}`);
}

let refs: string;
let hyps: string;
beforeAll(() => {
  refs = join(dir, 'refs.py.jsonl');
  hyps = join(dir, 'hyps.py.jsonl');
  writeFileSync(refs, JSON.stringify(KNAPSACK) + '\n' + JSON.stringify(KNAPSACK) + '\n');
  writeFileSync(hyps, JSON.stringify(SUM) + '\n' + JSON.stringify(KNAPSACK) + '\n');
});
const prompt = (q: { body: any }) => q.body.messages.at(-1).content as string;

describe('DSA-CQE storage update: separate (the paper, default) and merged', () => {
  it('separate: one analysis and one storage-update request per unit; merged: one request per unit', async () => {
    const unitsRef = (await decompose('python', KNAPSACK)).length;
    const unitsGen = (await decompose('python', SUM)).length;
    const counts: Record<string, number> = {};
    for (const mode of ['separate', 'merged'] as const) {
      const s = await server({ reply: dsaScript });
      // One sample (segment 1: SUM against KNAPSACK); segment 2 is left out so nothing is shared between samples.
      const one = join(dir, `one-${mode}.py.jsonl`);
      const oneRef = join(dir, `one-ref-${mode}.py.jsonl`);
      writeFileSync(one, JSON.stringify(SUM) + '\n');
      writeFileSync(oneRef, JSON.stringify(KNAPSACK) + '\n');
      const args = ['judge', '--method', 'dsa', '--model', 'openai:j', '--base-url', s.url, '--refs', oneRef, '--hyps', one, '--format', 'json', '--cache-file', join(dir, `storage-${mode}.sqlite`)];
      const r = await cli(...args, ...(mode === 'merged' ? ['--storage-update', 'merged'] : []));
      expect(r.code).toBe(0);
      const score = JSON.parse(r.out).systems[0].scores[0];
      expect(score.segments).toEqual([25]);
      expect(score.signature).toContain(`|calls:statements|storage:${mode}|grade:text|`);
      counts[mode] = s.requests.length;
      const updates = s.requests.filter((q) => prompt(q).startsWith('Update the semantic storage'));
      if (mode === 'separate') {
        expect(updates).toHaveLength(unitsRef + unitsGen);
        // The update follows its unit's analysis and sees what it computes.
        const i = s.requests.findIndex((q) => prompt(q).startsWith('Update the semantic storage'));
        expect(prompt(s.requests[i - 1])).toMatch(/^Analyse one part/);
        expect(prompt(s.requests[i - 1])).not.toContain('"entities"');
        expect(prompt(s.requests[i])).toContain('What the part computes: part ');
        // The storage still reaches later prompts: the outer loop sees what the inner assignment made of dp.
        const outer = s.requests.find((q) => prompt(q).startsWith('Analyse one part') && prompt(q).includes('a for unit (lines 3-5)'))!;
        expect(prompt(outer)).toContain('- dp: dp as of lines 5-5');
      } else {
        expect(updates).toHaveLength(0);
        expect(s.requests.filter((q) => prompt(q).startsWith('Analyse one part')).every((q) => prompt(q).includes('"entities"'))).toBe(true);
      }
    }
    // Per sample: separate 2·U_r + 2·U_g + 4, merged U_r + U_g + 4.
    expect(unitsRef).toBe(5);
    expect(unitsGen).toBe(4);
    expect(counts).toEqual({ separate: 2 * (unitsRef + unitsGen) + 4, merged: unitsRef + unitsGen + 4 });
  });

  it('--storage-update is a usage error without --method dsa', async () => {
    const r = await cli('judge', '--method', 'ice', '--model', 'openai:j', '--base-url', 'http://127.0.0.1:9/v1', '--refs', refs, '--hyps', hyps, '--storage-update', 'merged');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--storage-update does nothing without --method dsa');
  });
});

describe('structured replies', () => {
  it('asks for a JSON schema at every DSA step; a refusing server is asked once, then in JSON mode for the rest of the run', async () => {
    const accepting = await server({ reply: dsaScript });
    const args = (url: string, cache: string) => ['judge', '--method', 'dsa-simple', '--model', 'openai:j', '--base-url', url, '--refs', refs, '--hyps', hyps, '--format', 'json', '--cache-file', join(dir, cache)];
    const a = await cli(...args(accepting.url, 'schema-a.sqlite'));
    expect(a.code).toBe(0);
    expect(new Set(accepting.requests.map((q) => q.body.response_format.json_schema.name))).toEqual(new Set(['program_semantics', 'differences', 'grade']));
    const grade = accepting.requests.find((q) => q.body.response_format.json_schema.name === 'grade')!.body.response_format.json_schema;
    expect(grade).toEqual({
      name: 'grade',
      strict: true,
      schema: { type: 'object', properties: { score: { type: 'integer', enum: [0, 1, 2, 3, 4] }, reason: { type: 'string', maxLength: 300 } }, required: ['score', 'reason'], additionalProperties: false },
    });
    expect(a.err).not.toContain('refused');

    const refusing = await server({ reply: dsaScript, refuse: refuseSchemas });
    const b = await cli(...args(refusing.url, 'schema-b.sqlite'));
    expect(b.code).toBe(0);
    expect(JSON.parse(b.out).systems[0].scores[0].segments).toEqual(JSON.parse(a.out).systems[0].scores[0].segments);
    expect(refusing.requests.filter((q) => q.body.response_format.type === 'json_schema')).toHaveLength(1);
    expect(refusing.requests.length).toBe(accepting.requests.length + 1);
    expect(b.err).toContain(`${refusing.url} refused JSON schemas (asked in JSON mode instead) for openai:j`);
  });

  it('Ollama native: DSA steps send `format: <schema>`', async () => {
    const s = await server({ reply: dsaScript, models: ['coder'] });
    const r = await cli('judge', '--method', 'dsa-simple', '--model', 'ollama:coder', '--ollama-host', s.url.replace(/\/v1$/, ''), '--refs', refs, '--hyps', hyps, '--format', 'json', '--cache-file', join(dir, 'ollama.sqlite'));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).systems[0].scores[0].segments).toEqual([25, 100]);
    expect(s.requests.every((q) => q.path === '/api/chat' && q.body.format?.type === 'object' && q.body.format.additionalProperties === false)).toBe(true);
  });

  it('ice: free text first; an unreadable reply is asked again for a JSON schema, whose grade is read', async () => {
    const s = await server({ reply: (body) => (body.response_format ? '{"evaluation": "it sums", "score": 1}' : 'It looks plausible, hard to say.') });
    const r = await cli('judge', '--method', 'ice', '--model', 'openai:j', '--base-url', s.url, '--refs', refs, '--hyps', hyps, '--format', 'json', '--cache-file', join(dir, 'ice-reask.sqlite'));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).systems[0].scores[0].segments).toEqual([25, 25]);
    expect(s.requests.map((q) => `${q.body.messages.length}:${q.body.response_format?.json_schema?.name ?? 'text'}`).sort()).toEqual(['2:text', '2:text', '4:evaluated_grade', '4:evaluated_grade']);
    expect(prompt(s.requests.find((q) => q.body.messages.length === 4)!)).toContain('Answer again with {"evaluation"');
  });
});

describe('logprob-weighted grades (G-Eval)', () => {
  it('reads the grade token and weights the grades 0-4 by their probabilities', () => {
    const reply = '{"score": 3, "reason": "ok"}';
    const located = locateScore(reply)!;
    expect(located).toEqual({ value: 3, index: 10 });
    const tokens = gradeLogprobs(reply, '"score": ', { 3: 0.6, 2: 0.2, 4: 0.1, 1: 0.1 }).map((t) => ({ token: t.token, logprob: t.logprob, top: t.top_logprobs }));
    const g = logprobGrade(tokens, reply, located.index, 3)!;
    expect(g.grade).toBeCloseTo(0.6 * 3 + 0.2 * 2 + 0.1 * 4 + 0.1 * 1, 12);
    expect(g.distribution.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    // Other tokens among the alternatives (a quote, "10") do not count; spellings of one grade add up; renormalised.
    const mixed = [{ token: '3', logprob: Math.log(0.5), top: [{ token: '3', logprob: Math.log(0.5) }, { token: ' 3', logprob: Math.log(0.1) }, { token: '"', logprob: Math.log(0.2) }, { token: '10', logprob: Math.log(0.1) }, { token: '1', logprob: Math.log(0.1) }] }];
    expect(logprobGrade(mixed, '3', 0, 3)!.grade).toBeCloseTo((3 * 0.6 + 1 * 0.1) / 0.7, 12);
    // No logprobs, a token that does not write the grade, or tokens that do not spell the reply: no weighted grade.
    expect(logprobGrade(undefined, reply, 10, 3)).toBeNull();
    expect(logprobGrade(tokens, reply, 10, 2)).toBeNull();
    expect(logprobGrade([{ token: 'xx', logprob: 0, top: [] }, ...tokens], reply, 10, 3)).toBeNull();
    // ICE's free text: the grade after "<Aspect>:".
    expect(locateScore('Step 1: fine.\nFunctional Correctness: 2', { aspect: 'Functional Correctness' })).toEqual({ value: 2, index: 38 });
  });

  it('dsa --logprobs: the grade request asks for top_logprobs; grades are weighted; the signature says grade:logprob', async () => {
    const s = await server({
      reply: dsaScript,
      logprobs: (_, text) => (text.includes('"score": 4') ? gradeLogprobs(text, '"score": ', { 4: 0.9, 3: 0.1 }) : text.includes('"score": 1') ? gradeLogprobs(text, '"score": ', { 1: 0.5, 2: 0.5 }) : undefined),
    });
    const explain = join(dir, 'explain-logprobs');
    const r = await cli('judge', '--method', 'dsa-simple', '--model', 'openai:j', '--base-url', s.url, '--refs', refs, '--hyps', hyps, '--format', 'json', '--logprobs', '--explain', explain, '--cache-file', join(dir, 'logprobs.sqlite'));
    expect(r.code).toBe(0);
    const score = JSON.parse(r.out).systems[0].scores[0];
    // 1.5 and 3.9 on the 0-4 scale, times 25 (the first grade token "1" with p 0.5 ties with "2" at 0.5)
    expect(score.segments[0]).toBeCloseTo(37.5, 10);
    expect(score.segments[1]).toBeCloseTo(97.5, 10);
    expect(score.signature).toContain('|grade:logprob|');
    expect(score.details).toMatchObject({ graded: 2, failures: 0, logprob_grades: 2 });
    const graded = s.requests.filter((q) => q.body.logprobs);
    expect(graded.length).toBe(2);
    expect(graded.every((q) => q.body.top_logprobs === 10 && q.body.response_format.json_schema.name === 'grade')).toBe(true);
    const trace = JSON.parse(readFileSync(join(explain, 'hyps', '1.json'), 'utf8'));
    expect(trace.runs[0]).toMatchObject({ grade_source: 'logprob', text_grade: 1 });
    expect(trace.runs[0].grade_distribution).toEqual([0, 0.5, 0.5, 0, 0]);
  });

  it('ice --logprobs on Ollama; without log-probabilities from the server the written grade is kept and said so', async () => {
    const reply = (body: any) => (prompt({ body }).split('Code snippet:')[1].includes('max(') ? 'Fine.\nFunctional Correctness: 3' : 'Wrong.\nFunctional Correctness: 1');
    const s = await server({ reply, logprobs: (_, text) => gradeLogprobs(text, 'Correctness: ', { 3: 0.5, 4: 0.5, 1: 0.8, 0: 0.2 }) });
    const host = s.url.replace(/\/v1$/, '');
    const r = await cli('judge', '--method', 'ice', '--model', 'ollama:j', '--ollama-host', host, '--refs', refs, '--hyps', hyps, '--format', 'json', '--logprobs', '--cache-file', join(dir, 'ice-logprobs.sqlite'));
    expect(r.code).toBe(0);
    const score = JSON.parse(r.out).systems[0].scores[0];
    // Both grade tokens list the same alternatives (the fake server's), renormalised over the grades.
    expect(s.requests.every((q) => q.body.logprobs === true && q.body.top_logprobs === 10)).toBe(true);
    const dist3 = { 3: 0.5, 4: 0.5, 1: 0.8, 0: 0.2 };
    const total = Object.values(dist3).reduce((a, b) => a + b, 0);
    const expected = Object.entries(dist3).reduce((a, [g, p]) => a + (Number(g) * p) / total, 0) * 25;
    expect(score.segments[0]).toBeCloseTo(expected, 10);
    expect(score.segments[1]).toBeCloseTo(expected, 10);
    expect(score.details.logprob_grades).toBe(2);

    const plain = await server({ reply });
    const p = await cli('judge', '--method', 'ice', '--model', 'openai:j', '--base-url', plain.url, '--refs', refs, '--hyps', hyps, '--format', 'json', '--logprobs', '--cache-file', join(dir, 'ice-plain.sqlite'));
    expect(p.code).toBe(0);
    expect(JSON.parse(p.out).systems[0].scores[0]).toMatchObject({ segments: [25, 75], details: { logprob_grades: 0 } });
    expect(p.err).toContain('ice: the server returned no usable log-probabilities');
  });
});

describe('judge ensembles', () => {
  // Four samples; judges a, b and c grade them: a [4, 1, 3, 0], b [4, 2, 3, 2], c [2, 1, 3, 4].
  const GRADES: Record<string, number[]> = { a: [4, 1, 3, 0], b: [4, 2, 3, 2], c: [2, 1, 3, 4] };
  let eRefs: string;
  let eHyps: string;
  let eHyps2: string;
  beforeAll(() => {
    eRefs = join(dir, 'e-refs.py.jsonl');
    eHyps = join(dir, 'e-hyps.py.jsonl');
    eHyps2 = join(dir, 'e-other.py.jsonl');
    const lines = (xs: string[]) => xs.map((x) => JSON.stringify(x)).join('\n') + '\n';
    writeFileSync(eRefs, lines(['def f():\n    return 0', 'def f():\n    return 0', 'def f():\n    return 0', 'def f():\n    return 0']));
    writeFileSync(eHyps, lines(['def f():\n    return 1', 'def f():\n    return 2', 'def f():\n    return 3', 'def f():\n    return 4']));
    writeFileSync(eHyps2, lines(['def f():\n    return 1', 'def f():\n    return 1', 'def f():\n    return 1', 'def f():\n    return 1']));
  });
  const script = (body: any) => {
    const sample = Number(/return (\d)\n```\n\n(?:Evaluate|Reply)/.exec(prompt({ body }))![1]) - 1;
    return `Functional Correctness: ${GRADES[body.model][sample]}`;
  };

  it('grades with every judge through one cache; reports each judge, their mean/median/majority and Krippendorff alpha', async () => {
    const s = await server({ reply: script });
    const args = ['judge', '--method', 'ice', '--model', 'openai:a', '--model', 'openai:b', '--model', 'openai:c', '--base-url', s.url, '--refs', eRefs, '--hyps', eHyps, '--hyps', eHyps2, '--format', 'json', '--cache-file', join(dir, 'ensemble.sqlite')];
    const explain = join(dir, 'explain-ensemble');
    const r = await cli(...args, '--explain', explain);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.kind).toBe('judge');
    const trace = JSON.parse(readFileSync(join(explain, 'e-hyps', '4.json'), 'utf8'));
    expect(trace.judges.map((j: any) => [j.model, j.runs[0].grade])).toEqual([['openai:a', 0], ['openai:b', 2], ['openai:c', 4]]);
    expect(report.systems.map((x: any) => x.name)).toEqual(['e-hyps', 'e-other']);
    const [first] = report.systems;
    expect(first.scores.map((x: any) => x.metric)).toEqual(['ice@openai:a', 'ice@openai:b', 'ice@openai:c', 'ice-mean', 'ice-median', 'ice-majority']);
    const by = Object.fromEntries(first.scores.map((x: any) => [x.metric, x]));
    expect(by['ice@openai:a'].segments).toEqual([100, 25, 75, 0]);
    expect(by['ice@openai:b'].segments).toEqual([100, 50, 75, 50]);
    expect(by['ice@openai:a'].signature).toMatch(/^ice\|model:openai:a\|temp:0\|/);
    expect(by['ice-mean'].segments.map((x: number) => +x.toFixed(9))).toEqual([83.333333333, 33.333333333, 75, 50]);
    expect(by['ice-median'].segments).toEqual([100, 25, 75, 50]);
    // The last sample: 0, 2, 4 tie; the majority takes the lowest.
    expect(by['ice-majority'].segments).toEqual([100, 25, 75, 0]);
    expect(by['ice-mean'].signature).toMatch(/^ice-mean\|judges:openai:a\+openai:b\+openai:c\|temp:0\|prompt:[0-9a-f]{12}\|aspect:functional-correctness\|ref:yes\|cot:yes\|grade:text\|repeat:1\|version:/);
    // Agreement, interval level, judges as raters: this system's four samples, and all eight.
    const units = [0, 1, 2, 3].map((i) => ['a', 'b', 'c'].map((j) => GRADES[j][i]));
    const alpha = bruteAlpha(units);
    expect(by['ice-mean'].details.krippendorff_alpha).toBeCloseTo(alpha, 12);
    expect(by['ice-mean'].details.judges).toBe(3);
    const all = [...units, ...[0, 1, 2, 3].map(() => [4, 4, 2])]; // the other system: sample 1's code four times
    expect(by['ice-median'].details.krippendorff_alpha_all).toBeCloseTo(bruteAlpha(all), 12);
    // The other system repeats sample 1's code: one request per judge and distinct prompt.
    expect(s.requests).toHaveLength(3 * 4);
    // A second run sends nothing: the cache is shared by every judge.
    const again = await cli(...args);
    expect(again.out).toBe(r.out);
    expect(s.requests).toHaveLength(12);
    // The table: systems x judges.
    const table = await cli(...args.filter((a) => a !== 'json' && a !== '--format'));
    expect(table.out.split('\n')[0].split(/\s{2,}/)).toEqual(['system', 'ice@openai:a', 'ice@openai:b', 'ice@openai:c', 'ice-mean', 'ice-median', 'ice-majority']);
  });

  it('a model given twice is a usage error', async () => {
    const r = await cli('judge', '--method', 'ice', '--model', 'openai:a', '--model', 'openai:a', '--base-url', 'http://127.0.0.1:9/v1', '--refs', eRefs, '--hyps', eHyps);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--model openai:a is given twice');
  });

  it('Krippendorff alpha (interval): the 2011 worked example, continuous grades in closed form, undefined without variation', () => {
    const A = [1, 2, 3, 3, 2, 1, 4, 1, 2, null, null, null];
    const B = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, null, 3];
    const C = [null, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, null];
    const D = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, null];
    const units = A.map((_, i) => [A[i], B[i], C[i], D[i]]);
    expect(krippendorffAlphaInterval(units)).toBeCloseTo(0.849, 3);
    // Many distinct values (logprob grades): the closed form, equal to the coincidence-matrix computation.
    let seed = 7;
    const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 4;
    const continuous = Array.from({ length: 600 }, () => [rand(), rand(), rand() < 0.8 ? null : rand()]);
    expect(krippendorffAlphaInterval(continuous)).toBeCloseTo(krippendorffAlpha(continuous, 'interval').alpha, 10);
    expect(krippendorffAlphaInterval(continuous)).toBeCloseTo(bruteAlpha(continuous), 10);
    expect(krippendorffAlphaInterval([[2, 2], [2, 2]])).toBeNaN();
    expect(krippendorffAlphaInterval([[2, null], [3, NaN]])).toBeNaN();
    expect(median([1, 4, 2, 3])).toBe(2.5);
    expect(majority([2.6, 3.4, 1])).toBe(3);
  });
});

describe('repeat stability', () => {
  it('--repeat K: each judge\'s self-consistency (share of samples whose K grades agree) and mean per-sample spread', async () => {
    // Judge a: sample 1 always 3; sample 2 alternates 1/2 by seed. Judge b always agrees with itself.
    const s = await server({
      reply: (body) => {
        const second = prompt({ body }).includes('return 2');
        if (body.model === 'b') return 'Functional Correctness: 4';
        return `Functional Correctness: ${second ? 1 + (body.seed % 2) : 3}`;
      },
    });
    const r2 = join(dir, 'r-refs.py.jsonl');
    const h2 = join(dir, 'r-hyps.py.jsonl');
    writeFileSync(r2, [JSON.stringify('def f():\n    return 0'), JSON.stringify('def f():\n    return 0')].join('\n') + '\n');
    writeFileSync(h2, [JSON.stringify('def f():\n    return 1'), JSON.stringify('def f():\n    return 2')].join('\n') + '\n');
    const r = await cli('judge', '--method', 'ice', '--model', 'openai:a', '--model', 'openai:b', '--base-url', s.url, '--refs', r2, '--hyps', h2, '--repeat', '3', '--seed', '0', '--format', 'json', '--cache-file', join(dir, 'repeat.sqlite'));
    expect(r.code).toBe(0);
    const [a, b, mean] = JSON.parse(r.out).systems[0].scores;
    // a, sample 2: grades 1, 2, 1 (seeds 0, 1, 2) → 25, 50, 25 on the 0-100 scale: std 14.43…, range 25.
    const std = Math.sqrt(((25 - 100 / 3) ** 2 * 2 + (50 - 100 / 3) ** 2) / 2);
    expect(a.details.self_consistency).toBe(0.5);
    expect(a.details.mean_std).toBeCloseTo(std / 2, 12);
    expect(a.details.mean_range).toBe(12.5);
    expect(a.details.mean_variance).toBeCloseTo(std ** 2 / 2, 12);
    expect(b.details).toMatchObject({ self_consistency: 1, mean_std: 0, mean_range: 0 });
    expect(mean.details).not.toHaveProperty('self_consistency');
    expect(a.signature).toContain('|repeat:3|');
    expect(s.requests).toHaveLength(2 * 2 * 3);
  });

  it('selfConsistency counts samples with at least two grades and compares the written grades', () => {
    expect(selfConsistency([[3, 3], [2.4, 2.6], [1]], [[3, 3], [2, 3], [1]])).toEqual({ samples: 2, agreement: 0.5, meanStd: (0 + Math.sqrt(0.02) * 25) / 2, meanRange: (0 + 0.2 * 25) / 2 });
    expect(selfConsistency([[1]], [[1]]).agreement).toBeNaN();
  });
});

/** Krippendorff's alpha (interval) from its definition, over all pairs: 1 − (n−1) Σ_u Σ_{i≠j}(v_i−v_j)²/(m_u−1) / Σ_{i≠j}(v_i−v_j)². */
function bruteAlpha(units: (number | null)[][]): number {
  const pairable = units.map((u) => u.filter((v): v is number => v !== null)).filter((u) => u.length >= 2);
  const values = pairable.flat();
  const n = values.length;
  let within = 0;
  for (const u of pairable) for (let i = 0; i < u.length; i++) for (let j = 0; j < u.length; j++) if (i !== j) within += (u[i] - u[j]) ** 2 / (u.length - 1);
  let between = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) between += (values[i] - values[j]) ** 2;
  return 1 - ((n - 1) * within) / between;
}
