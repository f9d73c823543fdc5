import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { codeTokens, tokens13a } from '../src/index.js';
import { bleuTokens, spansChar, spansNone, TokenSpans } from '../src/text/sacrebleu-tokenizers.js';
import { spansCode } from '../src/text/code-tokenizer.js';
import { pyNormalizeSpaces, PY_WS_RUN } from '../src/compat/python-strings.js';
import { ROOT, readJson } from './helpers.js';

/**
 * The production tokenizers are hand-written scanners; these are literal transcriptions of the reference
 * regexes (sacrebleu Tokenizer13a/TokenizerRegexp and the "Out of the BLEU" code tokenizer). Both must agree
 * on every segment of the bundled corpora and on random strings made of the characters the rules treat
 * specially.
 */
function regex13a(input: string): string[] {
  let line = input.replaceAll('<skipped>', '').replaceAll('-\n', '').replaceAll('\n', ' ');
  if (line.includes('&')) line = line.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>');
  line = ` ${line} `
    .replace(/([{-~[-` -&(-+:-@/])/g, ' $1 ')
    .replace(/([^0-9])([.,])/g, '$1 $2 ')
    .replace(/([.,])([^0-9])/g, ' $1 $2')
    .replace(/([0-9])(-)/g, '$1 $2 ');
  return pyNormalizeSpaces(line).split(' ').filter(Boolean);
}

function regexCode(code: string): string[] {
  return code
    .replace(/([^A-Za-z0-9_])/gu, ' $1 ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(PY_WS_RUN, ' ')
    .replace(/["']/g, '`')
    .split(' ')
    .filter(Boolean);
}

function corpusSegments(): string[] {
  const out: string[] = [];
  for (const file of ['data/codegen-metrics/conala-all-grades.json.gz', 'data/codegen-metrics/hs-all-grades.json.gz']) {
    for (const item of readJson<any[]>(file)) for (const v of Object.values(item)) if (typeof v === 'string') out.push(v);
  }
  for (const lang of ['python', 'js']) {
    const problems = JSON.parse(gunzipSync(readFileSync(join(ROOT, `data/ice-humaneval/humaneval_${lang}_grade.json.gz`))).toString());
    for (const p of problems) for (const [k, v] of Object.entries(p)) if (/^\d+$/.test(k) && typeof v === 'string') out.push(v);
  }
  return out;
}

function randomStrings(count: number, seed: number): string[] {
  const alphabet = ['a', 'B', 'z', 'Q', '0', '7', '.', ',', '-', '-\n', '\n', ' ', '\t', '&', '&quot;', '&amp;', '&lt;', '<skipped>', '"', "'", '_', '(', ')', '{', '~', '`', '/', ':', '@', '[', 'é', '日', '😀', '\u00a0', '\u2028', '\x1c', '…', '$'];
  let state = seed;
  const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(next() * 30) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''));
}

describe('hand-written tokenizers equal the reference regexes', () => {
  const segments = [...corpusSegments(), ...randomStrings(20_000, 42)];
  it(`13a on ${segments.length} segments`, () => {
    const wrong = segments.filter((s) => tokens13a(s).join('\u0001') !== regex13a(s).join('\u0001'));
    expect(wrong.slice(0, 5)).toEqual([]);
  });
  it(`code on ${segments.length} segments`, () => {
    const wrong = segments.filter((s) => codeTokens(s).join('\u0001') !== regexCode(s).join('\u0001'));
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});

describe('span tokenizers (what BLEU interns) equal the string tokenizers', () => {
  const segments = [...corpusSegments(), ...randomStrings(20_000, 7)];
  const spans = new TokenSpans();
  const cases: [string, (s: string, out: TokenSpans) => void, (s: string) => string[]][] = [
    ['code', spansCode, codeTokens],
    ['none', spansNone, bleuTokens('none')],
    ['char', spansChar, bleuTokens('char')],
  ];
  for (const [name, toSpans, toStrings] of cases) {
    it(`${name} on ${segments.length} segments`, () => {
      const wrong = segments.filter((s) => {
        toSpans(s, spans);
        return spans.strings().join('\u0001') !== toStrings(s).join('\u0001');
      });
      expect(wrong.slice(0, 5)).toEqual([]);
    });
  }
});
