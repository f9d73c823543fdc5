#!/usr/bin/env node
/**
 * Seeded, deterministic robustness sweep ("fuzz") of codegauge's metrics, its CLI input readers and the chat-reply
 * code extraction, against dist/ (run `npm run build` first).
 *
 *   node scripts/fuzz-metrics.mjs                  # everything (metrics, extraction, CLI readers)
 *   node scripts/fuzz-metrics.mjs --quick          # a few minutes: fewer specs, smaller ladders
 *   node scripts/fuzz-metrics.mjs --only 'codebleu:lang=python' --only-case nest-if
 *   node scripts/fuzz-metrics.mjs --skip-cli --skip-extract --seed 7 --timeout 20 --jobs 2
 *   node scripts/fuzz-metrics.mjs --full --step-budget 20  # every ladder at full size for every target (hours)
 *   node scripts/fuzz-metrics.mjs --list           # the targets and cases, without running
 *
 * Every case runs in a child process (one child per target, replaced when it dies or hangs) under a watchdog:
 * each scoring pass of a case gets --timeout seconds (default 20) and a hang is killed and reported, never waited
 * out. The parent samples each child's RSS from /proc. A case is scored three times: on a fresh metric instance,
 * again on that instance (its caches warm), and on one long-lived instance per target (state carried over from
 * every earlier case); the three results must be identical.
 *
 * Outcomes: ok; typed (a CodegaugeError: fine when the message names the problem); and the failures: hang (over
 * the timeout), crash (an untyped exception: RangeError, TypeError, ...), died (the child was killed: out of memory,
 * a signal), range (a NaN, infinite or out-of-[0, 100] score, segment score, component or statistic), nondet
 * (the three results differ), slow (sized "ladders" whose time grows super-linearly: exponent >= 1.6 between two
 * steps of at least 0.5 s), skipped-superlinear (a ladder step not run because the measured exponent predicts more
 * than the timeout), memory (a case whose child peaked over --memory MiB).
 *
 * Ladders grow an input in steps (e.g. 5,000-deep nesting after 150, 500 and 1,500); each step is a case. A step
 * that the growth measured so far predicts past --step-budget seconds (default 1.5) is not run.
 * The stack probe (codebleu and ruby targets): a 1,500-term expression (a tree 1,500 levels deep) is scored in a fresh
 * process, again after a warm-up, and in a worker thread (4 MB stack, as `score --jobs N` runs segments); a result
 * that depends on the stack left (a swallowed stack overflow) differs between the three.
 * Failures of small cases are shrunk (delta debugging on the failing pair, same failure class) to a minimal repro.
 *
 * The report is printed as a table and written as JSON to --out (default test-output/fuzz-metrics.json).
 * Nothing here runs generated programs: the extraction functions are pure (tree-sitter parses only).
 */
import { spawn, spawnSync, fork } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = (p) => pathToFileURL(join(ROOT, 'dist', p)).href;
const SELF = fileURLToPath(import.meta.url);

const { values: opt } = parseArgs({
  options: {
    child: { type: 'boolean', default: false },
    seed: { type: 'string', default: '20240601' },
    timeout: { type: 'string', default: '20' },
    'step-budget': { type: 'string', default: '1.5' },
    memory: { type: 'string', default: '1536' },
    jobs: { type: 'string', default: '1' },
    quick: { type: 'boolean', default: false },
    full: { type: 'boolean', default: false },
    only: { type: 'string', multiple: true },
    'only-case': { type: 'string', multiple: true },
    'skip-metrics': { type: 'boolean', default: false },
    'skip-cli': { type: 'boolean', default: false },
    'skip-extract': { type: 'boolean', default: false },
    'no-shrink': { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'test-output', 'fuzz-metrics.json') },
  },
  strict: true,
});
const SEED = Number(opt.seed) >>> 0;
const TIMEOUT_MS = Number(opt.timeout) * 1000;
/** A ladder step predicted to take longer than this is not run (reported; super-linear growth is a failure). */
const STEP_BUDGET_MS = Math.min(TIMEOUT_MS, Number(opt['step-budget']) * 1000);
const MEMORY_MB = Number(opt.memory);
const QUICK = opt.quick;

// ---------------------------------------------------------------------------------------------------------------
// Deterministic randomness and real code
// ---------------------------------------------------------------------------------------------------------------

function hash32(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** mulberry32: a small seeded generator, the same numbers on every machine. */
function rngOf(...keys) {
  let a = (SEED ^ hash32(keys.join('\u0000'))) >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (n) => Math.floor(next() * n);
  next.pick = (xs) => xs[Math.floor(next() * xs.length)];
  return next;
}

const LANGS = ['python', 'java', 'javascript', 'typescript', 'tsx', 'c_sharp', 'c', 'cpp', 'go', 'rust', 'php', 'ruby'];

function jsonl(relative) {
  const path = join(ROOT, 'data', relative);
  const bytes = readFileSync(path);
  return (path.endsWith('.gz') ? gunzipSync(bytes) : bytes)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

let realCache = null;
/** Real code per language (HumanEval prompts with canonical solutions; MultiPL-E prompts), 12 snippets each. */
function realSnippets(lang) {
  if (!realCache) {
    realCache = {};
    const he = jsonl('humaneval/HumanEval.jsonl.gz');
    realCache.python = he.slice(0, 12).map((r) => r.prompt + r.canonical_solution);
    realCache.javascript = jsonl('humaneval-js/humaneval-js.jsonl.gz').slice(0, 12).map((r) => r.prompt + (r.canonical_solution ?? '  return 0;\n}\n'));
    const mpl = { java: 'java', typescript: 'ts', cpp: 'cpp', c_sharp: 'cs', go: 'go', rust: 'rs', php: 'php', ruby: 'rb' };
    for (const [lang, ext] of Object.entries(mpl)) realCache[lang] = jsonl(`multipl-e/humaneval-${ext}.jsonl.gz`).slice(0, 12).map((r) => r.prompt + '\n');
    realCache.tsx = realCache.typescript;
    realCache.c = [
      '#include <stdio.h>\n\n/* sum of a list */\nint sum(const int *xs, int n) {\n    int s = 0;\n    for (int i = 0; i < n; i++) s += xs[i];\n    return s;\n}\n',
      'static int max(int a, int b) { return a > b ? a : b; } // larger\n',
      'int main(void) {\n    char buf[16];\n    if (fgets(buf, sizeof buf, stdin) == NULL) return 1;\n    printf("%s\\n", buf);\n    return 0;\n}\n',
    ];
  }
  return realCache[lang] ?? realCache.python;
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs. Small cases give fixed strings; ladders give a string of size n (source kept for one-line repros).
// ---------------------------------------------------------------------------------------------------------------

const ADVERSARIAL_ATOMS = [
  '😀', '𝑥', '\u{1D465}', '\uD83D', '\uDE00', '\uDBFF\uDBFF', '\0', '\uFEFF', '\u2028', '\u2029', '\r', '\r\n', '\n', '\t', '\f', '\v',
  'e\u0301', '\u0300\u0301\u0302', 'ש', 'م', '\u202E', '\u202C', '\u200D', '\u200B', '\u2060', '\u00A0', '\u3000', '\u0085', '\x1b', '\x7f',
  '\uFFFF', '\uFFFE', '\u{10FFFF}', '\uE000', '"', "'", '`', '"""', "'''", '/*', '*/', '//', '#', '\\', '(', ')', '[', ']', '{', '}', '<', '>',
  ';', ':', ',', '.', '=', '+', '-', '*', '/', '%', '&', '|', '^', '~', '!', '?', '@', '$', '${', '<?php', '?>', '```', '    ', 'def', 'if',
  'else', 'return', 'class', 'lambda', 'x', '0', '1e309', 'NaN', ' ',
];

const REAL = (ctx, k = 0) => realSnippets(ctx.lang)[k % realSnippets(ctx.lang).length];

/** Small cases: name -> (ctx) => list of strings; each string s is scored as [s, real], [real, s], [s, s], [s, s2]. */
const SMALL = {
  empty: () => [''],
  whitespace: () => [' ', ' \t\n \r\n\f\v ', '\n\n\n', '\u00A0\u1680\u2000\u200A\u3000\u0085 '],
  'one-char': () => ['x', '(', '"', '\\', '#', '.'],
  'one-astral': () => ['😀', '\u{1D465}', '\u{10FFFF}'],
  'lone-surrogate': () => ['\uD83D', '\uDE00', 'a\uD800b', 'a\uDC00b', '\uDBFF\uDBFF\uDBFF', '\uDFFF\uD800'],
  'surrogate-in-code': () => ['x = "\uD800" + f(\uDC00)\nprint(\uD83D)\n', 'def f(a\uD83D):\n    return a\n', 'int \uDE00 = 1;'],
  astral: () => ['print(😀)\n𝑥 = 1\ndef f(𝑥): return 𝑥 + "😀"\n', 'x😀y = 1', '😀 '.repeat(50), 'const 𝑥 = "😀";\n', '# 😀\nx = 1 # 𝑥\n'],
  nul: () => ['a\0b\0\0 c\0', 'x = "\0"\nprint(x)\0\n', '\0'.repeat(100), 'def f():\0\n    return 1\n'],
  bom: (ctx) => ['\uFEFF' + REAL(ctx), 'a\uFEFFb', '\uFEFF', '\uFEFF\uFEFF\uFEFF x'],
  'line-separators': () => ['a = 1\u2028b = 2\u2029c = 3\n', 'x = "\u2028"\n', 'const s = "\u2029";\n', '\u2028\u2029\u2028'],
  'cr-only': (ctx) => [REAL(ctx).replace(/\n/g, '\r'), 'x = 1\ry = 2\r', '#c\r\rx\r'],
  crlf: (ctx) => [REAL(ctx).replace(/\n/g, '\r\n'), 'x = 1\r\n\r\n', '"""doc\r\n"""\r\n'],
  'mixed-eol': (ctx) => [REAL(ctx).split('\n').map((l, i) => l + ['\n', '\r\n', '\r', '\n\r'][i % 4]).join('')],
  'tabs-ff': (ctx) => [REAL(ctx).replace(/ {4}/g, '\t'), REAL(ctx).replace(/\n/g, '\n\f'), '\f\f\fx\v\v'],
  combining: () => ['e\u0301 a\u0308 n\u0303', 'x' + '\u0301'.repeat(500), '\u0301 leading combining', 'def f\u0301():\n    pass\n'],
  rtl: () => ['שלום עולם مرحبا', '\u202Eevil\u202C x = 1', 'x = "\u202E" # \u2067rtl\u2069\n', 'مرحبا = 1\nprint(مرحبا)\n'],
  zwj: () => ['👨\u200D👩\u200D👧 family', 'a\u200Db\u200Bc\u2060d', 'def f\u200B():\n    return 1\n', '\u200D'.repeat(200)],
  'control-chars': () => [Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\x7f' + Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).join('')],
  noncharacters: () => ['\uFFFF\uFFFE\uE000\u{10FFFF}\u{FFFFF}', 'x = "\uFFFF"'],
  'unterminated-string': () => ['x = "abc\ny = 1\n', "s = '''never closed\nx = 1\n", 'const s = `abc ${', 'x = "\\', "c = 'a", 'r"""\n'],
  'unterminated-comment': () => ['/* never closed\nint x = 1;', 'x = 1 # comment\r', '"""docstring never closed\ndef f(): pass', '<!-- html', '=begin\nruby'],
  continuation: () => ['x = 1 + \\\n\\\n\\\n', '\\', 'x = \\\r\n1', '\\\n'.repeat(50)],
  'bad-indent': () => ['def f():\n\tif x:\n        return 1\n  return 2\n', '  x = 1\n', 'if x:\nreturn 1\n', 'def f():\n    pass\n  pass\n'],
  'weird-python': () => ['def f(:\n', ')))(((', 'else:\n', '@\n', 'lambda: (yield)\n', 'f"{x!r:>{width}}"', 'print(f"{\'\\n\'}")', 'x = 0x_1_', '1__0', 'async def f():\n    await = 1\n', 'match x:\n    case _:\n        pass\n', 'print "py2"\n', 'x = 1 if else 2'],
  'weird-c': () => ['int main( {', '}}}}', '#include <', 'template<template<template<', '#define X(', 'public class { void }', 'fn f() -> { }', '<?php ?><?php', 'func (', 'def f\nend end end'],
  'numbers-and-ids': () => ['1e309 -1e309 NaN Infinity 0x 0b 0o 1_000 .5 5. 1e', 'a'.repeat(5000), '_'.repeat(300)],
  fences: (ctx) => [
    '```python\n' + REAL(ctx) + '```',
    'Sure:\n```python\n' + REAL(ctx),
    '````\n```python\nx = 1\n```\n````',
    '`'.repeat(10000),
    '```' + '😀'.repeat(10) + '\n\uD800\n```',
    '```\n```\n```\n```',
    '```python\r\nx = 1\r\n```\r\n',
    ' \t```py thon extra words\n' + REAL(ctx) + '\n  ```',
  ],
  html: () => ['<?php echo "hi"; ?><div class="x">&amp;</div>', '<script>alert(1)</script>', '```python\nprint(1)\n```'],
  'random-alphabet': (ctx) => {
    const r = rngOf('random-alphabet', ctx.target);
    return Array.from({ length: 10 }, () => Array.from({ length: r.int(200) }, () => r.pick(ADVERSARIAL_ATOMS)).join(''));
  },
  'random-chars': (ctx) => {
    const r = rngOf('random-chars', ctx.target);
    // any UTF-16 unit, surrogates included
    return Array.from({ length: 6 }, () => Array.from({ length: r.int(300) }, () => String.fromCharCode(r.int(0x10000))).join(''));
  },
  'mix-real': (ctx) => {
    const r = rngOf('mix-real', ctx.target);
    const lines = realSnippets(ctx.lang).flatMap((s) => s.split('\n'));
    return Array.from({ length: 12 }, () =>
      Array.from({ length: 1 + r.int(30) }, () => (r() < 0.6 ? r.pick(lines) : Array.from({ length: 1 + r.int(6) }, () => r.pick(ADVERSARIAL_ATOMS)).join(''))).join(r.pick(['\n', '\n', '\r\n', '\r', ' '])),
    );
  },
  'mutated-real': (ctx) => {
    const r = rngOf('mutated-real', ctx.target);
    return Array.from({ length: 10 }, (_, k) => {
      let s = REAL(ctx, k);
      for (let i = 0, n = 1 + r.int(12); i < n; i++) {
        const at = r.int(s.length + 1);
        const op = r.int(3);
        s = op === 0 ? s.slice(0, at) + r.pick(ADVERSARIAL_ATOMS) + s.slice(at) : op === 1 ? s.slice(0, at) + s.slice(at + 1 + r.int(20)) : s.slice(0, at) + s.slice(at, at + r.int(40)).repeat(2 + r.int(3)) + s.slice(at);
      }
      return s;
    });
  },
};

/**
 * Ladders: name -> source of `n => string` (compiled once; a repro is `(source)(n)`) and the sizes, ascending.
 * `langs` restricts a ladder to code targets of those languages (text targets use the python and C-like ones).
 */
/** A JS string literal of s, with every character outside printable ASCII escaped. */
function lit(s) {
  return JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
const L = (src, sizes, extra = {}) => ({ src, sizes, ...extra });
const DEPTHS = [150, 500, 1500, 5000];
const CHARS = [1e3, 3e3, 1e4, 3e4, 1e5];
const BIG = [1e4, 3e4, 1e5, 3e5, 1e6];
const LADDERS = {
  'long-word': L(`n => 'x'.repeat(n)`, BIG),
  'long-line-words': L(`n => { let s = ''; let k = 0; while (s.length < n) s += 'w' + ((k++ * 7919) % 10007).toString(36) + ' '; return s; }`, BIG),
  'long-line-astral': L(`n => '😀𝑥 '.repeat(n / 6)`, BIG),
  tokens: L(`n => Array.from({ length: n }, (_, i) => 'w' + (i % 997)).join(' ')`, CHARS),
  'tokens-two-lines': L(`n => Array.from({ length: n }, (_, i) => 'w' + (i % 997)).join(' ') + '\\nend'`, [1e3, 1e4, 4e4], { textOnly: true }),
  'identical-tokens': L(`n => 'a '.repeat(n)`, [2e3, 6e3, 2e4]),
  'many-lines': L(`n => 'x = 1\\n'.repeat(n)`, CHARS),
  'many-lines-cr': L(`n => 'x = 1\\r'.repeat(n)`, CHARS),
  'many-lines-crlf': L(`n => 'x = 1\\r\\n'.repeat(n)`, CHARS),
  'many-comments': L(`n => '# c\\n// c\\n'.repeat(n / 2)`, CHARS),
  'long-indent': L(`n => ' '.repeat(n) + 'x\\n'`, CHARS),
  'long-indent-tabs': L(`n => '\\t'.repeat(n) + 'x = 1\\n'`, CHARS),
  'whitespace-run': L(`n => 'x' + ' '.repeat(n) + 'y\\n'`, CHARS),
  'indent-stair': L(`n => Array.from({ length: n }, (_, i) => ' '.repeat(i) + 'x' + i).join('\\n')`, [150, 500, 1500]),
  'huge-docstring': L(`n => 'def f():\\n    """' + 'doc line\\n'.repeat(n) + '    """\\n    return 1\\n'`, CHARS),
  // runs of one punctuation (or control) character
  ...Object.fromEntries(
    [['(', 'lparen'], [')', 'rparen'], ['.', 'dot'], [';', 'semicolon'], ['"', 'dquote'], ["'", 'squote'], ['`', 'backtick'], ['#', 'hash'], ['/', 'slash'], ['*', 'star'], ['\\', 'backslash'], ['-', 'minus'], ['=', 'equals'], ['\r', 'cr'], ['\n', 'newline'], ['\t', 'tab'], ['\0', 'nul'], ['\uFEFF', 'bom'], ['\u200D', 'zwj'], ['\u0301', 'combining'], ['\uD83D', 'high-surrogate'], ['\u2028', 'line-separator']].map(([c, name]) => [`run-${name}`, L(`n => ${lit(c)}.repeat(n)`, CHARS)]),
  ),
  // repeated openers of strings and comments (each start may scan to the end)
  ...Object.fromEntries(
    [['/*', 'comment-open'], ['*/', 'comment-close'], ['"\\', 'quote-backslash'], ["'''", 'triple-squote'], ['"""', 'triple-dquote'], ['#\r', 'hash-cr'], ['#a\r\r', 'comment-crs'], ['//\n', 'line-comment'], ['${', 'template'], ['<?php ', 'php-open'], ['```\n', 'fence'], ['f"{', 'fstring'], ['<!--', 'html-comment'], ['=begin\n', 'ruby-begin']].map(([c, name]) => [`repeat-${name}`, L(`n => ${lit(c)}.repeat(n)`, CHARS)]),
  ),
  // chat replies: many fenced blocks, a reply of 80 long lines none of which parses (extraction tries line runs)
  'fence-many-blocks': L(`n => 'Here:\\n' + '\`\`\`python\\nx = 1\\n\`\`\`\\ntext\\n'.repeat(n)`, [1e2, 1e3, 1e4], { replies: true }),
  'fence-nested': L(`n => '\`\`\`\`markdown\\n'.repeat(n) + '\`\`\`python\\nprint(1)\\n' + '\`\`\`\\n'.repeat(n)`, [1e2, 1e3, 1e4], { replies: true }),
  'reply-bad-lines': L(`n => Array.from({ length: n }, (_, i) => 'This is line ' + i + ' of my explanation, which is not code.').join('\\n')`, [10, 20, 40, 80], { replies: true }),
  'quote-then-escapes': L(`n => '"' + '\\\\"'.repeat(n)`, CHARS),
  'comment-then-crs': L(`n => '#a' + '\\r'.repeat(n) + 'b\\n'`, CHARS),
  'open-comment-then-text': L(`n => '/*' + ' x'.repeat(n)`, CHARS),
  // deep nesting
  'nest-parens': L(`n => '('.repeat(n) + 'x' + ')'.repeat(n)`, DEPTHS),
  'nest-brackets': L(`n => 'x = ' + '['.repeat(n) + '1' + ']'.repeat(n) + '\\n'`, DEPTHS),
  'nest-braces': L(`n => '{'.repeat(n) + '}'.repeat(n)`, DEPTHS),
  'nest-mixed': L(`n => '([{'.repeat(n / 3) + 'x' + '}])'.repeat(n / 3)`, DEPTHS),
  'nest-unclosed': L(`n => 'f(' + '('.repeat(n)`, DEPTHS),
  'nest-unopened': L(`n => ')'.repeat(n) + '}'.repeat(n)`, DEPTHS),
  'nest-calls': L(`n => 'y = ' + 'f(a, '.repeat(n) + '1' + ')'.repeat(n) + '\\n'`, DEPTHS),
  'nest-json': L(`n => 'x = ' + '[{"a": '.repeat(n) + '1' + '}]'.repeat(n) + '\\n'`, DEPTHS),
  'nest-lambda': L(`n => 'f = ' + 'lambda: '.repeat(n) + '0\\n'`, DEPTHS),
  'nest-unary': L(`n => 'x = ' + '-'.repeat(n) + 'y\\n'`, DEPTHS),
  'nest-not': L(`n => 'x = ' + 'not '.repeat(n) + 'y\\n'`, DEPTHS),
  'nest-ternary': L(`n => 'x = ' + 'a if b else '.repeat(n) + 'c\\n'`, DEPTHS),
  'attribute-chain': L(`n => 'x = a' + '.b'.repeat(n) + '\\n'`, [1e3, 1e4, 3e4]),
  'call-chain': L(`n => 'x = a' + '.b()'.repeat(n) + '\\n'`, [1e3, 1e4, 3e4]),
  'huge-expr': L(`n => 'x = ' + Array.from({ length: n }, (_, i) => 'a' + i).join(' + ') + '\\n'`, [1e3, 3e3, 1e4, 3e4]),
  'huge-expr-multiline': L(`n => 'x = (' + Array.from({ length: n }, (_, i) => 'a' + i).join(' +\\n    ') + ')\\n'`, [1e3, 3e3, 1e4, 3e4]),
  'string-concat': L(`n => 'x = ' + '"s" '.repeat(n) + '\\n'`, [1e3, 1e4, 3e4]),
  'elif-chain': L(`n => 'def f(x):\\n    if x == 0:\\n        return 0\\n' + Array.from({ length: n }, (_, i) => '    elif x == ' + (i + 1) + ':\\n        return ' + i + '\\n').join('')`, [300, 1e3, 3e3, 1e4]),
  'many-defs': L(`n => Array.from({ length: n }, (_, i) => 'def f' + i + '(a):\\n    b = a + ' + i + '\\n    return b\\n').join('\\n')`, [100, 300, 1e3, 3e3]),
  'nest-if-python': L(`n => Array.from({ length: n }, (_, i) => ' '.repeat(i) + 'if x' + i + ':').join('\\n') + '\\n' + ' '.repeat(n) + 'y = x0\\n'`, DEPTHS),
  'nest-def-python': L(`n => Array.from({ length: n }, (_, i) => ' '.repeat(i) + 'def f' + i + '(a):').join('\\n') + '\\n' + ' '.repeat(n) + 'return a\\n'`, DEPTHS),
  'nest-if-c': L(`n => 'int f(int x) {\\n' + 'if (x) {\\n'.repeat(n) + 'x = x + 1;\\n' + '}\\n'.repeat(n) + 'return x;\\n}\\n'`, DEPTHS),
  'nest-if-braced': L(`n => 'func f(x int) int {\\n' + 'if x > 0 {\\n'.repeat(n) + 'x = x + 1\\n' + '}\\n'.repeat(n) + 'return x\\n}\\n'`, DEPTHS, { langs: ['go', 'rust'] }),
  'nest-if-rust': L(`n => 'fn f(mut x: i32) -> i32 {\\n' + 'if x > 0 {\\n'.repeat(n) + 'x = x + 1;\\n' + '}\\n'.repeat(n) + 'x\\n}\\n'`, DEPTHS, { langs: ['rust'] }),
  'nest-if-ruby': L(`n => 'def f(x)\\n' + 'if x > 0\\n'.repeat(n) + 'x = x + 1\\n' + 'end\\n'.repeat(n) + 'x\\nend\\n'`, DEPTHS, { langs: ['ruby'] }),
  'nest-if-php': L(`n => '<?php\\nfunction f($x) {\\n' + 'if ($x) {\\n'.repeat(n) + '$x = $x + 1;\\n' + '}\\n'.repeat(n) + 'return $x;\\n}\\n'`, DEPTHS, { langs: ['php'] }),
  'nest-class-java': L(`n => 'class A0 {\\n' + Array.from({ length: n }, (_, i) => 'class A' + (i + 1) + ' {').join('\\n') + '\\nint x = 1;\\n' + '}\\n'.repeat(n + 1)`, DEPTHS, { langs: ['java', 'c_sharp', 'typescript', 'tsx', 'javascript', 'cpp', 'php'] }),
  'nest-jsx': L(`n => 'const x = ' + '<div>'.repeat(n) + 'x' + '</div>'.repeat(n) + ';\\n'`, DEPTHS, { langs: ['tsx', 'javascript'] }),
};

const compiled = new Map();
function ladderFn(name) {
  if (!compiled.has(name)) compiled.set(name, (0, eval)(LADDERS[name].src));
  return compiled.get(name);
}

/** The language whose real code and language-specific ladders a target uses. */
function langOf(target) {
  const m = /lang=([\w]+)/.exec(target);
  return m ? m[1] : target.startsWith('extract:') ? target.slice(8) : target === 'codebleu-cgm' ? 'python' : null;
}

function ladderApplies(name, target) {
  const lang = langOf(target);
  const langs = LADDERS[name].langs;
  if (!langs) return true;
  return lang !== null && langs.includes(lang);
}

/** The pairs [hypothesis, reference] of a case (strings also serve as replies for extraction targets). */
function casePairs(target, caseName, size) {
  const ctx = { target, lang: langOf(target) ?? 'python' };
  const real = realSnippets(ctx.lang);
  if (caseName in PROBES) return PROBES[caseName]();
  if (caseName in SMALL) {
    const inputs = SMALL[caseName](ctx);
    const pairs = [];
    inputs.forEach((s, i) => {
      const r = real[i % real.length];
      const s2 = inputs[(i + 1) % inputs.length];
      pairs.push([s, r], [r, s], [s, s]);
      if (s2 !== s) pairs.push([s, s2]);
    });
    return pairs;
  }
  const f = ladderFn(caseName);
  const big = f(size);
  return [[big, f(Math.max(1, size - 1))], [big, real[0]], [real[0], big]];
}

/** The total length of a ladder case's strings (what its time is measured against). */
function inputLength(target, caseName, size) {
  return casePairs(target, caseName, size).reduce((sum, [h, r]) => sum + h.length + r.length, 0);
}

/**
 * The stack probe: long flat expressions parse into deep left-nested trees, and a recursive walker whose overflow is
 * swallowed gives a result that depends on the stack left, which depends on how warm the JIT is (optimised frames
 * are smaller). The same pairs are scored in a fresh process before and after a warm-up; the scores must agree.
 */
const expr = (n) => 'x = ' + Array.from({ length: n }, (_, i) => 'a' + i).join(' + ') + ';\n';
const PROBES = {
  'stack-probe': () => [[expr(1500), expr(1500) + 'y = x;\n']],
  'stack-warmup': () => [100, 200, 400, 600, 800, 1000, 200, 400, 600, 800, 1000].map((n) => [expr(n), expr(n) + 'y = x;\n']),
};
const PROBE_REPRO = `(n => 'x = ' + Array.from({ length: n }, (_, i) => 'a' + i).join(' + ') + ';\\n')(1500), the reference the same + 'y = x;\\n': scored in a fresh process, again after scoring sizes 100..1000, and in a worker thread`;

/** One-line repro of a ladder input. */
const ladderRepro = (caseName, size) => `(${LADDERS[caseName].src})(${size})`;

// ---------------------------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------------------------

function metricTargets() {
  const out = [];
  for (const tok of ['13a', 'intl', 'char', 'none', 'code']) out.push(`bleu:tok=${tok}`);
  out.push('chrf', 'chrf:nw=2');
  for (const type of ['rouge1', 'rouge2', 'rougeL', 'rougeLsum']) out.push(`${type}:tok=default`, `${type}:tok=code,stem=yes`);
  out.push('meteor:tok=ws', 'meteor:tok=code', 'nltk-bleu', 'nltk-bleu:tok=code');
  for (const lang of LANGS) out.push(`codebleu:lang=${lang}`, `ruby:lang=${lang}`);
  out.push('codebleu-cgm', 'crystalbleu:k=5', 'crystalbleu:k=5,tok=ws');
  return out;
}
const EXTRACT_TARGETS = ['extract:python', 'extract:java', 'extract:go', 'extract:javascript'];

const isCodeTarget = (t) => /^(codebleu|ruby|codebleu-cgm|extract:)/.test(t);

/** Code targets that run every ladder at full size. */
const PRIMARY = new Set(['codebleu:lang=python', 'ruby:lang=python']);
/** The other code targets run only these ladders, up to these sizes (--full: every ladder at full size). */
const SECONDARY = {
  tokens: 3e3, 'long-line-words': 1e4, 'many-lines-cr': 1e4, 'whitespace-run': 1e4, 'repeat-comment-open': 1e4, 'quote-then-escapes': 3e3,
  'huge-expr': 3e3, 'nest-parens': 5000, 'nest-braces': 5000, 'nest-json': 5000, 'nest-if-braced': 5000, 'nest-if-rust': 5000,
  'nest-if-ruby': 5000, 'nest-if-php': 5000, 'nest-class-java': 5000, 'nest-jsx': 5000, 'fence-many-blocks': 1e3, 'fence-nested': 1e3, 'reply-bad-lines': 80,
  'run-backtick': 1e4, 'long-line-astral': 3e4,
};
const C_LIKE = ['c', 'cpp', 'java', 'c_sharp', 'javascript', 'typescript', 'tsx'];

/** The ladder sizes a target runs, or null when it skips the ladder. */
function ladderSizes(name, target) {
  const ladder = LADDERS[name];
  const primary = !isCodeTarget(target) || PRIMARY.has(target) || opt.full;
  if (ladder.replies && !target.startsWith('extract:') && target !== 'codebleu:lang=python') return null;
  if (ladder.textOnly && isCodeTarget(target)) return null;
  let sizes = ladder.sizes;
  if (!primary) {
    const cap = name === 'nest-if-c' && C_LIKE.includes(langOf(target)) ? 5000 : SECONDARY[name];
    if (cap === undefined) return null;
    sizes = ladder.sizes === DEPTHS ? [150, 1500, 5000].filter((n) => n <= cap) : sizes.filter((n) => n <= cap);
  }
  if (QUICK) sizes = sizes.filter((n) => (ladder.sizes === DEPTHS ? n <= 1500 : n <= (isCodeTarget(target) ? 1e4 : 1e5)));
  return sizes.length ? sizes : null;
}

function casesOf(target) {
  const cases = [];
  const wanted = (name) => !opt['only-case'] || opt['only-case'].some((p) => name.includes(p));
  for (const name of Object.keys(SMALL)) if (wanted(name)) cases.push({ name });
  for (const name of Object.keys(LADDERS)) {
    if (!wanted(name) || !ladderApplies(name, target)) continue;
    // text metrics do not need the language-specific ladders
    if (LADDERS[name].langs && !isCodeTarget(target)) continue;
    const sizes = ladderSizes(name, target);
    if (sizes) cases.push({ name, ladder: sizes });
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------------------------
// Child: scores cases on request
// ---------------------------------------------------------------------------------------------------------------

async function childMain() {
  const index = await import(DIST('index.js'));
  const { scoreCorpus } = await import(DIST('metrics/metric.js'));
  const extract = await import(DIST('extract/extract.js'));
  const { CodegaugeError } = await import(DIST('errors.js'));
  const shared = new Map();
  const send = (m) => process.send(m);

  async function freshMetric(spec) {
    const m = index.parseMetric(spec);
    await m.ready?.();
    return m;
  }

  let problems = null;
  async function problemOf(lang) {
    problems ??= {};
    if (!problems[lang]) {
      const bench = { python: 'humaneval', java: 'humaneval-java', go: 'humaneval-go', javascript: 'humaneval-js' }[lang];
      problems[lang] = index.readBenchmark(bench).problems[0];
      await extract.loadExtractor(lang);
    }
    return problems[lang];
  }

  const errorInfo = (e) => ({
    name: e?.name ?? typeof e,
    message: String(e?.message ?? e).slice(0, 400),
    typed: e instanceof CodegaugeError,
    stack: String(e?.stack ?? '')
      .split('\n')
      .filter((l) => /^\s+at /.test(l))
      .slice(0, 8)
      .map((l) => l.trim().replace(/file:\/\/\S*?\/(src|dist|node_modules)\//, '$1/')),
  });

  /** A canonical digest of one scoring: every number that could be wrong. */
  function scoreOnce(metric, hyps, refs) {
    metric.fitReferences?.(refs);
    const r = scoreCorpus(metric, hyps, refs, { segments: true });
    const sentence = metric.sentenceScoreFromStatistics ? Array.from({ length: r.statistics.rows }, (_, i) => metric.sentenceScoreFromStatistics(r.statistics.data.subarray(i * r.statistics.size, (i + 1) * r.statistics.size))) : [];
    return { score: r.score, segments: r.segments, sentence, components: r.components ?? {}, details: r.details ?? {}, labels: r.segmentDetails ?? [], stats: Array.from(r.statistics.data) };
  }

  function rangeProblems(d) {
    const bad = [];
    const check = (what, x) => {
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || x > 100 + 1e-9) bad.push(`${what}=${x}`);
    };
    check('score', d.score);
    d.segments.forEach((x, i) => check(`segment[${i}]`, x));
    d.sentence.forEach((x, i) => check(`sentence[${i}]`, x));
    for (const [k, x] of Object.entries(d.components)) check(`component.${k}`, x);
    d.stats.forEach((x, i) => {
      if (!Number.isFinite(x)) bad.push(`stat[${i}]=${x}`);
    });
    return bad.slice(0, 6);
  }

  const same = (a, b) => JSON.stringify(a, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)) === JSON.stringify(b, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));

  function extractOnce(problem, replies) {
    return replies.map((reply) => {
      const blocks = extract.fencedBlocks(reply);
      for (const b of blocks) if (!reply.includes(b.code)) throw new Error(`fencedBlocks returned code that is not in the reply: ${JSON.stringify(b.code.slice(0, 80))}`);
      const x = extract.extractCode(reply, problem);
      if (typeof (x.completion ?? x.solution) !== 'string') throw new Error('extractCode returned neither completion nor solution');
      return { blocks: blocks.length, steps: x.steps, length: (x.completion ?? x.solution).length, hash: hash32(x.completion ?? x.solution) };
    });
  }

  /** Runs one case: the verdict, with the timings of each pass. */
  async function runCase(target, pairs, phase, passes = 3) {
    const t0 = performance.now();
    try {
      if (target.startsWith('extract:')) {
        const problem = await problemOf(target.slice(8));
        const replies = [...new Set(pairs.flat())];
        phase('first');
        const a = extractOnce(problem, replies);
        const t1 = performance.now();
        if (passes < 2) return { kind: 'ok', ms: t1 - t0 };
        phase('repeat');
        const b = extractOnce(problem, replies);
        if (!same(a, b)) return { kind: 'nondet', detail: 'extraction differs between two runs', ms: t1 - t0 };
        return { kind: 'ok', ms: t1 - t0 };
      }
      const hyps = pairs.map((p) => p[0]);
      const refs = pairs.map((p) => [p[1]]);
      const metric = await freshMetric(target);
      phase('first');
      const t1 = performance.now();
      const a = scoreOnce(metric, hyps, refs);
      const ms = performance.now() - t1;
      const bad = rangeProblems(a);
      if (bad.length) return { kind: 'range', detail: bad.join(', '), ms };
      if (passes < 2) return { kind: 'ok', ms, score: a.score, segments: a.segments };
      phase('repeat');
      const b = scoreOnce(metric, hyps, refs);
      if (!same(a, b)) return { kind: 'nondet', detail: `same instance, second run differs: ${diffOf(a, b)}`, ms };
      if (!target.startsWith('crystalbleu')) {
        // crystalbleu's corpus=references takes no new references after scoring began (a documented UsageError)
        phase('shared');
        if (!shared.has(target)) shared.set(target, await freshMetric(target));
        const c = scoreOnce(shared.get(target), hyps, refs);
        if (!same(a, c)) return { kind: 'nondet', detail: `long-lived instance differs: ${diffOf(a, c)}`, ms };
      }
      return { kind: 'ok', ms, score: a.score, segments: a.segments };
    } catch (e) {
      const info = errorInfo(e);
      return { kind: info.typed ? 'typed' : 'crash', error: info, ms: performance.now() - t0 };
    }
  }

  function diffOf(a, b) {
    for (const k of Object.keys(a)) if (!same(a[k], b[k])) return `${k}: ${JSON.stringify(a[k]).slice(0, 120)} vs ${JSON.stringify(b[k]).slice(0, 120)}`;
    return '?';
  }

  /** The failure class of a verdict, for shrinking (same class and error name). */
  const keyOf = (v) => (v.kind === 'crash' || v.kind === 'typed' ? `${v.kind}:${v.error.name}` : v.kind);

  async function shrink(target, pairs, key, deadline) {
    const quiet = () => {};
    const fails = async (ps) => keyOf(await runCase(target, ps, quiet)) === key;
    // the failing pair alone, else keep all
    let best = pairs;
    for (const p of pairs) {
      if (performance.now() > deadline) break;
      if (await fails([p])) {
        best = [p];
        break;
      }
    }
    if (best.length !== 1) return { pairs: best, shrunk: false };
    let [hyp, ref] = best[0];
    // ddmin on code units of each side in turn (a string side of 0 units is tried first)
    for (const side of [0, 1]) {
      let s = side === 0 ? hyp : ref;
      const test = async (x) => fails([side === 0 ? [x, ref] : [hyp, x]]);
      if (s.length && (await test(''))) s = '';
      let n = 2;
      while (s.length >= 2 && performance.now() < deadline) {
        const chunk = Math.ceil(s.length / n);
        let reduced = false;
        for (let i = 0; i < n && performance.now() < deadline; i++) {
          const without = s.slice(0, i * chunk) + s.slice((i + 1) * chunk);
          if (without.length < s.length && (await test(without))) {
            s = without;
            n = Math.max(n - 1, 2);
            reduced = true;
            send({ type: 'progress', best: side === 0 ? [s, ref] : [hyp, s] });
            break;
          }
        }
        if (!reduced) {
          if (n >= s.length) break;
          n = Math.min(s.length, n * 2);
        }
      }
      if (side === 0) hyp = s;
      else ref = s;
    }
    return { pairs: [[hyp, ref]], shrunk: true };
  }

  process.on('message', async (m) => {
    if (m.type === 'run') {
      const pairs = casePairs(m.target, m.caseName, m.size);
      const chars = pairs.reduce((s, p) => s + p[0].length + p[1].length, 0);
      const v = await runCase(m.target, pairs, (phase) => send({ type: 'phase', phase }), m.passes);
      send({ type: 'result', verdict: v, chars, heap: process.memoryUsage().heapUsed });
    } else if (m.type === 'probe-worker') {
      // the same case in a worker thread (as `score --jobs N` runs segments): its own stack, 4 MB by default
      const { Worker } = await import('node:worker_threads');
      const code = `
        const { parentPort, workerData } = require('node:worker_threads');
        (async () => {
          const { parseMetric } = await import(workerData.index);
          const { scoreCorpus } = await import(workerData.metric);
          const m = parseMetric(workerData.target);
          await m.ready?.();
          const r = scoreCorpus(m, workerData.pairs.map((p) => p[0]), workerData.pairs.map((p) => [p[1]]), { segments: true });
          parentPort.postMessage(r.segments);
        })().catch((e) => parentPort.postMessage({ error: String(e && e.stack || e) }));`;
      const pairs = casePairs(m.target, m.caseName, m.size);
      const w = new Worker(code, { eval: true, workerData: { index: DIST('index.js'), metric: DIST('metrics/metric.js'), target: m.target, pairs } });
      const segments = await new Promise((resolveWorker) => w.once('message', resolveWorker));
      await w.terminate();
      send({ type: 'worker-result', segments });
    } else if (m.type === 'shrink') {
      const pairs = casePairs(m.target, m.caseName, m.size);
      const r = await shrink(m.target, pairs, m.key, performance.now() + m.budgetMs);
      send({ type: 'shrunk', ...r });
    } else if (m.type === 'exit') process.exit(0);
  });
  send({ type: 'ready' });
}

// ---------------------------------------------------------------------------------------------------------------
// Parent: children, watchdog, ladders, report
// ---------------------------------------------------------------------------------------------------------------

function peakRssMb(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(s)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Every child started and not yet known dead (killed on an interrupt). */
const LIVE = new Set();

class Child {
  constructor() {
    this.proc = fork(SELF, ['--child', '--seed', String(SEED)], {
      execArgv: ['--enable-source-maps', `--max-old-space-size=${Math.max(2048, MEMORY_MB * 2)}`],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: { ...process.env, CODEGAUGE_WORDNET_CACHE: process.env.CODEGAUGE_WORDNET_CACHE ?? join(tmpdir(), 'codegauge-fuzz-wordnet-cache') },
    });
    this.stderr = '';
    this.proc.stderr.on('data', (d) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    this.dead = null;
    this.listeners = new Set();
    this.proc.on('message', (m) => {
      for (const l of this.listeners) l(m);
    });
    LIVE.add(this);
    this.proc.on('exit', (code, signal) => {
      LIVE.delete(this);
      this.dead = { code, signal };
      for (const l of this.listeners) l({ type: 'exit', code, signal });
    });
    this.ready = this.wait((m) => m.type === 'ready', 60_000);
  }

  /** Resolves with the first message that `done` accepts; phase messages restart the timer. */
  wait(done, timeoutMs, onMessage = () => {}) {
    return new Promise((resolveWait) => {
      let timer;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => finish({ type: 'timeout' }), timeoutMs);
      };
      const finish = (m) => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolveWait(m);
      };
      const listener = (m) => {
        onMessage(m);
        if (m.type === 'phase') arm();
        if (m.type === 'exit' || done(m)) finish(m);
      };
      this.listeners.add(listener);
      if (this.dead) return finish({ type: 'exit', ...this.dead });
      arm();
    });
  }

  async request(message, done, timeoutMs, onMessage) {
    await this.ready;
    if (this.dead) return { type: 'exit', ...this.dead };
    const reply = this.wait(done, timeoutMs, onMessage);
    this.proc.send(message);
    return reply;
  }

  kill() {
    if (!this.dead) this.proc.kill('SIGKILL');
  }
}

const results = [];
const t0 = Date.now();
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
const log = (s) => process.stdout.write(s + '\n');

async function runTarget(target, cases) {
  let child = new Child();
  const fresh = () => {
    child.kill();
    child = new Child();
  };
  const run = async (caseName, size, passes) => {
    let phase = 'setup';
    let peak = 0;
    const poll = setInterval(() => (peak = Math.max(peak, peakRssMb(child.proc.pid))), 100);
    const started = performance.now();
    const reply = await child.request({ type: 'run', target, caseName, size, passes }, (m) => m.type === 'result', TIMEOUT_MS, (m) => {
      if (m.type === 'phase') phase = m.phase;
    });
    clearInterval(poll);
    peak = Math.max(peak, peakRssMb(child.proc.pid));
    const wall = performance.now() - started;
    let verdict;
    if (reply.type === 'result') verdict = { ...reply.verdict, chars: reply.chars };
    else if (reply.type === 'timeout') verdict = { kind: 'hang', detail: `no result within ${TIMEOUT_MS / 1000} s (pass: ${phase})`, ms: wall };
    else verdict = { kind: 'died', detail: `child exited (code ${reply.code}, signal ${reply.signal}) during ${phase}; ${child.stderr.trim().split('\n').slice(-3).join(' | ')}`, ms: wall };
    if (reply.type !== 'result') fresh();
    // VmHWM is the child's peak since it started: a case that raised it past the bound is flagged; restart to reset
    if (verdict.kind !== 'hang' && verdict.kind !== 'died' && peak > MEMORY_MB) {
      verdict = { ...verdict, kind: verdict.kind === 'ok' ? 'memory' : verdict.kind, detail: `${verdict.detail ? verdict.detail + '; ' : ''}peak RSS ${peak.toFixed(0)} MiB` };
      fresh();
    }
    verdict.peakMb = Math.round(peak);
    return verdict;
  };

  // cold versus warm: a fresh child scores the probe, warms up, and scores it again (on fresh instances)
  if (/^(codebleu:|ruby:)/.test(target) && (!opt['only-case'] || opt['only-case'].some((p) => 'stack-probe'.includes(p)))) {
    fresh();
    const cold = await run('stack-probe', undefined, 1);
    const warm = cold.kind === 'ok' ? (await run('stack-warmup', undefined, 1), await run('stack-probe', undefined, 1)) : null;
    const worker = cold.kind === 'ok' ? await child.request({ type: 'probe-worker', target, caseName: 'stack-probe' }, (m) => m.type === 'worker-result', TIMEOUT_MS) : null;
    let v = cold;
    if (warm && warm.kind !== 'ok') v = warm;
    else if (worker && worker.type !== 'worker-result') v = { kind: 'hang', detail: 'the worker-thread run gave no result', ms: cold.ms };
    else if (worker && !Array.isArray(worker.segments)) v = { kind: 'crash', detail: `worker thread: ${JSON.stringify(worker.segments).slice(0, 300)}`, ms: cold.ms };
    else if (warm && (JSON.stringify(warm.segments) !== JSON.stringify(cold.segments) || JSON.stringify(worker.segments) !== JSON.stringify(cold.segments))) {
      v = { kind: 'nondet', detail: `segment scores: main thread cold ${JSON.stringify(cold.segments)}, after warm-up ${JSON.stringify(warm.segments)}, worker thread ${JSON.stringify(worker.segments)}`, ms: cold.ms };
    }
    if (!warm) {
      // the child died or hung: start afresh for the cases
      fresh();
    }
    record(target, 'stack-probe', undefined, v);
    results[results.length - 1].repro = PROBE_REPRO;
  }

  for (const c of cases) {
    if (!c.ladder) {
      const v = await run(c.name);
      record(target, c.name, undefined, v);
      if (isFailure(v) && !opt['no-shrink'] && (v.kind === 'crash' || v.kind === 'range' || v.kind === 'nondet')) {
        const entry = results[results.length - 1];
        let best = null;
        const reply = await child.request({ type: 'shrink', target, caseName: c.name, key: v.kind === 'crash' ? `crash:${v.error.name}` : v.kind }, (m) => m.type === 'shrunk', 60_000, (m) => {
          if (m.type === 'progress') best = m.best;
        });
        if (reply.type === 'shrunk') entry.repro = reply.pairs.length === 1 ? reply.pairs[0] : null;
        else {
          entry.repro = best;
          fresh();
        }
      }
      continue;
    }
    // ladder: ascending sizes; stop after a hang, or when the measured growth predicts one. Growth is measured
    // against the input's length in UTF-16 units (a ladder's n may be a depth whose input grows faster).
    let prev = null;
    let exponent = null;
    for (const size of c.ladder) {
      const chars = inputLength(target, c.name, size);
      if (prev && prev.ms >= 50) {
        const e = Math.max(1, exponent ?? 1);
        const predicted = prev.ms * (chars / prev.chars) ** e;
        if (predicted > STEP_BUDGET_MS) {
          // super-linear growth that would pass the timeout is a failure; anything else is only over the step budget
          const kind = e >= 1.6 && predicted > TIMEOUT_MS ? 'skipped-superlinear' : 'skipped-budget';
          record(target, c.name, size, { kind, detail: `growth exponent ${e.toFixed(2)} from the last steps predicts ${(predicted / 1000).toFixed(1)} s`, ms: 0, chars });
          break;
        }
      }
      // one pass: ladders measure time (determinism is checked on the small cases)
      const v = await run(c.name, size, 1);
      if (prev && prev.ms >= 50 && v.ms >= 100 && (v.kind === 'ok' || v.kind === 'typed' || v.kind === 'memory')) {
        exponent = Math.log(v.ms / prev.ms) / Math.log(chars / prev.chars);
        v.exponent = Math.round(exponent * 100) / 100;
        if (exponent >= 1.6 && v.ms >= 500) {
          v.slow = true;
          v.detail = `${v.detail ? v.detail + '; ' : ''}time x${(v.ms / prev.ms).toFixed(1)} for input x${(chars / prev.chars).toFixed(1)} (exponent ${exponent.toFixed(2)})`;
        }
      }
      record(target, c.name, size, v);
      if (v.kind === 'hang' || v.kind === 'died') break;
      prev = { chars, ms: v.ms };
    }
  }
  child.proc.send?.({ type: 'exit' });
  setTimeout(() => child.kill(), 2000).unref();
}

const FAILURES = new Set(['hang', 'crash', 'died', 'range', 'nondet', 'memory', 'skipped-superlinear']);
const isFailure = (v) => FAILURES.has(v.kind) || v.slow;

function record(target, caseName, size, v) {
  const entry = { target, case: caseName, size, ...v };
  if (size !== undefined) entry.repro = ladderRepro(caseName, size);
  results.push(entry);
  const mark = isFailure(v) ? (v.slow && !FAILURES.has(v.kind) ? 'SLOW' : v.kind.toUpperCase()) : v.kind;
  const msg = v.error ? `${v.error.name}: ${v.error.message.split('\n')[0].slice(0, 140)}` : (v.detail ?? '');
  if (isFailure(v) || v.kind === 'typed' || v.ms > 3000) log(`  ${mark.padEnd(8)} ${target}  ${caseName}${size !== undefined ? `(${size})` : ''}  ${(v.ms / 1000).toFixed(2)} s  ${msg}`);
}

// ---------------------------------------------------------------------------------------------------------------
// CLI readers
// ---------------------------------------------------------------------------------------------------------------

async function cliSweep() {
  const dir = mkdtempSync(join(tmpdir(), 'codegauge-fuzz-'));
  const bin = join(ROOT, 'bin', 'codegauge.js');
  const file = (name, content) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const good = (n, ext) => file(`good${n}.${ext}`, ext === 'jsonl' ? Array.from({ length: n }, (_, i) => JSON.stringify(`x = ${i}\nprint(x)`)).join('\n') + '\n' : Array.from({ length: n }, (_, i) => `the cat sat ${i}`).join('\n') + '\n');
  const big = Buffer.alloc(50 * 2 ** 20, 'x');
  const bigWords = Buffer.from('ab cd '.repeat((5 * 2 ** 20) / 6));
  const cases = [
    // [name, refs content, hyps content, ext, expected: 'ok' | 'error' | 'either', metric?]
    ['bom-txt', '\uFEFFthe cat\nsat down\n', 'the cat\nsat down\n', 'txt', 'ok'],
    ['bom-jsonl', '\uFEFF"the cat"\n"sat"\n', '"the cat"\n"sat"\n', 'jsonl', 'ok'],
    ['bom-every-line-txt', '\uFEFFa\n\uFEFFb\n', 'a\nb\n', 'txt', 'either'],
    ['invalid-utf8-txt', Buffer.concat([Buffer.from('ok line\n'), Buffer.from([0xff, 0xfe, 0x41, 0x0a])]), 'ok line\nA\n', 'txt', 'error'],
    ['invalid-utf8-jsonl', Buffer.concat([Buffer.from('"ok"\n"'), Buffer.from([0xc3, 0x28]), Buffer.from('"\n')]), '"ok"\n"x"\n', 'jsonl', 'error'],
    ['overlong-utf8', Buffer.from([0xc0, 0xaf, 0x0a]), 'x\n', 'txt', 'error'],
    ['encoded-surrogate-utf8', Buffer.from([0xed, 0xa0, 0x80, 0x0a]), 'x\n', 'txt', 'error'],
    ['crlf-txt', 'the cat\r\nsat\r\n', 'the cat\nsat\n', 'txt', 'ok'],
    ['crlf-jsonl', '"the cat"\r\n"sat"\r\n', '"the cat"\n"sat"\n', 'jsonl', 'ok'],
    ['cr-only-txt', 'the cat\rsat\r', 'the cat\rsat\r', 'txt', 'ok'],
    ['no-final-newline', 'the cat\nsat', 'the cat\nsat', 'txt', 'ok'],
    ['jsonl-number', '"a"\n42\n', '"a"\n"b"\n', 'jsonl', 'error'],
    ['jsonl-object', '"a"\n{"x": 1}\n', '"a"\n"b"\n', 'jsonl', 'error'],
    ['jsonl-null', '"a"\nnull\n', '"a"\n"b"\n', 'jsonl', 'error'],
    ['jsonl-empty-array', '"a"\n[]\n', '"a"\n"b"\n', 'jsonl', 'error'],
    ['jsonl-array-refs', '"a"\n["b", "c"]\n', '"a"\n"b"\n', 'jsonl', 'ok'],
    ['jsonl-array-hyps', '"a"\n"b"\n', '"a"\n["b", "c"]\n', 'jsonl', 'error'],
    ['jsonl-nested-array', '"a"\n[["b"]]\n', '"a"\n"b"\n', 'jsonl', 'error'],
    ['jsonl-deep-json', '"a"\n' + '['.repeat(100000) + ']'.repeat(100000) + '\n', '"a"\n"b"\n', 'jsonl', 'error'],
    ['jsonl-invalid', '"a"\n"unterminated\n', '"a"\n"b"\n', 'jsonl', 'error'],
    ['jsonl-blank-line', '"a"\n\n"b"\n', '"a"\n"x"\n"b"\n', 'jsonl', 'error'],
    ['jsonl-lone-surrogate-escape', '"\\ud800"\n"\\udc00x"\n', '"\\ud800"\n"y"\n', 'jsonl', 'either'],
    ['jsonl-nul-escape', '"a\\u0000b"\n', '"a\\u0000b"\n', 'jsonl', 'ok'],
    ['jsonl-u2028', '"a\u2028b"\n', '"a\u2028b"\n', 'jsonl', 'ok'],
    ['empty-files', '', '', 'txt', 'error'],
    ['empty-refs', '', 'a\n', 'txt', 'error'],
    ['empty-hyps', 'a\n', '', 'txt', 'error'],
    ['only-newline', '\n', '\n', 'txt', 'either'],
    ['mismatched-more-hyps', 'a\nb\n', 'a\nb\nc\n', 'txt', 'error'],
    ['mismatched-more-refs', 'a\nb\nc\n', 'a\n', 'txt', 'error'],
    ['nul-bytes', 'a\0b\n\0\n', 'a\0b\n\0\n', 'txt', 'ok'],
    ['nul-bytes-jsonl', '"a"\0\n', '"a"\n', 'jsonl', 'error'],
    ['bom-mid-file', 'a\n\uFEFF\n', 'a\nb\n', 'txt', 'either'],
    ['astral-and-lone', 'print(😀)\n𝑥\n', 'print(😀)\n𝑥\n', 'txt', 'ok'],
    ['big-50mb-line', big, big, 'txt', 'either'],
    ['big-5mb-words', bigWords, bigWords, 'txt', 'either'],
    // over PARALLEL_MIN_BYTES (8 MiB of input): --jobs 2 reads in windows on two threads
    ['many-lines-jobs', Buffer.from('the cat sat\n'.repeat(400000)), Buffer.from('the cat sat\n'.repeat(400000)), 'txt', 'ok'],
    ['bad-utf8-late-jobs', Buffer.concat([Buffer.from('the cat sat\n'.repeat(600000)), Buffer.from([0xff, 0x0a]), Buffer.from('x\n'.repeat(1000))]), Buffer.from('the cat sat\n'.repeat(600000) + 'y\n' + 'x\n'.repeat(1000)), 'txt', 'error'],
    ['bad-jsonl-late-jobs', Buffer.from('"the cat sat"\n'.repeat(350000) + '42\n'), Buffer.from('"the cat sat"\n'.repeat(350001)), 'jsonl', 'error'],
    ['rougeLsum-long-lines', JSON.stringify('a '.repeat(33000) + '\nb') + '\n', JSON.stringify('a '.repeat(33000) + '\nb') + '\n', 'jsonl', 'either', 'rougeLsum'],
    ['cgm-empty-reference', '""\n"x = 1\\ny = x"\n', '""\n"x = 1\\ny = x"\n', 'jsonl', 'ok', 'codebleu-cgm'],
  ];
  const metrics = ['bleu', 'chrf', 'codebleu:lang=python'];
  const cliResults = [];
  for (const [name, refs, hyps, ext, expected, only] of cases) {
    const rp = file(`${name}.refs.${ext}`, refs);
    const hp = file(`${name}.hyps.${ext}`, hyps);
    const heavy = name.startsWith('big') || name.includes('jobs');
    for (const metric of only ? [only] : heavy ? ['bleu'] : metrics) {
      for (const jobs of name.includes('jobs') ? ['1', '2'] : ['1']) {
        const started = performance.now();
        const args = [bin, 'score', '--refs', rp, '--hyps', hp, '--metric', metric, '--format', 'json', '--jobs', jobs];
        const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: TIMEOUT_MS * (heavy ? 3 : 1), killSignal: 'SIGKILL', maxBuffer: 64 * 2 ** 20 });
        const ms = performance.now() - started;
        const stderr = (r.stderr ?? '').trim();
        let verdict = 'ok';
        let detail = '';
        if (r.error?.code === 'ETIMEDOUT' || r.signal === 'SIGKILL') {
          verdict = 'hang';
          detail = `killed after ${(ms / 1000).toFixed(0)} s`;
        } else if (r.status === 0) {
          try {
            const report = JSON.parse(r.stdout);
            const scores = report.systems.flatMap((s) => s.scores.map((x) => x.score));
            if (scores.some((x) => x === null || !Number.isFinite(x) || x < 0 || x > 100 + 1e-9)) ((verdict = 'range'), (detail = `scores ${JSON.stringify(scores)} (null: no value)`));
            else detail = `scores ${JSON.stringify(scores.map((x) => (x === null ? null : Math.round(x * 100) / 100)))}`;
            if (expected === 'error') ((verdict = 'accepted'), (detail = `exit 0 where an error was expected; ${detail}`));
          } catch (e) {
            verdict = 'bad-output';
            detail = `exit 0 but stdout is not the JSON report: ${String(e.message).slice(0, 100)}`;
          }
        } else if (r.status === 2) {
          const lines = stderr.split('\n');
          detail = lines[0].slice(0, 200);
          if (lines.length > 1 || /\n\s+at /.test(stderr)) verdict = 'multi-line-error';
          else if (!stderr.includes(dir) && !/--|metric|segments/.test(stderr)) verdict = 'unlocated-error';
          else if (expected === 'ok') verdict = 'rejected';
          else verdict = 'typed';
        } else {
          verdict = 'crash';
          detail = `exit ${r.status}: ${stderr.split('\n').slice(0, 3).join(' | ').slice(0, 300)}`;
        }
        const entry = { target: `cli:${metric}${jobs !== '1' ? ` --jobs ${jobs}` : ''}`, case: name, kind: verdict, detail: detail.replaceAll(dir + '/', ''), ms };
        cliResults.push(entry);
        results.push(entry);
        const fail = !['ok', 'typed'].includes(verdict);
        log(`  ${(fail ? verdict.toUpperCase() : verdict).padEnd(8)} ${entry.target}  ${name}  ${(ms / 1000).toFixed(2)} s  ${entry.detail}`);
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return cliResults;
}

// ---------------------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------------------

/** Writes the JSON report (also after every target, so that an interrupted sweep leaves what it found). */
function writeReport(complete) {
  mkdirSync(dirname(opt.out), { recursive: true });
  const settings = { seed: SEED, timeoutS: TIMEOUT_MS / 1000, stepBudgetS: STEP_BUDGET_MS / 1000, quick: QUICK, full: opt.full };
  writeFileSync(opt.out, JSON.stringify({ ...settings, complete, seconds: (Date.now() - t0) / 1000, results }, null, 1));
}

async function parentMain() {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      for (const c of LIVE) c.kill();
      writeReport(false);
      log(`interrupted; partial report: ${opt.out}`);
      process.exit(130);
    });
  }
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) {
    console.error('dist/ is missing: run `npm run build` first');
    process.exit(2);
  }
  let targets = [];
  if (!opt['skip-metrics']) targets.push(...metricTargets());
  if (!opt['skip-extract']) targets.push(...EXTRACT_TARGETS);
  if (QUICK) {
    const keep = new Set(['bleu:tok=13a', 'bleu:tok=code', 'chrf:nw=2', 'rougeL:tok=default', 'rougeLsum:tok=code,stem=yes', 'meteor:tok=code', 'nltk-bleu', 'codebleu:lang=python', 'ruby:lang=python', 'codebleu:lang=java', 'ruby:lang=c', 'codebleu-cgm', 'crystalbleu:k=5', 'extract:python']);
    targets = targets.filter((t) => keep.has(t));
  }
  if (opt.only) targets = targets.filter((t) => opt.only.some((p) => t === p || (t.startsWith(p) && !/lang=\w*$/.test(p))));
  if (opt.list) {
    for (const t of targets) log(`${t}: ${casesOf(t).map((c) => (c.ladder ? `${c.name}[${c.ladder.join(',')}]` : c.name)).join(' ')}`);
    return;
  }
  log(`codegauge fuzz sweep: seed ${SEED}, ${targets.length} targets, timeout ${TIMEOUT_MS / 1000} s per pass, jobs ${opt.jobs}${QUICK ? ', quick' : ''}`);
  const queue = targets.slice();
  const worker = async () => {
    for (let t = queue.shift(); t; t = queue.shift()) {
      const started = Date.now();
      log(`${t} ...`);
      await runTarget(t, casesOf(t));
      writeReport(false);
      log(`${t}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Number(opt.jobs)) }, worker));
  if (!opt['skip-cli'] && !opt.only) {
    log('CLI readers ...');
    await cliSweep();
  }
  const failures = results.filter((r) => isFailure(r) || ['accepted', 'rejected', 'bad-output', 'multi-line-error', 'unlocated-error'].includes(r.kind));
  const typed = results.filter((r) => r.kind === 'typed');
  log('');
  log(`${results.length} cases in ${((Date.now() - t0) / 1000).toFixed(0)} s; ${failures.length} failures, ${typed.length} typed errors`);
  const byKind = {};
  for (const f of failures) byKind[f.slow && !FAILURES.has(f.kind) ? 'slow' : f.kind] = (byKind[f.slow && !FAILURES.has(f.kind) ? 'slow' : f.kind] ?? 0) + 1;
  log(`failures by kind: ${JSON.stringify(byKind)}`);
  for (const f of failures) {
    const what = f.error ? `${f.error.name}: ${f.error.message.split('\n')[0].slice(0, 160)} @ ${f.error.stack[0] ?? '?'}` : f.detail;
    const repro = Array.isArray(f.repro) ? `hyp=${JSON.stringify(f.repro[0]).slice(0, 200)} ref=${JSON.stringify(f.repro[1]).slice(0, 200)}` : (f.repro ?? '');
    log(`FAIL ${(f.slow && !FAILURES.has(f.kind) ? 'slow' : f.kind).padEnd(20)} ${f.target}  ${f.case}${f.size !== undefined ? `(${f.size})` : ''}  ${(f.ms / 1000).toFixed(2)} s  ${f.peakMb ? `${f.peakMb} MiB  ` : ''}${what}${repro ? `\n     repro: ${repro}` : ''}`);
  }
  writeReport(true);
  log(`report: ${opt.out}`);
  process.exitCode = failures.length ? 1 : 0;
}

if (opt.child) await childMain();
else await parentMain();
