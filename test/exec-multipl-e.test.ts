import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadLanguage, type LanguageId } from '../src/code/languages.js';
import { parseCode } from '../src/code/syntax-tree.js';
import { BENCHMARKS, readBenchmark } from '../src/exec/benchmarks/bundled.js';
import type { ExecLanguage, Problem } from '../src/exec/benchmarks/problems.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { runBundledThroughCli } from './exec-multipl-e-cases.js';
import { ROOT } from './helpers.js';

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

describe.skipIf(!bwrapAvailable())('bundled MultiPL-E HumanEval through `codegauge exec` in the sandbox (bwrap)', () => {
  // Java and C++ in npm run test:full (exec-multipl-e.full.test.ts)
  it.each(SETS.filter((s) => s.language === 'typescript'))('$name: correct solutions of 0, 2 and 53 pass, a wrong one of 53 fails', async ({ name, language }) => {
    await runBundledThroughCli(name, language);
  }, 60_000);
});
