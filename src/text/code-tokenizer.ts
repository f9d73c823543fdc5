import { PY_WS_RUN } from './python.js';

/**
 * The code tokenizer of "Out of the BLEU" (Evtikhiev et al. 2023, `tokenize_tranx` and the `code` tokenizer of
 * their sacrebleu copy): spaces around every character outside [A-Za-z0-9_], camelCase split, string quotes
 * mapped to a backtick. Hand-written because it must match their Python regexes exactly; no library does this.
 */
const NON_WORD = /([^A-Za-z0-9_])/gu;
const CAMEL = /([a-z])([A-Z])/g;
const QUOTES = /["']/g;

export function codeTokens(code: string): string[] {
  const spaced = code.replace(NON_WORD, ' $1 ').replace(CAMEL, '$1 $2').replace(PY_WS_RUN, ' ').replace(QUOTES, '`');
  return spaced.split(' ').filter((t) => t.length > 0);
}
