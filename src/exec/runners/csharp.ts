import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { baseVerdict, compileVerdict, completionCode, fields, killed, lastLine, missing, versionOf, type Runner } from './kit.js';
import { findExecutable } from '../sandbox/paths.js';

/**
 * C#, judging as MultiPL-E does (`eval_cs.py`: `csc /d:DEBUG -r:System.Numerics.dll`, run with mono, a program whose
 * stderr shows `DefaultTraceListener.Fail` or `Unhandled Exception` fails whatever its exit status). Here mcs (Debian's
 * mono-mcs) with the same flags; a failed compile is compile_error. A failed Debug.Assert ends the program with status
 * 1 (an assertion listener of the harness). The harness's entry point reads the proof and drains stdin before the
 * program's Main, and prints it after.
 */

/** What a failed `Debug.Assert` prints (the harness's listener) before it ends the program. */
const CSHARP_ASSERT = 'codegauge: Debug.Assert failed';
const CSHARP_NO_MAIN = 'codegauge: the tests need exactly one static Main method';
const CSHARP_UNCAUGHT = 'codegauge: uncaught ';

/**
 * The program's entry point (mcs `-main:CodegaugeEntry`), after the sample's code and tests. Mono's default trace
 * listener only prints a failed `Debug.Assert` (with MONO_TRACE_LISTENER set; otherwise nothing) and carries on, so
 * that the program exits 0 either way: a listener of ours, first in the list, prints the assertion and ends the
 * program with status 1. Then the program's own Main (the tests; found by reflection, in whatever class or namespace)
 * runs, and the nonce is printed after it. Only fully qualified names: nothing may clash with the sample's.
 */
const CSHARP_ENTRY = `
sealed class CodegaugeAssertListener : global::System.Diagnostics.TraceListener {
    public override void Write(string message) { }
    public override void WriteLine(string message) { }
    public override void Fail(string message) { Fail(message, null); }
    public override void Fail(string message, string detailMessage) {
        global::System.Console.Out.Flush();
        global::System.Console.Error.WriteLine("${CSHARP_ASSERT}" + (string.IsNullOrEmpty(message) ? "" : ": " + message));
        global::System.Console.Error.WriteLine(new global::System.Diagnostics.StackTrace(1, true).ToString());
        global::System.Console.Error.Flush();
        global::System.Environment.Exit(1);
    }
}

static class CodegaugeEntry {
    static int Main(string[] args) {
        // the proof, read and drained before any code of the program runs
        var stdin = global::System.Console.OpenStandardInput();
        var proof = new global::System.Text.StringBuilder();
        for (int c = stdin.ReadByte(); c >= 0 && c != 10; c = stdin.ReadByte()) proof.Append((char) c);
        var sink = new byte[4096];
        while (stdin.Read(sink, 0, sink.Length) > 0) { }
        global::System.Console.SetIn(new global::System.IO.StringReader(""));
        var listener = new CodegaugeAssertListener();
        global::System.Diagnostics.Debug.Listeners.Insert(0, listener);
        var flags = global::System.Reflection.BindingFlags.Static | global::System.Reflection.BindingFlags.Public | global::System.Reflection.BindingFlags.NonPublic | global::System.Reflection.BindingFlags.DeclaredOnly;
        global::System.Reflection.MethodInfo main = null;
        int found = 0;
        foreach (var type in typeof(CodegaugeEntry).Assembly.GetTypes()) {
            if (type == typeof(CodegaugeEntry) || type.IsGenericTypeDefinition) continue;
            foreach (var m in type.GetMethods(flags)) {
                if (m.Name != "Main" || m.IsGenericMethodDefinition || (m.ReturnType != typeof(void) && m.ReturnType != typeof(int))) continue;
                var ps = m.GetParameters();
                if (ps.Length == 0 || (ps.Length == 1 && ps[0].ParameterType == typeof(string[]))) {
                    main = m;
                    found++;
                }
            }
        }
        if (found != 1) {
            global::System.Console.Error.WriteLine("${CSHARP_NO_MAIN} (found " + found + ")");
            return 1;
        }
        int result = 0;
        try {
            // called through a delegate, not MethodInfo.Invoke: its exceptions arrive as they are, and mono can
            // catch a stack overflow only on a managed call
            bool takesArgs = main.GetParameters().Length == 1;
            if (main.ReturnType == typeof(int)) {
                if (takesArgs) result = ((global::System.Func<string[], int>) global::System.Delegate.CreateDelegate(typeof(global::System.Func<string[], int>), main))(args);
                else result = ((global::System.Func<int>) global::System.Delegate.CreateDelegate(typeof(global::System.Func<int>), main))();
            } else if (takesArgs) ((global::System.Action<string[]>) global::System.Delegate.CreateDelegate(typeof(global::System.Action<string[]>), main))(args);
            else ((global::System.Action) global::System.Delegate.CreateDelegate(typeof(global::System.Action), main))();
        } catch (global::System.Exception e) {
            // the program's own exception, reported as mono does, then in one line (a deep stack's report is longer
            // than the stderr kept)
            global::System.Console.Out.Flush();
            global::System.Console.Error.WriteLine("Unhandled Exception:");
            global::System.Console.Error.WriteLine(e.ToString());
            global::System.Console.Error.WriteLine("${CSHARP_UNCAUGHT}" + e.GetType().FullName + ": " + (e.Message ?? "").Split('\\n')[0].Trim());
            global::System.Console.Error.Flush();
            return 1;
        }
        if (result != 0) return result;
        if (!global::System.Diagnostics.Debug.Listeners.Contains(listener)) {
            global::System.Console.Error.WriteLine("codegauge: the program removed the Debug.Assert listener");
            return 1;
        }
        global::System.Console.Out.Write("\\n" + proof.ToString().Trim() + "\\n");
        global::System.Console.Out.Flush();
        return 0;
    }
}
`;

/**
 * mcs.exe, which the `mcs` script runs with mono (Debian: `exec /usr/bin/mono $MONO_OPTIONS /usr/lib/mono/4.5/mcs.exe`):
 * the compile runs mono itself, so that it gets the same runtime configuration as the program.
 */
function mcsAssembly(mcs: string, mono: string): string | undefined {
  let script = '';
  try {
    script = readFileSync(mcs, 'latin1').slice(0, 4096);
  } catch {
    // unreadable: look next to mono
  }
  const named = /(\/\S*\/mcs\.exe)\b/.exec(script)?.[1];
  if (named && existsSync(named)) return named;
  const beside = join(dirname(dirname(mono)), 'lib', 'mono', '4.5', 'mcs.exe');
  return existsSync(beside) ? beside : undefined;
}

/**
 * Mono's runtime configuration (`etc/mono/config`: the dllmap that finds libmono-native.so, which file access needs).
 * The bwrap sandbox shows no /etc/mono, so the file is copied into the work folder and given with `--config`.
 */
function monoConfig(mono: string): string | undefined {
  const root = dirname(dirname(mono));
  for (const path of [join(root, 'etc', 'mono', 'config'), '/etc/mono/config']) {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      // not here
    }
  }
  return undefined;
}

export function csharpRunner(): Runner {
  const foundMono = findExecutable('mono');
  const foundMcs = findExecutable('mcs');
  if (!foundMono || !foundMcs) missing('csharp', !foundMono ? 'mono' : 'mcs');
  const mono = realpathSync(foundMono);
  const version = versionOf(mono, ['--version'], /Mono JIT compiler version (\d+(?:\.\d+)*)/);
  if (version === 'unknown') missing('csharp', `a working mono (${foundMono})`);
  const mcs = mcsAssembly(realpathSync(foundMcs), mono);
  if (!mcs) missing('csharp', `mcs.exe (the compiler that ${foundMcs} runs)`);
  const config = monoConfig(mono);
  const configFile = 'codegauge-mono.config';
  const configArgs = config === undefined ? [] : ['--config', configFile];
  return {
    language: 'csharp',
    version: `mono-${version}`,
    // mono starts within 64 MB of address space; its heap then grows up to the limit (OutOfMemoryException)
    memoryKind: 'as',
    // the runtime's own threads (finalizer, GC workers), more on machines with many CPUs
    processes: 128,
    code: completionCode,
    program(problem, code) {
      return {
        files: { 'program.cs': `${code}\n${problem.tests}\n${CSHARP_ENTRY}`, ...(config === undefined ? {} : { [configFile]: config }) },
        // MultiPL-E: csc /d:DEBUG -r:System.Numerics.dll (Debug.Assert is compiled in only with DEBUG defined)
        compile: [mono, ...configArgs, mcs, '-d:DEBUG', '-r:System.Numerics.dll', '-main:CodegaugeEntry', '-out:program.exe', 'program.cs'],
        run: [mono, ...configArgs, 'program.exe'],
      };
    },
    classify(result, nonce, phase) {
      if (phase === 'compile') return compileVerdict(result, nonce);
      const base = baseVerdict(result, nonce);
      if (base) return base;
      const v = fields(result);
      const err = result.stderr;
      if (err.includes(CSHARP_NO_MAIN)) return { ...v, status: 'compile_error', note: lastLine(err).slice(0, 200) };
      // ours, or mono's default listener's (MultiPL-E's sign, with MONO_TRACE_LISTENER=Console.Error)
      if (err.includes(CSHARP_ASSERT) || err.includes('System.Diagnostics.DefaultTraceListener.Fail')) return { ...v, status: 'failed' };
      // the harness's one line for an exception out of the tests, else mono's report (another thread's exception)
      const uncaught = new RegExp(`^${CSHARP_UNCAUGHT}([^\n]*)$`, 'm').exec(err)?.[1] ?? /Unhandled Exception:\s*\n?([^\n]*)/.exec(err)?.[1];
      if (/OutOfMemoryException|InsufficientMemoryException/.test(uncaught ?? '') || /Garbage collector could not allocate|mono_gc_alloc/.test(err)) return { ...v, status: 'memory' };
      if (/StackOverflowException/.test(uncaught ?? '') || /^Stack overflow/m.test(err)) return { ...v, status: 'runtime_error', note: 'stack overflow' };
      if (uncaught !== undefined) return { ...v, status: 'runtime_error', note: uncaught.slice(0, 200) || undefined };
      if (killed(result)) return { ...v, status: 'memory', note: 'killed' };
      return { ...v, status: 'runtime_error', note: (result.signal ?? lastLine(err)).slice(0, 200) || undefined };
    },
  };
}
