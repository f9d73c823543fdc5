import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliReference } from '../src/cli/reference.js';
import { brokenLinks, callProblems, codegaugeCalls, conventionProblems, docFiles, helpByCommand, outputMatches, parseBlocks, runPage } from './docs-examples.js';
import { ROOT } from './helpers.js';

/**
 * Every code block of README.md and docs/*.md is marked with what it is, and every block meant to run is run:
 * the convention is described at the top of test/docs-examples.ts. Blocks marked `slow` run in
 * test/docs-examples.full.test.ts (npm run test:full).
 */
const files = docFiles();
const blocks = files.flatMap((f) => parseBlocks(f));
const built = existsSync(join(ROOT, 'dist', 'index.js'));

describe('the code blocks of README.md and docs/', () => {
  it('are each marked: sh, ts, output, synopsis or LANG no-run REASON (a new block cannot go untested by accident)', () => {
    expect(files).toContain('docs/cli.md');
    expect(conventionProblems(blocks)).toEqual([]);
    // the README's tour runs
    expect(blocks.filter((b) => b.file === 'README.md' && b.kind === 'sh' && !b.slow).length).toBeGreaterThanOrEqual(4);
  });

  it('name only commands and options that exist, in commands run or not and in synopses', () => {
    const help = helpByCommand(cliReference());
    const calls = blocks.filter((b) => b.kind === 'sh' || b.kind === 'synopsis' || (b.kind === 'no-run' && /^(sh|console)\b/.test(b.info))).flatMap((b) => codegaugeCalls(b).map((call) => ({ b, call })));
    expect(calls.length).toBeGreaterThan(30);
    expect(calls.flatMap(({ b, call }) => callProblems(call, help).map((p) => `${b.file}:${b.line}: ${p}`))).toEqual([]);
  });

  it('and the links between the pages resolve, anchors included', () => {
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });

  it('the checks themselves catch what they should', () => {
    const md = ['```', 'x', '```', '```sh no-run', 'y', '```', '```output', 'z', '```', '```sh slow exit=1', 'w', '```', '```output', 'v', '```', '```python', 'u', '```'].join('\n');
    expect(conventionProblems(parseBlocks('t.md', md)).map((p) => p.replace(/:.*?:/, ':'))).toEqual([
      't.md: no info string: mark it sh, ts, output, synopsis, or LANG no-run REASON',
      't.md: a no-run block must say why (`sh no-run needs a model server`)',
      't.md: an output block must follow the sh or ts block that prints it (else mark it output no-run REASON)',
      't.md: "python" is not a known mark: sh, ts, output, synopsis, or LANG no-run REASON',
    ]);
    expect(parseBlocks('t.md', md)[3]).toMatchObject({ kind: 'sh', slow: true, exit: 1 });
    const help = helpByCommand(cliReference());
    expect(callProblems(['score', '--refs', 'r', '--metrc', 'bleu'], help)).toEqual(['codegauge score: no option --metrc']);
    expect(callProblems(['sbc', 'runn'], help)).toEqual(['"codegauge sbc runn": no such subcommand']);
    expect(callProblems(['scor'], help)).toEqual(['no command "codegauge scor"']);
    expect(outputMatches('a\n...\nz\n', 'a\nb\nc\nz\n', false)).toBe(true);
    expect(outputMatches('a\nz\n', 'a\nb\nz\n', false)).toBe(false);
    expect(outputMatches('x: python-…|y\n', 'x: python-3.11.7|y\n', false)).toBe(true);
    expect(outputMatches('x: python-…|y\n', 'x: python-3.11.7|z\n', false)).toBe(false);
    expect(outputMatches('codex   87.50\n', 'codex  100.00\n', true)).toBe(true);
    expect(outputMatches('codex   87.50\n', 'codex  100.00\n', false)).toBe(false);
  });
});

const runnable = files.filter((f) => parseBlocks(f).some((b) => (b.kind === 'sh' || b.kind === 'ts') && !b.slow));

describe.skipIf(!built)('the runnable blocks run and print what the docs show', () => {
  for (const file of runnable) it.concurrent(file, async () => expect(await runPage(file, false)).toEqual([]), 180_000);
});
