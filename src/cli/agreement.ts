import { Option, type Command } from 'commander';
import { agreementOfTable, type AgreementReport } from '../api/agreement.js';
import { readTable } from '../io/table.js';
import { ALPHA_LEVELS, type AlphaLevel } from '../stats/krippendorff.js';
import type { CliIo } from './io.js';
import { collect, formatOption } from './options.js';

interface AgreementCliOptions {
  input: string;
  rater: string[];
  level: AlphaLevel;
  format: 'table' | 'json';
}

function formatAgreement(report: AgreementReport): string {
  const alpha = report.krippendorff_alpha === null ? 'undefined (no unit with two ratings, or no variation)' : report.krippendorff_alpha.toFixed(4);
  return `Krippendorff's alpha (${report.level}) = ${alpha}\n${report.units} units with at least two ratings of ${report.rows} rows; ${report.ratings} ratings by ${report.raters.length} raters: ${report.raters.join(', ')}\n`;
}

/** `codegauge agreement`: Krippendorff's alpha between graders (people, judges) over the rows of a table. */
export function addAgreementCommand(program: Command, io: CliIo): void {
  program
    .command('agreement')
    .description("agreement between graders: Krippendorff's alpha over rater columns, any number of raters, missing ratings allowed (Krippendorff 2011)")
    .requiredOption('--input <file>', 'table: .jsonl, .csv, or a score --segments / judge JSON report; one row per unit')
    .requiredOption('--rater <column>', 'a rater column; repeat for every rater (at least two)', collect)
    .addOption(new Option('--level <level>', 'level of measurement of the ratings').choices(ALPHA_LEVELS).makeOptionMandatory())
    .addOption(formatOption())
    .action((opts: AgreementCliOptions) => {
      const report = agreementOfTable(readTable(opts.input), opts.rater, opts.level);
      io.out(opts.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatAgreement(report));
    });
}
