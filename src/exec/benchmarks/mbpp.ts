import { InputError } from '../../errors.js';
import type { MbppParts, Problem } from './types.js';

/**
 * MBPP (Austin et al. 2021, google-research/mbpp) as published: `mbpp.jsonl` (`text, code, task_id, test_setup_code,
 * test_list, challenge_test_list`) and sanitized MBPP (`prompt, code, task_id, test_imports, test_list`). The prompt
 * is the paper's (the description and the tests the code must pass); a sample is a whole program (`solution`, or a
 * `completion` that is one). Its tests are the `assert` lines, run after the sample's code, its imports and its setup
 * code, as google-research runs them; `challenge_test_list` is kept and not run (no harness counts it for pass@k).
 */
const strings = (v: unknown, name: string, path: string, line: number): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new InputError(`field "${name}" must be a list of strings`, path, line);
  return v as string[];
};

/** Python's built-in functions and types (3.11's `dir(builtins)`, lower-case names): a name the tests call that is
 * one of these is the harness's own unless it is the function under test. */
export const PY_BUILTIN_NAMES: ReadonlySet<string> = new Set(
  ('abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex copyright ' +
    'credits delattr dict dir divmod enumerate eval exec exit filter float format frozenset getattr globals hasattr hash ' +
    'help hex id input int isinstance issubclass iter len license list locals map max memoryview min next object oct open ' +
    'ord pow print property quit range repr reversed round set setattr slice sorted staticmethod str sum super tuple type ' +
    'vars zip').split(' '),
);
const PY_BUILTINS = new Set([...PY_BUILTIN_NAMES, 'math']);

/** The function the tests check: a function the code defines that the tests call, else the first call in the tests. */
export function mbppEntry(code: string, tests: string[]): string | undefined {
  const defined = new Set([...code.matchAll(/^[ \t]*def\s+(\w+)\s*\(/gm)].map((m) => m[1]));
  const called = tests.flatMap((t) => [...t.matchAll(/\b([A-Za-z_]\w*)\s*\(/g)].map((m) => m[1]));
  return called.find((n) => defined.has(n)) ?? called.find((n) => !PY_BUILTINS.has(n));
}

export function isMbppRow(row: Record<string, unknown>): boolean {
  return Array.isArray(row.test_list) && typeof row.code === 'string' && ('text' in row || 'prompt' in row) && !('entry_point' in row && 'base_input' in row);
}

export function mbppProblem(row: Record<string, unknown>, path: string, line: number): Problem & { mbpp: MbppParts } {
  const id = row.task_id;
  if (id === undefined || id === null || (typeof id !== 'number' && typeof id !== 'string')) throw new InputError('missing field "task_id"', path, line);
  const description = row.text ?? row.prompt;
  if (typeof description !== 'string') throw new InputError('field "text" (or "prompt") must be a string', path, line);
  const tests = strings(row.test_list, 'test_list', path, line);
  if (tests.length === 0) throw new InputError('field "test_list" has no tests', path, line);
  const code = row.code as string;
  const setup = typeof row.test_setup_code === 'string' ? row.test_setup_code : '';
  const imports = strings(row.test_imports, 'test_imports', path, line).join('\n');
  const taskId = `Mbpp/${id}`;
  return {
    taskId,
    key: String(id).replace(/^Mbpp\//, ''),
    language: 'python',
    format: 'mbpp',
    line,
    // the paper's prompt: the description and the tests the code should pass
    prompt: `You are an expert Python programmer, and here is your task: ${description} Your code should pass these tests:\n\n${tests.join('\n')}\n`,
    tests: tests.join('\n') + '\n',
    entryPoint: mbppEntry(code, tests),
    canonicalSolution: code,
    mbpp: { setup, imports, challenge: strings(row.challenge_test_list, 'challenge_test_list', path, line) },
  };
}
