import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { scoreSystems } from '../src/api/score.js';
import { loadConfig } from '../src/config/load.js';
import { describeMetrics, loadMetric, METRICS, parseMetric, parseSpec, SpecError } from '../src/index.js';
import type { Metric } from '../src/metrics/metric.js';
import { loadMetrics, METRIC_SPECS } from '../src/metrics/specs.js';
import { ROOT } from './helpers.js';

/**
 * A command loads only the metrics it is asked for: `codegauge score --metric bleu` (and each of its worker threads)
 * loads neither the other metrics, nor web-tree-sitter, nor WordNet. Checked on the build (bin/codegauge.js runs
 * dist/, as `npm test` builds first) in a child process whose module resolutions a loader hook writes down, each
 * with the thread that asked. The lazy path (`loadMetric`) and the library's synchronous `parseMetric` build the same
 * metrics through the same builders: same scores, signatures and errors.
 */
let dir: string;
let register: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-lazy-'));
  // module.register hooks run on a thread of their own; each resolution is appended to CG_TRACE_FILE, with the
  // threadId of the thread that registered them (0: the main thread; workers run the --import again).
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
let file, thread;
export function initialize(data) { file = data.file; thread = data.thread; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(file, thread + ' ' + result.url + '\\n');
  return result;
}
`,
  );
  register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';
import { threadId } from 'node:worker_threads';
register(new URL('./hooks.mjs', import.meta.url), { data: { file: process.env.CG_TRACE_FILE, thread: threadId } });
`,
  );
});

/** Runs node with the hook on `args` (from the repository root); the modules each thread resolved. */
function traced(name: string, args: string[]): { out: string; byThread: Map<string, string[]> } {
  const trace = join(dir, `${name}.trace`);
  writeFileSync(trace, '');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, CG_TRACE_FILE: trace }, timeout: 120_000 });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const byThread = new Map<string, string[]>();
  for (const line of readFileSync(trace, 'utf8').split('\n').filter(Boolean)) {
    const space = line.indexOf(' ');
    const [thread, url] = [line.slice(0, space), line.slice(space + 1)];
    byThread.set(thread, [...(byThread.get(thread) ?? []), url]);
  }
  return { out: r.stdout, byThread };
}

const METRIC_FILES = ['bleu', 'chrf', 'rouge', 'meteor', 'codebleu', 'codebleu-cgm', 'ruby', 'nltk-bleu', 'codebertscore', 'crystalbleu'];
/** What a thread loaded, by the names this test is about. */
function loadedOf(urls: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const url of urls) {
    const metric = /\/dist\/metrics\/([\w-]+)\.js$/.exec(url);
    if (metric && METRIC_FILES.includes(metric[1])) names.add(metric[1]);
    if (/\/dist\/metrics\/registry\.js$/.test(url)) names.add('registry');
    if (/\/dist\/text\/wordnet\.js$/.test(url)) names.add('wordnet');
    if (/\/node_modules\/web-tree-sitter\//.test(url)) names.add('web-tree-sitter');
    if (/\/dist\/api\/score-worker\.js$/.test(url)) names.add('score-worker');
  }
  return names;
}

const HEAVY = ['chrf', 'rouge', 'meteor', 'codebleu', 'codebleu-cgm', 'ruby', 'nltk-bleu', 'codebertscore', 'crystalbleu', 'registry', 'wordnet', 'web-tree-sitter'];

describe('codegauge score loads only the metrics named', () => {
  const files = () => {
    const refs = join(dir, 'refs.py.jsonl');
    const hyps = join(dir, 'hyps.py.jsonl');
    writeFileSync(refs, ['def f(a):\n    return a + 1', 'x = [i * i for i in range(10)]'].map((s) => JSON.stringify(s)).join('\n') + '\n');
    writeFileSync(hyps, ['def f(b):\n    return b + 1', 'x = [i for i in range(10)]'].map((s) => JSON.stringify(s)).join('\n') + '\n');
    return { refs, hyps };
  };

  it('--metric bleu: BLEU only, no web-tree-sitter, no WordNet', () => {
    const { refs, hyps } = files();
    const { out, byThread } = traced('bleu', ['bin/codegauge.js', 'score', '--refs', refs, '--hyps', hyps, '--metric', 'bleu', '--format', 'json']);
    expect(JSON.parse(out).systems[0].scores[0].name).toBe('BLEU');
    const loaded = loadedOf(byThread.get('0') ?? []);
    expect(loaded.has('bleu')).toBe(true);
    for (const heavy of HEAVY) expect(loaded.has(heavy), heavy).toBe(false);
  });

  it('--metric codebleu:lang=python: CodeBLEU and web-tree-sitter, not the others', () => {
    const { refs, hyps } = files();
    const { out, byThread } = traced('codebleu', ['bin/codegauge.js', 'score', '--refs', refs, '--hyps', hyps, '--metric', 'codebleu:lang=python', '--format', 'json']);
    expect(JSON.parse(out).systems[0].scores[0].name).toBe('CodeBLEU');
    const loaded = loadedOf(byThread.get('0') ?? []);
    expect(loaded.has('codebleu')).toBe(true);
    expect(loaded.has('web-tree-sitter')).toBe(true);
    for (const other of ['bleu', 'chrf', 'meteor', 'ruby', 'codebertscore', 'crystalbleu', 'registry', 'wordnet']) expect(loaded.has(other), other).toBe(false);
  });

  it('a worker thread of a parallel score loads only the metrics named', () => {
    const big = join(dir, 'big.jsonl');
    writeFileSync(big, Array.from({ length: 2000 }, (_, i) => JSON.stringify(`line ${i} of some words`)).join('\n') + '\n');
    const script = join(dir, 'parallel.mjs');
    // Small windows, and the main thread on its first one only: the worker scores the rest.
    writeFileSync(
      script,
      `const { scoreFiles } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/api/score.js')).href)});
const report = await scoreFiles({ refPaths: [${JSON.stringify(big)}], hypPaths: [${JSON.stringify(big)}], systems: ['a'], specs: ['bleu'], workers: 2, parallelMinBytes: 0, windowBytes: 2000, mainWindows: 1 });
console.log(JSON.stringify(report.systems[0].scores[0].score));
`,
    );
    const { out, byThread } = traced('parallel', [script]);
    expect(Number(out)).toBeCloseTo(100, 6);
    const workers = [...byThread.entries()].filter(([thread]) => thread !== '0');
    expect(workers.length).toBe(1);
    const loaded = loadedOf(workers[0][1]);
    expect(loaded.has('score-worker')).toBe(true);
    expect(loaded.has('bleu')).toBe(true);
    for (const heavy of HEAVY) expect(loaded.has(heavy), heavy).toBe(false);
  });
});

describe('loadMetric and parseMetric', () => {
  const references = [['def add(a, b):\n    return a + b'], ['for i in range(3):\n    print(i)'], ['x = {"a": 1, "b": [1, 2]}']];
  const hypotheses = ['def add(x, y):\n    return x + y', 'for j in range(3):\n    print(j * 2)', 'x = {"a": 1}'];
  const specOf = (name: string) => (METRICS[name].required?.includes('lang') ? `${name}:lang=python` : name);

  it('lists the same metrics and keys', () => {
    expect(Object.keys(METRICS)).toEqual(Object.keys(METRIC_SPECS));
    for (const [name, def] of Object.entries(METRICS)) {
      expect(def.keys, name).toBe(METRIC_SPECS[name].keys);
      expect(def.required, name).toEqual(METRIC_SPECS[name].required);
    }
    expect(describeMetrics()).toContain('  crystalbleu (k=an integer >= 0, corpus=FILE, ngrams=FILE, tok=code|ws)');
  });

  for (const name of Object.keys(METRICS)) {
    it(`${name}: the same metric, scores and signatures`, async () => {
      const spec = specOf(name);
      const direct = parseMetric(spec);
      const lazy = await loadMetric(spec);
      expect(lazy.constructor).toBe(direct.constructor);
      expect([lazy.name, lazy.spec, lazy.statsSize, lazy.signature(1)]).toEqual([direct.name, direct.spec, direct.statsSize, direct.signature(1)]);
      expect(METRICS[name].build(parseSpec(spec).options, spec).signature(1)).toBe(direct.signature(1));
      if (name === 'codebertscore') return; // scoring needs the model; the options are compared below
      const score = (metric: Metric<any>) => scoreSystems({ references, systems: [{ name: 'a', hypotheses }], metrics: [metric], segments: true });
      expect(await score(lazy)).toEqual(await score(direct));
    });
  }

  it('the same options through both (codebertscore, bleu, the default language)', async () => {
    const spec = 'codebertscore:lang=java,layer=11,idf=yes,measure=f3';
    const pick = (m: any) => ({ lang: m.lang, layer: m.layer, modelId: m.modelId, idf: m.idf, measure: m.measure, sources: m.sources, name: m.name });
    expect(pick(await loadMetric(spec))).toEqual(pick(parseMetric(spec)));
    const bleu = 'bleu:tok=code,smooth=floor,smooth-value=0.2,lc=yes,order=3';
    expect((await loadMetric(bleu)).signature(2)).toBe(parseMetric(bleu).signature(2));
    expect((await loadMetric('ruby', { language: 'ts' })).spec).toBe('ruby');
    expect((await loadMetric('ruby', { language: 'ts' }) as any).language).toBe((parseMetric('ruby', { language: 'ts' }) as any).language);
    const several = await loadMetrics(['chrf', parseMetric('bleu'), 'rougeL:tok=code'], { language: 'python' });
    expect(several.map((m) => m.name)).toEqual(['chrF2', 'BLEU', 'ROUGE-L']);
  });

  const BAD: [string, string?][] = [
    ['nope'],
    ['bleu:tok=xx'],
    ['bleu:tok'],
    ['bleu:foo=1'],
    ['bleu:tok=13a,tok=13a'],
    ['bleu:order=0'],
    ['chrf:beta=0'],
    ['rouge1:stem=maybe'],
    ['meteor:wordnet=2.0'],
    ['codebleu'],
    ['codebleu:lang=cobol'],
    ['codebleu:weights=1/2/3'],
    ['ruby'],
    ['codebleu-cgm:x=1'],
    ['codebertscore:lang=python,model=a/b/c'],
    ['crystalbleu:k=-1'],
    ['crystalbleu:corpus=a.txt,ngrams=b.json'],
    ['constructor'],
    ['__proto__'],
    ['codebleu', 'cobol'],
  ];

  it('bad specs: the same SpecError through parseSpec, parseMetric, loadMetric and loadMetrics', async () => {
    for (const [spec, language] of BAD) {
      const defaults = language ? { language } : {};
      let expected: Error | undefined;
      try {
        parseMetric(spec, defaults);
      } catch (e) {
        expected = e as Error;
      }
      expect(expected, spec).toBeInstanceOf(SpecError);
      expect(() => parseSpec(spec, defaults), spec).toThrow(expected!.message);
      const lazy = await loadMetric(spec, defaults).then(
        () => null,
        (e: Error) => e,
      );
      expect(lazy, spec).toBeInstanceOf(SpecError);
      expect(lazy!.message).toBe(expected!.message);
      // Several specs: the first bad one is the error, before any module is imported.
      await expect(loadMetrics(['bleu', spec, 'nope-either'], defaults)).rejects.toThrow(expected!.message);
    }
  });

  it('the messages users see are unchanged', () => {
    const message = (spec: string) => {
      try {
        parseSpec(spec);
      } catch (e) {
        return (e as Error).message;
      }
      return null;
    };
    expect(message('bleu:tok=xx')).toBe('invalid value "xx" for bleu key tok; expected 13a|intl|char|none|code');
    expect(message('meteor:wordnet=2.0')).toBe('invalid value "2.0" for meteor key wordnet; expected 3.0|3.1');
    expect(message('bleu:smooth=foo')).toBe('invalid value "foo" for bleu key smooth; expected exp|floor|add-k|none');
    expect(message('codebleu')).toBe(
      'metric codebleu needs lang=python|java|javascript|typescript|tsx|c_sharp|c|cpp|go|rust|php|ruby (e.g. codebleu:lang=python, or --lang, or a file name such as hyps.py.jsonl)',
    );
    expect(message('crystalbleu:corpus=a.txt,ngrams=b.json')).toBe('crystalbleu takes corpus=FILE or ngrams=FILE, not both ("crystalbleu:corpus=a.txt,ngrams=b.json")');
    expect(message('codebertscore')).toMatch(/^metric codebertscore needs lang=/);
    expect(() => METRICS.crystalbleu.build({ corpus: 'a', ngrams: 'b' }, 'crystalbleu:corpus=a,ngrams=b')).toThrow(/not both/);
  });

  it('a config with keys that exclude each other fails at loading, before any data is read', () => {
    const path = join(dir, 'codegauge.yaml');
    writeFileSync(join(dir, 'r.txt'), 'a\n');
    writeFileSync(path, 'data:\n  refs: r.txt\n  systems:\n    a: r.txt\nmetrics:\n  - bleu\n  - crystalbleu:corpus=x.txt,ngrams=y.json\n');
    expect(() => loadConfig(path)).toThrow(/not both/);
  });
});
