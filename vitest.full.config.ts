import { defineConfig } from 'vitest/config';
import { shared } from './vitest.config.js';

/** `npm run test:full`: the long integration cases that `npm test` leaves out (see vitest.config.ts). */
export default defineConfig({
  test: {
    ...shared,
    include: ['test/**/*.full.test.ts'],
  },
});
