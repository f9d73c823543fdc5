// The ICE-Score HumanEval problems bundled in data/ice-humaneval, shared by the benchmarks.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

export function humanevalProblems(lang) {
  return JSON.parse(gunzipSync(readFileSync(new URL(`../data/ice-humaneval/humaneval_${lang}_grade.json.gz`, import.meta.url))));
}

/** The reference solution: a list, or a JSON-encoded list, or the text itself. */
export function referenceOf(snippet) {
  if (Array.isArray(snippet)) return snippet[0];
  try {
    const parsed = JSON.parse(snippet);
    return Array.isArray(parsed) ? parsed[0] : String(parsed);
  } catch {
    return snippet;
  }
}
