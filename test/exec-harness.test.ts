import { describe, expect, it } from 'vitest';
import type { Problem } from '../src/exec/benchmarks/problems.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { runBatch, why } from './exec-fixtures.js';

/**
 * The Python tests' harness runs job after job in one process (no fork per sample: they are the benchmark's code and
 * take only plain values from a candidate). What tests do there must not reach the next sample's verdict: a test
 * that never ends is a timeout, one that prints a lot still fails, one that exhausts memory is `memory`, and one that
 * changes the interpreter (its recursion limit, a built-in) makes the server replace itself. One worker (`jobs: 1`),
 * so every sample after such a test runs on the server that ran it, or on its replacement.
 */
function problem(key: string, tests: string): Problem {
  return { taskId: `HumanEval/${key}`, key, language: 'python', format: 'human-eval', line: 1, prompt: 'def f(x):\n', tests, entryPoint: 'f' };
}

const RIGHT = '    return 2 * x\n';
const WRONG = '    return x\n';
// the tests of the sample after each odd one: built-ins and the recursion limit as a fresh interpreter has them
const PLAIN = problem('9100', "import sys\ndef check(candidate):\n    assert type(len).__name__ == 'builtin_function_or_method' and sys.getrecursionlimit() == 1000\n    assert candidate(2) == 4\n");

describe.skipIf(!bwrapAvailable())("the tests' harness, job after job (bwrap)", () => {
  it('a test that never ends, prints 2 MB, runs out of memory or changes the interpreter leaves the next verdict alone', async () => {
    const problems = [
      PLAIN,
      // waits forever for an answer the wrong candidate never gives
      problem('9101', 'def check(candidate):\n    while candidate(2) != 4:\n        pass\n'),
      problem('9102', "def check(candidate):\n    print('x' * (2 << 20))\n    assert candidate(2) == 4\n"),
      problem('9103', 'def check(candidate):\n    hoard = bytearray(64 << 30)\n    assert candidate(2) == 4\n'),
      problem('9104', 'import sys, builtins\nsys.setrecursionlimit(5000)\nbuiltins.len = lambda x, _len=len: _len(x)\ndef check(candidate):\n    assert candidate(2) == 4\n'),
    ];
    const samples = [
      { name: 'loop', task_id: 'HumanEval/9101', completion: WRONG },
      { name: 'after-loop', task_id: 'HumanEval/9100', completion: RIGHT },
      { name: 'loop-right', task_id: 'HumanEval/9101', completion: RIGHT },
      { name: 'loud', task_id: 'HumanEval/9102', completion: WRONG },
      { name: 'loud-right', task_id: 'HumanEval/9102', completion: RIGHT },
      { name: 'hoard', task_id: 'HumanEval/9103', completion: RIGHT },
      { name: 'after-hoard', task_id: 'HumanEval/9100', completion: RIGHT },
      { name: 'patch', task_id: 'HumanEval/9104', completion: RIGHT },
      { name: 'after-patch', task_id: 'HumanEval/9100', completion: RIGHT },
      { name: 'after-patch-wrong', task_id: 'HumanEval/9100', completion: WRONG },
    ];
    const rows = await runBatch('bwrap', problems, samples, { timeoutMs: 2_000, jobs: 1 });
    for (const s of samples) expect(rows[s.name].isolation, s.name).toBe('boundary');
    expect(rows.loop.status, why(rows.loop)).toBe('timeout');
    expect(rows['after-loop'].status, why(rows['after-loop'])).toBe('passed');
    expect(rows['loop-right'].status, why(rows['loop-right'])).toBe('passed');
    expect(rows.loud.status, why(rows.loud)).toBe('failed');
    expect(rows['loud-right'].status, why(rows['loud-right'])).toBe('passed');
    expect(rows.hoard.status, why(rows.hoard)).toBe('memory');
    expect(rows['after-hoard'].status, why(rows['after-hoard'])).toBe('passed');
    // the tests' own changes hold for their sample only
    expect(rows.patch.status, why(rows.patch)).toBe('passed');
    expect(rows['after-patch'].status, why(rows['after-patch'])).toBe('passed');
    expect(rows['after-patch-wrong'].status).toBe('failed');
  }, 120_000);
});
