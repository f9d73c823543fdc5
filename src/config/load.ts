import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { InputError, UsageError } from '../errors.js';
import { dataDir } from '../exec/benchmarks/bundled.js';
import { parseSpec } from '../metrics/specs.js';
import { parseModelSpec } from '../llm/model-spec.js';
import { configSchema, type CodegaugeConfig, type MetricEntry } from './schema.js';

/** The config files `codegauge run` looks for, in order, when no --config is given. */
export const CONFIG_NAMES = ['codegauge.config.yaml', 'codegauge.config.yml', 'codegauge.config.json'];

export interface LoadedConfig {
  file: string;
  /** Folder the config's paths are relative to. */
  dir: string;
  config: CodegaugeConfig;
  /** The 1-based line of a key path in the file (the closest existing parent), for messages. */
  lineOf(path: readonly (string | number)[]): number | undefined;
  /** An InputError at a key path: `file:line: key.path: message`. */
  error(path: readonly (string | number)[], message: string): InputError;
  /** A path of the config made usable: `bundled:X` -> codegauge's data/X, relative -> next to the config. */
  resolvePath(value: string): string;
}

/** Finds the config: --config FILE, else the first of CONFIG_NAMES in `cwd`. */
export function findConfig(given: string | undefined, cwd = process.cwd()): string {
  if (given) {
    if (!existsSync(given)) throw new UsageError(`--config: file not found: ${given}`);
    if (!statSync(given).isFile()) throw new UsageError(`--config: not a file: ${given}`);
    return given;
  }
  for (const name of CONFIG_NAMES) if (existsSync(join(cwd, name))) return join(cwd, name);
  throw new UsageError(`no ${CONFIG_NAMES.join(' or ')} here; write one with "codegauge init" or give --config FILE`);
}

const pathText = (path: readonly (string | number)[]) => path.map((p) => String(p)).join('.') || '(top level)';

/** The object schema at a key path (through defaults, optionals, unions, arrays and records), for allowed keys. */
function schemaAt(schema: z.ZodTypeAny, path: readonly (string | number)[]): z.ZodTypeAny[] {
  const unwrap = (s: z.ZodTypeAny): z.ZodTypeAny[] => {
    if (s instanceof z.ZodDefault) return unwrap(s._def.innerType);
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) return unwrap(s.unwrap());
    if (s instanceof z.ZodEffects) return unwrap(s.innerType());
    if (s instanceof z.ZodUnion) return (s.options as z.ZodTypeAny[]).flatMap(unwrap);
    return [s];
  };
  let current = unwrap(schema);
  for (const key of path) {
    current = current.flatMap((s) => {
      if (s instanceof z.ZodObject && typeof key === 'string' && key in s.shape) return unwrap(s.shape[key]);
      if (s instanceof z.ZodArray && typeof key === 'number') return unwrap(s.element);
      if (s instanceof z.ZodRecord && typeof key === 'string') return unwrap(s.valueSchema);
      return [];
    });
  }
  return current;
}

function allowedKeys(path: readonly (string | number)[]): string[] {
  return [...new Set(schemaAt(configSchema, path).flatMap((s) => (s instanceof z.ZodObject ? Object.keys(s.shape) : [])))];
}

/** One zod issue in words: what is wrong and what is allowed. */
function describeIssue(issue: z.ZodIssue): string {
  switch (issue.code) {
    case z.ZodIssueCode.unrecognized_keys:
      return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; allowed: ${allowedKeys(issue.path).join(', ')}`;
    case z.ZodIssueCode.invalid_enum_value:
      return `"${String(issue.received)}" is not allowed; allowed values: ${issue.options.join(', ')}`;
    case z.ZodIssueCode.invalid_literal:
      return `must be ${JSON.stringify(issue.expected)}, got ${JSON.stringify(issue.received)}`;
    case z.ZodIssueCode.invalid_type:
      return issue.received === 'undefined' ? `missing (expected ${issue.expected})` : `expected ${issue.expected}, got ${issue.received}`;
    case z.ZodIssueCode.invalid_union: {
      const keys = allowedKeys(issue.path);
      return `expected a string${keys.length ? ` or an object with keys ${keys.join(', ')}` : ''}`;
    }
    case z.ZodIssueCode.too_small:
      return issue.type === 'array' ? `needs at least ${issue.minimum} item(s)` : issue.type === 'string' ? 'must not be empty' : `must be at least ${issue.minimum}`;
    case z.ZodIssueCode.too_big:
      return `must be at most ${issue.maximum}`;
    default:
      return issue.message;
  }
}

/**
 * Inside a union (a path or an object), the issue of the branch the value's type chose: `{model: x, temprature: 1}`
 * is reported as the unknown key "temprature", not as "expected a string or an object".
 */
function unionBranchIssue(issue: z.ZodIssue): z.ZodIssue {
  if (issue.code !== z.ZodIssueCode.invalid_union) return issue;
  const same = (a: readonly (string | number)[]) => a.length === issue.path.length && a.every((k, i) => k === issue.path[i]);
  const branches = issue.unionErrors.map((e) => e.issues).filter((issues) => !issues.some((i) => i.code === z.ZodIssueCode.invalid_type && same(i.path)));
  if (branches.length !== 1) return issue;
  return unionBranchIssue(branches[0].find((i) => i.code === z.ZodIssueCode.unrecognized_keys) ?? branches[0][0]);
}

/** Parses and validates a config file; every error names the file, the line and what is allowed. */
export function loadConfig(file: string): LoadedConfig {
  const text = readFileSync(file, 'utf8');
  const lines = new LineCounter();
  // YAML is a superset of JSON: one parser gives line numbers for both.
  const doc: Document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0];
    const line = e.linePos?.[0]?.line ?? lines.linePos(e.pos[0]).line;
    throw new InputError(`invalid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${e.message.split('\n')[0]}`, file, line);
  }
  const lineOf = (path: readonly (string | number)[]): number | undefined => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) {
        // For a key path, the line of the key itself when it has one.
        return lines.linePos(node.range[0]).line;
      }
    }
    return undefined;
  };
  const lineOfKey = (path: readonly (string | number)[]): number | undefined => {
    // The pair's key node locates `foo:` better than its value (a block value starts on the next line).
    if (path.length === 0) return lineOf(path);
    const parent = doc.getIn(path.slice(0, -1), true) as any;
    const key = path[path.length - 1];
    const pair = parent?.items?.find?.((p: any) => p?.key !== undefined && (isNode(p.key) ? p.key.toJSON() : p.key) === key);
    if (pair && isNode(pair.key) && pair.key.range) return lines.linePos(pair.key.range[0]).line;
    return lineOf(path);
  };
  const error = (path: readonly (string | number)[], message: string) => new InputError(`${pathText(path)}: ${message}`, file, lineOfKey(path));
  const raw = doc.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new InputError(`expected a mapping of keys (${allowedKeys([]).join(', ')})`, file, 1);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    // A misspelt key also makes the key it should have been missing: report the misspelling.
    const issue = unionBranchIssue(parsed.error.issues.find((i) => i.code === z.ZodIssueCode.unrecognized_keys) ?? parsed.error.issues[0]);
    // An unknown key is located at the key itself.
    const at = issue.code === z.ZodIssueCode.unrecognized_keys ? [...issue.path, issue.keys[0]] : issue.path;
    throw error(at, describeIssue(issue));
  }
  const config = parsed.data;
  const dir = dirname(resolve(file));
  const resolvePath = (value: string) => {
    if (value.startsWith('bundled:')) return join(dataDir(), value.slice('bundled:'.length));
    return isAbsolute(value) ? value : join(dir, value);
  };
  const loaded: LoadedConfig = { file, dir, config, lineOf: lineOfKey, error, resolvePath };
  checkConfig(loaded);
  return loaded;
}

export const metricSpec = (entry: MetricEntry) => (typeof entry === 'string' ? entry : entry.metric);

/** What the schema cannot say: metric specs, files that exist, names that refer to something. */
function checkConfig(loaded: LoadedConfig): void {
  const { config, error } = loaded;
  const file = (path: (string | number)[], value: string) => {
    if (value === 'canonical' && path[0] === 'exec') return;
    const p = loaded.resolvePath(value);
    if (!existsSync(p)) throw error(path, `file not found: ${p}`);
  };
  if (config.data) {
    const refs = Array.isArray(config.data.refs) ? config.data.refs : [config.data.refs];
    refs.forEach((r, i) => file(Array.isArray(config.data!.refs) ? ['data', 'refs', i] : ['data', 'refs'], r));
    const names = Object.keys(config.data.systems);
    if (names.length === 0) throw error(['data', 'systems'], 'name at least one system (name: hypothesis file)');
    for (const [name, path] of Object.entries(config.data.systems)) file(['data', 'systems', name], path);
    if (config.data.problems) file(['data', 'problems'], config.data.problems);
  }
  config.metrics.forEach((entry, i) => {
    if (!config.data) throw error(['metrics'], 'metrics need data (refs and systems)');
    try {
      parseSpec(metricSpec(entry), { language: config.data.lang }); // every error a spec can have, without loading the metric
    } catch (e) {
      throw error(typeof entry === 'string' ? ['metrics', i] : ['metrics', i, 'metric'], (e as Error).message.split('\n')[0]);
    }
  });
  /** A model named in models, or a model spec. */
  const modelRef = (path: (string | number)[], value: string) => {
    if (config.models[value]) return;
    try {
      parseModelSpec(value);
    } catch {
      throw error(path, `"${value}" is neither a name in models (${Object.keys(config.models).join(', ') || 'none'}) nor a model spec (openai:MODEL, ollama:MODEL, llama:PATH.gguf, hf:OWNER/REPO[:FILE.gguf])`);
    }
  };
  const specs = config.metrics.map(metricSpec);
  const dup = specs.find((s, i) => specs.indexOf(s) !== i);
  if (dup) throw error(['metrics', specs.lastIndexOf(dup)], `metric "${dup}" is listed twice`);
  if (config.compare) {
    if (!config.data) throw error(['compare'], 'compare needs data (refs and systems)');
    const names = Object.keys(config.data.systems);
    if (config.compare.baseline !== undefined && !names.includes(config.compare.baseline)) throw error(['compare', 'baseline'], `"${config.compare.baseline}" is not a system; allowed values: ${names.join(', ')}`);
    if (names.length < 2) throw error(['compare'], 'compare needs at least two systems in data.systems');
    if (config.metrics.length === 0) throw error(['compare'], 'compare needs metrics');
  }
  if (config.exec) {
    const e = config.exec;
    if (!e.benchmark === !e.problems) throw error(['exec'], 'give exactly one of benchmark or problems');
    if (e.problems) file(['exec', 'problems'], e.problems);
    if (Object.keys(e.systems).length === 0) throw error(['exec', 'systems'], 'name at least one system (name: samples file, canonical, or {model: NAME, n: N})');
    for (const [name, source] of Object.entries(e.systems)) {
      // The name becomes a file name (samples, generations) and the system of every result.
      if (!/^[\w.@-]{1,100}$/.test(name)) throw error(['exec', 'systems', name], 'a system name of letters, digits, . _ - @');
      if (typeof source === 'string') file(['exec', 'systems', name], source);
      else modelRef(['exec', 'systems', name, 'model'], source.model);
    }
  }
  for (const [name, m] of Object.entries(config.models)) {
    try {
      parseModelSpec(m.model);
    } catch (e) {
      throw error(['models', name, 'model'], (e as Error).message);
    }
  }
  config.judges.forEach((j, i) => {
    if (!config.data) throw error(['judges', i], 'judges need data (refs and systems)');
    modelRef(['judges', i, 'model'], j.model);
    const names = Object.keys(config.data.systems);
    for (const [k, s] of (j.systems ?? []).entries()) if (!names.includes(s)) throw error(['judges', i, 'systems', k], `"${s}" is not a system; allowed values: ${names.join(', ')}`);
  });
  if (config.judges.length && !config.data?.lang) throw error(['data'], 'judges need data.lang (the language of the code)');
}
