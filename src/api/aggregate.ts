import { InputError } from '../errors.js';
import { numericColumn, stringColumn, type Table } from '../io/table.js';
import { meanAggregation, mmsr } from '../stats/aggregation.js';
import { VERSION } from '../version.js';

/** Library entry point behind `codegauge aggregate`: one label per item from several graders' labels. */
export interface AggregateReport {
  kind: 'aggregate';
  version: string;
  method: 'mmsr' | 'mean';
  items: { task: string | number; label: number }[];
  /** M-MSR's estimated skill of each grader; null for the mean. */
  skills: Record<string, number> | null;
}

/** Ids in natural order: 0, 1, 2, 10 (not 0, 1, 10, 2), and `HumanEval/2` before `HumanEval/10`. */
const natural = new Intl.Collator('en', { numeric: true });
export const naturalOrder = (a: string, b: string): number => natural.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);

export function aggregateTable(table: Table, path: string, options: { task: string; worker: string; label: string; method: 'mmsr' | 'mean' }): AggregateReport {
  const labels = numericColumn(table, options.label);
  const tasks = stringColumn(table, options.task);
  const workers = stringColumn(table, options.worker);
  const answers = labels.flatMap((l, i) => (l === null ? [] : [{ task: tasks[i], worker: workers[i], label: l }]));
  if (answers.length === 0) throw new InputError('no answers', path);
  const result = options.method === 'mean' ? { labels: meanAggregation(answers), skills: null } : mmsr(answers);
  return {
    kind: 'aggregate',
    version: VERSION,
    method: options.method,
    items: [...result.labels].map(([task, label]) => ({ task, label })).sort((a, b) => naturalOrder(String(a.task), String(b.task))),
    skills: result.skills ? Object.fromEntries(result.skills) : null,
  };
}
