import { codeTokens } from './code-tokenizer.js';
import { codePoints, isPyWhitespace, pyNormalizeSpaces, pySplit } from '../compat/python-strings.js';

/**
 * sacrebleu 2.x tokenizers, ported rule by rule so that n-grams are identical to the reference.
 * They are hand-written because no JavaScript library reproduces mteval-v13a / v14 tokenisation exactly.
 * Each returns the tokenised line; BLEU splits it on whitespace.
 */
export type BleuTokenizerName = '13a' | 'intl' | 'char' | 'none' | 'code';
export const BLEU_TOKENIZERS: readonly BleuTokenizerName[] = ['13a', 'intl', 'char', 'none', 'code'];

/**
 * mteval-v13a (sacrebleu Tokenizer13a + TokenizerRegexp). sacrebleu applies four regex substitutions in turn:
 *   A ([{-~[-` -&(-+:-@/]) -> ' \1 '   B ([^0-9])([.,]) -> '\1 \2 '   C ([.,])([^0-9]) -> ' \1 \2'
 *   D ([0-9])(-) -> '\1 \2 '
 * each leftmost-first and non-overlapping on the output of the previous one. Substitutions only insert spaces,
 * so they are simulated on a sequence of input positions in which -1 stands for an inserted space; the tokens
 * are then slices of the input. Each pass is a literal transcription of one regex (tests compare this with
 * the regexes on real and random text). Done by hand because it runs on every segment.
 */
const SPACE = -1;
let bufferA = new Int32Array(1024);
let bufferB = new Int32Array(1024);

function symbol13a(c: number): boolean {
  return (c >= 0x7b && c <= 0x7e) || (c >= 0x5b && c <= 0x60) || (c >= 0x20 && c <= 0x26) || (c >= 0x28 && c <= 0x2b) || (c >= 0x3a && c <= 0x40) || c === 0x2f;
}
const isDigit = (c: number) => c >= 48 && c <= 57;
const isPeriodOrComma = (c: number) => c === 46 || c === 44;

function preprocess13a(input: string): string {
  let line = input;
  if (line.includes('<skipped>')) line = line.replaceAll('<skipped>', '');
  if (line.includes('\n')) line = line.replaceAll('-\n', '').replaceAll('\n', ' ');
  if (line.includes('&')) {
    line = line.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>');
  }
  return line;
}

let lineCodes = new Uint16Array(1024);

const codeOf = (codes: Uint16Array, item: number) => (item === SPACE ? 32 : codes[item]);

/** Pass B, ([^0-9])([.,]) -> '\1 \2 '; returns the length written to `dst`. */
function passB(codes: Uint16Array, src: Int32Array, length: number, dst: Int32Array): number {
  let n = 0;
  let i = 0;
  while (i < length) {
    const a = src[i];
    if (i + 1 < length && !isDigit(codeOf(codes, a)) && isPeriodOrComma(codeOf(codes, src[i + 1]))) {
      dst[n++] = a;
      dst[n++] = SPACE;
      dst[n++] = src[i + 1];
      dst[n++] = SPACE;
      i += 2;
    } else {
      dst[n++] = a;
      i++;
    }
  }
  return n;
}

/** Pass C, ([.,])([^0-9]) -> ' \1 \2'. */
function passC(codes: Uint16Array, src: Int32Array, length: number, dst: Int32Array): number {
  let n = 0;
  let i = 0;
  while (i < length) {
    const a = src[i];
    if (i + 1 < length && isPeriodOrComma(codeOf(codes, a)) && !isDigit(codeOf(codes, src[i + 1]))) {
      dst[n++] = SPACE;
      dst[n++] = a;
      dst[n++] = SPACE;
      dst[n++] = src[i + 1];
      i += 2;
    } else {
      dst[n++] = a;
      i++;
    }
  }
  return n;
}

/** Pass D, ([0-9])(-) -> '\1 \2 '. */
function passD(codes: Uint16Array, src: Int32Array, length: number, dst: Int32Array): number {
  let n = 0;
  let i = 0;
  while (i < length) {
    const a = src[i];
    if (i + 1 < length && isDigit(codeOf(codes, a)) && codeOf(codes, src[i + 1]) === 45) {
      dst[n++] = a;
      dst[n++] = SPACE;
      dst[n++] = src[i + 1];
      dst[n++] = SPACE;
      i += 2;
    } else {
      dst[n++] = a;
      i++;
    }
  }
  return n;
}

/** The tokens of the 13a tokenizer. */
export function tokens13a(input: string): string[] {
  const line = preprocess13a(input);
  const len = line.length;
  const capacity = 4 * (len + 2) + 8;
  if (bufferA.length < capacity) {
    bufferA = new Int32Array(capacity);
    bufferB = new Int32Array(capacity);
  }
  if (lineCodes.length < len) lineCodes = new Uint16Array(len * 2);
  const codes = lineCodes;
  let periodOrComma = false;
  let dash = false;
  for (let i = 0; i < len; i++) {
    const c = line.charCodeAt(i);
    codes[i] = c;
    if (c === 46 || c === 44) periodOrComma = true;
    else if (c === 45) dash = true;
  }
  // ' ' + line + ' ' through pass A; the padding spaces are themselves symbols of pass A.
  const a = bufferA;
  let n = 0;
  a[n++] = SPACE;
  a[n++] = SPACE;
  a[n++] = SPACE;
  for (let i = 0; i < len; i++) {
    if (symbol13a(codes[i])) {
      a[n++] = SPACE;
      a[n++] = i;
      a[n++] = SPACE;
    } else a[n++] = i;
  }
  a[n++] = SPACE;
  a[n++] = SPACE;
  a[n++] = SPACE;
  // A pass whose trigger character does not occur copies its input unchanged, so it is skipped.
  let items = bufferA;
  let spare = bufferB;
  if (periodOrComma) {
    n = passB(codes, items, n, spare);
    n = passC(codes, spare, n, items);
  }
  if (dash) {
    n = passD(codes, items, n, spare);
    [items, spare] = [spare, items];
  }
  // Split on whitespace; a run without inserted spaces is a contiguous slice of the line.
  const tokens: string[] = [];
  let start = -1;
  let end = -1;
  for (let i = 0; i < n; i++) {
    const item = items[i];
    if (item === SPACE || isPyWhitespace(codes[item])) {
      if (start >= 0) {
        tokens.push(line.slice(start, end + 1));
        start = -1;
      }
    } else {
      if (start < 0) start = item;
      end = item;
    }
  }
  if (start >= 0) tokens.push(line.slice(start, end + 1));
  return tokens;
}

export function tokenize13a(input: string): string {
  return tokens13a(input).join(' ');
}

// mteval-v14 "international" rules on Unicode general categories (sacrebleu TokenizerV14International).
const RE_INTL_PUNCT_AFTER_NON_DIGIT = /(\P{N})(\p{P})/gu;
const RE_INTL_PUNCT_BEFORE_NON_DIGIT = /(\p{P})(\P{N})/gu;
const RE_INTL_SYMBOL = /(\p{S})/gu;

export function tokenizeIntl(line: string): string {
  return pyNormalizeSpaces(
    line
      .replace(RE_INTL_PUNCT_AFTER_NON_DIGIT, '$1 $2 ')
      .replace(RE_INTL_PUNCT_BEFORE_NON_DIGIT, ' $1 $2')
      .replace(RE_INTL_SYMBOL, ' $1 '),
  );
}

export function tokenizeChar(line: string): string {
  return codePoints(line).join(' ');
}

export function tokenizeCode(line: string): string {
  return codeTokens(line).join(' ');
}

/** A tokenizer as BLEU uses it: the tokens of sacrebleu's tokenised line split on whitespace. */
export function bleuTokens(name: BleuTokenizerName): (line: string) => string[] {
  switch (name) {
    case '13a':
      return tokens13a;
    case 'intl':
      return (line) => pySplit(tokenizeIntl(line));
    case 'char':
      return (line) => codePoints(line).filter((c) => !isPyWhitespace(c.charCodeAt(0)));
    case 'none':
      return pySplit;
    case 'code':
      return codeTokens;
  }
}
