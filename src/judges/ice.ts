import { InputError } from '../errors.js';
import type { ChatMessage } from '../llm/types.js';
import { askGrade, EVALUATED_GRADE_SCHEMA, promptHash, type Judge, type JudgeContext, type JudgeOutcome, type JudgeSample } from './judge.js';
import { fenced, UNTRUSTED_NOTICE } from './untrusted.js';

/**
 * The single-step baseline in the style of ICE-Score (Zhuo 2024): one prompt with a 0-4 rubric for one aspect
 * (usefulness or functional correctness), optionally the reference code, optionally step-by-step evaluation before
 * the grade. The reply is free text ending in "<Aspect>: N", read as ICE-Score's recorded replies are.
 */
export type IceAspect = 'usefulness' | 'functional-correctness';

const RUBRICS: Record<IceAspect, { title: string; criteria: string; levels: string[] }> = {
  usefulness: {
    title: 'Usefulness',
    criteria: 'how useful the code snippet is for solving the problem',
    levels: [
      'the snippet is not helpful at all; it is irrelevant to the problem',
      'slightly helpful: it has something relevant, but writing the solution from scratch would be easier',
      'somewhat helpful: it needs substantial changes for its size, but is still of use',
      'helpful: it needs small changes to solve the problem',
      'very helpful: it solves the problem',
    ],
  },
  'functional-correctness': {
    title: 'Functional Correctness',
    criteria: 'whether the code snippet executes correctly for the problem, on every input the problem allows',
    levels: [
      'the snippet fails on all possible tests; it does not solve the problem',
      'it may work on a few tests but is incorrect for most of them',
      'it works on some tests but fails in several cases',
      'it works on most tests, missing a few edge cases',
      'it is correct on all possible tests; it solves the problem',
    ],
  },
};

export interface IceOptions {
  aspect?: IceAspect;
  withReference?: boolean;
  chainOfThought?: boolean;
}

export function iceMessages(sample: JudgeSample, options: Required<IceOptions>): ChatMessage[] {
  const r = RUBRICS[options.aspect];
  const parts = [
    `Rate a code snippet written for a problem on one aspect only: ${r.title} (0-4), ${r.criteria}${options.withReference ? ', compared with the reference code' : ''}.`,
    '',
    'Rubric:',
    ...r.levels.map((level, i) => `- ${i}: ${level}.`),
    '',
    'Steps: 1. Read the problem and list what an implementation must do. 2. Read the snippet' +
      (options.withReference ? ' and the reference code' : '') +
      ' and check whether it covers each requirement correctly and in a sensible order. 3. Grade it with the rubric.',
    '',
    `Problem:\n${sample.problem?.trim() || '(no problem statement given: judge against the reference code)'}`,
  ];
  if (options.withReference) parts.push('', `Reference code:\n${fenced(sample.reference ?? '', sample.language)}`);
  parts.push('', `Code snippet:\n${fenced(sample.code, sample.language)}`, '');
  parts.push(
    options.chainOfThought
      ? `Evaluate step by step, then end with a last line "${r.title}: N" where N is 0-4.`
      : `Reply with the grade only, as "${r.title}: N" where N is 0-4.`,
  );
  return [
    { role: 'system', content: `You are a careful code reviewer. ${UNTRUSTED_NOTICE}` },
    { role: 'user', content: parts.join('\n') },
  ];
}

const iceReminder = (aspect: string) =>
  `Your reply could not be read. Answer again with {"evaluation": "<your evaluation, briefly>", "score": <the ${aspect} grade, an integer from 0 to 4>}.`;

export class IceJudge implements Judge {
  readonly method = 'ice';
  readonly promptVersion: string;
  readonly settings: string;
  private readonly options: Required<IceOptions>;

  constructor(options: IceOptions = {}) {
    this.options = { aspect: options.aspect ?? 'usefulness', withReference: options.withReference ?? true, chainOfThought: options.chainOfThought ?? true };
    this.promptVersion = promptHash(iceMessages({ code: 'C', reference: 'R', problem: 'P', language: 'L' }, this.options), RUBRICS, iceReminder('A'), EVALUATED_GRADE_SCHEMA);
    this.settings = `aspect:${this.options.aspect}|ref:${this.options.withReference ? 'yes' : 'no'}|cot:${this.options.chainOfThought ? 'yes' : 'no'}`;
  }

  async judge(sample: JudgeSample, ctx: JudgeContext): Promise<JudgeOutcome> {
    const replies: string[] = [];
    try {
      const aspect = RUBRICS[this.options.aspect].title;
      // Free text as ICE-Score asks for it (the step-by-step evaluation before the grade); an unreadable reply is
      // asked again for a JSON schema, which small models follow where they lose the free-text format.
      const reading = await askGrade(ctx, iceMessages(sample, this.options), replies, { aspect, reminder: iceReminder(aspect), reaskSchema: EVALUATED_GRADE_SCHEMA });
      return {
        grade: reading.grade,
        textGrade: reading.text,
        gradeSource: reading.source,
        trace: { replies, ...(reading.distribution ? { grade_distribution: reading.distribution } : {}) },
      };
    } catch (e) {
      // A usage problem (a prompt the model's context cannot hold) stops the run; everything answered is cached.
      if (e instanceof InputError) throw e;
      // Unreadable replies and server errors alike are a failure of the judge, not a grade.
      return { grade: null, error: (e as Error).message, trace: { replies } };
    }
  }
}
