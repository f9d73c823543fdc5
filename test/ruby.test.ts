import { beforeAll, describe, expect, it } from 'vitest';
import { CodeBleuCgm, Ruby, dataFlow, loadLanguage, parseCode, parseMetric, scoreCorpus, stringSimilarity, treeEditDistance, LANGUAGES } from '../src/index.js';
import { hungarian, graphEditDistance } from '../src/code/graph-edit-distance.js';
import { labeledSyntaxTree, programDependenceGraph } from '../src/code/pdg.js';
import { ParseBoundError, textOf } from '../src/code/syntax-tree.js';
import { WorkBoundError } from '../src/errors.js';
import { treeSize } from '../src/code/tree-edit-distance.js';
import { codeTokens } from '../src/text/code-tokenizer.js';
import { RUBY_BOUNDS, tokenLevenshtein } from '../src/metrics/ruby.js';
import { pyRound, readJson, vector } from './helpers.js';

beforeAll(async () => {
  await Promise.all(LANGUAGES.map((l) => loadLanguage(l)));
});

const CONALA_SYSTEMS = ['baseline', 'tranx-annot', 'best-tranx', 'best-tranx-rerank', 'codex'];

function agreement(xs: number[], ys: number[]) {
  const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
  const mx = mean(xs);
  const my = mean(ys);
  let cov = 0;
  let vx = 0;
  let vy = 0;
  xs.forEach((x, i) => {
    cov += (x - mx) * (ys[i] - my);
    vx += (x - mx) ** 2;
    vy += (ys[i] - my) ** 2;
  });
  return { pearson: cov / Math.sqrt(vx * vy), mae: mean(xs.map((x, i) => Math.abs(x - ys[i]))) };
}

describe('RUBY string level = codegen-metrics STS', () => {
  const v = vector('ruby.json');
  for (const tc of v.sts_examples_verified_against_conala_ruby_column) {
    it(`${tc.hyp} = ${tc.sts}`, () => {
      expect(pyRound(Math.max(...tc.refs.map((r: string) => stringSimilarity(tc.hyp, r))), 3)).toBe(tc.sts);
    });
  }
  it('both empty is 1, one empty is 0', () => {
    expect(stringSimilarity('', '')).toBe(1);
    expect(stringSimilarity('a b', '')).toBe(0);
  });
});

describe('tree and graph edit distances', () => {
  const t = (label: string, ...children: any[]) => ({ label, children });
  it('Zhang-Shasha on the classic example (distance 2)', () => {
    // f(d(a, c(b)), e) vs f(c(d(a, b)), e): delete c below d, insert c above d.
    expect(treeEditDistance(t('f', t('d', t('a'), t('c', t('b'))), t('e')), t('f', t('c', t('d', t('a'), t('b'))), t('e')))).toBe(2);
    expect(treeEditDistance(t('a'), t('b'))).toBe(1);
    expect(treeEditDistance(t('a', t('b'), t('c')), t('a', t('b'), t('c')))).toBe(0);
    expect(treeEditDistance(t('a', t('b'), t('c')), t('a'))).toBe(2);
  });
  it('handles a 10,000-deep tree without recursion', () => {
    let deep: any = t('x');
    for (let i = 0; i < 10_000; i++) deep = t('p', deep);
    expect(treeEditDistance(deep, t('p', t('x')))).toBe(9_999);
  });
  it('Hungarian assignment finds the optimum', () => {
    const cost = Float64Array.from([4, 1, 3, 2, 0, 5, 3, 2, 2]);
    const a = hungarian(cost, 3);
    expect(cost[0 * 3 + a[0]] + cost[1 * 3 + a[1]] + cost[2 * 3 + a[2]]).toBe(5);
  });
  it('graph edit distance of identical graphs is 0, of disjoint ones the sum of sizes', () => {
    const g = { nodes: ['a', 'b', 'c'], edges: [[0, 1, 'data'], [1, 2, 'control']] as [number, number, string][] };
    const eq = (x: string, y: string) => (x === y ? 0 : 1);
    expect(graphEditDistance(g, g, eq)).toBe(0);
    expect(graphEditDistance(g, { nodes: [], edges: [] }, eq)).toBe(5);
  });
});

describe('RUBY levels and robustness', () => {
  it('uses the graph level for programs with dependences, tree for flat ones, string when a side does not parse', async () => {
    const m = new Ruby('python');
    await m.ready();
    expect(m.compare('x = 1\ny = x + 2\nprint(y)', 'a = 1\nb = a + 2\nprint(b)').level).toBe('graph');
    expect(m.compare('x = 1\ny = x + 2\nprint(y)', 'a = 1\nb = a + 2\nprint(b)').score).toBeGreaterThan(0.5);
    expect(m.compare('print(1)', 'print(2)').level).toBe('tree');
    expect(m.compare('print(1', 'print(2)').level).toBe('string');
    expect(m.compare('print `x`', 'print(2)').level).toBe('string'); // Python 2 only
    const deep = '('.repeat(10_000) + 'x' + ')'.repeat(10_000);
    expect(m.compare(deep, deep).score).toBeGreaterThanOrEqual(0);
  });
  it('works for every language and reports the level of each segment', async () => {
    const samples: Record<string, [string, string]> = {
      java: ['int f(int a) { int b = a + 1; return b; }', 'int g(int x) { int y = x + 2; return y; }'],
      typescript: ['function f(a: number) { const b = a + 1; return b; }', 'function g(x: number) { let y = x * 2; return y; }'],
      tsx: ['const A = (p: {n: number}) => { const m = p.n; return <div>{m}</div>; };', 'const B = () => <span/>;'],
      go: ['func f(a int) int { b := a + 1; return b }', 'func g(x int) int { y := x; return y }'],
      rust: ['fn f(a: i32) -> i32 { let b = a + 1; b }', 'fn g(x: i32) -> i32 { x }'],
      c: ['int f(int a) { int b = a + 1; return b; }', 'int g(int x) { return x; }'],
    };
    for (const [lang, [a, b]] of Object.entries(samples)) {
      const metric = parseMetric(`ruby:lang=${lang}`);
      await metric.ready!();
      const r = scoreCorpus(metric, [a, b], [[b], [a]], { segments: true });
      expect(r.score).toBeGreaterThan(0);
      expect(r.score).toBeLessThanOrEqual(100);
      expect(r.segmentDetails).toHaveLength(2);
      expect(Object.values(r.details!).reduce((s, x) => s + x, 0)).toBe(2);
    }
  });
});

describe('RUBY bounded work (issue 10)', () => {
  // `function f0(){ function f1(){ ... return 1; } }`: each statement contains all those nested in it, so the graph
  // level's statement costs grow as depth^4 (200 deep took 47 s unbounded, 400 deep over 300 s).
  const nested = (depth: number, value: number) => {
    let s = `return ${value};`;
    for (let i = depth - 1; i >= 0; i--) s = `function f${i}(){ ${s} }`;
    return s;
  };
  // The unbounded levels, recomputed from the building blocks.
  const unboundedGraph = (a: string, b: string) => {
    const graph = (code: string) => {
      const parsed = parseCode('javascript', code);
      return programDependenceGraph(parsed, (n) => codeTokens(textOf(parsed, n)).join('\u0001')).graph;
    };
    const [g1, g2] = [graph(a), graph(b)];
    const cost = (x: string, y: string) => {
      const [xs, ys] = [x.split('\u0001'), y.split('\u0001')];
      return x === y ? 0 : tokenLevenshtein(xs, ys) / Math.max(xs.length, ys.length, 1);
    };
    return 1 - graphEditDistance(g1, g2, cost) / (g1.nodes.length + g2.nodes.length + g1.edges.length + g2.edges.length);
  };
  const unboundedTree = (a: string, b: string) => {
    const [t1, t2] = [a, b].map((code) => labeledSyntaxTree(parseCode('javascript', code)));
    return 1 - treeEditDistance(t1, t2) / (treeSize(t1) + treeSize(t2));
  };

  it('200 and 400 nested functions fall back to the string level and say why', async () => {
    const m = new Ruby('javascript');
    await m.ready();
    for (const depth of [200, 400]) {
      const [a, b] = [nested(depth, 1), nested(depth, 2)];
      const r = m.compare(a, b);
      expect(r.level).toBe('string');
      expect(r.overBudget).toEqual(['graph', 'tree']);
      expect(r.score).toBe(stringSimilarity(a, b));
      const c = scoreCorpus(m, [a], [[b]], { segments: true });
      expect(c.segmentDetails).toEqual(['string (graph, tree over budget)']);
      expect(c.details).toEqual({ graph: 0, tree: 0, string: 1, graph_over_budget: 1, tree_over_budget: 1 });
    }
  });

  it('just under a bound the level and value are those of the unbounded computation', async () => {
    const m = new Ruby('javascript');
    await m.ready();
    const work = (depth: number) => m.work(nested(depth, 1), nested(depth, 2));
    // The deepest nesting within the graph work budget, then the next one, scored at the tree level.
    let depth = 10;
    while (work(depth + 1).graph!.work <= RUBY_BOUNDS.graphWork) depth++;
    expect(depth).toBeGreaterThan(30);
    const [a, b] = [nested(depth, 1), nested(depth, 2)];
    expect(m.compare(a, b)).toEqual({ score: unboundedGraph(a, b), level: 'graph', overBudget: [] });
    const [c, d] = [nested(depth + 1, 1), nested(depth + 1, 2)];
    expect(m.compare(c, d)).toEqual({ score: unboundedTree(c, d), level: 'tree', overBudget: ['graph'] });
    expect(scoreCorpus(m, [c], [[d]], { segments: true }).segmentDetails).toEqual(['tree (graph over budget)']);
    // The tree level in turn holds until its own bound.
    while (work(depth + 1).tree!.work <= RUBY_BOUNDS.treeWork) depth++;
    const [e, f] = [nested(depth, 1), nested(depth, 2)];
    expect(m.compare(e, f)).toEqual({ score: unboundedTree(e, f), level: 'tree', overBudget: ['graph'] });
    expect(m.compare(nested(depth + 1, 1), nested(depth + 1, 2)).overBudget).toEqual(['graph', 'tree']);
  });
});

describe('RUBY bounds on set-up, the string level and parsing', () => {
  const nestedIfs = (n: number) => `int f(int x) {\n${'if (x) {\n'.repeat(n)}x++;\n${'}\n'.repeat(n)}return x; }\n`;
  it('5,000 nested ifs: the graph level is over budget before its labels are tokenised (1.4e8 characters)', async () => {
    const m = new Ruby('c');
    await m.ready();
    const [a, b] = [nestedIfs(5000), nestedIfs(4999)];
    // The trees (20,000 nodes each) are past treeCells, which always meant the string level.
    expect(m.compare(a, b)).toEqual({ score: stringSimilarity(a, b), level: 'string', overBudget: ['graph'] });
    expect(m.work(a, b).graph!.work).toBe(Infinity);
    // Shallow nesting stays within every bound: the graph level, labels tokenised as before.
    expect(m.compare(nestedIfs(5), nestedIfs(4))).toMatchObject({ level: 'graph', overBudget: [] });
    expect(m.work(nestedIfs(5), nestedIfs(4)).graph!.work).toBeLessThan(RUBY_BOUNDS.graphWork);
  });

  it('the string level past its bound is a WorkBoundError; a shared prefix and suffix are not counted', () => {
    const tokens = (n: number, salt: string) => Array.from({ length: n }, (_, i) => `${salt}${i % 97}`).join(' ');
    const [a, b] = [tokens(20_000, 'a'), tokens(20_000, 'b')];
    expect(20_000 * 20_000).toBeGreaterThan(RUBY_BOUNDS.stringCells);
    expect(() => stringSimilarity(a, b)).toThrow(WorkBoundError);
    // identical but for the middle token: one edit in 20,001
    const c = `${a} x ${a}`;
    const d = `${a} y ${a}`;
    expect(stringSimilarity(c, d)).toBe(1 - 1 / codeTokens(c).length);
  });

  it('a parse past its deadline is a ParseBoundError, and the next parse is of its own source', () => {
    const broken = 'x = 1\n'.repeat(20_000);
    expect(() => parseCode('java', broken, { deadline: performance.now() + 1 })).toThrow(ParseBoundError);
    // tree-sitter resumes a cancelled parse unless reset: the next tree would be the broken source's
    const next = parseCode('java', 'class A { int x = 1; }');
    expect(next.hasError).toBe(false);
    expect(next.root.children.map((c) => c.type)).toEqual(['class_declaration']);
  });
});

describe('agreement with the published CoNaLa values', () => {
  const items = readJson<any[]>('data/codegen-metrics/conala-all-grades.json.gz');
  it('RUBY: string level exact, overall close', async () => {
    const m = new Ruby('python');
    await m.ready();
    const ours: number[] = [];
    const theirs: number[] = [];
    let stringLevel = 0;
    let stringExact = 0;
    for (const sys of CONALA_SYSTEMS) {
      const r = scoreCorpus(m, items.map((x) => x[sys]), items.map((x) => x.snippet), { segments: true });
      r.segments!.forEach((s, i) => {
        ours.push(s / 100);
        theirs.push(items[i][`ruby-${sys}`]);
        if (r.segmentDetails![i] === 'string') {
          stringLevel++;
          if (pyRound(s / 100, 3) === items[i][`ruby-${sys}`]) stringExact++;
        }
      });
    }
    const { pearson, mae } = agreement(ours, theirs);
    console.log(`RUBY vs published CoNaLa ruby: pearson ${pearson.toFixed(3)}, MAE ${mae.toFixed(3)}, string level ${stringLevel} pairs, ${stringExact} exact`);
    expect(stringLevel).toBeGreaterThan(1000);
    expect(stringExact / stringLevel).toBeGreaterThan(0.99);
    expect(pearson).toBeGreaterThan(0.9);
  });
  it('codebleu-cgm reproduces most of the published codebleu column', async () => {
    const m = new CodeBleuCgm();
    await m.ready();
    const ours: number[] = [];
    const theirs: number[] = [];
    for (const sys of CONALA_SYSTEMS) {
      const r = scoreCorpus(m, items.map((x) => x[sys]), items.map((x) => x.snippet), { segments: true });
      r.segments!.forEach((s, i) => {
        ours.push(s / 100);
        theirs.push(items[i][`codebleu-${sys}`]);
      });
    }
    const exact = ours.filter((x, i) => pyRound(x, 3) === theirs[i]).length;
    const { pearson, mae } = agreement(ours, theirs);
    console.log(`codebleu-cgm vs published CoNaLa codebleu: ${exact}/${ours.length} exact to 3 decimals, pearson ${pearson.toFixed(3)}, MAE ${mae.toFixed(3)}`);
    expect(exact / ours.length).toBeGreaterThan(0.9);
    expect(pearson).toBeGreaterThan(0.95);
  });
});

describe('TypeScript data flow', () => {
  it('links uses to definitions through declarations, assignments, parameters and loops', () => {
    const edges = dataFlow(parseCode('typescript', 'function f(n: number = 3) {\n  let s = 0;\n  for (const x of xs) { s = s + x * n; }\n  return s;\n}'));
    const flows = edges.map(([v, , rel, parents]) => `${v}<-${rel}-${parents.join(',')}`);
    expect(flows).toContain('n<-comesFrom-3');
    expect(flows).toContain('x<-computedFrom-xs');
    expect(flows.some((f) => f.startsWith('s<-computedFrom-') && f.includes('x') && f.includes('n'))).toBe(true);
    expect(dataFlow(parseCode('tsx', 'const a = 1; const b = <div>{a}</div>;')).some(([v, , , parents]) => v === 'a' && parents.includes('a'))).toBe(true);
  });
});
