// Copies the tree-sitter grammar .wasm files (and licences) from installed grammar packages into wasm/grammars.
// The packages are not dependencies of codegauge; to refresh the grammars, install them without saving first:
//   npm install --no-save tree-sitter-python@0.23.6 tree-sitter-java@0.23.5 ...   (versions: wasm/grammars/PROVENANCE.md)
//   node scripts/copy-grammars.mjs
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const packages = ['c', 'c-sharp', 'cpp', 'go', 'java', 'javascript', 'php', 'python', 'ruby', 'rust', 'typescript'].map((l) => `tree-sitter-${l}`);
for (const pkg of packages) {
  const dir = join(root, 'node_modules', pkg);
  if (!existsSync(dir)) throw new Error(`${pkg} is not installed (npm install --no-save ${pkg}@VERSION)`);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.wasm') && f !== 'tree-sitter-php_only.wasm')) copyFileSync(join(dir, file), join(root, 'wasm', 'grammars', file));
  copyFileSync(join(dir, 'LICENSE'), join(root, 'wasm', 'grammars', 'licenses', `${pkg}-LICENSE`));
  console.log(`copied ${pkg}`);
}
