#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm ci` (the package's prepare script).
import { runCli } from '../dist/cli/main.js';

process.exitCode = await runCli(process.argv.slice(2));
