import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { readTable } from '../../io/table.js';
import { InputError, UsageError } from '../../errors.js';
import { evalplusProblem, isEvalPlusRow } from './evalplus.js';
import { isMbppRow, mbppProblem } from './mbpp.js';
import { readProblemRows } from './rows.js';
import type { ExecLanguage, Problem, ProblemSet } from './types.js';

/**
 * Problems and samples for `exec`, read as they are published:
 * - human-eval (openai/human-eval): `task_id, prompt, test, entry_point`; the test defines `check(candidate)`.
 * - MultiPL-E (nuprl/MultiPL-E prompts): `name, language, prompt, tests, stop_tokens`; the tests call themselves.
 * - HumanEval-X (THUDM/CodeGeeX): `task_id` like `CPP/0`, `prompt, declaration, canonical_solution, test`.
 * - MBPP (google-research): `task_id, text, code, test_list, test_setup_code, challenge_test_list`, and sanitized
 *   MBPP's `prompt, test_imports` (mbpp.ts).
 * - EvalPlus (HumanEval+, MBPP+): `task_id, prompt, canonical_solution, entry_point, base_input, plus_input, atol`
 *   (evalplus.ts).
 * `.jsonl` or `.json` (an array), optionally `.gz`. `HumanEval/53`, `HumanEval_53_add` and `53` name the same
 * problem, as do `Mbpp/2`, `mbpp_2_similar_elements` and `2`.
 */
export type { ExecLanguage, Problem, ProblemSet } from './types.js';

export const EXEC_LANGUAGES: ExecLanguage[] = ['python', 'javascript', 'typescript', 'java', 'cpp', 'rust', 'php', 'ruby', 'go', 'csharp'];

const LANGUAGE_ALIASES: Record<string, ExecLanguage> = {
  python: 'python', py: 'python', python3: 'python',
  javascript: 'javascript', js: 'javascript', node: 'javascript',
  typescript: 'typescript', ts: 'typescript',
  java: 'java',
  cpp: 'cpp', 'c++': 'cpp', cxx: 'cpp',
  // MultiPL-E's `language` fields: rs, php, rb, go_test.go, cs
  rust: 'rust', rs: 'rust',
  php: 'php',
  ruby: 'ruby', rb: 'ruby',
  go: 'go', golang: 'go', 'go_test.go': 'go',
  csharp: 'csharp', cs: 'csharp', 'c#': 'csharp',
};

export function execLanguage(name: string, where?: { file?: string; line?: number; option?: string }): ExecLanguage {
  const lang = LANGUAGE_ALIASES[name.toLowerCase()];
  if (!lang) {
    const message = `unsupported language "${name}"; exec runs ${EXEC_LANGUAGES.join(', ')}`;
    if (where?.option) throw new UsageError(`${where.option}: ${message}`);
    throw new InputError(message, where?.file, where?.line);
  }
  return lang;
}

/** `HumanEval/53`, `HumanEval_53_add`, `CPP/53`, `53` -> `53`; any other id is its own key. */
export function problemKey(taskId: string | number): string {
  const id = String(taskId).trim();
  const m = /^(?:[A-Za-z][\w+#-]*?[/_])?(\d+)(?:_\w*)?$/.exec(id);
  return m ? String(Number(m[1])) : id;
}

/** Rows of a `.jsonl` or `.jsonl.gz` file with their line numbers (the one JSONL reader, `readTable`). */
export function readJsonLines(path: string): { value: Record<string, unknown>; line: number }[] {
  if (!/\.jsonl(\.gz)?$/.test(path)) throw new InputError('expected a .jsonl or .jsonl.gz file', path);
  const table = readTable(path);
  return table.rows.map((value, i) => ({ value, line: table.lines[i] }));
}

export function field(row: Record<string, unknown>, name: string, path: string, line: number, optional = false): string | undefined {
  const v = row[name];
  if (v === undefined || v === null) {
    if (optional) return undefined;
    throw new InputError(`missing field "${name}"`, path, line);
  }
  if (typeof v !== 'string') throw new InputError(`field "${name}" must be a string`, path, line);
  return v;
}

const X_PREFIX: Record<string, ExecLanguage> = { python: 'python', cpp: 'cpp', java: 'java', javascript: 'javascript', js: 'javascript' };

export function readProblems(path: string, lang?: string): ProblemSet {
  const rows = readProblemRows(path);
  if (rows.length === 0) throw new InputError('no problems in the file', path);
  const forced = lang ? execLanguage(lang, { option: '--lang' }) : undefined;
  const problems: Problem[] = rows.map(({ value: row, raw, line }) => {
    if (isEvalPlusRow(row) || isMbppRow(row)) {
      if (forced && forced !== 'python') throw new UsageError(`--lang ${lang}: ${path} holds Python problems (${isEvalPlusRow(row) ? 'EvalPlus' : 'MBPP'})`);
      return isEvalPlusRow(row) ? evalplusProblem(row, raw, path, line, problemKey) : { ...mbppProblem(row, path, line), key: problemKey(`Mbpp/${String(row.task_id)}`) };
    }
    if ('name' in row && 'tests' in row) {
      const taskId = field(row, 'name', path, line)!;
      const language = forced ?? execLanguage(field(row, 'language', path, line, true) ?? languageFromName(path) ?? 'python', { file: path, line });
      const stop = row.stop_tokens;
      return {
        taskId, key: problemKey(taskId), language, format: 'multipl-e', line,
        prompt: field(row, 'prompt', path, line)!, tests: field(row, 'tests', path, line)!,
        stopTokens: Array.isArray(stop) ? stop.map(String) : undefined,
      };
    }
    const taskId = row.task_id === undefined ? undefined : String(row.task_id);
    if (taskId === undefined) throw new InputError('missing field "task_id" (human-eval or HumanEval-X format) or "name" (MultiPL-E)', path, line);
    const prompt = field(row, 'prompt', path, line)!;
    const test = field(row, 'test', path, line)!;
    if ('declaration' in row) {
      const prefix = taskId.split('/')[0].toLowerCase();
      const language = forced ?? X_PREFIX[prefix] ?? execLanguage(prefix, { file: path, line });
      return {
        taskId, key: problemKey(taskId), language, format: 'humaneval-x', line, prompt, tests: test,
        declaration: field(row, 'declaration', path, line, true), canonicalSolution: field(row, 'canonical_solution', path, line, true),
      };
    }
    const entryPoint = field(row, 'entry_point', path, line)!;
    return {
      taskId, key: problemKey(taskId), language: forced ?? 'python', format: 'human-eval', line, prompt, tests: test, entryPoint,
      canonicalSolution: field(row, 'canonical_solution', path, line, true),
    };
  });
  const byKey = new Map<string, Problem>();
  for (const p of problems) {
    if (byKey.has(p.key)) throw new InputError(`duplicate problem "${p.taskId}" (same as line ${byKey.get(p.key)!.line})`, path, p.line);
    byKey.set(p.key, p);
  }
  const sha256 = createHash('sha256').update(readFileSync(path)).digest('hex');
  return { path, problems, byKey, sha256 };
}

function languageFromName(path: string): string | undefined {
  const m = /humaneval-([a-z+]+)-/.exec(basename(path));
  return m?.[1];
}

