import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/**
 * The published types. (The code blocks of README.md and docs/, the library example of docs/library.md among them,
 * are run by test/docs-examples.test.ts.)
 */
const built = existsSync(join(ROOT, 'dist', 'index.js'));

describe.skipIf(!built)('the package as the docs use it', () => {
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
