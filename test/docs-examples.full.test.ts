import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles, parseBlocks, runPage } from './docs-examples.js';
import { ROOT } from './helpers.js';

/**
 * The pages of README.md and docs/ with a `slow` block (the demo, the judge study on the tiny model): every runnable
 * block of the page in order, slow ones included (the convention is at the top of test/docs-examples.ts).
 */
const pages = docFiles().filter((f) => parseBlocks(f).some((b) => b.slow));
const built = existsSync(join(ROOT, 'dist', 'index.js'));

describe.skipIf(!built)('the slow blocks of README.md and docs/ run and print what the docs show', () => {
  it('there are some', () => expect(pages.length).toBeGreaterThan(0));
  for (const file of pages) it.concurrent(file, async () => expect(await runPage(file, true)).toEqual([]), 600_000);
});
