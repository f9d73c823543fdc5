import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ExecLanguage } from '../src/exec/benchmarks/problems.js';
import type { ExecRow } from '../src/exec/run.js';
import { cli } from './helpers.js';

/** The bundled MultiPL-E sets through the real `codegauge exec`, shared by test/exec-multipl-e.test.ts (TypeScript)
 * and its .full twin (Java and C++, whose compilers take seconds a program). */
/** Hand-written solutions (bodies appended to each prompt) for HumanEval 0, 2 and 53, and one wrong answer. */
export const COMPLETIONS: Partial<Record<ExecLanguage, Record<string, string>>> = {
  python: {},
  javascript: {},
  typescript: {
    '0': '  for (let i = 0; i < numbers.length; i++)\n    for (let j = i + 1; j < numbers.length; j++)\n      if (Math.abs(numbers[i] - numbers[j]) < threshold) return true;\n  return false;\n}\n',
    '2': '  return number % 1.0;\n}\n',
    '53': '  return x + y;\n}\n',
    wrong: '  return x - y;\n}\n',
  },
  java: {
    '0': '        for (int i = 0; i < numbers.size(); i++)\n            for (int j = i + 1; j < numbers.size(); j++)\n                if (Math.abs(numbers.get(i) - numbers.get(j)) < threshold) return true;\n        return false;\n',
    '2': '        return number % 1.0f;\n',
    '53': '        return x + y;\n',
    wrong: '        return x - y;\n',
  },
  cpp: {
    '0': '    for (size_t i = 0; i < numbers.size(); i++)\n        for (size_t j = i + 1; j < numbers.size(); j++)\n            if (std::abs(numbers[i] - numbers[j]) < threshold) return true;\n    return false;\n',
    '2': '    return number - std::floor(number);\n',
    '53': '    return x + y;\n',
    wrong: '    return x - y;\n',
  },
};

/** Correct solutions of 0, 2 and 53 pass, a wrong one of 53 fails; a completion that closes its function means the same. */
export async function runBundledThroughCli(name: string, language: ExecLanguage): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'codegauge-multipl-e-'));
  const c = COMPLETIONS[language]!;
  // the last sample closes its function itself, as a hand-written completion may: cut at MultiPL-E's stop tokens
  // (Java and C++ at the closing brace, which the tests then close; TypeScript keeps it), it means the same
  const samples = [
    { task_id: 'HumanEval/0', completion: c['0'] },
    { task_id: 'HumanEval/2', completion: c['2'] },
    { task_id: 'HumanEval/53', completion: c['53'] },
    { task_id: 'HumanEval/53', completion: c.wrong },
    { task_id: 'HumanEval/53', completion: language === 'java' ? `${c['53']}    }\n` : language === 'cpp' ? `${c['53']}}\n` : c['53'] },
  ];
  const file = join(dir, 'hand.jsonl');
  writeFileSync(file, samples.map((s) => JSON.stringify(s) + '\n').join(''));
  const r = await cli('exec', '--benchmark', name, '--samples', file, '--out', join(dir, 'out'), '--sandbox', 'bwrap', '--jobs', '2', '--timeout', '10', '--k', '1', '--format', 'json');
  const rows = readFileSync(join(dir, 'out', 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ExecRow);
  const detail = rows.map((row) => `${row.task_id} ${row.status} ${row.stderr.slice(-300)}`).join('\n');
  expect(r.code, `${r.err}\n${detail}`).toBe(0);
  expect(rows.map((row) => row.status), detail).toEqual(['passed', 'passed', 'passed', 'failed', 'passed']);
  const summary = JSON.parse(r.out) as { systems: { pass_at: Record<string, number>; problems: number }[] };
  expect(summary.systems[0].problems).toBe(3);
  expect(summary.systems[0].pass_at['1']).toBeCloseTo((1 + 1 + 2 / 3) / 3, 12);
  }
