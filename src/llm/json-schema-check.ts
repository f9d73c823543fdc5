/**
 * codegauge's own check that a value follows a JSON schema, for the subset its judges ask for (objects with
 * properties, required and additionalProperties; arrays with items, minItems and maxItems; strings with minLength
 * and maxLength; integers and numbers; enums; booleans; null). A grammar-constrained reply is checked again here
 * rather than trusted: a reply cut at the token limit, or bytes a model wrote that are not UTF-8, can leave the
 * grammar's language. Returns the first violation as a path and a reason, or null. Lengths are counted in
 * characters, leaving out U+FFFD (see below).
 */
export type SchemaViolation = { path: string; reason: string } | null;

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

export function checkJsonSchema(schema: Record<string, unknown>, value: unknown, path = '$'): SchemaViolation {
  const fail = (reason: string) => ({ path, reason });
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => allowed === value)) return fail(`${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if ('const' in schema && schema.const !== value) return fail(`${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`);
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (types.length) {
    const actual = typeOf(value);
    const ok = types.some((t) => t === actual || (t === 'integer' && typeof value === 'number' && Number.isInteger(value)) || (t === 'number' && actual === 'number'));
    if (!ok) return fail(`expected ${types.join(' or ')}, got ${actual}`);
  }
  if (typeof value === 'string') {
    // Characters as decoded; U+FFFD, which stands for each byte of a sequence that is not UTF-8, does not count:
    // llama.cpp's grammar counts such a sequence differently (measured: a 500-character bound let through 515
    // characters, 19 of them U+FFFD from a random model's byte tokens), and the bound is there to end the string.
    const length = [...value].filter((c) => c !== '\uFFFD').length;
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) return fail(`a string of ${length} characters, more than maxLength ${schema.maxLength}`);
    if (typeof schema.minLength === 'number' && length < schema.minLength) return fail(`a string of ${length} characters, fewer than minLength ${schema.minLength}`);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return fail('not a finite number');
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) return fail(`${value.length} items, more than maxItems ${schema.maxItems}`);
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) return fail(`${value.length} items, fewer than minItems ${schema.minItems}`);
    if (schema.items && typeof schema.items === 'object') {
      for (let i = 0; i < value.length; i++) {
        const inner = checkJsonSchema(schema.items as Record<string, unknown>, value[i], `${path}[${i}]`);
        if (inner) return inner;
      }
    }
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    for (const key of (schema.required ?? []) as string[]) if (!(key in object)) return fail(`missing property "${key}"`);
    for (const [key, v] of Object.entries(object)) {
      if (key in properties) {
        const inner = checkJsonSchema(properties[key], v, `${path}.${key}`);
        if (inner) return inner;
      } else if (schema.additionalProperties === false) return fail(`unexpected property "${key}"`);
    }
  }
  return null;
}

/** A reply's text checked as JSON that follows the schema: the parsed value, or why not. */
export function readSchemaReply(schema: Record<string, unknown>, text: string): { value: unknown } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `not JSON (${(e as Error).message})` };
  }
  const violation = checkJsonSchema(schema, value);
  return violation ? { error: `${violation.path}: ${violation.reason}` } : { value };
}
