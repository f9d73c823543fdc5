import { expect } from 'vitest';
import { codegaugeMatchers, type CodegaugeMatchers } from './matchers.js';

/**
 * `import 'codegauge/vitest'` (e.g. in a Vitest setup file) registers codegauge's matchers:
 *
 *   await expect(code).toPassTests({ benchmark: 'humaneval', task: 'HumanEval/0' });
 *   await expect(hyp).toScoreAtLeast('codebleu:lang=ts', ref, 40);
 *   await expect(code).toBeJudgedAtLeast({ method: 'dsa', model: 'openai:gpt-4o-mini', reference }, 75);
 */
expect.extend(codegaugeMatchers);

declare module 'vitest' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Matchers<T = any> extends CodegaugeMatchers<T> {}
}

export { codegaugeMatchers, toBeJudgedAtLeast, toPassTests, toScoreAtLeast } from './matchers.js';
export type { CodegaugeMatchers, JudgeSpec, PassTestsOptions, ProblemRef } from './matchers.js';
