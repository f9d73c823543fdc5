#!/usr/bin/env node
// Regenerates the CLI reference in docs/cli.md from the command definitions (npm run docs).
import { readFileSync, writeFileSync } from 'node:fs';
import { withCliReference } from '../dist/cli/reference.js';

const path = new URL('../docs/cli.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withCliReference(before);
writeFileSync(path, after);
console.log(before === after ? 'docs/cli.md: the CLI reference is up to date' : 'docs/cli.md: the CLI reference regenerated');
