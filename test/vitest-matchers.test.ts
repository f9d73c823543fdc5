import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../src/vitest.js'; // as a user would: import 'codegauge/vitest'
import { startFakeLlmServer, type FakeServer } from './fixtures/fake-llm-server.js';

/** codegauge/vitest used as a team would use it in its own tests. */
const SOLUTION = `from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j and abs(a - b) < threshold:
                return True
    return False
`;
const WRONG = SOLUTION.replace('abs(a - b) < threshold', 'abs(a - b) > threshold');

describe('toPassTests', () => {
  it('a correct solution passes HumanEval/0; a wrong one fails with the status in the message', async () => {
    await expect(SOLUTION).toPassTests({ benchmark: 'humaneval', task: 'HumanEval/0' });
    await expect(WRONG).not.toPassTests({ benchmark: 'humaneval', task: 'HumanEval/0' });
    await expect(expect(WRONG).toPassTests({ benchmark: 'humaneval', task: 'HumanEval/0' })).rejects.toThrow(/expected the code to pass the tests of HumanEval\/0: failed/);
  });
});

describe('toScoreAtLeast', () => {
  const ref = 'function add(a: number, b: number): number {\n  return a + b;\n}\n';
  it('passes at or above the threshold; the message shows the score, the threshold and the signature', async () => {
    await expect(ref).toScoreAtLeast('codebleu:lang=ts', ref, 99);
    await expect('let x = 1;').not.toScoreAtLeast('chrf', ref, 40);
    await expect(expect('let x = 1;').toScoreAtLeast('chrf', ref, 40)).rejects.toThrow(/expected chrf score \d+\.\d\d to be at least 40 \(nrefs:1\|case:mixed/);
  });
});

describe('toBeJudgedAtLeast', () => {
  let server: FakeServer;
  const REF = 'def f(xs):\n    return sorted(xs)\n';
  beforeAll(async () => {
    // A DSA-CQE judge model: the semantics differ when the code does not sort.
    server = await startFakeLlmServer({
      reply: (body) => {
        const user: string = body.messages.at(-1).content;
        if (user.startsWith('Analyse one part')) return JSON.stringify(user.includes('"entities"') ? { summary: 'part', entities: [] } : { summary: 'part' });
        if (user.startsWith('Update the semantic storage')) return JSON.stringify({ entities: [] });
        if (user.startsWith('Describe the semantics')) return JSON.stringify({ semantics: user.includes('sorted(') ? 'sorts the list' : 'returns the list unchanged' });
        if (user.includes('List every behavioural difference')) {
          const [, ref, gen] = /reference program:\n(.*)\n\nSemantics of the generated program:\n(.*)\n/.exec(user)!;
          return JSON.stringify({ differences: ref === gen ? [] : [`${gen} instead of ${ref}`] });
        }
        if (user.includes('Grade the generated program')) return user.includes('(none)') ? '{"score": 4, "reason": "same"}' : '{"score": 1, "reason": "different"}';
        throw new Error(`unexpected prompt: ${user.slice(0, 80)}`);
      },
    });
  });
  afterAll(() => server.close());

  it('grades with the judge; a failure shows the score, the threshold and the differences found', async () => {
    const judge = { method: 'dsa-simple' as const, model: 'openai:judge', reference: REF, baseUrl: server.url };
    await expect(REF).toBeJudgedAtLeast(judge, 75);
    const bad = 'def f(xs):\n    return xs\n';
    await expect(bad).not.toBeJudgedAtLeast(judge, 75);
    await expect(expect(bad).toBeJudgedAtLeast(judge, 75)).rejects.toThrow(
      /expected dsa-simple score 25\.00 \(grade 1\/4 by openai:judge\) to be at least 75\ndifferences found:\n {2}- returns the list unchanged instead of sorts the list/,
    );
  });
});

describe('the codegauge/vitest export', () => {
  it('package.json exports ./vitest and ./matchers with types, built from src/vitest.ts and src/matchers.ts', async () => {
    const { existsSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { ROOT } = await import('./helpers.js');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.exports['./vitest']).toEqual({ types: './dist/vitest.d.ts', default: './dist/vitest.js' });
    expect(pkg.exports['./matchers']).toEqual({ types: './dist/matchers.d.ts', default: './dist/matchers.js' });
    expect(pkg.peerDependenciesMeta.vitest.optional).toBe(true);
    for (const name of ['vitest', 'matchers']) expect(existsSync(join(ROOT, 'src', `${name}.ts`))).toBe(true);
  });
});
