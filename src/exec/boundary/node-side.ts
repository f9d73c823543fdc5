/**
 * The JavaScript side of the boundary: the plain-value codec (evaluated in the realm whose values it reads or
 * makes: the candidate's Worker, the harness's vm context) and the harness's remote functions, which call the
 * candidate synchronously over the job's data channel.
 */
export const JS_CODEC = String.raw`// ---- plain values across the boundary (JavaScript): null, booleans, numbers (with NaN, ±Infinity, -0), bigints,
// strings, undefined, arrays, plain objects, Maps and Sets. Evaluated in the realm whose values it reads or makes.
class NotPlain extends Error {}
const MAX_DEPTH = 256;
function encode(v, depth = 0) {
  if (depth > MAX_DEPTH) throw new NotPlain('a value nested deeper than ' + MAX_DEPTH + ' levels');
  if (v === null) return null;
  switch (typeof v) {
    case 'boolean':
    case 'string':
      return v;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0) ? v : ['n', Object.is(v, -0) ? '-0' : String(v)];
    case 'undefined':
      return ['u'];
    case 'bigint':
      return ['i', v.toString()];
    case 'object': {
      if (Array.isArray(v)) {
        const out = new Array(v.length);
        for (let i = 0; i < v.length; i++) out[i] = encode(v[i], depth + 1);
        return ['a', out];
      }
      const proto = Object.getPrototypeOf(v);
      if (proto === Object.prototype || proto === null) return ['o', Object.keys(v).map((k) => [k, encode(v[k], depth + 1)])];
      if (v instanceof Map) return ['m', Array.from(v, ([k, x]) => [encode(k, depth + 1), encode(x, depth + 1)])];
      if (v instanceof Set) return ['s', Array.from(v, (x) => encode(x, depth + 1))];
      let name = 'object';
      try {
        name = 'an object of class ' + (v.constructor && typeof v.constructor.name === 'string' ? v.constructor.name : '?');
      } catch {}
      throw new NotPlain(name);
    }
    default:
      throw new NotPlain('a ' + typeof v);
  }
}
function decode(e, depth = 0) {
  if (depth > MAX_DEPTH + 1) throw new NotPlain('nested too deep');
  if (e === null || typeof e === 'boolean' || typeof e === 'string' || (typeof e === 'number' && Number.isFinite(e))) return e;
  if (!Array.isArray(e) || typeof e[0] !== 'string') throw new NotPlain('malformed value');
  const body = e[1];
  switch (e[0]) {
    case 'n':
      if (body === '-0') return -0;
      if (body === 'NaN') return NaN;
      if (body === 'Infinity') return Infinity;
      if (body === '-Infinity') return -Infinity;
      break;
    case 'u':
      return undefined;
    case 'i':
      if (typeof body === 'string' && /^-?\d+$/.test(body)) return BigInt(body);
      break;
    case 'a':
      if (Array.isArray(body)) return body.map((x) => decode(x, depth + 1));
      break;
    case 'o':
      if (Array.isArray(body)) {
        const out = {};
        for (const pair of body) {
          if (!Array.isArray(pair) || typeof pair[0] !== 'string') throw new NotPlain('malformed value');
          Object.defineProperty(out, pair[0], { value: decode(pair[1], depth + 1), writable: true, enumerable: true, configurable: true });
        }
        return out;
      }
      break;
    case 'm':
      if (Array.isArray(body)) return new Map(body.map((pair) => [decode(pair[0], depth + 1), decode(pair[1], depth + 1)]));
      break;
    case 's':
      if (Array.isArray(body)) return new Set(body.map((x) => decode(x, depth + 1)));
      break;
  }
  throw new NotPlain('malformed value');
}
`;

export const JS_HARNESS_CONTEXT = String.raw`
class CandidateGone extends Error {}
class Unsupported extends Error {}
class NotPlainResult extends Error {}
function __codegauge_remote(name, call) {
  return function (...args) {
    let enc;
    try {
      enc = encode(args);
    } catch (e) {
      throw new Unsupported('the tests pass ' + e.message + ' to the candidate');
    }
    const msg = call(name, JSON.stringify(enc));
    if (msg === null) throw new CandidateGone('the candidate is gone');
    const reply = JSON.parse(msg);
    if (reply.gone) throw new CandidateGone('the candidate is gone');
    if (reply.not_plain !== undefined) throw new NotPlainResult(name + ' returned ' + String(reply.not_plain).slice(0, 200) + ', which is not a plain value');
    if (reply.raise) {
      const kind = String(reply.raise[0]);
      const Ctor = { Error, TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError }[kind] || Error;
      const err = new Ctor(String(reply.raise[1]));
      if (Ctor === Error && kind !== 'Error') err.name = kind;
      err.__codegauge_candidate = true;
      throw err;
    }
    let value;
    try {
      value = decode(reply.ok);
    } catch (e) {
      throw new NotPlainResult(name + ' returned ' + e.message);
    }
    if (reply.changed) {
      for (const [i, now] of Object.entries(reply.changed)) {
        const target = args[Number(i)];
        let fresh;
        try { fresh = decode(now); } catch { continue; }
        if (Array.isArray(target) && Array.isArray(fresh)) target.splice(0, target.length, ...fresh);
        else if (target instanceof Map && fresh instanceof Map) { target.clear(); for (const [k, v] of fresh) target.set(k, v); }
        else if (target instanceof Set && fresh instanceof Set) { target.clear(); for (const v of fresh) target.add(v); }
        else if (target && typeof target === 'object' && fresh && typeof fresh === 'object') {
          for (const k of Object.keys(target)) delete target[k];
          Object.assign(target, fresh);
        }
      }
    }
    return value;
  };
}
`;
