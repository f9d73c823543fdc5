import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    // Test files run in separate processes. First needed for onnxruntime-node's native addon, which two worker
    // threads of one process cannot load ("Module did not self-register"); the development install now runs ONNX
    // Runtime's WebAssembly build instead (test/shims/onnxruntime-node), users' installs still load the addon.
    pool: 'forks',
    // METEOR's compiled WordNet goes to a cache folder of the tests, never the user's ~/.cache (see README, METEOR).
    env: { CODEGAUGE_WORDNET_CACHE: join(tmpdir(), 'codegauge-test-wordnet-cache') },
  },
});
