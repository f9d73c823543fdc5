import { basename, extname } from 'node:path';
import { languageOfFile } from '../code/languages.js';
import { readHypotheses, readReferences } from '../io/segments.js';

/**
 * A system is named after its file without the format and language extensions (`codex.py.jsonl` -> `codex`);
 * a name already taken gets `#2`, `#3`, ...
 */
export function systemName(path: string, taken: Set<string>): string {
  let base = basename(path, extname(path));
  if (languageOfFile(base) && extname(base)) base = basename(base, extname(base));
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}#${i}`;
  taken.add(name);
  return name;
}

/** The references and one system per hypothesis file, as score, compare and judge read them. */
export function readSystems(refs: string[], hyps: string[]) {
  const { references, files } = readReferences(refs);
  const taken = new Set<string>();
  const systems = hyps.map((path) => ({ name: systemName(path, taken), hypotheses: readHypotheses(path, files[0]) }));
  return { references, systems };
}

/** A language named by a file's inner extension: `codex.py.jsonl`, `refs.ts.txt`. */
export function inferLanguage(paths: string[]): string | undefined {
  for (const path of paths) {
    const inner = basename(path, extname(path));
    const language = languageOfFile(inner);
    if (language) return language;
  }
  return undefined;
}
