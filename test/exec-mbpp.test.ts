import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadLanguage } from '../src/code/languages.js';
import { parseCode } from '../src/code/syntax-tree.js';
import { benchmarkPath, BENCHMARKS, dataDir, readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { readProblems } from '../src/exec/benchmarks/problems.js';
import { quarantine } from '../src/exec/benchmarks/quarantine.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { checkMbpp3, MBPP_3 } from './exec-mbpp-cases.js';
import { runBatch, why } from './exec-fixtures.js';
import { startFakeLlmServer } from './fixtures/fake-llm-server.js';
import { cli } from './helpers.js';

/**
 * The bundled MBPP sets (data/mbpp, data/multipl-e-mbpp; see their PROVENANCE.md): the files are the published bytes,
 * the test split is the paper's, and the real `exec` path judges the dataset's own code as the paper's harness does.
 */
const sha256 = (file: string) => createHash('sha256').update(gunzipSync(readFileSync(join(dataDir(), file)))).digest('hex');

describe('bundled MBPP', () => {
  it.each([
    ['mbpp', 'ccf64ceae9c5403bf50a044cb6d505bfd2a2963ee58338ba268fd65beab92a9f', 500],
    ['mbpp-sanitized', 'ca95deaa9a01ef0a6f439f88bcf0dd3db3563d22f22aad6cae04ebb9a8d8c8e9', 257],
    ['mbpp-js', '059016ced11f0a27b71ea3872e2461d2d5455758e7a0b051f9bf396eaddf6a14', 397],
    ['mbpp-ts', '458e6baae91dda3a97558a6d6573a5295d40efa8394345e99b66c8c34e9aebc7', 390],
    ['mbpp-java', 'eaf01557572dd1b6988917b53ca88d5f6c0a05e5f758cd6b1b8be868f4b6d771', 386],
    ['mbpp-cpp', '5357cd867fcb9d65d3ce26da77db30fcfd420a51a736f73414dea3579a8df6c3', 397],
    ['mbpp-go', '0a946111b7b34b24e24ec54a9a2bb722cb4a3360b5a9aec6bfb8e6385bd7ec50', 374],
    ['mbpp-rs', 'ebb41c8859b507fccae3d96aa9e94ec6bf3a80d8850a976edcb4adaff5c72498', 355],
    ['mbpp-php', 'c80393fee678a92845dcc706112ffd57210b29ce369b827ed11b22fb0147a6b4', 397],
    ['mbpp-rb', 'b58a461e9a024e2161d06e84f5ae22467665ea34f08b77ea87d758bf379b0826', 397],
    ['mbpp-cs', '49e895e2305e3141a16b74a031f6f275214dff893a5aebbed185da10b82a0afd', 386],
  ] as const)('%s: the published file (sha256 of its uncompressed bytes) and its problem count', (name, sum, count) => {
    expect(sha256(BENCHMARKS[name].file)).toBe(sum);
    expect(readBenchmark(name).problems).toHaveLength(count);
  });

  it('mbpp and mbpp-sanitized hold the test split, task 11 to 510, with the paper prompt', () => {
    const keys = readBenchmark('mbpp').problems.map((p) => Number(p.key));
    expect(keys).toEqual(Array.from({ length: 500 }, (_, i) => 11 + i));
    const sanitized = readBenchmark('mbpp-sanitized');
    expect(sanitized.problems.every((p) => Number(p.key) >= 11 && Number(p.key) <= 510)).toBe(true);
    const first = readBenchmark('mbpp').byKey.get('11')!;
    expect(first.prompt).toMatch(/^You are an expert Python programmer, and here is your task: Write a python function to remove first and last occurrence of a given character from the string\. Your code should pass these tests:\n\nassert remove_Occ\("hello","l"\) == "heo"\n/);
    expect(first.entryPoint).toBe('remove_Occ');
  });

  it('mbpp-js: every prompt, closed with a stub body, parses with its tests, but the three quarantined tasks', async () => {
    await loadLanguage('javascript');
    const broken: string[] = [];
    for (const p of readBenchmark('mbpp-js').problems) {
      if (parseCode('javascript', `${p.prompt}  return undefined;\n}\n${p.tests}\n`).hasError) broken.push(p.key);
    }
    expect(broken).toEqual(Object.keys(quarantine('mbpp-js')));
    expect(broken).toEqual(['237', '563', '725']);
  });

  it('mbpp-ts: every prompt, closed with a stub body, parses with its tests, but the two quarantined tasks', async () => {
    await loadLanguage('typescript');
    const broken: string[] = [];
    for (const p of readBenchmark('mbpp-ts').problems) {
      if (parseCode('typescript', `${p.prompt}  return undefined as any;\n}\n${p.tests}\n`).hasError) broken.push(p.key);
    }
    expect(broken).toEqual(Object.keys(quarantine('mbpp-ts')));
    expect(broken).toEqual(['563', '725']);
  });

  it('every MultiPL-E MBPP set has its quarantine (scripts/exec-quarantine-mbpp.mjs), each entry a task of the set with a reason', () => {
    const counts: Record<string, number> = {};
    for (const name of Object.keys(BENCHMARKS).filter((n) => /^mbpp-(?!sanitized)/.test(n))) {
      const set = readBenchmark(name);
      const entries = Object.entries(quarantine(name));
      counts[name] = entries.length;
      for (const [key, reason] of entries) {
        expect(set.byKey.has(key), `${name} ${key}`).toBe(true);
        expect(reason).toMatch(/^the tests (do not (compile|parse) as|compare|assert nothing)/);
      }
    }
    expect(counts).toEqual({ 'mbpp-js': 3, 'mbpp-ts': 2, 'mbpp-java': 45, 'mbpp-cpp': 31, 'mbpp-rs': 2, 'mbpp-php': 2, 'mbpp-rb': 2, 'mbpp-go': 38, 'mbpp-cs': 107 });
  });
});

describe.skipIf(!bwrapAvailable())("MultiPL-E's MBPP translations through the real runners (bwrap)", () => {
  // mbpp_3 (is_not_prime) in every language: hand-written right and wrong bodies, cut as MultiPL-E's stop tokens cut
  it.each(MBPP_3.filter((c) => c.fast))('$set: a right answer of mbpp_3 passes, a wrong one fails (skipped without $toolchain)', checkMbpp3, 60_000);
});

describe.skipIf(!bwrapAvailable())('MBPP judged as google-research runs it (bwrap)', () => {
  it("the dataset's code passes; a function named like a built-in is the candidate's, any other built-in stays the tests'", async () => {
    const set = readProblems(benchmarkPath('mbpp')); // all 974: Mbpp/601 is in the training split
    const code = (key: string) => set.byKey.get(key)!.canonicalSolution!;
    const rows = await runBatch('bwrap', set, [
      { name: 'plain', task_id: 'Mbpp/11', solution: code('11') },
      // Mbpp/126 defines `sum(a, b)` and its tests call it
      { name: 'builtin-name', task_id: 'Mbpp/126', solution: code('126') },
      { name: 'builtin-name-wrong', task_id: 'Mbpp/126', solution: 'def sum(a, b):\n    return 0\n' },
      // Mbpp/601's tests build their input with the program's class `Pair`: one process, marked
      { name: 'class', task_id: 'Mbpp/601', solution: code('601') },
      // a program that patches the built-ins the tests compare with cannot make a wrong answer pass
      { name: 'patched-builtins', task_id: 'Mbpp/126', solution: 'import builtins\nbuiltins.AssertionError = type("X", (BaseException,), {})\ndef sum(a, b):\n    return -1\n' },
    ]);
    expect(rows.plain.status, why(rows.plain)).toBe('passed');
    expect(rows.plain.isolation).toBe('boundary');
    expect(rows['builtin-name'].status, why(rows['builtin-name'])).toBe('passed');
    expect(rows['builtin-name'].isolation).toBe('boundary');
    expect(rows['builtin-name-wrong'].status).toBe('failed');
    expect(rows.class.status, why(rows.class)).toBe('passed');
    expect(rows.class.isolation).toBe('in-process');
    expect(rows['patched-builtins'].status).toBe('failed');
  }, 60_000);
});

describe.skipIf(!bwrapAvailable())('codegauge eval --benchmark mbpp (scripted server, bwrap)', () => {
  it("asks with the paper's prompt, extracts the program from the reply, and runs it against the asserts", async () => {
    const set = readBenchmark('mbpp');
    const [first, second] = set.problems;
    const server = await startFakeLlmServer({
      reply: (body) => {
        const text: string = body.messages.map((m: { content: string }) => m.content).join('\n');
        if (text.includes('remove_Occ')) return `Sure:\n\n\`\`\`python\n${first.canonicalSolution}\n\nprint(remove_Occ("hello", "l"))\n\`\`\`\nThat removes both ends.`;
        // Mbpp/12: right on even seeds, wrong on odd ones
        return body.seed % 2 === 0 ? `\`\`\`python\n${second.canonicalSolution}\n\`\`\`` : '```python\ndef sort_matrix(M):\n    return M\n```';
      },
    });
    const dir = mkdtempSync(join(tmpdir(), 'codegauge-eval-mbpp-'));
    try {
      const r = await cli('eval', '--benchmark', 'mbpp', '--limit', '2', '--model', 'openai:coder', '--base-url', server.url, '--api-key', 'k', '--cache-file', join(dir, 'cache.sqlite'), '--n', '2', '--temperature', '0.8', '--k', '1,2', '--metric', 'chrf', '--out', join(dir, 'out'), '--format', 'json');
      expect(r.code, r.err).toBe(0);
      const asked = server.requests.map((q) => q.body.messages.map((m: { content: string }) => m.content).join('\n'));
      expect(asked[0]).toContain('You are an expert Python programmer, and here is your task: Write a python function to remove first and last occurrence');
      const system = JSON.parse(r.out).exec.systems[0];
      expect(system.per_problem).toEqual({ 'Mbpp/11': { n: 2, c: 2 }, 'Mbpp/12': { n: 2, c: 1 } });
      expect(system.pass_at['1']).toBeCloseTo((1 + 0.5) / 2, 12);
      const samples = readFileSync(join(dir, 'out', 'samples', 'openai_coder.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(samples[0].solution).toContain('def remove_Occ');
      expect(samples[0].solution).not.toContain('print(');
      const table = readFileSync(join(dir, 'out', 'table.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      // the dataset's own code scored against itself: chrF 100
      expect(table.find((row) => row.task_id === 'Mbpp/12' && row.passed).chrf).toBeCloseTo(100, 6);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe.skipIf(!bwrapAvailable())('codegauge eval --benchmark mbpp-js, then report (scripted server, bwrap)', () => {
  it("completes MultiPL-E's prompt, runs the tests, and the report's execution section shows the MBPP tasks", async () => {
    const server = await startFakeLlmServer({
      reply: (body) => {
        const text: string = body.messages.map((m: { content: string }) => m.content).join('\n');
        // mbpp_100: a right body; mbpp_101: a wrong one (0-based where the task says 1-based)
        if (text.includes('next_smallest_palindrome')) return '```javascript\nfunction next_smallest_palindrome(num){\n  for (let n = num + 1; ; n++) if (String(n) === String(n).split("").reverse().join("")) return n;\n}\n```';
        return '```javascript\nfunction kth_element(arr, k){\n  return arr[k];\n}\n```';
      },
    });
    const dir = mkdtempSync(join(tmpdir(), 'codegauge-eval-mbpp-js-'));
    try {
      const r = await cli('eval', '--benchmark', 'mbpp-js', '--limit', '2', '--model', 'openai:coder', '--base-url', server.url, '--api-key', 'k', '--cache-file', join(dir, 'cache.sqlite'), '--n', '1', '--k', '1', '--out', join(dir, 'out'), '--format', 'json');
      expect(r.code, r.err).toBe(0);
      const system = JSON.parse(r.out).exec.systems[0];
      expect(system.per_problem).toEqual({ mbpp_100_next_smallest_palindrome: { n: 1, c: 1 }, mbpp_101_kth_element: { n: 1, c: 0 } });
      const report = await cli('report', join(dir, 'out'), '--out', join(dir, 'report.html'));
      expect(report.code, report.err).toBe(0);
      const html = readFileSync(join(dir, 'report.html'), 'utf8');
      expect(html).toMatch(/<h2>Execution <small>/);
      expect(html).toContain('mbpp_101_kth_element');
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
