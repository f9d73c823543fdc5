import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { writing } from '../errors.js';
import { renderReport } from './html.js';
import { readReportInputs, type ReportInput } from './inputs.js';

/**
 * The one report builder: `codegauge report PATHS --out FILE` and the report.html of `codegauge run` (its results
 * folder as the one path), so the two give the same page for the same folder. Each section names its file relative
 * to the report's own folder, where a reader looks for it.
 */
export function writeReport(paths: readonly string[], options: { out: string; title?: string }): ReportInput[] {
  const inputs = paths.flatMap(readReportInputs);
  const base = dirname(resolve(options.out));
  const shown = inputs.map((input) => {
    const path = relative(base, resolve(input.path));
    return { ...input, path: path === '' || isAbsolute(path) ? input.path : path };
  });
  const html = renderReport(shown, { title: options.title });
  writing(options.out, () => {
    mkdirSync(dirname(options.out), { recursive: true });
    writeFileSync(options.out, html);
  });
  return inputs;
}
