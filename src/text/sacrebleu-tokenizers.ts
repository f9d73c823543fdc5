import { codeTokens } from './code-tokenizer.js';
import { codePoints, pyNormalizeSpaces } from './python.js';

/**
 * sacrebleu 2.x tokenizers, ported rule by rule so that n-grams are identical to the reference.
 * They are hand-written because no JavaScript library reproduces mteval-v13a / v14 tokenisation exactly.
 * Each returns the tokenised line; BLEU splits it on whitespace.
 */
export type BleuTokenizerName = '13a' | 'intl' | 'char' | 'none' | 'code';
export const BLEU_TOKENIZERS: readonly BleuTokenizerName[] = ['13a', 'intl', 'char', 'none', 'code'];

// mteval-v13a language-dependent rules (sacrebleu TokenizerRegexp).
const RE_13A_SYMBOLS = /([{-~[-` -&(-+:-@/])/g;
const RE_13A_PERIOD_COMMA_AFTER_NON_DIGIT = /([^0-9])([.,])/g;
const RE_13A_PERIOD_COMMA_BEFORE_NON_DIGIT = /([.,])([^0-9])/g;
const RE_13A_DASH_AFTER_DIGIT = /([0-9])(-)/g;

export function tokenize13a(input: string): string {
  let line = input.replaceAll('<skipped>', '').replaceAll('-\n', '').replaceAll('\n', ' ');
  if (line.includes('&')) {
    line = line.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>');
  }
  line = ` ${line} `
    .replace(RE_13A_SYMBOLS, ' $1 ')
    .replace(RE_13A_PERIOD_COMMA_AFTER_NON_DIGIT, '$1 $2 ')
    .replace(RE_13A_PERIOD_COMMA_BEFORE_NON_DIGIT, ' $1 $2')
    .replace(RE_13A_DASH_AFTER_DIGIT, '$1 $2 ');
  return pyNormalizeSpaces(line);
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

export function bleuTokenizer(name: BleuTokenizerName): (line: string) => string {
  switch (name) {
    case '13a':
      return tokenize13a;
    case 'intl':
      return tokenizeIntl;
    case 'char':
      return tokenizeChar;
    case 'none':
      return (line) => line;
    case 'code':
      return tokenizeCode;
  }
}
