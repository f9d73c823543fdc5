#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm ci` (the package's prepare script).
import module from 'node:module';

// Node >= 22.1 keeps V8's compiled code between runs (start-up is most of a small job); Node 20 has no such cache.
module.enableCompileCache?.();
const { runCli } = await import('../dist/cli/main.js');

// A reader that stops early (`codegauge score --help | head`) closes the pipe: leave quietly, as Unix tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
process.exitCode = await runCli(process.argv.slice(2));
