import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecLanguage, Problem, Sample } from './problems.js';
import { reindentCompletion } from './problems.js';
import { findExecutable, type Limits, type RunResult, type Sandbox } from './sandbox.js';
import { csharpRunner, goRunner, phpRunner, rubyRunner, rustRunner } from './runners-extra.js';
import { baseVerdict, compileVerdict, completionCode, lastLine, missing, versionOf } from './runner-kit.js';


/**
 * One runner per language: finds its toolchain (a missing one is one error naming what to install), builds the
 * program a sample is run as (the code, the tests, then an epilogue that prints the run's nonce, read from stdin,
 * so that a program that exits early never passes), and classifies what happened.
 */
export type ExecStatus = 'passed' | 'failed' | 'timeout' | 'compile_error' | 'runtime_error' | 'memory' | 'sandbox_error';

export const STATUSES: ExecStatus[] = ['passed', 'failed', 'timeout', 'compile_error', 'runtime_error', 'memory', 'sandbox_error'];

export interface Program {
  /** Files written into the work folder. */
  files: Record<string, string>;
  /** A compile step (its failure is compile_error). */
  compile?: string[];
  /** The command that runs the tests. */
  run: string[];
  /** Other binaries whose toolchain folders the sandbox must show (besides those of `compile` and `run`). */
  mounts?: string[];
}

export interface Verdict {
  status: ExecStatus;
  exitCode: number | null;
  durationMs: number;
  stderr: string;
  /** Why, in a few words, when the status alone does not say it. */
  note?: string;
}

export interface Runner {
  language: ExecLanguage;
  /** `python-3.11.7`, `node-20.20.2`: goes into the signature. */
  version: string;
  /** The code of the sample as it stands in the program (prompt + completion, or the solution). */
  code(problem: Problem, sample: Sample): string;
  program(problem: Problem, code: string): Program;
  /** How the memory limit is applied. */
  memoryKind: Limits['memoryKind'];
  processes: number;
  /** Extra arguments or environment the run needs for the limits (e.g. V8's heap size). */
  runArgs?(limits: Limits): string[];
  classify(result: RunResult, nonce: string, phase: 'compile' | 'run'): Verdict;
}

// ---------------------------------------------------------------- Python

const PY_EPILOGUE = '\n\nimport sys as _codegauge_sys\n_codegauge_sys.stdout.write("\\n" + _codegauge_sys.stdin.readline().strip() + "\\n")\n_codegauge_sys.stdout.flush()\n';

export function pythonRunner(): Runner {
  const found = findExecutable('python3');
  if (!found) missing('python', 'python3');
  const probe = spawnSync(found, ['-c', 'import sys, platform; print(sys.executable); print(platform.python_version())'], { encoding: 'utf8', timeout: 20_000 });
  if (probe.status !== 0) missing('python', `a working python3 (${found})`);
  const [executable, version] = probe.stdout.trim().split('\n');
  const binary = realpathSync(executable || found);
  return {
    language: 'python',
    version: `python-${version}`,
    memoryKind: 'as',
    processes: 64,
    code: pythonCode,
    program: (problem, code) => ({ files: { 'program.py': pythonProgramText(problem, code) }, run: [binary, '-I', '-B', 'program.py'] }),
    classify: (result, nonce) => baseVerdict(result, nonce) ?? pythonErrorVerdict(result),
  };
}

/** A Python sample's code: its whole solution, or the prompt it saw with its completion re-indented to the body. */
export function pythonCode(problem: Problem, sample: Sample): string {
  if (sample.solution !== undefined) return sample.solution;
  const prompt = sample.prompt ?? problem.prompt;
  return prompt + reindentCompletion(prompt, sample.completion ?? '');
}

/** The Python program: the code, the tests, the call of `check` (human-eval, HumanEval-X), the nonce epilogue. */
export function pythonProgramText(problem: Problem, code: string): string {
  let text = `${code}\n\n${problem.tests}\n`;
  if (problem.format === 'human-eval') text += `\ncheck(${problem.entryPoint})\n`;
  else if (problem.format === 'humaneval-x' && /^def check\(/m.test(problem.tests) && !/^check\(/m.test(problem.tests)) {
    // HumanEval-X tests that define check without calling it: call it on the prompt's function
    const defs = [...(problem.declaration ?? problem.prompt).matchAll(/^def\s+(\w+)\s*\(/gm)];
    if (defs.length > 0) text += `\ncheck(${defs[defs.length - 1][1]})\n`;
  }
  return text + PY_EPILOGUE;
}

/** A failed Python run's verdict from its last line of stderr; `special` reads runner-specific signs first. */
export function pythonErrorVerdict(result: RunResult, special?: (last: string, v: Omit<Verdict, 'status'>) => Verdict | undefined): Verdict {
  const v = { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
  const last = lastLine(result.stderr);
  if (/\bMemoryError\b/.test(last)) return { ...v, status: 'memory' };
  const own = special?.(last, v);
  if (own) return own;
  if (/^(SyntaxError|IndentationError|TabError)\b/.test(last) && !result.stderr.includes('Traceback (most recent call last)')) return { ...v, status: 'compile_error' };
  if (/^AssertionError\b/.test(last)) return { ...v, status: 'failed' };
  if (result.signal === 'SIGKILL' || result.exitCode === 137) return { ...v, status: 'memory', note: 'killed' };
  return { ...v, status: 'runtime_error', note: last.slice(0, 200) || undefined };
}

// ---------------------------------------------------------------- JavaScript and TypeScript

const JS_EPILOGUE = `\n;{ const _codegauge_fs = require('fs'); let _codegauge_n = ''; try { _codegauge_n = _codegauge_fs.readFileSync(0, 'utf8').trim(); } catch {} _codegauge_fs.writeSync(1, '\\n' + _codegauge_n + '\\n'); }\n`;

function nodeBinary(language: ExecLanguage): { binary: string; version: string } {
  const found = findExecutable('node');
  if (!found) missing(language, 'node');
  const binary = realpathSync(found);
  const version = versionOf(binary, ['--version'], /v(\d+\.\d+\.\d+)/);
  if (version === 'unknown') missing(language, `a working node (${found})`);
  return { binary, version };
}

function jsClassify(result: RunResult, nonce: string): Verdict {
  const base = baseVerdict(result, nonce);
  if (base) return base;
  const v = { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
  const err = result.stderr;
  if (/heap out of memory|Array buffer allocation failed|Allocation failed|Invalid array length|Invalid string length/.test(err)) return { ...v, status: 'memory' };
  if (/^SyntaxError\b/m.test(err) && /\n\s+at (wrapSafe|internalCompileFunction|compileFunction|new Script)\b/.test(err) && !/\n\s+at .*program\.js:\d+/.test(err)) return { ...v, status: 'compile_error' };
  if (/AssertionError|ERR_ASSERTION/.test(err)) return { ...v, status: 'failed' };
  if (result.signal === 'SIGKILL' || result.signal === 'SIGSEGV' || result.exitCode === 137 || result.exitCode === 139) return { ...v, status: 'memory', note: `killed (${result.signal ?? result.exitCode})` };
  const m = /^(\w*Error\b.*)$/m.exec(err);
  return { ...v, status: 'runtime_error', note: (m?.[1] ?? lastLine(err)).slice(0, 200) || undefined };
}

function testsOf(problem: Problem): string {
  // human-eval's convention in another language: tests that define check(candidate) without calling it
  if (problem.format === 'human-eval' && problem.entryPoint) return `${problem.tests}\ncheck(${problem.entryPoint});\n`;
  return problem.tests;
}

export function javascriptRunner(): Runner {
  const { binary, version } = nodeBinary('javascript');
  return {
    language: 'javascript',
    version: `node-${version}`,
    memoryKind: 'data',
    processes: 64,
    code: completionCode,
    program(problem, code) {
      return { files: { 'program.js': `${code}\n${testsOf(problem)}\n${JS_EPILOGUE}` }, run: [binary, '--max-old-space-size=__MEMORY__', '--stack-size=4000', 'program.js'] };
    },
    classify: jsClassify,
  };
}

type TranspileModule = (input: string, options: { compilerOptions?: Record<string, unknown>; reportDiagnostics?: boolean; fileName?: string }) => {
  outputText: string;
  diagnostics?: { messageText: string | { messageText: string }; start?: number; file?: { getLineAndCharacterOfPosition(p: number): { line: number } } }[];
};

export function typescriptRunner(): Runner {
  const { binary, version } = nodeBinary('typescript');
  let ts: { transpileModule: TranspileModule; version: string };
  try {
    ts = createRequire(import.meta.url)('typescript');
  } catch {
    missing('typescript', 'the typescript package');
  }
  return {
    language: 'typescript',
    version: `node-${version},typescript-${ts.version}`,
    memoryKind: 'data',
    processes: 64,
    code: completionCode,
    program(problem, code): Program {
      const source = `${code}\n${testsOf(problem)}\n`;
      const out = ts.transpileModule(source, { reportDiagnostics: true, fileName: 'program.ts', compilerOptions: { module: 1 /* CommonJS */, target: 7 /* ES2020 */, strict: false } });
      const diags = (out.diagnostics ?? []).map((d) => {
        const text = typeof d.messageText === 'string' ? d.messageText : d.messageText.messageText;
        const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : undefined;
        return `program.ts${line ? `:${line}` : ''}: ${text}`;
      });
      if (diags.length > 0) {
        // a syntax error: the "compile step" reports it and fails (no program runs)
        return { files: { 'program.ts': source, 'diagnostics.txt': diags.join('\n') + '\n' }, compile: ['/bin/sh', '-c', 'cat diagnostics.txt >&2; exit 1'], run: [] };
      }
      return { files: { 'program.ts': source, 'program.js': `${out.outputText}\n${JS_EPILOGUE}` }, run: [binary, '--max-old-space-size=__MEMORY__', '--stack-size=4000', 'program.js'] };
    },
    classify(result, nonce, phase) {
      if (phase === 'compile' && !result.timedOut && !result.sandboxError && result.exitCode !== 0) {
        return { status: 'compile_error', exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
      }
      return jsClassify(result, nonce);
    },
  };
}

// ---------------------------------------------------------------- Java

export function javaRunner(): Runner {
  const javac = findExecutable('javac');
  const java = findExecutable('java');
  if (!javac || !java) missing('java', !javac ? 'javac' : 'java');
  const version = versionOf(javac, ['-version'], /javac (\S+)/);
  const javacReal = realpathSync(javac);
  const javaReal = realpathSync(java);
  const classpath = ['.', '/usr/share/java/javatuples.jar'].join(':');
  return {
    language: 'java',
    version: `java-${version}`,
    memoryKind: 'none', // the JVM reserves address space; -Xmx bounds the heap
    processes: 512,
    code: completionCode,
    program(problem, code) {
      const source = `${code}\n${testsOf(problem)}\n`;
      // the class with main: MultiPL-E's `class Problem`, HumanEval-X's `public class Main`
      const main = /public\s+class\s+(\w+)/.exec(source)?.[1] ?? /class\s+(\w+)/.exec(source)?.[1] ?? 'Problem';
      const publicClass = /public\s+class\s+(\w+)/.exec(source)?.[1];
      const file = `${publicClass ?? main}.java`;
      const wrapper = `\nclass CodegaugeMain {\n  public static void main(String[] args) throws Throwable {\n    ${main}.main(args);\n    java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));\n    String n = r.readLine();\n    System.out.println();\n    System.out.println(n == null ? "" : n.trim());\n    System.out.flush();\n  }\n}\n`;
      return {
        files: { [file]: source + wrapper },
        compile: [javacReal, '-J-Xmx512m', '-J-XX:+UseSerialGC', '-J-XX:TieredStopAtLevel=1', '-encoding', 'UTF-8', '-nowarn', '-cp', classpath, file],
        run: [javaReal, '-Xmx__MEMORY__m', '-Xss8m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-ea', '-cp', classpath, 'CodegaugeMain'],
      };
    },
    classify(result, nonce, phase) {
      const v = { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
      if (phase === 'compile') return compileVerdict(result, nonce);
      const base = baseVerdict(result, nonce);
      if (base) return base;
      if (/OutOfMemoryError/.test(result.stderr)) return { ...v, status: 'memory' };
      if (/AssertionError/.test(result.stderr)) return { ...v, status: 'failed' };
      const m = /Exception in thread "main" (\S+)/.exec(result.stderr);
      return { ...v, status: 'runtime_error', note: m?.[1] };
    },
  };
}

// ---------------------------------------------------------------- C++

export function cppRunner(): Runner {
  const gpp = findExecutable('g++');
  if (!gpp) missing('cpp', 'g++');
  const version = versionOf(gpp, ['-dumpfullversion'], /(\d+(?:\.\d+)*)/);
  return {
    language: 'cpp',
    version: `g++-${version}`,
    memoryKind: 'as',
    processes: 64,
    code: completionCode,
    program(problem, code) {
      let source = `${code}\n${testsOf(problem)}\n`;
      // main, renamed, is an ordinary function: falling off its end must still return 0
      const end = source.lastIndexOf('}');
      if (/\bint\s+main\s*\(/.test(source) && end >= 0) source = `${source.slice(0, end)}    return 0;\n${source.slice(end)}`;
      const text = `#define main codegauge_user_main\n${source}\n#undef main\n#include <iostream>\n#include <string>\nint main() {\n  int r = codegauge_user_main();\n  if (r != 0) return r;\n  std::string n;\n  std::getline(std::cin, n);\n  std::cout << std::endl << n << std::endl;\n  return 0;\n}\n`;
      return {
        files: { 'program.cpp': text },
        compile: [gpp, '-std=c++17', '-O1', '-o', 'program', 'program.cpp'],
        run: ['./program'],
      };
    },
    classify(result, nonce, phase) {
      const v = { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
      if (phase === 'compile') return compileVerdict(result, nonce);
      const base = baseVerdict(result, nonce);
      if (base) return base;
      if (/std::bad_alloc/.test(result.stderr)) return { ...v, status: 'memory' };
      if (/Assertion .* failed/.test(result.stderr) || result.signal === 'SIGABRT' || result.exitCode === 134) return { ...v, status: 'failed' };
      return { ...v, status: 'runtime_error', note: result.signal ?? undefined };
    },
  };
}

const FACTORIES: Record<ExecLanguage, () => Runner> = {
  python: pythonRunner,
  javascript: javascriptRunner,
  typescript: typescriptRunner,
  java: javaRunner,
  cpp: cppRunner,
  rust: rustRunner,
  php: phpRunner,
  ruby: rubyRunner,
  go: goRunner,
  csharp: csharpRunner,
};

const cache = new Map<ExecLanguage, Runner>();

/** The runner of a language (its toolchain probed once per process). */
export function runnerFor(language: ExecLanguage): Runner {
  let r = cache.get(language);
  if (!r) {
    r = FACTORIES[language]();
    cache.set(language, r);
  }
  return r;
}

/** Writes a program's files into the work folder. */
export function writeProgram(workDir: string, program: Program): void {
  for (const [name, text] of Object.entries(program.files)) writeFileSync(join(workDir, name), text);
}

/** Arguments with the memory placeholder filled in. */
export function withMemory(argv: string[], memoryMb: number): string[] {
  return argv.map((a) => a.replace('__MEMORY__', String(memoryMb)));
}

/** Makes the program's toolchain visible in the sandbox (when it is installed outside the system folders). */
export function mountProgram(sandbox: Sandbox, program: Program): void {
  for (const argv of [program.compile, program.run]) if (argv && argv[0]?.startsWith('/')) sandbox.mount(argv[0]);
  for (const binary of program.mounts ?? []) sandbox.mount(binary);
}
