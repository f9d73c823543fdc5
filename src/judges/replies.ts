/**
 * Tolerant reading of judge replies. Models wrap JSON in prose or code fences, or answer "Usefulness: 3" instead
 * of JSON; a reply that yields nothing is a judge failure (null), never a low score.
 */

/** The first balanced JSON object in a reply (inside a ```json fence or bare), or null. */
export function extractJsonObject(reply: string): Record<string, unknown> | null {
  const text = reply.replace(/```(?:json)?/gi, '');
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (inString) {
        if (ch === '\\') i++;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
      else if (ch === '{') depth++;
      else if (ch === '}' && --depth === 0) {
        try {
          const value = JSON.parse(text.slice(start, i + 1));
          if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
        } catch {
          // not JSON after all: try the next opening brace
        }
        break;
      }
    }
  }
  return null;
}

/**
 * A 0..max score from a reply: a JSON `score` field; else the last "<aspect|score>[ score] (is|:) N"; else, for
 * short replies, the last standalone number in range. Null when none is found or it is out of range.
 */
export function parseScore(reply: string, options: { max?: number; aspect?: string } = {}): number | null {
  const max = options.max ?? 4;
  const inRange = (x: number) => (Number.isFinite(x) && x >= 0 && x <= max ? x : null);
  const json = extractJsonObject(reply);
  if (json && json.score !== undefined) return inRange(Number(json.score));
  const words = ['score', 'rating', options.aspect].filter(Boolean).map((w) => w!.replace(/[^\w ]/g, '')).join('|');
  const labelled = new RegExp(`(?:${words})(?:\\s+score)?\\s*(?:is|:|=|of)?\\s*\\**\\s*(\\d+(?:\\.\\d+)?)(?!\\s*(?:-|to)\\s*\\d)`, 'gi');
  let last: number | null = null;
  for (const m of reply.matchAll(labelled)) last = Number(m[1]);
  if (last !== null) return inRange(last);
  const numbers = [...reply.matchAll(/(?<![\w.])(\d+(?:\.\d+)?)(?![\w]|\.\d)/g)];
  return numbers.length ? inRange(Number(numbers.at(-1)![1])) : null;
}
