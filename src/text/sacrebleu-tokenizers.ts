import { codeTokens, spansCode } from './code-tokenizer.js';
import { TokenSpans } from './token-spans.js';
import { codePoints, isPyWhitespace, pyNormalizeSpaces, pySplit } from '../compat/python-strings.js';

/**
 * sacrebleu 2.x tokenizers, ported rule by rule so that n-grams are identical to the reference.
 * They are hand-written because no JavaScript library reproduces mteval-v13a / v14 tokenisation exactly.
 * Each returns the tokenised line; BLEU splits it on whitespace.
 */
import type { BleuTokenizerName } from './bleu-tokenizer-names.js';
export { BLEU_TOKENIZERS, type BleuTokenizerName } from './bleu-tokenizer-names.js';
export { TokenSpans, stringOf } from './token-spans.js';

/**
 * mteval-v13a (sacrebleu Tokenizer13a + TokenizerRegexp). sacrebleu applies four regex substitutions in turn, each
 * leftmost-first and non-overlapping on the output of the previous one, then splits on whitespace:
 *   A ([{-~[-` -&(-+:-@/]) -> ' \1 '   B ([^0-9])([.,]) -> '\1 \2 '   C ([.,])([^0-9]) -> ' \1 \2'
 *   D ([0-9])(-) -> '\1 \2 '
 * They only insert spaces, so what matters is where a token ends. One scan decides it, from these consequences
 * of the rules (the oracle tests compare this scanner with the regexes on real and random text):
 * - A: a symbol is a token of its own.
 * - D: a '-' right after an ASCII digit is a token of its own (A-C never put a space between a digit and a '-').
 * - B and C act on a maximal run of m periods/commas, between the characters u before it and z after it (a symbol
 *   or the line's end counting as a space). Pairing in B is non-overlapping, so it splits the run into single
 *   marks whatever m; it leaves u joined to the first mark only when u is a digit, and the last mark joined to z
 *   only when m + [u is a digit] is even. C then splits such a remaining join unless the neighbour is a digit. So
 *   every mark is a token of its own, except that with u and z both digits a single mark joins them ("1.5"), and
 *   otherwise the last mark joins a digit z when m + [u is a digit] is even ("a..5" -> "a . .5").
 * Python's [0-9] is ASCII digits only; whitespace other than ' ' (tab, U+00A0, ...) is no symbol, so it is a
 * non-digit neighbour for B and C and is then dropped by the split.
 */
const isDigit = (c: number) => c >= 48 && c <= 57;

// Classes of ASCII code units in the 13a scan.
const PLAIN = 0;
const SPACE = 1;
const SYMBOL = 2;
const MARK = 3; // '.' or ','
const DASH = 4;
const CLASS_13A = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const symbol = (c >= 0x7b && c <= 0x7e) || (c >= 0x5b && c <= 0x60) || (c >= 0x20 && c <= 0x26) || (c >= 0x28 && c <= 0x2b) || (c >= 0x3a && c <= 0x40) || c === 0x2f;
  CLASS_13A[c] = isPyWhitespace(c) ? SPACE : symbol ? SYMBOL : c === 46 || c === 44 ? MARK : c === 45 ? DASH : PLAIN;
}

const ENTITY = /&(?:quot|amp|lt|gt);/;

function preprocess13a(input: string): string {
  let line = input;
  if (line.includes('<skipped>')) line = line.replaceAll('<skipped>', '');
  if (line.includes('\n')) line = line.replaceAll('-\n', '').replaceAll('\n', ' ');
  if (line.includes('&')) {
    line = line.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>');
  }
  return line;
}

/** The 13a tokens of `input` as spans of `out.codes` (which receives the preprocessed line). */
export function spans13a(input: string, out: TokenSpans): void {
  // sacrebleu's string replacements, in its order, where they can change something; the common case (newlines
  // only) is done while copying below. Without '<skipped>' or "-\n", an entity is in the input or nowhere ('\n' ->
  // ' ' cannot make one), so code with '&&' takes the copy too.
  const line = input.includes('<skipped>') || (input.includes('&') && (input.includes('-\n') || ENTITY.test(input))) ? preprocess13a(input) : input;
  out.reset(line.length);
  const codes = out.codes;
  let len = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 10) codes[len++] = 32; // '\n' -> ' '
    else if (c === 45 && line.charCodeAt(i + 1) === 10) i++; // '-\n' removed (before '\n' -> ' ', as in sacrebleu)
    else codes[len++] = c;
  }
  const bounds = out.bounds;
  let n = 0;
  let start = -1;
  let i = 0;
  while (i < len) {
    const c = codes[i];
    const cls = c < 128 ? CLASS_13A[c] : isPyWhitespace(c) ? SPACE : PLAIN;
    if (cls === PLAIN) {
      if (start < 0) start = i;
      i++;
      continue;
    }
    if (cls === DASH && !(i > 0 && isDigit(codes[i - 1]))) {
      if (start < 0) start = i;
      i++;
      continue;
    }
    if (cls === MARK) {
      let e = i + 1;
      while (e < len && (codes[e] === 46 || codes[e] === 44)) e++;
      const digitBefore = i > 0 && isDigit(codes[i - 1]);
      const digitAfter = e < len && isDigit(codes[e]);
      if (e - i === 1 && digitBefore && digitAfter) {
        i = e; // "1.5": the token goes on (it was started by the digit)
        continue;
      }
      if (start >= 0) {
        bounds[n++] = start;
        bounds[n++] = i;
        start = -1;
      }
      for (let k = i; k < e - 1; k++) {
        bounds[n++] = k;
        bounds[n++] = k + 1;
      }
      if (digitAfter && ((e - i + (digitBefore ? 1 : 0)) & 1) === 0) start = e - 1;
      else {
        bounds[n++] = e - 1;
        bounds[n++] = e;
      }
      i = e;
      continue;
    }
    // Whitespace ends a token; a symbol or a '-' after a digit also is one.
    if (start >= 0) {
      bounds[n++] = start;
      bounds[n++] = i;
      start = -1;
    }
    if (cls !== SPACE) {
      bounds[n++] = i;
      bounds[n++] = i + 1;
    }
    i++;
  }
  if (start >= 0) {
    bounds[n++] = start;
    bounds[n++] = len;
  }
  out.count = n >> 1;
}

const scratchSpans = new TokenSpans();

/**
 * Type feedback for every branch of `spans13a` before V8 optimizes it on real text: V8 records feedback only once a
 * function has run for a while (about 8 times its bytecode size: here from the second call on), and a branch first
 * met in optimized code (an entity, '<skipped>', "-\n", a run of marks, a number, non-ASCII text or whitespace)
 * deoptimizes it, after which it is compiled again. Twelve calls on short lines cost about 0.05 ms at load, besides
 * compiling what the first segment would; their spans go to a throwaway instance, so no tokenizer state changes.
 */
{
  const spans = new TokenSpans();
  for (let i = 0; i < 3; i++) {
    spans13a('a-\nb\n1.5 a..5 b,, 3- -x \u00e9\u00a0\u2028 . ,', spans); // copied, "-\n" and '\n' on the way
    spans13a('<skipped>&amp;-\nx', spans); // preprocessed for '<skipped>'
    spans13a('a && b &lt; c', spans); // preprocessed for an entity
    spans13a('a && b', spans); // copied: '&' but no entity
  }
}

/** The tokens of the 13a tokenizer. */
export function tokens13a(input: string): string[] {
  spans13a(input, scratchSpans);
  return scratchSpans.strings();
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

/** `str.split()` as spans (BLEU's `none` tokenizer). */
export function spansNone(line: string, out: TokenSpans): void {
  const len = line.length;
  out.reset(len);
  const { codes, bounds } = out;
  let n = 0;
  let start = -1;
  for (let i = 0; i < len; i++) {
    const c = line.charCodeAt(i);
    codes[i] = c;
    if (isPyWhitespace(c)) {
      if (start >= 0) {
        bounds[n++] = start;
        bounds[n++] = i;
        start = -1;
      }
    } else if (start < 0) start = i;
  }
  if (start >= 0) {
    bounds[n++] = start;
    bounds[n++] = len;
  }
  out.count = n >> 1;
}

/** The `char` tokenizer as spans: every code point but whitespace. */
export function spansChar(line: string, out: TokenSpans): void {
  const len = line.length;
  out.reset(len);
  const { codes, bounds } = out;
  let n = 0;
  for (let i = 0; i < len; i++) {
    const c = line.charCodeAt(i);
    codes[i] = c;
    if (isPyWhitespace(c)) continue;
    bounds[n++] = i;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = line.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) codes[++i] = d;
    }
    bounds[n++] = i + 1;
  }
  out.count = n >> 1;
}

/**
 * A tokenizer that writes spans, for the tokenizers BLEU runs on every segment; `intl` (Unicode property regexes)
 * has none and goes through strings.
 */
export function bleuSpanTokenizer(name: BleuTokenizerName): ((line: string, out: TokenSpans) => void) | null {
  switch (name) {
    case '13a':
      return spans13a;
    case 'none':
      return spansNone;
    case 'char':
      return spansChar;
    case 'code':
      return spansCode;
    default:
      return null;
  }
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
