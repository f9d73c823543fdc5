/** What a problem of any format becomes (benchmarks/problems.ts reads the formats). */
export type ExecLanguage = 'python' | 'javascript' | 'typescript' | 'java' | 'cpp' | 'rust' | 'php' | 'ruby' | 'go' | 'csharp';

/** MBPP's parts beyond its tests: setup code, test imports, challenge tests (see mbpp.ts). */
export interface MbppParts {
  /** `test_setup_code` (tasks 367 and 927 build their inputs with the sample's own classes). */
  setup: string;
  /** Sanitized MBPP's `test_imports`. */
  imports: string;
  challenge: string[];
}

export interface Problem {
  /** The id as the file gives it (`HumanEval/0`, `HumanEval_0_has_close_elements`, `CPP/0`). */
  taskId: string;
  /** The id samples are matched on: the problem number when the id has one, else the id. */
  key: string;
  language: ExecLanguage;
  format: 'human-eval' | 'multipl-e' | 'humaneval-x' | 'mbpp';
  prompt: string;
  /** human-eval: the code defining check(candidate); MultiPL-E and HumanEval-X: the complete test program part. */
  tests: string;
  entryPoint?: string;
  /** HumanEval-X: the declarations the prompt relies on. */
  declaration?: string;
  canonicalSolution?: string;
  stopTokens?: string[];
  /** MBPP: its setup code, test imports and challenge tests. */
  mbpp?: MbppParts;
  /** EvalPlus (HumanEval+, MBPP+): how many base and plus inputs the tests check, and the float tolerance. */
  plus?: { base: number; plus: number; atol: number };
  /** Limits the benchmark itself sets (EvalPlus: 120 s a sample, 4 GB), used where --timeout or --memory is lower. */
  timeoutMs?: number;
  memoryMb?: number;
  /**
   * The tests ask only whether the function returned something other than None (three MBPP+ tasks return re.Match):
   * across the boundary the candidate's side sends that bool, since a Match is not a plain value.
   */
  returns?: 'not-none';
  line: number;
}

export interface ProblemSet {
  path: string;
  problems: Problem[];
  byKey: Map<string, Problem>;
  /** sha256 of the problem file's bytes (the signature carries a prefix). */
  sha256: string;
  /** The bundled benchmark it is (`readBenchmark`), for its quarantine list. */
  benchmark?: string;
}

