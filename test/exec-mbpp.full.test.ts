import { describe, expect, it } from 'vitest';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { findExecutable } from '../src/exec/sandbox/paths.js';
import { checkMbpp3, MBPP_3 } from './exec-mbpp-cases.js';
import { runBatch, why } from './exec-fixtures.js';

/** The compiled languages of test/exec-mbpp.test.ts (`npm run test:full`; .ci/run installs every toolchain). */
describe.skipIf(!bwrapAvailable())("MultiPL-E's MBPP translations through the compiled runners (bwrap)", () => {
  it.each(MBPP_3.filter((c) => !c.fast))('$set: a right answer of mbpp_3 passes, a wrong one fails (skipped without $toolchain)', checkMbpp3, 180_000);

  it.skipIf(!findExecutable('mcs'))("mbpp-cs: a right answer fails where the tests compare lists by reference (why they are quarantined)", async () => {
    const rows = await runBatch('bwrap', readBenchmark('mbpp-cs'), [
      { name: 'squares', task_id: 'mbpp_8_square_nums', completion: '        return nums.Select(x => x * x).ToList();\n' },
    ], { timeoutMs: 30_000 });
    expect(rows.squares.status, why(rows.squares)).toBe('failed');
  }, 120_000);
});
