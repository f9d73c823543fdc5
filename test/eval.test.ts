import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generationPrompt } from '../src/api/eval.js';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { readProblems, type Problem } from '../src/exec/benchmarks/problems.js';
import { passHatK } from '../src/exec/pass-at-k.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { entryPointOf, extractCode, fencedBlocks, loadExtractor } from '../src/extract/extract.js';
import { startFakeLlmServer, type FakeServer } from './fixtures/fake-llm-server.js';
import { cli, ROOT } from './helpers.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'codegauge-eval-test-'));
const hasBwrap = bwrapAvailable();

describe('pass^k (all k pass)', () => {
  it('is C(c,k)/C(n,k): by hand, and null for k > n', () => {
    expect(passHatK(4, 2, 2)).toBeCloseTo(1 / 6, 15);
    expect(passHatK(10, 10, 5)).toBe(1);
    expect(passHatK(10, 4, 5)).toBe(0);
    expect(passHatK(5, 3, 1)).toBeCloseTo(3 / 5, 15);
    expect(passHatK(3, 3, 4)).toBeNull();
    // C(7,3)/C(10,3) = 35/120
    expect(passHatK(10, 7, 3)).toBeCloseTo(35 / 120, 15);
  });
});

describe('code extraction from chat replies', () => {
  const py = readBenchmark('humaneval');
  const js = readBenchmark('humaneval-js');
  const p10 = py.byKey.get('10')!;
  const p53 = py.byKey.get('53')!;
  const j53 = js.byKey.get('53')!;
  beforeAll(async () => {
    for (const l of ['python', 'javascript', 'typescript', 'java', 'cpp'] as const) await loadExtractor(l);
  });

  it('finds fenced blocks, an unclosed last one too', () => {
    expect(fencedBlocks('a\n```python\nx = 1\n```\nb\n```js\ny\n')).toEqual([{ tag: 'python', code: 'x = 1' }, { tag: 'js', code: 'y\n' }]);
  });

  it('entry points: human-eval field, MultiPL-E name, else the last signature of the prompt', () => {
    expect(entryPointOf(p53)).toBe('add');
    expect(entryPointOf(j53)).toBe('add');
    expect(entryPointOf({ ...j53, taskId: 'x' })).toBe('add');
  });

  it('Python: keeps the entry point, what it uses and the imports; drops prose, prints, tests and unused code (EvalPlus sanitize)', () => {
    const reply = 'Sure! Here is the code:\n\n```python\nimport math\nimport os\n\ndef unused():\n    return os.getcwd()\n\nK = 2\n\ndef helper(x):\n    return x * K\n\ndef add(x: int, y: int):\n    return helper(x) // 2 + y\n\nprint(add(1, 2))\nassert add(2, 3) == 5\n```\n\nThis works because addition is commutative.';
    const e = extractCode(reply, p53);
    expect(e.steps).toEqual(['fenced', 'sanitized']);
    expect(e.solution).toContain('def helper(x)');
    expect(e.solution).toContain('K = 2');
    expect(e.solution).toContain('import math');
    expect(e.solution).not.toContain('def unused');
    expect(e.solution).not.toContain('print(');
    expect(e.solution).not.toContain('assert');
    expect(e.solution).not.toContain('commutative');
  });

  it("Python: the prompt's helpers stay, once (HumanEval/10's is_palindrome); prose around an unfenced program is trimmed", () => {
    const e = extractCode(`Here:\n\n${p10.prompt}${p10.canonicalSolution}\nHope this helps, it is fast.`, p10);
    expect(e.steps).toEqual(['prose-trimmed', 'sanitized']);
    expect(e.solution!.match(/def is_palindrome/g)).toHaveLength(1);
    expect(e.solution).not.toContain('Hope this helps');
  });

  it('a body is a completion, cut at the stop tokens; a repeated prompt is dropped', () => {
    expect(extractCode('    return x + y\n\ndef test():\n    pass\n', p53)).toEqual({ completion: '    return x + y\n', steps: ['stop-token'] });
    const repeated = extractCode(`${j53.prompt}  return x + y;\n}\n\nconsole.log(add(1, 2));`, { ...j53, entryPoint: 'plus' }); // no definition of the entry point: a completion
    expect(repeated.steps).toContain('repeated-prompt');
    expect(repeated.completion).toBe('  return x + y;\n}\n');
  });

  it('JavaScript: keeps the entry function and its helpers, drops calls', () => {
    const e = extractCode('```javascript\nfunction helper(a){ return a; }\nconst unused = 3;\nfunction add(x, y) {\n  return helper(x) + y;\n}\nconsole.log(add(1,2));\n```', j53);
    expect(e.solution).toContain('function helper(a)');
    expect(e.solution).not.toContain('unused');
    expect(e.solution).not.toContain('console.log');
    expect(e.solution!.startsWith('//Add two numbers')).toBe(true);
  });

  it('C++ and Java (MultiPL-E: the tests close the function): the closing brace is left to the tests, main is dropped', () => {
    const cpp: Problem = {
      taskId: 'HumanEval_53_add', key: '53', language: 'cpp', format: 'multipl-e', line: 1,
      prompt: '#include<assert.h>\n#include<bits/stdc++.h>\n// Add two numbers x and y\nlong add(long x, long y) {\n',
      tests: '}\nint main() {\n    auto candidate = add;\n    assert(candidate((0), (1)) == (1));\n}\n',
      stopTokens: ['\n}'],
    };
    const e = extractCode('```cpp\n#include <vector>\nlong twice(long a) { return a; }\nlong add(long x, long y) {\n    return twice(x) + y;\n}\nint main() { return add(1, 2); }\n```', cpp);
    expect(e.solution).toContain('#include <vector>');
    expect(e.solution).toContain('long twice(long a)');
    expect(e.solution).not.toContain('int main');
    expect(e.solution!.trimEnd().endsWith('return twice(x) + y;')).toBe(true);
    const java: Problem = {
      taskId: 'HumanEval_53_add', key: '53', language: 'java', format: 'multipl-e', line: 1,
      prompt: 'import java.util.*;\nclass Problem {\n    // Add two numbers x and y\n    public static long add(long x, long y) {\n',
      tests: '    }\n    public static void main(String[] args) {\n    assert(add((0l), (1l)) == (1l));\n    }\n\n}\n',
      stopTokens: ['\n    }\n'],
    };
    const j = extractCode('```java\nimport java.util.stream.*;\npublic class Solution {\n    static long twice(long a) { return a; }\n    public static long add(long x, long y) {\n        return twice(x) + y;\n    }\n    public static void main(String[] a) { System.out.println(add(1, 2)); }\n}\n```', java);
    expect(j.solution).toContain('import java.util.stream.*;');
    expect(j.solution).toContain('class Problem {');
    expect(j.solution).toContain('static long twice(long a)');
    expect(j.solution).not.toContain('System.out.println');
    expect(j.solution!.trimEnd().endsWith('return twice(x) + y;')).toBe(true);
  });
});

/**
 * End to end through the scripted server: HumanEval/53 is always answered with its canonical solution (fenced,
 * with prose), HumanEval/0 always with wrong code, HumanEval/10 with the canonical body (no fence) for even seeds
 * and a wrong body for odd ones, HumanEval/2 correctly only for seed 0. With n = 4: c = 4, 0, 2, 1.
 */
describe.skipIf(!hasBwrap)('codegauge eval: generate, extract, execute, pass@k, the table meta reads (scripted server, bwrap)', () => {
  let server: FakeServer;
  let dir: string;
  let problemsPath: string;
  const humaneval = readBenchmark('humaneval');
  const ids = ['HumanEval/53', 'HumanEval/0', 'HumanEval/10', 'HumanEval/2'];
  const chosen = ids.map((id) => humaneval.problems.find((p) => p.taskId === id)!);

  beforeAll(async () => {
    dir = tmp();
    problemsPath = join(dir, 'problems.jsonl');
    const raw = ids.map((id) => {
      const p = chosen.find((c) => c.taskId === id)!;
      return JSON.stringify({ task_id: p.taskId, prompt: p.prompt, entry_point: p.entryPoint, canonical_solution: p.canonicalSolution, test: p.tests });
    });
    writeFileSync(problemsPath, raw.join('\n') + '\n');
    server = await startFakeLlmServer({
      reply: (body) => {
        const text: string = body.messages.map((m: { content: string }) => m.content).join('\n');
        if (!text.startsWith('Complete the following')) return JSON.stringify({ evaluation: 'looks right', score: 3 });
        const p = chosen.find((c) => text.includes(`def ${c.entryPoint}(`))!;
        const seed: number = body.seed;
        if (p.taskId === 'HumanEval/53') return `Here you go:\n\n\`\`\`python\n${p.prompt}${p.canonicalSolution}\n\nprint(add(2, 3))\n\`\`\`\n\nIt adds the two numbers.`;
        if (p.taskId === 'HumanEval/0') return '```python\ndef has_close_elements(numbers, threshold):\n    return True\n```';
        if (p.taskId === 'HumanEval/10') return seed % 2 === 0 ? p.canonicalSolution! : '    return string\n';
        return seed === 0 ? `\`\`\`python\ndef truncate_number(number: float) -> float:\n    return number % 1.0\n\`\`\`` : '```python\ndef truncate_number(number):\n    return number\n```';
      },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const args = () => ['eval', '--problems', problemsPath, '--model', 'openai:coder', '--base-url', server.url, '--api-key', 'k', '--cache-file', join(dir, 'cache.sqlite'), '--n', '4', '--temperature', '0.8', '--k', '1,2,4', '--out', join(dir, 'out'), '--jobs', '2', '--format', 'json'];

  it('pass@k and pass^k are what the script makes them; raw replies and the programs run are kept', async () => {
    const r = await cli(...args(), '--metric', 'chrf');
    expect(r.err).not.toMatch(/internal error/);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out);
    const s = report.exec.systems[0];
    expect(s.name).toBe('openai_coder');
    expect(s.per_problem).toEqual({ 'HumanEval/53': { n: 4, c: 4 }, 'HumanEval/0': { n: 4, c: 0 }, 'HumanEval/10': { n: 4, c: 2 }, 'HumanEval/2': { n: 4, c: 1 } });
    expect(s.pass_at['1']).toBeCloseTo((1 + 0 + 0.5 + 0.25) / 4, 12);
    expect(s.pass_at['2']).toBeCloseTo((1 + 0 + 5 / 6 + 0.5) / 4, 12);
    expect(s.pass_at['4']).toBeCloseTo(3 / 4, 12);
    expect(s.pass_hat['2']).toBeCloseTo((1 + 1 / 6) / 4, 12);
    expect(s.pass_hat['4']).toBeCloseTo(1 / 4, 12);
    // 16 requests, one per (problem, seed): the seeds differ, so no repeat was a cache hit
    const seeds = server.requests.filter((q) => q.body.messages[0].content.startsWith('Complete')).map((q) => q.body.seed);
    expect(seeds.sort()).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    expect(report.generation).toMatchObject({ requests: 16, cache_hits: 0, reused: 0 });
    const samples = readFileSync(join(dir, 'out', 'samples', 'openai_coder.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(samples).toHaveLength(16);
    expect(samples[0].raw).toContain('Here you go');
    expect(samples[0].solution).not.toContain('print(add');
    expect(samples[0].extraction).toEqual(['fenced', 'sanitized']);
    expect(samples[8].completion).toBe(chosen[2].canonicalSolution);
    const table = readFileSync(join(dir, 'out', 'table.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(table).toHaveLength(16);
    expect(table[0]).toMatchObject({ system: 'openai_coder', task_id: 'HumanEval/53', sample: 0, passed: true, status: 'passed' });
    expect(table[4]).toMatchObject({ task_id: 'HumanEval/0', passed: false, status: 'failed' });
    const column = report.scores[0].column;
    expect(typeof table[0][column]).toBe('number');
    // the table is what meta reads
    const meta = await cli('meta', '--input', join(dir, 'out', 'table.jsonl'), '--truth', 'passed', '--metric-column', column, '--format', 'json');
    expect(meta.err).toBe('');
    expect(meta.code).toBe(0);
    expect(JSON.parse(meta.out).truth).toBe('passed');
  });

  it('a rerun resumes: no request, no program rerun, the same numbers', async () => {
    const before = server.requests.length;
    const results = readFileSync(join(dir, 'out', 'results.jsonl'), 'utf8');
    const r = await cli(...args(), '--metric', 'chrf');
    expect(r.code).toBe(0);
    expect(server.requests.length).toBe(before);
    const report = JSON.parse(r.out);
    expect(report.generation).toMatchObject({ requests: 0, reused: 16 });
    expect(report.exec.systems[0].pass_at['1']).toBeCloseTo(0.4375, 12);
    expect(readFileSync(join(dir, 'out', 'results.jsonl'), 'utf8')).toBe(results);
    const table = await cli(...args().slice(0, -2), '--metric', 'chrf');
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/pass@1\s+pass@2\s+pass@4\s+pass\^2\s+pass\^4/);
    expect(table.out).toMatch(/openai_coder\s+16\s+4\s+43\.75\s+58\.33\s+75\.00\s+29\.17\s+25\.00/);
    expect(table.out).toMatch(/per-sample table: .*table\.jsonl/);
  });

  it('report: an execution section from the run folder, summary.json or results.jsonl (tables readable without JavaScript)', async () => {
    const html = join(dir, 'report.html');
    const r = await cli('report', join(dir, 'out'), '--out', html);
    expect(r.err).not.toMatch(/error/);
    expect(r.code).toBe(0);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('<h2>Execution');
    expect(page).toContain('pass@1 % [95% CI]');
    expect(page).toContain('pass^2 %');
    // pass@1 = 43.75 %: 43.8 with its bootstrap interval over the 4 problems
    expect(page).toMatch(/<td>43\.8 \[\d+\.\d, \d+\.\d\]<\/td>/);
    expect(page).toContain('<td>HumanEval/10</td><td>2/4</td>');
    expect(page).toContain('"heatmap"');
    // summary.json alone and eval.json are recognised too
    for (const input of [join(dir, 'out', 'summary.json'), join(dir, 'out', 'eval.json'), join(dir, 'out', 'results.jsonl')]) {
      const x = await cli('report', input, '--out', join(dir, 'r2.html'));
      expect(x.code).toBe(0);
      expect(readFileSync(join(dir, 'r2.html'), 'utf8')).toContain('<td>HumanEval/0</td><td>0/4</td>');
    }
  });

  it('--judge ice grades the same samples into a column', async () => {
    const out = join(dir, 'judged');
    const r = await cli('eval', '--problems', problemsPath, '--model', 'openai:coder', '--base-url', server.url, '--api-key', 'k', '--cache-file', join(dir, 'cache.sqlite'), '--n', '1', '--limit', '2', '--judge', 'ice', '--out', out, '--format', 'json');
    expect(r.err).not.toMatch(/internal error/);
    expect(r.code).toBe(0);
    const table = readFileSync(join(out, 'table.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(table).toHaveLength(2);
    expect(table.map((t) => t.ice)).toEqual([75, 75]);
    expect(existsSync(join(out, 'eval.json'))).toBe(true);
  });

  it('--judge against replies with no grade: exit 1, one line naming the failures, and the failures in eval.json', async () => {
    const ungraded = await startFakeLlmServer({
      reply: (body) => {
        const text: string = body.messages.map((m: { content: string }) => m.content).join('\n');
        const p = chosen.find((c) => text.includes(`def ${c.entryPoint}(`))!;
        // The coder answers; the judge only ever restates code, with no grade in any form.
        return text.startsWith('Complete the following') ? `\`\`\`python\n${p.prompt}${p.canonicalSolution}\n\`\`\`` : '```python\nreturn 1\n```';
      },
    });
    try {
      const out = join(dir, 'ungraded');
      const r = await cli('eval', '--problems', problemsPath, '--model', 'openai:coder', '--base-url', ungraded.url, '--api-key', 'k', '--cache-file', join(dir, 'ungraded.sqlite'), '--n', '1', '--limit', '2', '--judge', 'dsa-simple', '--judge', 'ice', '--out', out);
      expect(r.code).toBe(1);
      const lines = r.err.split('\n').filter((l) => l.startsWith('codegauge:'));
      expect(lines).toEqual([`codegauge: the judge failed on 2 of 2 sample(s) (dsa-simple), 2 of 2 sample(s) (ice); they are null in ${out}/table.jsonl and left out of the means (see "errors" in eval.json)`]);
      const report = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8'));
      expect(report.scores.map((s: any) => [s.column, s.mean, s.failures, s.errors.length])).toEqual([['dsa-simple', null, 2, 2], ['ice', null, 2, 2]]);
      expect(report.scores[1].errors[0]).toMatch(/^segment 1: /);
      const table = readFileSync(join(out, 'table.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(table.map((t) => [t['dsa-simple'], t.ice])).toEqual([[null, null], [null, null]]);
    } finally {
      await ungraded.close();
    }
  });

  it('a server that fails mid-run: exit 1, what was answered is kept, the rerun asks only for the rest', async () => {
    let failing = true;
    const flaky = await startFakeLlmServer({
      reply: (body) => {
        const text: string = body.messages[0].content;
        const p = chosen.find((c) => text.includes(`def ${c.entryPoint}(`))!;
        return `\`\`\`python\n${p.prompt}${p.canonicalSolution}\n\`\`\``;
      },
      fault: (_i, body) => (failing && body.messages[0].content.includes('def has_close_elements(') ? '500' : 'none'),
    });
    try {
      const out = join(dir, 'flaky');
      const run = () => cli('eval', '--problems', problemsPath, '--model', 'openai:coder', '--base-url', flaky.url, '--api-key', 'k', '--cache-file', join(dir, 'flaky.sqlite'), '--retries', '0', '--n', '2', '--out', out, '--format', 'json');
      const first = await run();
      expect(first.code).toBe(1);
      expect(first.err).toMatch(/500|boom/);
      expect(first.err).toContain('warning: --n 2 at --temperature 0: the samples of a problem differ only by their seed');
      expect(readFileSync(join(out, 'generations.jsonl'), 'utf8').trim().split('\n')).toHaveLength(6);
      failing = false;
      const before = flaky.requests.length;
      const second = await run();
      expect(second.code).toBe(0);
      expect(flaky.requests.length - before).toBe(2);
      const s = JSON.parse(second.out).exec.systems[0];
      expect(s.pass_at['1']).toBe(1);
      expect(JSON.parse(second.out).generation).toMatchObject({ reused: 6 });
    } finally {
      await flaky.close();
    }
  });

  it('usage errors: --metric without canonical solutions, an unknown judge', async () => {
    const noCanonical = join(dir, 'nocanon.jsonl');
    writeFileSync(noCanonical, JSON.stringify({ task_id: 'HumanEval/53', prompt: chosen[0].prompt, entry_point: 'add', test: chosen[0].tests }) + '\n');
    const r = await cli('eval', '--problems', noCanonical, '--model', 'openai:coder', '--base-url', server.url, '--cache-file', join(dir, 'cache.sqlite'), '--metric', 'chrf', '--out', join(dir, 'x'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/canonical solution/);
    const j = await cli('eval', '--problems', noCanonical, '--model', 'openai:coder', '--judge', 'nope', '--out', join(dir, 'y'));
    expect(j.code).toBe(2);
    expect(j.err).toMatch(/--judge must be/);
  });
});

it('the generation prompt fences the problem prompt in its language', () => {
  const p = readProblems(join(ROOT, 'data', 'humaneval', 'HumanEval.jsonl.gz')).problems[0];
  expect(generationPrompt(p)).toMatch(/^Complete the following Python code[\s\S]*```python\nfrom typing import List/);
});

/**
 * MultiPL-E's C++ and Java formats on the real records (HumanEval/0, copied verbatim; see
 * test/fixtures/exec/multipl-e/PROVENANCE.md): whole-function replies are extracted and pass in the sandbox, wrong
 * ones fail; the prompts at that commit do not compile as written, which extraction repairs.
 */
describe.skipIf(!hasBwrap)('MultiPL-E C++ and Java: extraction + runners on HumanEval/0 (bwrap)', () => {
  const fixture = (lang: string) => readProblems(join(ROOT, 'test', 'fixtures', 'exec', 'multipl-e', `humaneval-${lang}-reworded-0.jsonl`));
  const replies: Record<string, { right: string; wrong: string }> = {
    cpp: {
      right: 'Here is my solution:\n```cpp\n#include <cmath>\n#include <vector>\nbool has_close_elements(std::vector<float> numbers, float threshold) {\n    for (size_t i = 0; i < numbers.size(); i++)\n        for (size_t j = i + 1; j < numbers.size(); j++)\n            if (std::fabs(numbers[i] - numbers[j]) < threshold) return true;\n    return false;\n}\n\nint main() {\n    return has_close_elements({1.0f, 2.0f}, 0.5f);\n}\n```\nIt compares every pair.',
      wrong: '```cpp\nbool has_close_elements(std::vector<float> numbers, float threshold) {\n    return false;\n}\n```',
    },
    java: {
      right: '```java\nimport java.util.*;\n\nclass Problem {\n    private static float gap(float a, float b) {\n        return Math.abs(a - b);\n    }\n\n    public static boolean hasCloseElements(ArrayList<Float> numbers, float threshold) {\n        for (int i = 0; i < numbers.size(); i++) {\n            for (int j = i + 1; j < numbers.size(); j++) {\n                if (gap(numbers.get(i), numbers.get(j)) < threshold) return true;\n            }\n        }\n        return false;\n    }\n\n    public static void main(String[] args) {\n        System.out.println(hasCloseElements(new ArrayList<>(), 1f));\n    }\n}\n```',
      wrong: '```java\npublic static boolean hasCloseElements(ArrayList<Float> numbers, float threshold) {\n    return true;\n}\n```',
    },
  };
  beforeAll(async () => {
    await loadExtractor('cpp');
    await loadExtractor('java');
  });

  it.each(['cpp', 'java'])('%s: the prompt does not compile as published; a right reply passes, a wrong one fails', async (lang) => {
    const { runSample } = await import('../src/exec/sample.js');
    const { runnerFor } = await import('../src/exec/runners/registry.js');
    const { Sandbox } = await import('../src/exec/sandbox/sandbox.js');
    const { parseCode } = await import('../src/code/syntax-tree.js');
    const problem = fixture(lang).problems[0];
    expect(problem.language).toBe(lang);
    expect(entryPointOf(problem)).toBe(lang === 'java' ? 'hasCloseElements' : 'has_close_elements');
    expect(parseCode(lang as 'cpp', problem.prompt + (lang === 'java' ? '}\n}\n' : '}\n')).hasError).toBe(true);
    const runner = runnerFor(problem.language);
    const sandbox = new Sandbox('bwrap');
    const verdicts: string[] = [];
    for (const reply of [replies[lang].right, replies[lang].wrong]) {
      const e = extractCode(reply, problem);
      expect(e.steps).toContain('sanitized');
      expect(e.steps).toContain('prompt-comments-repaired');
      expect(e.solution).not.toContain('System.out.println');
      const code = runner.code(problem, { index: 0, taskId: problem.taskId, line: 1, solution: e.solution });
      const { verdict } = await runSample({ sandbox }, { problem, runner, code }, { timeoutMs: 20_000, memoryMb: 1024 });
      verdicts.push(verdict.status === 'passed' ? 'passed' : `${verdict.status}: ${verdict.stderr.slice(0, 400)}`);
    }
    expect(verdicts[0]).toBe('passed');
    expect(verdicts[1]).toMatch(/^failed/);
  }, 120_000);
});

describe('TypeScript extraction and the MultiPL-E shape', () => {
  it('finds a typed signature, keeps typed helpers, and the program runs in the sandbox', async () => {
    await loadExtractor('typescript');
    const problem: Problem = {
      taskId: 'HumanEval_53_add', key: '53', language: 'typescript', format: 'multipl-e', line: 1,
      prompt: '//Add two numbers x and y\n// >>> add(2, 3)\n// 5\nfunction add(x: number, y: number): number {\n',
      tests: 'declare var require: any;\nconst assert = require(\'node:assert\');\n\n\nfunction test() {\n  let candidate = add;\n  assert.deepEqual(candidate(0, 1),1);\n  assert.deepEqual(candidate(5, 7),12);\n}\n\ntest();',
      stopTokens: ['\nfunction ', '\n/*', '\n//', '\nclass'],
    };
    expect(entryPointOf({ ...problem, taskId: 'x' })).toBe('add');
    const e = extractCode('```ts\ntype N = number;\nconst twice = (a: N): N => a;\nexport function add(x: N, y: N): N {\n  return twice(x) + y;\n}\nconsole.log(add(1, 2));\n```', problem);
    expect(e.steps).toEqual(['fenced', 'sanitized']);
    expect(e.solution).toContain('type N = number;');
    expect(e.solution).toContain('const twice');
    expect(e.solution).not.toContain('console.log');
    if (!hasBwrap) return;
    const { runSample } = await import('../src/exec/sample.js');
    const { runnerFor } = await import('../src/exec/runners/registry.js');
    const { Sandbox } = await import('../src/exec/sandbox/sandbox.js');
    const { Servers } = await import('../src/exec/servers.js');
    const runner = runnerFor('typescript');
    const code = runner.code(problem, { index: 0, taskId: problem.taskId, line: 1, solution: e.solution });
    const sandbox = new Sandbox('bwrap');
    const servers = new Servers(sandbox, false);
    const { verdict } = await runSample({ sandbox, servers }, { problem, runner, code }, { timeoutMs: 20_000, memoryMb: 1024 }).finally(() => servers.close());
    expect(verdict.status, verdict.stderr).toBe('passed');
  }, 60_000);
});
