/** Word n-gram counting shared by BLEU, chrF's word n-grams and NLTK BLEU. Keys join tokens with a space,
 * which is safe because tokens never contain whitespace. One map per order. */
export function wordNgramCounts(tokens: readonly string[], maxOrder: number, minOrder = 1): Map<string, number>[] {
  const maps: Map<string, number>[] = [];
  for (let n = minOrder; n <= maxOrder; n++) {
    const counts = new Map<string, number>();
    for (let i = 0; i + n <= tokens.length; i++) {
      let key = tokens[i];
      for (let j = 1; j < n; j++) key += ' ' + tokens[i + j];
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    maps.push(counts);
  }
  return maps;
}

/** Merges reference counts by maximum, as sacrebleu and NLTK clip against several references. */
export function maxMerge(into: Map<string, number>, from: Map<string, number>): void {
  for (const [k, v] of from) {
    const cur = into.get(k);
    if (cur === undefined || v > cur) into.set(k, v);
  }
}

export function clippedMatches(hyp: Map<string, number>, ref: Map<string, number>): { matched: number; total: number } {
  let matched = 0;
  let total = 0;
  for (const [k, c] of hyp) {
    total += c;
    const r = ref.get(k);
    if (r !== undefined) matched += c < r ? c : r;
  }
  return { matched, total };
}
