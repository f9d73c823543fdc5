import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm test`: every test but the long integration cases (`*.full.test.ts`: the install-size check, whole-set parity,
 * pyodide's attack batches, each runner's limits), which `npm run test:full` runs (vitest.full.config.ts).
 */
export const shared = {
  testTimeout: 60_000,
  // Test files run in separate processes: a sandbox test's servers, Workers and children stay with their file.
  pool: 'forks' as const,
  // one file per core (vitest would keep one core free: on 2 cores, half the speed)
  maxWorkers: availableParallelism(),
  // METEOR's compiled WordNet goes to a cache folder of the tests, never the user's ~/.cache (see README, METEOR).
  env: { CODEGAUGE_WORDNET_CACHE: join(tmpdir(), 'codegauge-test-wordnet-cache') },
  reporters: ['default', './test/support/slowest-files.ts'],
};

export default defineConfig({
  test: {
    ...shared,
    include: ['test/**/*.test.ts'],
    exclude: ['test/**/*.full.test.ts', 'node_modules/**'],
  },
});
