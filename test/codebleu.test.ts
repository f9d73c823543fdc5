import { beforeAll, describe, expect, it } from 'vitest';
import { CodeBleu, loadLanguage, parseMetric, removeCommentsAndDocstrings, scoreCorpus, LANGUAGES } from '../src/index.js';
import { SubtreeInterner, subtreeIdentities } from '../src/code/subtrees.js';
import { pythonTokens } from '../src/compat/python-tokenize.js';
import { parseCode, textOf } from '../src/code/syntax-tree.js';
import { parserFor, type LanguageId } from '../src/code/languages.js';
import { readJson, vector } from './helpers.js';

const v = vector('codebleu.json');
const vt = v.verbatim_tests;

beforeAll(async () => {
  await Promise.all(LANGUAGES.map((l) => loadLanguage(l)));
});

async function codebleu(lang: LanguageId, predictions: string[], references: (string | string[])[]) {
  const metric = new CodeBleu(lang);
  await metric.ready();
  const r = scoreCorpus(metric, predictions, references.map((x) => (Array.isArray(x) ? x : [x])));
  const total = new Float64Array(metric.statsSize);
  for (let i = 0; i < r.statistics.data.length; i++) total[i % metric.statsSize] += r.statistics.data[i];
  return { score: metric.fraction(total), components: metric.componentsFromStatistics(total), result: r };
}

/** pytest.approx(x, 0.01): relative tolerance 1%. */
const approx = (got: number, expected: number, rel = 0.01) => expect(Math.abs(got - expected)).toBeLessThanOrEqual(rel * Math.abs(expected) + 1e-12);

describe('CodeBLEU: codebleu 0.7.1 test suite', () => {
  for (const tc of vt['test_simple_cases (lang=python)']) {
    it(`python: ${JSON.stringify(tc.predictions[0]).slice(0, 40)} = ${tc.codebleu}`, async () => {
      approx((await codebleu('python', tc.predictions, tc.references)).score, tc.codebleu);
    });
  }
  it('exact match scores 1 in every language', async () => {
    const p = vt.test_exact_match_works_for_all_langs['predictions=references'];
    for (const lang of vt.test_exact_match_works_for_all_langs.langs) expect((await codebleu(lang, p, p)).score).toBeCloseTo(1, 12);
  });
  for (const tc of vt['test_simple_cases_work_for_all_langs (codebleu approx 0.6, rel 0.1)']) {
    it(`simple case works for ${tc.lang}`, async () => approx((await codebleu(tc.lang, tc.predictions, tc.references)).score, 0.6, 0.1));
  }
  for (const tc of vt['test_code_x_glue_readme_examples (lang=java)']) {
    it(`CodeXGLUE example ${tc.codebleu}: all four components`, async () => {
      const { score, components } = await codebleu('java', tc.predictions, tc.references);
      approx(score, tc.codebleu);
      approx(components.ngram, tc.ngram_match_score);
      approx(components.syntax, tc.syntax_match_score);
      approx(components.dataflow, tc.dataflow_match_score);
    });
  }
  for (const tc of vt['test_input_variants (lang=python)']) {
    it(`reference variants: ${JSON.stringify(tc.references)}`, async () => approx((await codebleu('python', tc.predictions, tc.references)).score, tc.codebleu));
  }
});

describe('CodeBLEU n-gram components are exact', () => {
  for (const tc of v.generated_components) {
    it(`${tc.lang}: ${JSON.stringify(tc.predictions[0]).slice(0, 40)}`, async () => {
      const { components } = await codebleu(tc.lang, tc.predictions, tc.references);
      expect(Math.abs(100 * components.ngram - 100 * tc.ngram_match_score)).toBeLessThanOrEqual(1e-6);
      expect(Math.abs(100 * components.weighted_ngram - 100 * tc.weighted_ngram_match_score)).toBeLessThanOrEqual(1e-6);
      if (tc['codebleu_recomputed_0.25each'] !== undefined) {
        const { score } = await codebleu(tc.lang, tc.predictions, tc.references);
        expect(Math.abs(100 * score - 100 * tc['codebleu_recomputed_0.25each'])).toBeLessThanOrEqual(1e-6);
      }
    });
  }
});

describe('data flow stops where codebleu hits CPython\'s recursion limit', () => {
  // codebleu's extractors recurse once per tree level; past CPython's limit its graph is empty. The cut-off is a fixed
  // depth here, so a deep program scores the same cold and after V8 has optimised the extractor.
  const { cases } = vector('codebleu-dataflow-depth.json');
  const chain = (n: number) => `x = ${Array.from({ length: n }, (_, i) => `a${i}`).join(' + ')};\n`;
  const calls = (m: number) => `y = ${'f('.repeat(m)}x${')'.repeat(m)}\n`;
  it(`equals codebleu 0.7.1 on both sides of the cut-off (${cases.length} programs), the deepest twice`, async () => {
    const run = async (c: any) => {
      const hyp = c.shape === 'chain' ? chain(c.size) : calls(c.size);
      const ref = hyp + (c.shape === 'chain' ? 'y = x;\n' : 'z = y\n');
      return codebleu('python', [hyp], [ref]);
    };
    for (const c of [...cases, cases[2]]) {
      const { score, components } = await run(c);
      expect(Math.abs(score - c.codebleu), `${c.shape} ${c.size}`).toBeLessThanOrEqual(1e-12);
      expect(components.dataflow, `${c.shape} ${c.size}`).toBeCloseTo(c.dataflow_match_score, 12);
    }
  });
});

describe('comment and docstring removal equals codebleu', () => {
  const { cases } = vector('codebleu_remove_comments.json');
  it(`on ${cases.length} Python and Java snippets (CPython tokenizer port; errors keep the source)`, () => {
    const wrong = cases.filter((c: any) => removeCommentsAndDocstrings(c.source, c.lang) !== (typeof c.output === 'string' ? c.output : c.source));
    expect(wrong.slice(0, 3)).toEqual([]);
  });

  // Astral characters are surrogate pairs in JavaScript; `print(😀)` used to loop forever.
  const astral = vector('python-tokenize-astral.json');
  it(`tokenizes characters outside the BMP as CPython ${astral.python} does (${astral.cases.length} sources)`, () => {
    for (const c of astral.cases) {
      expect(pythonTokens(c.source).map((t) => [t.type, t.string])).toEqual(c.tokens);
      expect(removeCommentsAndDocstrings(c.source, 'python')).toBe(c.removed);
    }
  });

  // Quotes, backslashes, prefixes, CR and LF at random (`\` + CR inside a string once ended it early: JavaScript's
  // `.` excludes CR, Python's does not), and long lines of unended strings that were once rescanned quadratically.
  const random = vector('python-tokenize-random.json');
  it(`tokens and errors equal CPython ${random.python}'s on ${random.cases.length} random and long-line sources`, () => {
    for (const c of random.cases) {
      if (c.error) expect(() => pythonTokens(c.source), JSON.stringify(c.source)).toThrow(c.error);
      else expect(pythonTokens(c.source).map((t) => [t.type, t.string, t.start, t.end]), JSON.stringify(c.source)).toEqual(c.tokens);
    }
  });
});

describe('subtree identities equal tree-sitter S-expressions', () => {
  function check(lang: LanguageId, sources: string[]) {
    const interner = new SubtreeInterner();
    const byId = new Map<number, string>();
    const byString = new Map<string, number>();
    let checked = 0;
    for (const source of sources) {
      const parsed = parseCode(lang, source);
      const ids = subtreeIdentities(parsed.root, interner, (n) => textOf(parsed, n));
      const tree = parserFor(lang).parse(source)!;
      const strings: string[] = [];
      const rootNode = tree.rootNode;
      const stack = [rootNode];
      while (stack.length) {
        const n = stack.pop()!;
        if (n === rootNode || n.childCount > 0) strings.push(n.toString());
        for (let k = n.childCount - 1; k >= 0; k--) stack.push(n.child(k)!);
      }
      tree.delete();
      expect(ids.length).toBe(strings.length);
      ids.forEach((id, i) => {
        const s = strings[i];
        if (byId.has(id)) expect(byId.get(id)).toBe(s);
        else byId.set(id, s);
        if (byString.has(s)) expect(byString.get(s)).toBe(id);
        else byString.set(s, id);
        checked++;
      });
    }
    return checked;
  }
  it('on the CoNaLa and HearthStone Python (many with syntax errors)', () => {
    const sources: string[] = [];
    for (const x of readJson<any[]>('data/codegen-metrics/conala-all-grades.json.gz')) sources.push(...x.snippet, x.baseline, x.codex, x['tranx-annot']);
    for (const x of readJson<any[]>('data/codegen-metrics/hs-all-grades.json.gz')) sources.push(...x.snippet, x.gcnn, x.nl2code);
    expect(check('python', sources)).toBeGreaterThan(10_000);
  });
  it('on JavaScript, Java and TypeScript samples', () => {
    expect(check('javascript', ['function f(a, b) { return a + b }', 'let x = [1, 2, ; const y = {a: 1}', 'if (a) { b() } else c()'])).toBeGreaterThan(5);
    expect(check('java', vt['test_code_x_glue_readme_examples (lang=java)'].flatMap((t: any) => [...t.predictions, ...t.references]))).toBeGreaterThan(10);
    expect(check('typescript', ['function f<T>(a: T): T { return a }', 'interface A { b: number; c?: string }', 'let x: number = (1 +'])).toBeGreaterThan(5);
  });
});

describe('CodeBLEU robustness and API', () => {
  it('scores unparseable code and 10,000-level nesting without crashing', async () => {
    const deep = '('.repeat(10_000) + 'x' + ')'.repeat(10_000);
    const r = await codebleu('python', [deep, 'def (:', ''], [deep, 'def f(x): return x', 'x = 1']);
    expect(r.score).toBeGreaterThan(0);
    expect(r.score).toBeLessThanOrEqual(1);
  });
  it('spec, signature and components through the registry', async () => {
    const metric = parseMetric('codebleu:lang=ts,weights=0.1/0.1/0.4/0.4');
    await metric.ready!();
    const r = scoreCorpus(metric, ['let a: number = b + 1;'], [['let a: number = b + 2;']]);
    expect(r.signature).toMatch(/^nrefs:1\|lang:typescript\|weights:0\.1\/0\.1\/0\.4\/0\.4\|/);
    expect(Object.keys(r.components!)).toEqual(['ngram', 'weighted_ngram', 'syntax', 'dataflow']);
    expect(() => parseMetric('codebleu')).toThrow(/needs lang=/);
    expect(() => parseMetric('codebleu:lang=cobol')).toThrow(/invalid value "cobol"/);
  });
});
