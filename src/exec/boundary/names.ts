/**
 * The names JavaScript tests take from the candidate's program: identifiers the tests use but neither declare nor
 * find among the globals (MultiPL-E's `let candidate = has_close_elements;`, HumanEval-X's calls of
 * `hasCloseElements(...)`). Strings, template literals, comments, regular expressions are skipped, and so are
 * property names (`assert.deepEqual`) and object keys.
 */
const KEYWORDS = new Set(
  'break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new return super switch this throw try typeof var void while with yield async await of static get set null true false undefined NaN Infinity arguments eval'.split(' '),
);

const GLOBALS = new Set([...Object.getOwnPropertyNames(globalThis), 'require', 'module', 'exports', '__dirname', '__filename', 'console', 'process', 'Buffer', 'globalThis']);

export function jsTestNames(tests: string): string[] {
  const used = new Set<string>();
  const declared = new Set<string>();
  const src = tests;
  let i = 0;
  let prevSignificant = '';
  let prevWord = '';
  while (i < src.length) {
    const c = src[i];
    if (c === '/' && src[i + 1] === '/') {
      i = src.indexOf('\n', i);
      if (i < 0) break;
      continue;
    }
    if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      i = end < 0 ? src.length : end + 2;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      i++;
      while (i < src.length && src[i] !== c) i += src[i] === '\\' ? 2 : 1;
      i++;
      prevSignificant = 'x';
      continue;
    }
    if (c === '/' && /[(,=:[!&|?{};]|^$/.test(prevSignificant)) {
      // a regular expression literal
      i++;
      while (i < src.length && src[i] !== '/' && src[i] !== '\n') i += src[i] === '\\' ? 2 : 1;
      i++;
      prevSignificant = 'x';
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < src.length && /[\w$]/.test(src[j])) j++;
      const word = src.slice(i, j);
      let k = j;
      while (k < src.length && /\s/.test(src[k])) k++;
      const isProperty = prevSignificant === '.';
      const isKey = src[k] === ':' && src[k + 1] !== ':' && /[{,]/.test(prevSignificant);
      if (!isProperty && !isKey && !KEYWORDS.has(word)) {
        if (/^(function|const|let|var|class)$/.test(prevWord)) declared.add(word);
        else used.add(word);
      }
      prevWord = word;
      prevSignificant = 'x';
      i = j;
      continue;
    }
    if (!/\s/.test(c)) {
      prevSignificant = c;
      if (c !== ',') prevWord = '';
      // destructuring and parameter lists declare too: `(a, b) =>`, `function f(a, b)` are rare in tests and
      // harmless here (an extra name bound to the candidate is never called)
    }
    i++;
  }
  return [...used].filter((name) => !declared.has(name) && !GLOBALS.has(name)).sort();
}
