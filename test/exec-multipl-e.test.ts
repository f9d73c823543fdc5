import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadLanguage, type LanguageId } from '../src/code/languages.js';
import { parseCode } from '../src/code/syntax-tree.js';
import { BENCHMARKS, readBenchmark } from '../src/exec/benchmarks/bundled.js';
import type { ExecLanguage, Problem } from '../src/exec/benchmarks/problems.js';
import type { ExecRow } from '../src/exec/run.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { cli, ROOT } from './helpers.js';

/**
 * The MultiPL-E HumanEval sets bundled in data/multipl-e (see its PROVENANCE.md): what they hold, that every prompt is
 * sound code, and that they run through the real `exec` path in the sandbox.
 */
const SETS: { name: string; language: ExecLanguage; grammar: LanguageId; count: number; missing: number[] }[] = [
  { name: 'humaneval-ts', language: 'typescript', grammar: 'typescript', count: 159, missing: [32, 38, 50, 137, 148] },
  { name: 'humaneval-java', language: 'java', grammar: 'java', count: 158, missing: [32, 38, 50, 103, 125, 137] },
  { name: 'humaneval-cpp', language: 'cpp', grammar: 'cpp', count: 161, missing: [32, 38, 50] },
];

/** The prompt completed with an empty body and closed, then the tests: a whole program of the prompt's syntax. */
function closedProgram(p: Problem): string {
  // C++ and Java tests start by closing the function (`}` / `    }`); TypeScript's do not
  return p.language === 'typescript' ? `${p.prompt}  return undefined as any;\n}\n${p.tests}\n` : `${p.prompt}${p.tests}\n`;
}

/** The doc comment of a prompt: the lines from its first `//` line up to the signature (the last line). */
function docComment(prompt: string): string[] {
  const lines = prompt.replace(/\n$/, '').split('\n');
  const first = lines.findIndex((l) => /^\s*\/\//.test(l));
  return first < 0 ? [] : lines.slice(first, -1);
}

describe('bundled MultiPL-E HumanEval (TypeScript, Java, C++)', () => {
  beforeAll(async () => {
    await Promise.all(SETS.map((s) => loadLanguage(s.grammar)));
  });

  it.each(SETS)('$name: $count problems, as MultiPL-E has them', ({ name, language, count, missing }) => {
    expect(BENCHMARKS[name]).toMatchObject({ language, file: `multipl-e/${name}.jsonl.gz` });
    const set = readBenchmark(name);
    expect(set.problems).toHaveLength(count);
    const keys = new Set(set.problems.map((p) => Number(p.key)));
    expect(Array.from({ length: 164 }, (_, n) => n).filter((n) => !keys.has(n))).toEqual(missing);
    for (const p of set.problems) {
      expect(p).toMatchObject({ language, format: 'multipl-e' });
      expect(p.taskId).toMatch(/^HumanEval_\d+_\w+$/);
      expect(p.stopTokens?.length).toBeGreaterThan(0);
      expect(p.prompt.endsWith('{\n')).toBe(true);
    }
    expect(set.problems[0].taskId).toBe('HumanEval_0_has_close_elements');
  });

  it.each(SETS)('$name: every prompt parses with tree-sitter, alone and with its tests, and its doc comment is all comment', ({ name, grammar }) => {
    const bad: string[] = [];
    for (const p of readBenchmark(name).problems) {
      const comment = docComment(p.prompt);
      if (comment.length === 0 || comment.some((l) => !/^\s*\/\//.test(l))) bad.push(`${p.taskId}: doc comment`);
      const closer = p.language === 'java' ? '    }\n}\n' : '}\n';
      if (parseCode(grammar, p.prompt + closer).hasError) bad.push(`${p.taskId}: prompt`);
      if (parseCode(grammar, closedProgram(p)).hasError) bad.push(`${p.taskId}: prompt + tests`);
    }
    expect(bad).toEqual([]);
  });

  it("the build script's repair turns MultiPL-E's published HumanEval_0 (f9b4ccd0, no `//` on continuation lines) into the bundled record", async () => {
    const script = (await import(pathToFileURL(join(ROOT, 'scripts/exec-build-multipl-e.mjs')).href)) as {
      repairPrompt(prompt: string): { prompt: string; repaired: number };
    };
    for (const [lang, set, grammar] of [['cpp', 'humaneval-cpp', 'cpp'], ['java', 'humaneval-java', 'java']] as const) {
      const published = JSON.parse(readFileSync(join(ROOT, `test/fixtures/exec/multipl-e/humaneval-${lang}-reworded-0.jsonl`), 'utf8')) as { prompt: string; tests: string };
      const bundled = readBenchmark(set).byKey.get('0')!;
      expect(parseCode(grammar, published.prompt + published.tests).hasError).toBe(true);
      const fixed = script.repairPrompt(published.prompt);
      expect(fixed.repaired).toBe(5);
      expect(fixed.prompt).toBe(bundled.prompt);
      expect(published.tests).toBe(bundled.tests);
      // a sound prompt is left as it is
      expect(script.repairPrompt(bundled.prompt)).toEqual({ prompt: bundled.prompt, repaired: 0 });
    }
  });
});

/** Hand-written solutions (bodies appended to each prompt) for HumanEval 0, 2 and 53, and one wrong answer. */
const COMPLETIONS: Partial<Record<ExecLanguage, Record<string, string>>> = {
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

describe.skipIf(!bwrapAvailable())('bundled MultiPL-E HumanEval through `codegauge exec` in the sandbox (bwrap)', () => {
  it.each(SETS)('$name: correct solutions of 0, 2 and 53 pass, a wrong one of 53 fails', async ({ name, language }) => {
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
  }, 60_000);
});
