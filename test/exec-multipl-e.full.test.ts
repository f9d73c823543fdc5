import { describe, it } from 'vitest';
import type { ExecLanguage } from '../src/exec/benchmarks/problems.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { runBundledThroughCli } from './exec-multipl-e-cases.js';

/** The bundled MultiPL-E Java and C++ sets through `codegauge exec` (npm test runs TypeScript's). */
describe.skipIf(!bwrapAvailable())('bundled MultiPL-E HumanEval through `codegauge exec` in the sandbox (bwrap)', () => {
  it.each([
    { name: 'humaneval-java', language: 'java' as ExecLanguage },
    { name: 'humaneval-cpp', language: 'cpp' as ExecLanguage },
  ])('$name: correct solutions of 0, 2 and 53 pass, a wrong one of 53 fails', async ({ name, language }) => {
    await runBundledThroughCli(name, language);
  }, 120_000);
});
