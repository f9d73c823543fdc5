import { InputError } from '../../errors.js';
import { field, problemKey, readJsonLines, type Problem, type ProblemSet } from './problems.js';

/** One generated sample: `completion` is appended to the prompt (the sample's own, else the problem's); `solution` is a whole program. */
export interface Sample {
  /** 0-based line of its file (blank lines count, so it is the file's line number - 1). */
  index: number;
  taskId: string;
  completion?: string;
  solution?: string;
  prompt?: string;
  line: number;
}

export function readSamples(path: string): Sample[] {
  if (!/\.jsonl(\.gz)?$/.test(path)) throw new InputError('samples must be .jsonl or .jsonl.gz', path);
  return readJsonLines(path).map(({ value: row, line }) => {
    const taskId = row.task_id ?? row.name;
    if (taskId === undefined || taskId === null || (typeof taskId !== 'string' && typeof taskId !== 'number')) throw new InputError('missing field "task_id"', path, line);
    const completion = field(row, 'completion', path, line, true);
    const solution = field(row, 'solution', path, line, true);
    if (completion === undefined && solution === undefined) throw new InputError('a sample needs a "completion" or a "solution" field', path, line);
    return { index: line - 1, taskId: String(taskId), completion, solution, prompt: field(row, 'prompt', path, line, true), line };
  });
}

/** Matches samples to problems; an unknown task id is an input error naming the file and line. */
export function matchSamples(samples: Sample[], problems: ProblemSet, path: string): Problem[] {
  return samples.map((s) => {
    const p = problems.byKey.get(problemKey(s.taskId));
    if (!p) throw new InputError(`field "task_id": no problem "${s.taskId}" in ${problems.path}`, path, s.line);
    return p;
  });
}

