/**
 * Token strings as dense integer ids (0, 1, 2, ... in order of first appearance), one Map shared by the sequences
 * that are compared, so equal tokens get equal ids: the dynamic programmes then compare numbers, never strings.
 */
export function tokenIds(tokens: readonly string[], ids: Map<string, number>): Int32Array {
  const out = new Int32Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) {
    let id = ids.get(tokens[i]);
    if (id === undefined) ids.set(tokens[i], (id = ids.size));
    out[i] = id;
  }
  return out;
}
