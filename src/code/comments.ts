import { pyStrip } from '../compat/python-strings.js';
import type { LanguageId } from './languages.js';
import { pythonTokens } from '../compat/python-tokenize.js';

/**
 * CodeBLEU's `remove_comments_and_docstrings` (codebleu 0.7.1 / CodeXGLUE), reproduced exactly, including its
 * quirks: Python goes through CPython's tokenizer and drops strings that start a logical line (docstrings), and
 * any tokenizer failure leaves the source unchanged; Ruby is returned as is; other languages lose `//` and
 * `/* *\/` comments by regex (string literals protected); blank lines are removed.
 */
const C_LIKE_COMMENT = /\/\/.*?$|\/\*.*?\*\/|'(?:\\.|[^\\'])*'|"(?:\\.|[^\\"])*"/gms;

function dropBlankLines(text: string): string {
  // A plain loop rather than `.filter` with a callback, whose inlined form deoptimized in short (cold) runs.
  const lines = text.split('\n');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) if (pyStrip(lines[i]) !== '') kept.push(lines[i]);
  return kept.join('\n');
}

export function removeCommentsAndDocstrings(source: string, language: LanguageId): string {
  if (language === 'python') {
    // Generated code often fails to tokenize; the error is dropped, so its stack trace is not worth capturing.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return removePythonComments(source);
    } catch {
      return source; // codebleu catches every exception and keeps the source
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
  if (language === 'ruby') return source;
  return dropBlankLines(source.replace(C_LIKE_COMMENT, (s) => (s.startsWith('/') ? ' ' : s)));
}

function removePythonComments(source: string): string {
  let out = '';
  let prevType = 'INDENT';
  let lastLine = -1;
  let lastCol = 0;
  for (const tok of pythonTokens(source)) {
    const [startLine, startCol] = tok.start;
    const [endLine, endCol] = tok.end;
    if (startLine > lastLine) lastCol = 0;
    if (startCol > lastCol) out += ' '.repeat(startCol - lastCol);
    if (tok.type === 'COMMENT') {
      // dropped
    } else if (tok.type === 'STRING') {
      if (prevType !== 'INDENT' && prevType !== 'NEWLINE' && startCol > 0) out += tok.string;
    } else {
      out += tok.string;
    }
    prevType = tok.type;
    lastCol = endCol;
    lastLine = endLine;
  }
  return dropBlankLines(out);
}
