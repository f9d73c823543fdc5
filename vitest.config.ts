import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    // onnxruntime-node's addon cannot be loaded by two worker threads of one process
    // ("Module did not self-register"), so test files run in separate processes.
    pool: 'forks',
    // METEOR's compiled WordNet goes to a cache folder of the tests, never the user's ~/.cache (see README, METEOR).
    env: { CODEGAUGE_WORDNET_CACHE: join(tmpdir(), 'codegauge-test-wordnet-cache') },
  },
});
