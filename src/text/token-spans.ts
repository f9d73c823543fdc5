/**
 * Tokens as spans of a buffer of UTF-16 code units: the hot tokenizers write where each token starts and ends, so
 * that BLEU can intern them (`Vocabulary.encodeSpans`) without making a string per token. `codes` holds the line as
 * the tokenizer saw it (after 13a's preprocessing; quotes already turned into backticks by the code tokenizer).
 */
export class TokenSpans {
  codes = new Uint16Array(1024);
  /** start, end (exclusive) of token k at [2k], [2k + 1]. */
  bounds = new Int32Array(512);
  count = 0;

  /** Makes room for a line of `length` code units and at most `length` tokens, and empties the list. */
  reset(length: number): void {
    if (this.codes.length < length) this.codes = new Uint16Array(Math.max(length, this.codes.length * 2));
    if (this.bounds.length < 2 * length) this.bounds = new Int32Array(Math.max(2 * length, this.bounds.length * 2));
    this.count = 0;
  }

  /** The tokens as strings (for the string API and tests). */
  strings(): string[] {
    const out = new Array<string>(this.count);
    for (let k = 0; k < this.count; k++) out[k] = stringOf(this.codes, this.bounds[2 * k], this.bounds[2 * k + 1]);
    return out;
  }
}

/** The string of code units codes[start, end), in chunks (a spread of a long token would overflow the stack). */
export function stringOf(codes: Uint16Array, start: number, end: number): string {
  if (end - start <= 4096) return String.fromCharCode.apply(null, codes.subarray(start, end) as unknown as number[]);
  let s = '';
  for (let k = start; k < end; k += 4096) s += String.fromCharCode.apply(null, codes.subarray(k, Math.min(end, k + 4096)) as unknown as number[]);
  return s;
}
