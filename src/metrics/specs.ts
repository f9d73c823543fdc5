import { UsageError } from '../errors.js';
import { LANGUAGES, resolveLanguage } from '../code/language-names.js';
import { BLEU_TOKENIZERS } from '../text/bleu-tokenizer-names.js';
import { WORDNET_VERSIONS } from '../text/wordnet-versions.js';
import { BLEU_SMOOTHINGS } from './bleu-smoothings.js';
import type { Metric } from './metric.js';
import type { RougeType } from './rouge.js';
import type { CodeBertMeasure } from './codebertscore.js';

/**
 * Metric specs: `name` or `name:key=value,key=value` (e.g. `bleu:tok=code,smooth=floor`). Every key is
 * validated here so that a typo fails loudly instead of silently using a default.
 *
 * This module loads no metric: it holds each metric's keys, the name of its module, and its builder, written once
 * over the module's namespace. `loadMetric` imports only the module a spec names (a `codegauge score --metric bleu`
 * process, or one of its worker threads, loads neither the other metrics, nor web-tree-sitter, nor WordNet);
 * `parseMetric` in registry.ts builds through the same builders from statically imported modules (the library).
 */
/** A metric spec that cannot be used (unknown metric, key or value): a usage error. */
export class SpecError extends UsageError {
  override name = 'SpecError';
}

/** The validated values of a spec's keys (with `lang` from the defaults where the spec has none). */
export type SpecOptions = Record<string, string | number | boolean>;

export interface KeyDef {
  describe: string;
  parse(value: string): string | number | boolean | undefined;
}

const oneOf = (values: readonly string[]): KeyDef => ({
  describe: values.join('|'),
  parse: (v) => (values.includes(v) ? v : undefined),
});
const yesNo: KeyDef = {
  describe: 'yes|no',
  parse: (v) => (['yes', 'true', '1'].includes(v) ? true : ['no', 'false', '0'].includes(v) ? false : undefined),
};
const number = (check: (x: number) => boolean, describe: string): KeyDef => ({
  describe,
  parse: (v) => {
    const x = Number(v);
    return v.trim() !== '' && Number.isFinite(x) && check(x) ? x : undefined;
  },
});
const positiveInt = number((x) => Number.isInteger(x) && x >= 1, 'an integer >= 1');
const nonNegativeInt = number((x) => Number.isInteger(x) && x >= 0, 'an integer >= 0');
const positive = number((x) => x > 0, 'a number > 0');
const unit = number((x) => x >= 0 && x <= 1, 'a number in [0, 1]');

const FILE_KEY: KeyDef = { describe: 'FILE', parse: (v) => (v !== '' ? v : undefined) };
const DIR_KEY: KeyDef = { describe: 'DIR', parse: (v) => (v !== '' ? v : undefined) };

const LANG_KEY: KeyDef = {
  describe: LANGUAGES.join('|'),
  parse: (v) => {
    try {
      return resolveLanguage(v);
    } catch {
      return undefined;
    }
  },
};

const ROUGE_KEYS: Record<string, KeyDef> = {
  tok: oneOf(['default', 'code']),
  stem: yesNo,
  measure: oneOf(['f', 'p', 'r']),
};

/** The module of each metric (types only: nothing is imported here until `loadMetric` asks for it). */
export interface MetricModules {
  bleu: typeof import('./bleu.js');
  chrf: typeof import('./chrf.js');
  rouge: typeof import('./rouge.js');
  meteor: typeof import('./meteor.js');
  codebleu: typeof import('./codebleu.js');
  'codebleu-cgm': typeof import('./codebleu-cgm.js');
  ruby: typeof import('./ruby.js');
  'nltk-bleu': typeof import('./nltk-bleu.js');
  codebertscore: typeof import('./codebertscore.js');
  crystalbleu: typeof import('./crystalbleu.js');
}
export type MetricModuleName = keyof MetricModules;

/** Each metric module's lazy loader. */
export const METRIC_LOADERS: { readonly [K in MetricModuleName]: () => Promise<MetricModules[K]> } = {
  bleu: () => import('./bleu.js'),
  chrf: () => import('./chrf.js'),
  rouge: () => import('./rouge.js'),
  meteor: () => import('./meteor.js'),
  codebleu: () => import('./codebleu.js'),
  'codebleu-cgm': () => import('./codebleu-cgm.js'),
  ruby: () => import('./ruby.js'),
  'nltk-bleu': () => import('./nltk-bleu.js'),
  codebertscore: () => import('./codebertscore.js'),
  crystalbleu: () => import('./crystalbleu.js'),
};

export interface MetricSpecDef<K extends MetricModuleName = MetricModuleName> {
  keys: Record<string, KeyDef>;
  /** Keys without a default. */
  required?: string[];
  /** The module that holds the metric's class. */
  module: K;
  /** Checks that need several keys at once (run by parseSpec, so that a spec fails before anything is loaded). */
  check?(options: SpecOptions, spec: string): void;
  /** Builds the metric from its loaded module. */
  build(module: MetricModules[K], options: SpecOptions, spec: string, defaults: MetricDefaults): Metric<any>;
}

const define = <K extends MetricModuleName>(def: MetricSpecDef<K>): MetricSpecDef<K> => def;

const rougeDef = (type: RougeType) =>
  define({
    keys: ROUGE_KEYS,
    module: 'rouge',
    build: ({ Rouge }, o, spec, defaults) =>
      new Rouge(type, { tokenize: o.tok as 'default' | 'code', stem: o.stem as boolean, measure: o.measure as 'f' | 'p' | 'r', maxWork: defaults.maxWork }, spec),
  });

// Not typed by the Record below, whose contextual type would hide each builder's module type from `define`.
const SPECS = {
  bleu: define({
    keys: {
      tok: oneOf(BLEU_TOKENIZERS),
      smooth: oneOf(BLEU_SMOOTHINGS),
      'smooth-value': number((x) => x >= 0, 'a number >= 0'),
      eff: yesNo,
      lc: yesNo,
      order: positiveInt,
    },
    module: 'bleu',
    build: ({ Bleu }, o, spec) =>
      new Bleu(
        {
          tokenize: o.tok as never,
          smooth: o.smooth as never,
          smoothValue: o['smooth-value'] as number | undefined,
          effectiveOrder: o.eff as boolean | undefined,
          lowercase: o.lc as boolean | undefined,
          maxOrder: o.order as number | undefined,
        },
        spec,
      ),
  }),
  chrf: define({
    keys: { nc: positiveInt, nw: nonNegativeInt, beta: positive, space: yesNo, eps: yesNo, lc: yesNo },
    module: 'chrf',
    build: ({ Chrf }, o, spec) =>
      new Chrf(
        {
          charOrder: o.nc as number | undefined,
          wordOrder: o.nw as number | undefined,
          beta: o.beta as number | undefined,
          whitespace: o.space as boolean | undefined,
          epsSmoothing: o.eps as boolean | undefined,
          lowercase: o.lc as boolean | undefined,
        },
        spec,
      ),
  }),
  rouge1: rougeDef('rouge1'),
  rouge2: rougeDef('rouge2'),
  rougeL: rougeDef('rougeL'),
  rougeLsum: rougeDef('rougeLsum'),
  meteor: define({
    keys: { tok: oneOf(['ws', 'code']), alpha: unit, beta: positive, gamma: unit, wordnet: oneOf(WORDNET_VERSIONS) },
    module: 'meteor',
    build: ({ Meteor }, o, spec) =>
      new Meteor(
        {
          tokenize: o.tok as 'ws' | 'code' | undefined,
          alpha: o.alpha as number | undefined,
          beta: o.beta as number | undefined,
          gamma: o.gamma as number | undefined,
          wordnet: o.wordnet as '3.0' | '3.1' | undefined,
        },
        spec,
      ),
  }),
  codebleu: define({
    keys: {
      lang: LANG_KEY,
      weights: {
        describe: 'a/b/c/d (four numbers >= 0, default 0.25/0.25/0.25/0.25)',
        parse: (v) => (/^\s*\d*\.?\d+(\s*\/\s*\d*\.?\d+){3}\s*$/.test(v) ? v : undefined),
      },
    },
    required: ['lang'],
    module: 'codebleu',
    build: ({ CodeBleu }, o, spec) => {
      const [ngram, weightedNgram, syntax, dataflow] = o.weights ? String(o.weights).split('/').map(Number) : [0.25, 0.25, 0.25, 0.25];
      return new CodeBleu(o.lang as never, { ngram, weightedNgram, syntax, dataflow }, spec);
    },
  }),
  'codebleu-cgm': define({
    keys: {},
    module: 'codebleu-cgm',
    build: ({ CodeBleuCgm }, _o, spec) => new CodeBleuCgm(spec),
  }),
  ruby: define({
    keys: { lang: LANG_KEY },
    required: ['lang'],
    module: 'ruby',
    build: ({ Ruby }, o, spec) => new Ruby(o.lang as never, spec),
  }),
  'nltk-bleu': define({
    keys: { tok: oneOf(['ws', 'code']) },
    module: 'nltk-bleu',
    build: ({ NltkBleu }, o, spec) => new NltkBleu((o.tok as 'ws' | 'code' | undefined) ?? 'ws', spec),
  }),
  codebertscore: define({
    keys: {
      lang: LANG_KEY,
      'model-dir': DIR_KEY,
      model: { describe: 'a hub id (an ONNX export)', parse: (v) => (/^[\w.-]+(\/[\w.-]+)?$/.test(v) ? v : undefined) },
      layer: positiveInt,
      idf: yesNo,
      measure: oneOf(['f1', 'f3', 'p', 'r']),
      sources: yesNo,
    },
    required: ['lang'],
    module: 'codebertscore',
    build: ({ CodeBertScore }, o, spec) =>
      new CodeBertScore(
        {
          lang: o.lang as string,
          modelDir: o['model-dir'] as string | undefined,
          model: o.model as string | undefined,
          layer: o.layer as number | undefined,
          idf: o.idf as boolean | undefined,
          measure: o.measure as CodeBertMeasure | undefined,
          sources: o.sources as boolean | undefined,
        },
        spec,
      ),
  }),
  crystalbleu: define({
    keys: { k: nonNegativeInt, corpus: FILE_KEY, ngrams: FILE_KEY, tok: oneOf(['code', 'ws']) },
    module: 'crystalbleu',
    check: (o, spec) => {
      if (o.corpus !== undefined && o.ngrams !== undefined) throw new SpecError(`crystalbleu takes corpus=FILE or ngrams=FILE, not both (${JSON.stringify(spec)})`);
    },
    build: ({ CrystalBleu }, o, spec) =>
      new CrystalBleu(
        { k: o.k as number | undefined, tokenize: o.tok as 'code' | 'ws' | undefined, corpusFile: o.corpus as string | undefined, ngramsFile: o.ngrams as string | undefined },
        spec,
      ),
  }),
};

/** Every metric by its spec name, in the order `describeMetrics` lists them. */
export const METRIC_SPECS: Readonly<Record<string, MetricSpecDef<any>>> = SPECS;

export function describeMetrics(): string {
  return Object.entries(METRIC_SPECS)
    .map(([name, def]) => {
      const keys = Object.entries(def.keys).map(([k, d]) => `${k}=${d.describe}`);
      return `  ${name}${keys.length ? ` (${keys.join(', ')})` : ''}`;
    })
    .join('\n');
}

export interface MetricDefaults {
  /** Language for code metrics whose spec has no `lang=` (the CLI's --lang, or inferred from file names). */
  language?: string;
  /** Work bound of one segment's LCS for ROUGE-L and ROUGE-Lsum, in word steps (`--max-work`; default 2^34). */
  maxWork?: number;
}

/** A validated spec: the metric's name, its keys' values, and the spec as given (the metric's `spec`). */
export interface ParsedSpec {
  name: string;
  options: SpecOptions;
  spec: string;
}

/** The metric name of a spec (`bleu` for `bleu:tok=code`), unchecked. */
export function specName(spec: string): string {
  const colon = spec.indexOf(':');
  return (colon < 0 ? spec : spec.slice(0, colon)).trim();
}

/**
 * Parses and validates a metric spec without loading the metric: every error a spec can have (unknown metric, key
 * or value, a missing key, keys that exclude each other) is a SpecError with the valid choices.
 */
export function parseSpec(spec: string, defaults: MetricDefaults = {}): ParsedSpec {
  const colon = spec.indexOf(':');
  const name = specName(spec);
  const def = Object.hasOwn(METRIC_SPECS, name) ? METRIC_SPECS[name] : undefined;
  if (!def) throw new SpecError(`unknown metric "${name}" in --metric ${JSON.stringify(spec)}; valid metrics:\n${describeMetrics()}`);
  const options: SpecOptions = {};
  const body = colon < 0 ? '' : spec.slice(colon + 1);
  for (const pair of body.split(',').filter((p) => p.trim() !== '')) {
    const eq = pair.indexOf('=');
    const key = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    const keyDef = Object.hasOwn(def.keys, key) ? def.keys[key] : undefined;
    const validKeys = Object.entries(def.keys).map(([k, d]) => `${k}=${d.describe}`).join(', ') || '(none)';
    if (!keyDef) throw new SpecError(`unknown key "${key}" for metric ${name} in ${JSON.stringify(spec)}; valid keys: ${validKeys}`);
    if (eq < 0) throw new SpecError(`key "${key}" of metric ${name} needs a value (${key}=${keyDef.describe})`);
    const raw = pair.slice(eq + 1).trim();
    const value = keyDef.parse(raw);
    if (value === undefined) throw new SpecError(`invalid value "${raw}" for ${name} key ${key}; expected ${keyDef.describe}`);
    if (Object.hasOwn(options, key)) throw new SpecError(`key "${key}" given twice in ${JSON.stringify(spec)}`);
    options[key] = value;
  }
  if (Object.hasOwn(def.keys, 'lang') && !Object.hasOwn(options, 'lang') && defaults.language) {
    const value = def.keys.lang.parse(defaults.language);
    if (value === undefined) throw new SpecError(`invalid language "${defaults.language}"; expected ${def.keys.lang.describe}`);
    options.lang = value;
  }
  for (const key of def.required ?? []) {
    if (!Object.hasOwn(options, key)) throw new SpecError(`metric ${name} needs ${key}=${def.keys[key].describe} (e.g. ${name}:${key}=${key === 'lang' ? 'python' : '...'}${key === 'lang' ? ', or --lang, or a file name such as hyps.py.jsonl' : ''})`);
  }
  def.check?.(options, spec);
  return { name, options, spec };
}

/** Builds a parsed spec's metric from its module (the namespace of `METRIC_LOADERS[METRIC_SPECS[name].module]`). */
export function buildMetric(parsed: ParsedSpec, module: MetricModules[MetricModuleName], defaults: MetricDefaults = {}): Metric<any> {
  return METRIC_SPECS[parsed.name].build(module, parsed.options, parsed.spec, defaults);
}

/** Imports the module of a parsed spec's metric (Node caches it: the second import costs nothing). */
function moduleOf(parsed: ParsedSpec): Promise<MetricModules[MetricModuleName]> {
  return METRIC_LOADERS[METRIC_SPECS[parsed.name].module as MetricModuleName]();
}

/** Parses and validates a metric spec, then imports that metric's module (only it) and builds the metric. */
export async function loadMetric(spec: string, defaults: MetricDefaults = {}): Promise<Metric<any>> {
  const parsed = parseSpec(spec, defaults);
  return buildMetric(parsed, await moduleOf(parsed), defaults);
}

/**
 * `loadMetric` for several specs: every spec is validated before any module is imported (the first bad spec is the
 * error, as when they are parsed in turn), then the modules load together. Metric instances pass through.
 */
export async function loadMetrics(specs: readonly (string | Metric<any>)[], defaults: MetricDefaults = {}): Promise<Metric<any>[]> {
  const parsed = specs.map((s) => (typeof s === 'string' ? parseSpec(s, defaults) : null));
  const modules = await Promise.all(parsed.map((p) => (p ? moduleOf(p) : null)));
  // Built in the order given, once every module is there.
  return specs.map((s, i) => (parsed[i] ? buildMetric(parsed[i], modules[i]!, defaults) : (s as Metric<any>)));
}
