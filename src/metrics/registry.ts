import * as bleu from './bleu.js';
import * as chrf from './chrf.js';
import * as rouge from './rouge.js';
import * as meteor from './meteor.js';
import * as codebleu from './codebleu.js';
import * as codebleuCgm from './codebleu-cgm.js';
import * as ruby from './ruby.js';
import * as nltkBleu from './nltk-bleu.js';
import * as codebertscore from './codebertscore.js';
import * as crystalbleu from './crystalbleu.js';
import type { Metric } from './metric.js';
import { buildMetric, METRIC_SPECS, parseSpec, type KeyDef, type MetricDefaults, type MetricModules, type SpecOptions } from './specs.js';

/**
 * Every metric, loaded at once, for the library's synchronous `parseMetric`. The specs (keys, validation, builders)
 * are in specs.ts, which loads no metric; the CLI and the APIs use its `loadMetric`, which imports only the module
 * a spec names. This module imports them all, and builds through the same builders.
 */
export { SpecError, describeMetrics, loadMetric, loadMetrics, parseSpec, type MetricDefaults, type ParsedSpec } from './specs.js';

const MODULES: MetricModules = { bleu, chrf, rouge, meteor, codebleu, 'codebleu-cgm': codebleuCgm, ruby, 'nltk-bleu': nltkBleu, codebertscore, crystalbleu };

interface MetricDef {
  keys: Record<string, KeyDef>;
  /** Keys without a default. */
  required?: string[];
  build(options: SpecOptions, spec: string, defaults?: MetricDefaults): Metric<any>;
}

/** Every metric by its spec name: its keys, and a builder from validated options. */
export const METRICS: Record<string, MetricDef> = Object.fromEntries(
  Object.entries(METRIC_SPECS).map(([name, def]): [string, MetricDef] => [
    name,
    {
      keys: def.keys,
      ...(def.required ? { required: def.required } : {}),
      build: (options, spec, defaults = {}) => {
        def.check?.(options, spec);
        return def.build(MODULES[def.module as keyof MetricModules], options, spec, defaults);
      },
    },
  ]),
);

/** Parses and validates a metric spec and builds the metric. Throws SpecError with the valid choices. */
export function parseMetric(spec: string, defaults: MetricDefaults = {}): Metric<any> {
  const parsed = parseSpec(spec, defaults);
  return buildMetric(parsed, MODULES[METRIC_SPECS[parsed.name].module as keyof MetricModules], defaults);
}
