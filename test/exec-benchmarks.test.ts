import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readProblems } from '../src/exec/benchmarks/problems.js';
import { parsePythonJson, rawField } from '../src/exec/benchmarks/rows.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { runBatch, why } from './exec-fixtures.js';

/**
 * MBPP (google-research's two files) and EvalPlus (HumanEval+, MBPP+) as their publishers write them, read by the one
 * problems reader and judged as their reference harnesses judge them. The fixtures are tasks written for these tests
 * in those formats (test/fixtures/exec/formats).
 */
const FORMATS = new URL('./fixtures/exec/formats/', import.meta.url).pathname;

describe('reading MBPP and EvalPlus files as published', () => {
  it('MBPP: the paper prompt, the asserts as tests, setup code and challenge tests kept; ids Mbpp/N, mbpp_N_name and N', () => {
    const set = readProblems(join(FORMATS, 'mbpp-sample.jsonl'));
    const [shared, nodes] = set.problems;
    expect(shared).toMatchObject({ taskId: 'Mbpp/9001', key: '9001', format: 'mbpp', language: 'python', entryPoint: 'shared_elements' });
    expect(shared.prompt).toMatch(/^You are an expert Python programmer, and here is your task: Write a function to find the shared elements.* Your code should pass these tests:\n\nassert shared_elements/);
    expect(shared.mbpp).toEqual({ setup: '', imports: '', challenge: ['assert shared_elements((), ()) == ()'] });
    expect(nodes.mbpp?.setup).toBe('three = Node(1, Node(2, Node(3)))');
    for (const id of ['Mbpp/9001', 'mbpp_9001_shared_elements', '9001']) expect(set.byKey.get(id.replace(/^\D+?(\d+).*$/, '$1'))?.taskId).toBe('Mbpp/9001');
    // sanitized MBPP: a JSON array with `prompt` and `test_imports`
    const sanitized = readProblems(join(FORMATS, 'sanitized-mbpp-sample.json'));
    expect(sanitized.problems[0]).toMatchObject({ taskId: 'Mbpp/9003', entryPoint: 'hypotenuse', mbpp: { imports: 'import math' } });
  });

  it("EvalPlus: base and plus inputs as the file writes them (integers past 2^53, Python's bare Infinity)", () => {
    const set = readProblems(join(FORMATS, 'evalplus-sample.jsonl'));
    expect(set.problems.map((p) => [p.taskId, p.key, p.plus?.base, p.plus?.plus])).toEqual([
      ['HumanEval/9004', '9004', 2, 2],
      ['HumanEval/9005', '9005', 2, 1],
      ['Mbpp/2', '2', 2, 1],
      ['Mbpp/9006', '9006', 2, 2],
      ['HumanEval/9007', '9007', 1, 1],
      // MBPP+ v0.2.0 writes "no plus inputs" as {} (Mbpp/793)
      ['Mbpp/9008', '9008', 2, 0],
      ['Mbpp/737', '737', 2, 1],
      ['HumanEval/9009', '9009', 1, 1],
    ]);
    // EvalPlus' caps on a sample's runs, not --timeout's default of 3 s
    expect(set.problems[0].timeoutMs).toBe(180_000);
    expect(set.problems[0].tests).toContain('1152921504606846977');
    expect(set.problems[3].tests).toContain('Infinity');
    expect(parsePythonJson('{"a": [Infinity, -Infinity, "NaN Infinity"]}')).toEqual({ a: [Infinity, -Infinity, 'NaN Infinity'] });
    expect(rawField('{"x": "a,]\\"b", "base_input": [[1152921504606846977, {"k": [1]}]], "y": 2}', 'base_input')).toBe('[[1152921504606846977, {"k": [1]}]]');
    expect(rawField('{"base_input": 3}', 'missing')).toBeUndefined();
  });
});

describe.skipIf(!bwrapAvailable())('judged as their harnesses judge them (bwrap)', () => {
  it('MBPP: a right program passes, a wrong one fails; setup code that uses the program runs in one process, marked', async () => {
    const set = readProblems(join(FORMATS, 'mbpp-sample.jsonl'));
    const rows = await runBatch('bwrap', set, [
      { name: 'right', task_id: 'Mbpp/9001', solution: set.problems[0].canonicalSolution! },
      { name: 'alias', task_id: 'mbpp_9001_shared_elements', completion: 'def shared_elements(a, b):\n    return tuple(sorted(x for x in set(a) if x in set(b)))\n' },
      { name: 'wrong', task_id: '9001', solution: 'def shared_elements(a, b):\n    return ()\n' },
      { name: 'setup', task_id: 'Mbpp/9002', solution: set.problems[1].canonicalSolution! },
    ]);
    expect(rows.right.status, why(rows.right)).toBe('passed');
    expect(rows.right.isolation).toBe('boundary');
    expect(rows.alias.status, why(rows.alias)).toBe('passed');
    expect(rows.wrong.status).toBe('failed');
    expect(rows.setup.status, why(rows.setup)).toBe('passed');
    expect(rows.setup.isolation).toBe('in-process');
    expect(rows.setup.fallback).toMatch(/setup code/);
  }, 60_000);

  it('EvalPlus: every base and plus input against the canonical output; set-equal, tolerance and exact big integers as EvalPlus', async () => {
    const set = readProblems(join(FORMATS, 'evalplus-sample.jsonl'));
    const rows = await runBatch('bwrap', set, [
      { name: 'add', task_id: 'HumanEval/9004', completion: '    return x + y\n' },
      // right on the base inputs, wrong on the plus input past 2^53 (as a float sum would be)
      { name: 'add-float', task_id: 'HumanEval/9004', completion: '    return int(float(x) + float(y))\n' },
      { name: 'mean', task_id: 'HumanEval/9005', completion: '    return sum(xs) / len(xs) + 1e-12\n' },
      { name: 'mean-off', task_id: 'HumanEval/9005', completion: '    return sum(xs) / len(xs) + 1e-3\n' },
      // MBPP+ Mbpp/2: tuples from the JSON lists, any order (set-equal)
      { name: 'similar', task_id: 'Mbpp/2', completion: 'def similar_elements(a, b):\n    assert isinstance(a, tuple)\n    return tuple(sorted(set(a) & set(b), reverse=True))\n' },
      { name: 'minimum', task_id: 'Mbpp/9006', completion: 'def minimum(a, b):\n    return a if a < b else b\n' },
      { name: 'maximum', task_id: 'Mbpp/9006', completion: 'def minimum(a, b):\n    return max(a, b)\n' },
      // right, but 4.5 s of CPU on an input the reference answers at once: over EvalPlus' per-input limit (4 s)
      { name: 'slow', task_id: 'HumanEval/9004', completion: '    import time\n    started = time.process_time()\n    while time.process_time() - started < 4.5:\n        pass\n    return x + y\n' },
      // a million integers back across the boundary (HumanEval+'s make_a_pile and tri return such lists)
      { name: 'pile', task_id: 'HumanEval/9007', completion: '    return [i for i in range(n)]\n' },
      { name: 'double', task_id: 'Mbpp/9008', completion: 'def double(a):\n    return a + a\n' },
      // MBPP+'s not-None tasks: a re.Match (no plain value) counts by being not None, a bool by itself, as EvalPlus does
      { name: 'match', task_id: 'Mbpp/737', completion: 'import re\ndef check_str(s):\n    return re.match("[aeiouAEIOU]", s)\n' },
      { name: 'bool', task_id: 'Mbpp/737', completion: 'def check_str(s):\n    return s[:1].lower() in "aeiou"\n' },
      { name: 'bool-wrong', task_id: 'Mbpp/737', completion: 'def check_str(s):\n    return True\n' },
      // a right answer larger than a reply can be (700,000 floats): the task runs in one process, as the reference decides
      { name: 'halves', task_id: 'HumanEval/9009', completion: '    return [1 / 2 for _ in range(n)]\n' },
    ], { timeoutMs: 3_000 });
    expect(rows.add.status, why(rows.add)).toBe('passed');
    expect(rows['add-float'].status).toBe('failed');
    expect(rows['add-float'].stderr).toMatch(/input 3 of 4 \(plus\)/);
    expect(rows.mean.status, why(rows.mean)).toBe('passed');
    expect(rows['mean-off'].status).toBe('failed');
    expect(rows.similar.status, why(rows.similar)).toBe('passed');
    expect(rows.minimum.status, why(rows.minimum)).toBe('passed');
    expect(rows.maximum.status).toBe('failed');
    expect(rows.slow.status).toBe('failed');
    expect(rows.slow.stderr).toMatch(/input 1 of 4 \(base\): took 4\.\d\d s of CPU, over EvalPlus' limit of 4\.00 s/);
    expect(rows.pile.status, why(rows.pile)).toBe('passed');
    expect(rows.double.status, why(rows.double)).toBe('passed');
    expect(rows.match.status, why(rows.match)).toBe('passed');
    expect(rows.bool.status, why(rows.bool)).toBe('passed');
    expect(rows['bool-wrong'].status).toBe('failed');
    expect(rows.halves.status, why(rows.halves)).toBe('passed');
    expect(rows.halves.isolation).toBe('in-process');
    expect(rows.halves.fallback).toMatch(/input 2: the right answer is larger than a reply across the boundary can be/);
    expect(rows.pile.isolation).toBe('boundary');
  }, 120_000);
});
