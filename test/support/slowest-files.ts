import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints the ten slowest test files at the end of a run, so that the time budget of `npm test` (3 minutes on 2
 * cores) stays in sight; long integration cases belong in `*.full.test.ts` (`npm run test:full`).
 */
export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules.map((m) => ({ file: m.moduleId.replace(process.cwd() + '/', ''), ms: m.diagnostic().duration })).sort((a, b) => b.ms - a.ms).slice(0, 10);
    if (rows.length === 0) return;
    const width = Math.max(...rows.map((r) => r.file.length));
    process.stdout.write(`\nslowest test files:\n${rows.map((r) => `  ${r.file.padEnd(width)}  ${(r.ms / 1000).toFixed(1).padStart(6)} s`).join('\n')}\n`);
  }
}
