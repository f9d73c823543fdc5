import { UsageError } from '../../errors.js';
import type { ExecLanguage } from '../benchmarks/problems.js';
import { pyodidePackage } from '../sandbox/pyodide/package.js';
import type { Runner, Verdict } from './kit.js';
import { pythonCode, pythonErrorVerdict, pythonProgramText, pythonSplit } from './python.js';


/** The python3 runner's program (runners.ts), run by the pyodide pool instead of a python3 binary. */
export function pyodideRunner(): Runner {
  const pkg = pyodidePackage();
  return {
    language: 'python',
    version: `pyodide-${pkg.version}/python-${pkg.python}`,
    memoryKind: 'none',
    processes: 1,
    code: pythonCode,
    // the same program as the python3 runner's; `pyodide` is a placeholder (the pool runs program.py itself)
    family: 'pyodide',
    program: (problem, code) => ({ files: { 'program.py': pythonProgramText(problem, code) }, run: ['pyodide', 'program.py'] }),
    split: pythonSplit,
    classify(result, nonce): Verdict {
      const v = { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
      if (result.sandboxError) return { ...v, status: 'sandbox_error', note: result.sandboxError };
      if (result.timedOut) return { ...v, status: 'timeout' };
      if (result.outputExceeded) return { ...v, status: 'runtime_error', note: 'output limit exceeded' };
      if (result.exitCode === 0) {
        if (result.stdout.includes(nonce)) return { ...v, status: 'passed' };
        return { ...v, status: 'failed', note: 'exited before the tests finished' };
      }
      return pythonErrorVerdict(result, (last, base) => {
        // CPython on 64 bits says MemoryError for these sizes; a 32-bit WebAssembly interpreter cannot even index them
        if (/^OverflowError: cannot fit 'int' into an index-sized integer/.test(last)) return { ...base, status: 'memory', note: 'larger than the 4 GiB WebAssembly address space' };
        if (/JavaScript heap out of memory|Reached heap limit|Array buffer allocation failed/.test(result.stderr)) return { ...base, status: 'memory', note: 'the runner ran out of memory' };
        return undefined;
      });
    },
  };
}

let runner: Runner | undefined;

/** The runner of a language under `--sandbox pyodide`: Python only. */
export function pyodideRunnerFor(language: ExecLanguage): Runner {
  if (language !== 'python') throw new UsageError(`--sandbox pyodide runs Python only; ${language} samples need --sandbox bwrap or --sandbox process`);
  return (runner ??= pyodideRunner());
}

