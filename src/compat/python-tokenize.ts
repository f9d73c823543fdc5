/**
 * A port of CPython 3.11's pure-Python tokenizer (`tokenize.generate_tokens`), enough for what CodeBLEU does
 * with it: remove comments and docstrings exactly as `codebleu.parser.remove_comments_and_docstrings` does, with
 * the same token boundaries, positions and failures (an unterminated string or bracket raises, and the caller
 * then keeps the source unchanged). Hand-written because no JavaScript library reproduces CPython's tokenizer.
 */
export type TokenType = 'COMMENT' | 'NL' | 'NEWLINE' | 'INDENT' | 'DEDENT' | 'STRING' | 'NUMBER' | 'NAME' | 'OP' | 'ERRORTOKEN' | 'ENDMARKER';

export interface PyToken {
  type: TokenType;
  string: string;
  /** 1-based line and 0-based column, as in CPython. */
  start: [number, number];
  end: [number, number];
}

export class PythonTokenizeError extends Error {}

const PREFIXES = ['', 'RB', 'U', 'br', 'fR', 'Fr', 'b', 'RF', 'rF', 'r', 'B', 'rb', 'Br', 'rf', 'FR', 'bR', 'R', 'Rf', 'rB', 'u', 'f', 'Rb', 'BR', 'F', 'fr'];
const PREFIX = `(?:${PREFIXES.join('|')})`;
const STRING_PREFIXES = new Set(PREFIXES);
const TRIPLE_START = `${PREFIX}'''|${PREFIX}"""`;
const NUMBER =
  '(?:[0-9](?:_?[0-9])*[jJ]|(?:(?:[0-9](?:_?[0-9])*\\.(?:[0-9](?:_?[0-9])*)?|\\.[0-9](?:_?[0-9])*)(?:[eE][-+]?[0-9](?:_?[0-9])*)?|[0-9](?:_?[0-9])*[eE][-+]?[0-9](?:_?[0-9])*)[jJ])' +
  '|(?:(?:[0-9](?:_?[0-9])*\\.(?:[0-9](?:_?[0-9])*)?|\\.[0-9](?:_?[0-9])*)(?:[eE][-+]?[0-9](?:_?[0-9])*)?|[0-9](?:_?[0-9])*[eE][-+]?[0-9](?:_?[0-9])*)' +
  '|(?:0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|(?:0(?:_?0)*|[1-9](?:_?[0-9])*))';
const OPERATORS = ['~', '}', '|=', '|', '{', '^=', '^', ']', '[', '@=', '@', '>>=', '>>', '>=', '>', '==', '=', '<=', '<<=', '<<', '<', ';', ':=', ':', '/=', '//=', '//', '/', '...', '.', '->', '-=', '-', ',', '+=', '+', '*=', '**=', '**', '*', ')', '(', '&=', '&', '%=', '%', '!='];
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const FUNNY = `\\r?\\n|(?:${OPERATORS.map(escapeRe).join('|')})`;
// Python's `.` (no DOTALL) is any character but \n; JavaScript's also excludes \r, U+2028 and U+2029: `[^\n]`.
const CONT_SINGLE = `${PREFIX}'[^\\n'\\\\]*(?:\\\\[^\\n][^\\n'\\\\]*)*(?:'|\\\\\\r?\\n)`;
const CONT_DOUBLE = `${PREFIX}"[^\\n"\\\\]*(?:\\\\[^\\n][^\\n"\\\\]*)*(?:"|\\\\\\r?\\n)`;
const WORD = '[\\p{L}\\p{Nl}\\p{Mn}\\p{Mc}\\p{Nd}\\p{Pc}\\p{No}]+';
// CPython: PseudoToken = Whitespace + group(PseudoExtras, Number, Funny, ContStr, Name)
const pseudoToken = (contStr: string[]) =>
  new RegExp(`[ \\f\\t]*((?:\\\\\\r?\\n|(?![\\s\\S])|#[^\\r\\n]*|${TRIPLE_START})|(?:${NUMBER})|(?:${FUNNY})|${contStr.map((c) => `(?:${c})|`).join('')}${WORD})`, 'uy');
const PSEUDO_TOKEN = pseudoToken([CONT_SINGLE, CONT_DOUBLE]);
/**
 * PseudoToken without the single-line string of one quote: used where that string is known not to end on the line
 * (see `unendedFrom` in pythonTokens), to give the same match without rescanning the rest of the line.
 */
const WITHOUT_CONT: Record<string, RegExp> = { "'": pseudoToken([CONT_DOUBLE]), '"': pseudoToken([CONT_SINGLE]) };

const END_SINGLE = /[^'\\]*(?:\\[^\n][^'\\]*)*'/y;
const END_DOUBLE = /[^"\\]*(?:\\[^\n][^"\\]*)*"/y;
const END_SINGLE3 = /[^'\\]*(?:(?:\\[^\n]|'(?!''))[^'\\]*)*'''/y;
const END_DOUBLE3 = /[^"\\]*(?:(?:\\[^\n]|"(?!""))[^"\\]*)*"""/y;

function isIdentifierStart(c: string): boolean {
  return /^[\p{L}\p{Nl}_]$/u.test(c);
}

function matchAt(re: RegExp, line: string, pos: number): RegExpExecArray | null {
  re.lastIndex = pos;
  return re.exec(line);
}

/** Lines as Python's `readline` yields them, each with its line ending. */
function readlines(source: string): string[] {
  const lines = source.split(/(?<=\n)/);
  return lines.length === 1 && lines[0] === '' ? [] : lines;
}

export function pythonTokens(source: string): PyToken[] {
  const tokens: PyToken[] = [];
  const lines = readlines(source);
  let lnum = 0;
  let parenlev = 0;
  let continued = false;
  let contstr = '';
  let needcont = false;
  let strstart: [number, number] = [0, 0];
  let endprog: RegExp = END_SINGLE;
  const indents = [0];
  let lastLine = '';
  let line = '';
  let lineIndex = 0;
  const push = (type: TokenType, string: string, start: [number, number], end: [number, number]) => tokens.push({ type, string, start, end });

  while (true) {
    lastLine = line;
    line = lineIndex < lines.length ? lines[lineIndex++] : '';
    lnum++;
    let pos = 0;
    const max = line.length;
    if (contstr) {
      if (!line) throw new PythonTokenizeError('EOF in multi-line string');
      const endmatch = matchAt(endprog, line, 0);
      if (endmatch) {
        pos = endmatch.index + endmatch[0].length;
        push('STRING', contstr + line.slice(0, pos), strstart, [lnum, pos]);
        contstr = '';
        needcont = false;
      } else if (needcont && !line.endsWith('\\\n') && !line.endsWith('\\\r\n')) {
        push('ERRORTOKEN', contstr + line, strstart, [lnum, line.length]);
        contstr = '';
        continue;
      } else {
        contstr += line;
        continue;
      }
    } else if (parenlev === 0 && !continued) {
      if (!line) break;
      let column = 0;
      while (pos < max) {
        const ch = line[pos];
        if (ch === ' ') column++;
        else if (ch === '\t') column = (Math.floor(column / 8) + 1) * 8;
        else if (ch === '\f') column = 0;
        else break;
        pos++;
      }
      if (pos === max) break;
      if ('#\r\n'.includes(line[pos])) {
        if (line[pos] === '#') {
          let end = max; // the comment without its line ending (a scan: a regex `[\r\n]+$` is quadratic on \r runs)
          while (end > pos && (line[end - 1] === '\r' || line[end - 1] === '\n')) end--;
          const comment = line.slice(pos, end);
          push('COMMENT', comment, [lnum, pos], [lnum, pos + comment.length]);
          pos += comment.length;
        }
        push('NL', line.slice(pos), [lnum, pos], [lnum, line.length]);
        continue;
      }
      if (column > indents[indents.length - 1]) {
        indents.push(column);
        push('INDENT', line.slice(0, pos), [lnum, 0], [lnum, pos]);
      }
      while (column < indents[indents.length - 1]) {
        if (!indents.includes(column)) throw new PythonTokenizeError('unindent does not match any outer indentation level');
        indents.pop();
        push('DEDENT', '', [lnum, pos], [lnum, pos]);
      }
    } else {
      if (!line) throw new PythonTokenizeError('EOF in multi-line statement');
      continued = false;
    }

    // A single-line string opened by the quote at column c that does not end on this line: unendedFrom[quote] = c.
    // Every later quote of that kind was inside it as an escaped `\\'`, so the string it opens would scan the same
    // rest of the line and not end either. Knowing it keeps a line of many such quotes linear (CPython's
    // regex tokenizer, and this port before, rescanned the line from each: '"' + '\\"' x 20,000 took 3 s).
    const unendedFrom: Record<string, number> = { "'": Infinity, '"': Infinity };
    while (pos < max) {
      // Where a single-line string would open: after blanks and up to two prefix letters, a quote not tripled.
      let q = pos;
      while (q < max && (line[q] === ' ' || line[q] === '\t' || line[q] === '\f')) q++;
      const tokenStart = q;
      while (q < tokenStart + 2 && q < max && ((line.charCodeAt(q) | 32) - 97) >>> 0 < 26) q++;
      const quote = line[q] === "'" || line[q] === '"' ? line[q] : '';
      const single = quote !== '' && !(line[q + 1] === quote && line[q + 2] === quote);
      const m = matchAt(single && q > unendedFrom[quote] ? WITHOUT_CONT[quote] : PSEUDO_TOKEN, line, pos);
      // No string from this quote, though the letters before it are a string prefix (the match, if any, is that
      // prefix as a name, or nothing): the string it opens does not end on this line.
      if (single && q <= unendedFrom[quote] && !(m && m.index + m[0].length > q) && STRING_PREFIXES.has(line.slice(tokenStart, q))) unendedFrom[quote] = q;
      // A match must move on: V8 can match the empty end-of-input alternative inside a surrogate pair.
      if (m && m.index + m[0].length > pos) {
        const start = m.index + m[0].length - m[1].length;
        const end = m.index + m[0].length;
        pos = end;
        if (start === end) continue;
        const token = line.slice(start, end);
        const initial = line[start];
        const spos: [number, number] = [lnum, start];
        const epos: [number, number] = [lnum, end];
        if ('0123456789'.includes(initial) || (initial === '.' && token !== '.' && token !== '...')) {
          push('NUMBER', token, spos, epos);
        } else if (initial === '\r' || initial === '\n') {
          push(parenlev > 0 ? 'NL' : 'NEWLINE', token, spos, epos);
        } else if (initial === '#') {
          push('COMMENT', token, spos, epos);
        } else if (/^[A-Za-z]*('''|""")$/.test(token)) {
          endprog = token.endsWith("'''") ? END_SINGLE3 : END_DOUBLE3;
          const endmatch = matchAt(endprog, line, pos);
          if (endmatch) {
            pos = endmatch.index + endmatch[0].length;
            push('STRING', line.slice(start, pos), spos, [lnum, pos]);
          } else {
            strstart = [lnum, start];
            contstr = line.slice(start);
            break;
          }
        } else if (/^[A-Za-z]{0,2}['"]/.test(token) && /^[A-Za-z]*['"]/.exec(token)![0].length <= 3) {
          if (token.endsWith('\n')) {
            strstart = [lnum, start];
            const quote = token.match(/['"]/)![0];
            endprog = quote === "'" ? END_SINGLE : END_DOUBLE;
            contstr = line.slice(start);
            needcont = true;
            break;
          }
          push('STRING', token, spos, epos);
        } else if (isIdentifierStart(String.fromCodePoint(line.codePointAt(start)!))) {
          push('NAME', token, spos, epos);
        } else if (initial === '\\') {
          continued = true;
        } else {
          if ('([{'.includes(initial)) parenlev++;
          else if (')]}'.includes(initial)) parenlev--;
          push('OP', token, spos, epos);
        }
      } else {
        // One code point, as CPython (an emoji is one ERRORTOKEN, not two lone surrogates).
        const width = (line.codePointAt(pos) ?? 0) > 0xffff ? 2 : 1;
        push('ERRORTOKEN', line.slice(pos, pos + width), [lnum, pos], [lnum, pos + width]);
        pos += width;
      }
    }
  }
  if (lastLine && !'\r\n'.includes(lastLine[lastLine.length - 1]) && !lastLine.trim().startsWith('#')) {
    push('NEWLINE', '', [lnum - 1, lastLine.length], [lnum - 1, lastLine.length + 1]);
  }
  for (let i = 1; i < indents.length; i++) push('DEDENT', '', [lnum, 0], [lnum, 0]);
  push('ENDMARKER', '', [lnum, 0], [lnum, 0]);
  return tokens;
}
