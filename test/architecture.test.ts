import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/**
 * The shape ARCHITECTURE.md describes: no import cycles, and no arrows up from the domain folders to the entry points
 * (`src/api/`, `src/cli/`) or to the presentation of results (`src/report/`, `src/reporters/`). Type-only imports
 * count: they tie modules together as much as value imports do.
 */
const SRC = join(ROOT, 'src');
const files = (readdirSync(SRC, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => join(SRC, f));
const imports = new Map(
  files.map((file) => {
    const text = readFileSync(file, 'utf8');
    const specs = [...text.matchAll(/^(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/gm), ...text.matchAll(/import\('(\.[^']+)'\)/g)].map((m) => m[1]);
    return [file, [...new Set(specs.map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts'))))].filter((f) => files.includes(f))];
  }),
);
const rel = (f: string) => relative(SRC, f);

/** Strongly connected components of more than one module (Tarjan). */
function cycles(nodes: string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of imports.get(v)!.filter((x) => nodes.includes(x))) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(rel(w));
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return found;
}

describe('module structure', () => {
  it('finds the imports it checks (a broken pattern would pass everything)', () => {
    expect(imports.get(join(SRC, 'api', 'run.ts'))!.map(rel)).toContain(join('api', 'run', 'exec.ts'));
    expect(imports.get(join(SRC, 'cli', 'run.ts'))!.map(rel)).toContain(join('api', 'run.ts')); // a dynamic import
    expect(cycles([join(SRC, 'api', 'run.ts'), join(SRC, 'api', 'run', 'exec.ts')])).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(files)).toEqual([]);
  });

  it('has no arrow up from a domain folder to the entry points or the report', () => {
    const domain = ['code', 'compat', 'config', 'exec', 'extract', 'io', 'judges', 'llm', 'metrics', 'sbc', 'stats', 'text'];
    const above = ['api', 'cli', 'report', 'reporters'];
    const folder = (f: string) => rel(f).split(/[\\/]/)[0];
    const up = files
      .filter((f) => domain.includes(folder(f)))
      .flatMap((f) => imports.get(f)!.filter((g) => above.includes(folder(g))).map((g) => `${rel(f)} -> ${rel(g)}`));
    expect(up).toEqual([]);
  });
});
