import type { Command } from 'commander';
import { addAggregateCommand } from './aggregate.js';
import { addAgreementCommand } from './agreement.js';
import { addCompareCommand } from './compare.js';
import { addEvalCommand } from './eval.js';
import { addExecCommand } from './exec.js';
import type { CliIo } from './io.js';
import { addJudgeCommand } from './judge.js';
import { addMetaCommand } from './meta.js';
import { addPipelineCommands } from './pipeline.js';
import { addReportCommands } from './report.js';
import { makeProgram } from './root.js';
import { addSbcCommands } from './sbc.js';
import { addScoreCommand } from './score.js';

/** The whole command tree (help, the CLI reference); each command lives in its own file over the library. */
export function buildProgram(io: CliIo): Command {
  return makeProgram(io, [
    addScoreCommand,
    addCompareCommand,
    addMetaCommand,
    addAgreementCommand,
    addSbcCommands,
    addJudgeCommand,
    addExecCommand,
    addEvalCommand,
    addReportCommands,
    addAggregateCommand,
    addPipelineCommands,
  ]);
}
