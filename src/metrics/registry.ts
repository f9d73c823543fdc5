import { UsageError } from '../errors.js';
import { BLEU_TOKENIZERS } from '../text/sacrebleu-tokenizers.js';
import { WORDNET_VERSIONS } from '../text/wordnet.js';
import { BLEU_SMOOTHINGS, Bleu } from './bleu.js';
import { Chrf } from './chrf.js';
import type { Metric } from './metric.js';
import { Meteor } from './meteor.js';
import { NltkBleu } from './nltk-bleu.js';
import { Rouge, type RougeType } from './rouge.js';
import { CodeBleu } from './codebleu.js';
import { Ruby } from './ruby.js';
import { CodeBleuCgm } from './codebleu-cgm.js';
import { CrystalBleu } from './crystalbleu.js';
import { CodeBertScore, type CodeBertMeasure } from './codebertscore.js';
import { LANGUAGES, resolveLanguage } from '../code/languages.js';

/**
 * Metric specs: `name` or `name:key=value,key=value` (e.g. `bleu:tok=code,smooth=floor`). Every key is
 * validated here so that a typo fails loudly instead of silently using a default.
 */
/** A metric spec that cannot be used (unknown metric, key or value): a usage error. */
export class SpecError extends UsageError {
  override name = 'SpecError';
}

type Parsed = Record<string, string | number | boolean>;
interface KeyDef {
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

interface MetricDef {
  keys: Record<string, KeyDef>;
  /** Keys without a default. */
  required?: string[];
  build(options: Parsed, spec: string): Metric<any>;
}

const rougeDef = (type: RougeType): MetricDef => ({
  keys: ROUGE_KEYS,
  build: (o, spec) =>
    new Rouge(type, { tokenize: o.tok as 'default' | 'code', stem: o.stem as boolean, measure: o.measure as 'f' | 'p' | 'r' }, spec),
});

export const METRICS: Record<string, MetricDef> = {
  bleu: {
    keys: {
      tok: oneOf(BLEU_TOKENIZERS),
      smooth: oneOf(BLEU_SMOOTHINGS),
      'smooth-value': number((x) => x >= 0, 'a number >= 0'),
      eff: yesNo,
      lc: yesNo,
      order: positiveInt,
    },
    build: (o, spec) =>
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
  },
  chrf: {
    keys: { nc: positiveInt, nw: nonNegativeInt, beta: positive, space: yesNo, eps: yesNo, lc: yesNo },
    build: (o, spec) =>
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
  },
  rouge1: rougeDef('rouge1'),
  rouge2: rougeDef('rouge2'),
  rougeL: rougeDef('rougeL'),
  rougeLsum: rougeDef('rougeLsum'),
  meteor: {
    keys: { tok: oneOf(['ws', 'code']), alpha: unit, beta: positive, gamma: unit, wordnet: oneOf(WORDNET_VERSIONS) },
    build: (o, spec) =>
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
  },
  codebleu: {
    keys: {
      lang: LANG_KEY,
      weights: {
        describe: 'a/b/c/d (four numbers >= 0, default 0.25/0.25/0.25/0.25)',
        parse: (v) => (/^\s*\d*\.?\d+(\s*\/\s*\d*\.?\d+){3}\s*$/.test(v) ? v : undefined),
      },
    },
    required: ['lang'],
    build: (o, spec) => {
      const [ngram, weightedNgram, syntax, dataflow] = o.weights ? String(o.weights).split('/').map(Number) : [0.25, 0.25, 0.25, 0.25];
      return new CodeBleu(o.lang as never, { ngram, weightedNgram, syntax, dataflow }, spec);
    },
  },
  'codebleu-cgm': {
    keys: {},
    build: (_o, spec) => new CodeBleuCgm(spec),
  },
  ruby: {
    keys: { lang: LANG_KEY },
    required: ['lang'],
    build: (o, spec) => new Ruby(o.lang as never, spec),
  },
  'nltk-bleu': {
    keys: { tok: oneOf(['ws', 'code']) },
    build: (o, spec) => new NltkBleu((o.tok as 'ws' | 'code' | undefined) ?? 'ws', spec),
  },
  codebertscore: {
    keys: {
      lang: LANG_KEY,
      'model-dir': FILE_KEY,
      model: { describe: 'a hub id (an ONNX export)', parse: (v) => (/^[\w.-]+(\/[\w.-]+)?$/.test(v) ? v : undefined) },
      layer: positiveInt,
      idf: yesNo,
      measure: oneOf(['f1', 'f3', 'p', 'r']),
      sources: yesNo,
    },
    required: ['lang'],
    build: (o, spec) =>
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
  },
  crystalbleu: {
    keys: { k: nonNegativeInt, corpus: FILE_KEY, ngrams: FILE_KEY, tok: oneOf(['code', 'ws']) },
    build: (o, spec) => {
      if (o.corpus !== undefined && o.ngrams !== undefined) throw new SpecError(`crystalbleu takes corpus=FILE or ngrams=FILE, not both (${JSON.stringify(spec)})`);
      return new CrystalBleu(
        { k: o.k as number | undefined, tokenize: o.tok as 'code' | 'ws' | undefined, corpusFile: o.corpus as string | undefined, ngramsFile: o.ngrams as string | undefined },
        spec,
      );
    },
  },
};

export function describeMetrics(): string {
  return Object.entries(METRICS)
    .map(([name, def]) => {
      const keys = Object.entries(def.keys).map(([k, d]) => `${k}=${d.describe}`);
      return `  ${name}${keys.length ? ` (${keys.join(', ')})` : ''}`;
    })
    .join('\n');
}

export interface MetricDefaults {
  /** Language for code metrics whose spec has no `lang=` (the CLI's --lang, or inferred from file names). */
  language?: string;
}

/** Parses and validates a metric spec and builds the metric. Throws SpecError with the valid choices. */
export function parseMetric(spec: string, defaults: MetricDefaults = {}): Metric<any> {
  const colon = spec.indexOf(':');
  const name = (colon < 0 ? spec : spec.slice(0, colon)).trim();
  const def = Object.hasOwn(METRICS, name) ? METRICS[name] : undefined;
  if (!def) throw new SpecError(`unknown metric "${name}" in --metric ${JSON.stringify(spec)}; valid metrics:\n${describeMetrics()}`);
  const options: Parsed = {};
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
  return def.build(options, spec);
}
