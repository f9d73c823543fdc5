import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    // onnxruntime-node's addon cannot be loaded by two worker threads of one process
    // ("Module did not self-register"), so test files run in separate processes.
    pool: 'forks',
  },
});
