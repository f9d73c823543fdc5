import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** The README's library example runs as printed (through the package's own entry, `codegauge`) and prints what it says. */
const built = existsSync(join(ROOT, 'dist', 'index.js'));

describe.skipIf(!built)('README library example', () => {
  it('runs and prints what the README shows', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Library'));
    const code = /```ts\n([\s\S]*?)```/.exec(section)![1];
    const printed = /prints\n\n```\n([\s\S]*?)```/.exec(section)![1];
    mkdirSync(join(ROOT, 'test-output'), { recursive: true });
    const file = join(ROOT, 'test-output', 'readme-example.mjs'); // inside the package, so `codegauge` resolves to itself
    writeFileSync(file, code);
    const r = spawnSync('node', [file], { encoding: 'utf8', cwd: ROOT });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(printed);
  });

  it('the published types compile in a strict project with skipLibCheck off', () => {
    const dir = join(ROOT, 'test-output', 'types-check');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true }, files: ['use.ts'] }));
    writeFileSync(
      join(dir, 'use.ts'),
      "import { scoreSystems, compareSystems, metaEvaluate, InputError, type ScoreReport } from 'codegauge';\n" +
        "const r: ScoreReport = await scoreSystems({ references: [['a b']], systems: [{ name: 's', hypotheses: ['a b'] }], metrics: ['bleu'] });\n" +
        'console.log(r.kind, typeof compareSystems, typeof metaEvaluate, InputError.name);\n',
    );
    const r = spawnSync('node', [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
