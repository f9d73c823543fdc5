import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../errors.js';
import { readProblems, type ExecLanguage, type ProblemSet } from './problems.js';

/** The bundled benchmarks (`--benchmark NAME`), copied into data/ with their licences. */
export const BENCHMARKS: Record<string, { file: string; language: ExecLanguage; description: string; taskIds?: [number, number] }> = {
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
  // MBPP's test split is task 11-510 (Austin et al. 2021, section 2.1); 1-10 are few-shot prompts, the rest train/validation
  mbpp: { file: 'mbpp/mbpp.jsonl.gz', language: 'python', taskIds: [11, 510], description: "MBPP (google-research), Python, the test split (task 11-510), 500 problems; the paper's prompt" },
  'mbpp-sanitized': { file: 'mbpp/sanitized-mbpp.json.gz', language: 'python', taskIds: [11, 510], description: 'sanitized MBPP (hand-verified descriptions), Python, the test split (task 11-510), 257 problems' },
  'mbpp-js': { file: 'multipl-e-mbpp/mbpp-js.jsonl.gz', language: 'javascript', description: 'sanitized MBPP in JavaScript (MultiPL-E, reworded prompts, all splits as MultiPL-E runs it), 397 problems' },
  'mbpp-ts': { file: 'multipl-e-mbpp/mbpp-ts.jsonl.gz', language: 'typescript', description: 'sanitized MBPP in TypeScript (MultiPL-E, reworded prompts, all splits), 390 problems' },
  'mbpp-java': { file: 'multipl-e-mbpp/mbpp-java.jsonl.gz', language: 'java', description: 'sanitized MBPP in Java (MultiPL-E, reworded prompts, all splits), 386 problems' },
  'mbpp-cpp': { file: 'multipl-e-mbpp/mbpp-cpp.jsonl.gz', language: 'cpp', description: 'sanitized MBPP in C++ (MultiPL-E, reworded prompts, all splits), 397 problems' },
  'mbpp-rs': { file: 'multipl-e-mbpp/mbpp-rs.jsonl.gz', language: 'rust', description: 'sanitized MBPP in Rust (MultiPL-E, reworded prompts, all splits), 355 problems' },
  'mbpp-php': { file: 'multipl-e-mbpp/mbpp-php.jsonl.gz', language: 'php', description: 'sanitized MBPP in PHP (MultiPL-E, reworded prompts, all splits), 397 problems' },
  'mbpp-rb': { file: 'multipl-e-mbpp/mbpp-rb.jsonl.gz', language: 'ruby', description: 'sanitized MBPP in Ruby (MultiPL-E, reworded prompts, all splits), 397 problems' },
  'mbpp-go': { file: 'multipl-e-mbpp/mbpp-go.jsonl.gz', language: 'go', description: 'sanitized MBPP in Go (MultiPL-E, reworded prompts, all splits), 374 problems' },
  'mbpp-cs': { file: 'multipl-e-mbpp/mbpp-cs.jsonl.gz', language: 'csharp', description: 'sanitized MBPP in C# (MultiPL-E, reworded prompts, all splits), 386 problems' },
};

export function dataDir(): string {
  // src/exec/benchmarks/bundled.ts and dist/exec/benchmarks/bundled.js both sit below the package root
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
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
  const set = readProblems(benchmarkPath(name), b.language);
  if (!b.taskIds) return { ...set, benchmark: name };
  const [first, last] = b.taskIds;
  const problems = set.problems.filter((p) => Number(p.key) >= first && Number(p.key) <= last);
  return { ...set, problems, byKey: new Map(problems.map((p) => [p.key, p])), benchmark: name };
}

