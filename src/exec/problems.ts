import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTable } from '../io/table.js';
import { InputError, UsageError } from '../errors.js';

/**
 * Problems and samples for `exec`, read as they are published:
 * - human-eval (openai/human-eval): `task_id, prompt, test, entry_point`; the test defines `check(candidate)`.
 * - MultiPL-E (nuprl/MultiPL-E prompts): `name, language, prompt, tests, stop_tokens`; the tests call themselves.
 * - HumanEval-X (THUDM/CodeGeeX): `task_id` like `CPP/0`, `prompt, declaration, canonical_solution, test`.
 * `.jsonl` or `.jsonl.gz`. `HumanEval/53`, `HumanEval_53_add` and `53` name the same problem.
 */
export type ExecLanguage = 'python' | 'javascript' | 'typescript' | 'java' | 'cpp' | 'rust' | 'php' | 'ruby' | 'go' | 'csharp';

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

export interface Problem {
  /** The id as the file gives it (`HumanEval/0`, `HumanEval_0_has_close_elements`, `CPP/0`). */
  taskId: string;
  /** The id samples are matched on: the problem number when the id has one, else the id. */
  key: string;
  language: ExecLanguage;
  format: 'human-eval' | 'multipl-e' | 'humaneval-x';
  prompt: string;
  /** human-eval: the code defining check(candidate); MultiPL-E and HumanEval-X: the complete test program part. */
  tests: string;
  entryPoint?: string;
  /** HumanEval-X: the declarations the prompt relies on. */
  declaration?: string;
  canonicalSolution?: string;
  stopTokens?: string[];
  line: number;
}

export interface ProblemSet {
  path: string;
  problems: Problem[];
  byKey: Map<string, Problem>;
  /** sha256 of the problem file's bytes (the signature carries a prefix). */
  sha256: string;
}

/** `HumanEval/53`, `HumanEval_53_add`, `CPP/53`, `53` -> `53`; any other id is its own key. */
export function problemKey(taskId: string | number): string {
  const id = String(taskId).trim();
  const m = /^(?:[A-Za-z][\w+#-]*?[/_])?(\d+)(?:_\w*)?$/.exec(id);
  return m ? String(Number(m[1])) : id;
}

/** Rows of a `.jsonl` or `.jsonl.gz` file with their line numbers (the one JSONL reader, `readTable`). */
function readJsonLines(path: string): { value: Record<string, unknown>; line: number }[] {
  if (!/\.jsonl(\.gz)?$/.test(path)) throw new InputError('expected a .jsonl or .jsonl.gz file', path);
  const table = readTable(path);
  return table.rows.map((value, i) => ({ value, line: table.lines[i] }));
}

function field(row: Record<string, unknown>, name: string, path: string, line: number, optional = false): string | undefined {
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
  if (!/\.jsonl(\.gz)?$/.test(path)) throw new InputError('problems must be .jsonl or .jsonl.gz', path);
  const rows = readJsonLines(path);
  if (rows.length === 0) throw new InputError('no problems in the file', path);
  const forced = lang ? execLanguage(lang, { option: '--lang' }) : undefined;
  const problems: Problem[] = rows.map(({ value: row, line }) => {
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

/** The bundled benchmarks (`--benchmark NAME`), copied into data/ with their licences. */
export const BENCHMARKS: Record<string, { file: string; language: ExecLanguage; description: string }> = {
  humaneval: { file: 'humaneval/HumanEval.jsonl.gz', language: 'python', description: 'HumanEval (OpenAI), Python, 164 problems' },
  'humaneval-js': { file: 'humaneval-js/humaneval-js.jsonl.gz', language: 'javascript', description: 'HumanEval in JavaScript (MultiPL-E format, tests translated from HumanEval), 161 problems' },
  'humaneval-ts': { file: 'multipl-e/humaneval-ts.jsonl.gz', language: 'typescript', description: 'HumanEval in TypeScript (MultiPL-E, reworded prompts), 159 problems' },
  'humaneval-java': { file: 'multipl-e/humaneval-java.jsonl.gz', language: 'java', description: 'HumanEval in Java (MultiPL-E, reworded prompts), 158 problems' },
  'humaneval-cpp': { file: 'multipl-e/humaneval-cpp.jsonl.gz', language: 'cpp', description: 'HumanEval in C++ (MultiPL-E, reworded prompts), 161 problems' },
  'humaneval-rs': { file: 'multipl-e/humaneval-rs.jsonl.gz', language: 'rust', description: 'HumanEval in Rust (MultiPL-E, reworded prompts), 156 problems' },
  'humaneval-php': { file: 'multipl-e/humaneval-php.jsonl.gz', language: 'php', description: 'HumanEval in PHP (MultiPL-E, reworded prompts), 161 problems' },
  'humaneval-rb': { file: 'multipl-e/humaneval-rb.jsonl.gz', language: 'ruby', description: 'HumanEval in Ruby (MultiPL-E, reworded prompts), 161 problems' },
  'humaneval-go': { file: 'multipl-e/humaneval-go.jsonl.gz', language: 'go', description: 'HumanEval in Go (MultiPL-E, reworded prompts), 154 problems' },
  'humaneval-cs': { file: 'multipl-e/humaneval-cs.jsonl.gz', language: 'csharp', description: 'HumanEval in C# (MultiPL-E, reworded prompts; lists compared with SequenceEqual, as DeepSeek-Coder fixed them), 158 problems' },
};

export function dataDir(): string {
  // src/exec/problems.ts and dist/src/exec/problems.js both sit below the package root
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'data'))) return join(dir, 'data');
    dir = dirname(dir);
  }
  throw new Error('cannot find the data folder of codegauge');
}

export function benchmarkPath(name: string): string {
  const b = BENCHMARKS[name];
  if (!b) throw new UsageError(`--benchmark: unknown benchmark "${name}"; bundled: ${Object.keys(BENCHMARKS).join(', ')}`);
  return join(dataDir(), b.file);
}

export function readBenchmark(name: string): ProblemSet {
  const b = BENCHMARKS[name];
  if (!b) benchmarkPath(name);
  return readProblems(benchmarkPath(name), b.language);
}

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

/**
 * Python: a completion whose first line has lost its indentation (ICE-Score's recorded snippets start at the first
 * character of the body) gets the body's indentation back. The body indentation is that of the prompt's last line
 * (the docstring's end), or one level below a prompt that ends with its `def` line.
 */
export function reindentCompletion(prompt: string, completion: string): string {
  const lines = completion.split('\n');
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) return completion;
  if (/^\s/.test(lines[first])) return completion;
  const promptLines = prompt.replace(/\s+$/, '').split('\n');
  const last = promptLines[promptLines.length - 1] ?? '';
  let indent = /^\s*/.exec(last)![0];
  if (/:\s*(#.*)?$/.test(last)) indent += '    ';
  if (!indent) return completion; // the prompt ends at module level: nothing lost
  if (/^(def|class|async def|@)\b/.test(lines[first]) && !/^\s/.test(last)) return completion;
  const rest = lines.slice(first + 1).filter((l) => l.trim() !== '');
  // Only the first line lost it: the rest is indented deeper than (or as deep as) the body.
  const restIndented = rest.every((l) => l.startsWith(indent));
  if (rest.length > 0 && restIndented) {
    lines[first] = indent + lines[first];
    return lines.join('\n');
  }
  // Everything at column 0 (a body written flush left): indent all of it.
  if (rest.every((l) => !/^\s/.test(l))) return lines.map((l) => (l.trim() === '' ? l : indent + l)).join('\n');
  lines[first] = indent + lines[first];
  return lines.join('\n');
}
