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
  return locateScore(reply, options)?.value ?? null;
}

/**
 * The score parseScore reads and where its digits start in the reply (`index`, -1 when the reply's JSON has the
 * score in a form the text cannot be searched for), for weighting the grade token by its log-probabilities.
 * Null when no score is found; `value` null when it is out of range.
 */
export function locateScore(reply: string, options: { max?: number; aspect?: string } = {}): { value: number | null; index: number } | null {
  const max = options.max ?? 4;
  const inRange = (x: number) => (Number.isFinite(x) && x >= 0 && x <= max ? x : null);
  const json = extractJsonObject(reply);
  if (json && json.score !== undefined) {
    let index = -1;
    for (const m of reply.matchAll(/"score"\s*:\s*"?(\d+(?:\.\d+)?)/dg)) index = m.indices![1][0];
    return { value: inRange(Number(json.score)), index };
  }
  const words = ['score', 'rating', options.aspect].filter(Boolean).map((w) => w!.replace(/[^\w ]/g, '')).join('|');
  const labelled = new RegExp(`(?:${words})(?:\\s+score)?\\s*(?:is|:|=|of)?\\s*\\**\\s*(\\d+(?:\\.\\d+)?)(?!\\s*(?:-|to)\\s*\\d)`, 'gid');
  let last: { value: number; index: number } | null = null;
  for (const m of reply.matchAll(labelled)) last = { value: Number(m[1]), index: m.indices![1][0] };
  if (last !== null) return { value: inRange(last.value), index: last.index };
  const numbers = [...reply.matchAll(/(?<![\w.])(\d+(?:\.\d+)?)(?![\w]|\.\d)/g)];
  if (!numbers.length) return null;
  const final = numbers.at(-1)!;
  return { value: inRange(Number(final[1])), index: final.index! };
}

/** Entity descriptions as a JSON object {"name": "description"} or a list [{"name", "description"}]. */
export function readEntities(value: unknown): Record<string, string> | null {
  const entities: Record<string, string> = {};
  if (Array.isArray(value)) {
    for (const item of value) {
      if (item && typeof item === 'object' && typeof (item as { name?: unknown }).name === 'string' && typeof (item as { description?: unknown }).description === 'string') {
        entities[(item as { name: string }).name] = (item as { description: string }).description;
      }
    }
    return entities;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (typeof v === 'string') entities[k] = v;
    return entities;
  }
  return null;
}
