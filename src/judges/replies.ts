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
 * A 0..max score from a reply: a JSON `score` field; else the last "<aspect|score>[ score] (is|:) N"; else the
 * last sentence naming the aspect, the score or a rating with a number after it ("the usefulness score for this
 * code snippet is 1", "rated 2 for usefulness"); else, for a short reply only (a bare "3", "I would give it 3"),
 * its last standalone number. Numbers inside fenced code are never grades. Null when none is found or it is out of
 * range: a reply without a grade is a judge failure, never a low grade.
 */
export function parseScore(reply: string, options: { max?: number; aspect?: string } = {}): number | null {
  return locateScore(reply, options)?.value ?? null;
}

/**
 * Replies up to this length may be a bare grade: ICE-Score's no-step prompts are answered with "3", and a model may
 * say "I would give it a 3.". A longer reply with no labelled grade has numbers of other kinds (step numbers, counts
 * of test cases, code), so its last number is no grade.
 */
export const BARE_GRADE_MAX_CHARS = 40;

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
  // Fenced code blanked out, offsets kept (the index is the grade token's place in the reply).
  const text = reply.replace(/(`{3,})[\s\S]*?(?:\1|$)/g, (block) => block.replace(/[^\n]/g, ' '));
  const aspect = options.aspect?.replace(/[^\w ]/g, '');
  const words = ['score', 'rating', aspect].filter(Boolean).join('|');
  const notRange = '(?!\\s*(?:-|to)\\s*\\d)';
  const last = (pattern: RegExp) => {
    let found: { value: number; index: number } | null = null;
    for (const m of text.matchAll(pattern)) found = { value: Number(m[1]), index: m.indices![1][0] };
    return found;
  };
  const labelled = last(new RegExp(`(?:${words})(?:\\s+score)?\\s*(?:is|:|=|of)?\\s*\\**\\s*(\\d+(?:\\.\\d+)?)${notRange}`, 'gid'));
  if (labelled) return { value: inRange(labelled.value), index: labelled.index };
  // The first number after the word, in the same sentence (no digit and no sentence end between them).
  const phrased = last(new RegExp(`\\b(?:${words}|scores|scored|rated?|grade[ds]?)\\b[^.!?\\n\\d]{0,80}?(\\d+(?:\\.\\d+)?)${notRange}`, 'gid'));
  if (phrased) return { value: inRange(phrased.value), index: phrased.index };
  if (reply.trim().length > BARE_GRADE_MAX_CHARS || text !== reply) return null;
  const numbers = [...text.matchAll(/(?<![\w.])(\d+(?:\.\d+)?)(?![\w]|\.\d)/g)];
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
