import { isPyWhitespace } from '../compat/python-strings.js';
import type { TokenSpans } from './token-spans.js';

/**
 * The code tokenizer of "Out of the BLEU" (Evtikhiev et al. 2023: `tokenize_tranx` and the `code` tokenizer of
 * their sacrebleu copy), whose regexes are
 *   re.sub(r'([^A-Za-z0-9_])', r' \1 ', code); re.sub(r'([a-z])([A-Z])', r'\1 \2', code);
 *   re.sub(r'\s+', ' ', code); quotes -> '`'; split.
 * That is: every character outside [A-Za-z0-9_] that is not whitespace is a token of its own (a quote becomes
 * a backtick), runs of [A-Za-z0-9_] are tokens split wherever a lowercase letter meets an uppercase one.
 * Hand-written as one scan because it runs on every segment; tests check it against the regexes.
 */
function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

export function codeTokens(code: string): string[] {
  const tokens: string[] = [];
  let start = -1;
  let prevLower = false;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (isWordChar(c)) {
      const upper = c >= 65 && c <= 90;
      if (start < 0) start = i;
      else if (upper && prevLower) {
        tokens.push(code.slice(start, i));
        start = i;
      }
      prevLower = c >= 97 && c <= 122;
      continue;
    }
    if (start >= 0) {
      tokens.push(code.slice(start, i));
      start = -1;
    }
    prevLower = false;
    if (isPyWhitespace(c)) continue;
    if (c === 34 || c === 39) tokens.push('`');
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < code.length) {
      tokens.push(code.slice(i, i + 2)); // an astral character is one token, as a Python code point is
      i++;
    } else tokens.push(code[i]);
  }
  if (start >= 0) tokens.push(code.slice(start));
  return tokens;
}

/** `codeTokens` as spans of `out.codes` (the code with quotes turned into backticks), for interning without strings. */
export function spansCode(code: string, out: TokenSpans): void {
  const len = code.length;
  out.reset(len);
  const { codes, bounds } = out;
  let n = 0;
  let start = -1;
  let prevLower = false;
  for (let i = 0; i < len; i++) {
    const c = code.charCodeAt(i);
    codes[i] = c;
    if (isWordChar(c)) {
      const upper = c >= 65 && c <= 90;
      if (start < 0) start = i;
      else if (upper && prevLower) {
        bounds[n++] = start;
        bounds[n++] = i;
        start = i;
      }
      prevLower = c >= 97 && c <= 122;
      continue;
    }
    if (start >= 0) {
      bounds[n++] = start;
      bounds[n++] = i;
      start = -1;
    }
    prevLower = false;
    if (isPyWhitespace(c)) continue;
    bounds[n++] = i;
    if (c === 34 || c === 39) codes[i] = 96; // a quote becomes '`'
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      codes[i + 1] = code.charCodeAt(i + 1); // an astral character is one token, as a Python code point is
      i++;
    }
    bounds[n++] = i + 1;
  }
  if (start >= 0) {
    bounds[n++] = start;
    bounds[n++] = len;
  }
  out.count = n >> 1;
}
