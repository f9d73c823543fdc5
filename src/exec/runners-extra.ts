import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Problem } from './problems.js';
import { baseVerdict, compileVerdict, completionCode, lastLine, missing, versionOf } from './runner-kit.js';
import type { Program, Runner, Verdict } from './runners.js';
import { findExecutable, type RunResult } from './sandbox.js';

/**
 * Runners for Rust, PHP, Ruby, Go and C#, judging as MultiPL-E's evaluation scripts do (nuprl/MultiPL-E
 * `evaluation/src/eval_{rust,php,ruby,go,cs}.py`), with the nonce epilogue of every runner here: the program reads the
 * run's nonce on stdin after the last test and prints it, so that exiting 0 early is `failed`.
 *
 * - Rust: `rustc program.rs -o program` (rustc's defaults, as MultiPL-E: edition 2015, no optimisation, overflow
 *   checks on), then the binary; the tests are a `fn main()` of `assert!`s. A failed compile is compile_error.
 * - PHP: `php program.php`; a parse error is compile_error, an uncaught exception (the tests throw
 *   `Exception("Test failed!")`) a failure. Run with no php.ini (`-n`, the same in both sandbox modes) and the
 *   extensions of Debian's php-common loaded explicitly.
 * - Ruby: `ruby program.rb`; the tests are a test/unit case. test/unit runs its tests at exit, so the epilogue runs
 *   them itself (`Test::Unit::AutoRunner.run`) and prints the nonce only after they pass.
 * - Go: `go test` on a `_test.go` file, split into a build (`go test -c`, which runs the same `go vet` checks as
 *   `go test`; a failure is compile_error, MultiPL-E's "[build failed]") and a run of the test binary. A `TestMain`
 *   in a file of its own prints the nonce after `m.Run()` passes.
 * - C#: MultiPL-E compiles with `csc /d:DEBUG -r:System.Numerics.dll`, runs with `mono` and fails a program whose
 *   stderr shows `System.Diagnostics.DefaultTraceListener.Fail` (a failed `Debug.Assert`) or `Unhandled Exception`,
 *   whatever its exit status (mono exits 0 after a failed Debug.Assert). Here: mcs (Debian's mono-mcs; Roslyn's csc
 *   is not packaged there) with the same flags; a failed compile is compile_error. A failed Debug.Assert ends the
 *   program with status 1 (an assertion listener of the harness), so only a run whose tests all held reaches the
 *   nonce.
 */

const lines = (text: string) => text.trim().split('\n');

/** The runtime verdict fields of a result. */
function fields(result: RunResult): Pick<Verdict, 'exitCode' | 'durationMs' | 'stderr'> {
  return { exitCode: result.exitCode, durationMs: result.durationMs, stderr: result.stderr };
}

function killed(result: RunResult): boolean {
  return result.signal === 'SIGKILL' || result.exitCode === 137;
}

// ---------------------------------------------------------------- Rust

const RUST_MAIN = `
fn main() {
    codegauge_tests();
    let mut codegauge_line = String::new();
    let _ = ::std::io::stdin().read_line(&mut codegauge_line);
    println!();
    println!("{}", codegauge_line.trim());
}
`;

/** The rustc a toolchain really runs: rustup's proxy (~/.cargo/bin/rustc) needs ~/.rustup, which the sandbox hides. */
function rustCompiler(found: string): string {
  const sysroot = spawnSync(found, ['--print', 'sysroot'], { encoding: 'utf8', timeout: 30_000 });
  const root = sysroot.status === 0 ? sysroot.stdout.trim() : '';
  const inner = root ? join(root, 'bin', 'rustc') : '';
  return realpathSync(inner && existsSync(inner) ? inner : found);
}

export function rustRunner(): Runner {
  const found = findExecutable('rustc');
  if (!found) missing('rust', 'rustc');
  const rustc = rustCompiler(found);
  const version = versionOf(rustc, ['--version'], /rustc (\d+\.\d+\.\d+)/);
  if (version === 'unknown') missing('rust', `a working rustc (${found})`);
  return {
    language: 'rust',
    version: `rustc-${version}`,
    memoryKind: 'as',
    processes: 64,
    code: completionCode,
    program(problem, code) {
      let source = `${code}\n${problem.tests}\n`;
      // MultiPL-E's tests are `fn main() { assert...; }`: renamed (the last one, the tests'), and called by a main
      // that prints the nonce after them. A program without a main gets none (rustc fails: nothing passes untested).
      const at = source.lastIndexOf('fn main()');
      if (at >= 0) source = `${source.slice(0, at)}fn codegauge_tests()${source.slice(at + 'fn main()'.length)}${RUST_MAIN}`;
      return {
        files: { 'program.rs': source },
        // rustc's temporary files in the work folder (the sandbox's own /tmp is not writable)
        compile: ['/bin/sh', '-c', 'TMPDIR="$PWD" exec "$0" "$@"', rustc, 'program.rs', '-o', 'program'],
        run: ['./program'],
        mounts: [rustc],
      };
    },
    classify(result, nonce, phase) {
      if (phase === 'compile') return compileVerdict(result, nonce);
      const base = baseVerdict(result, nonce);
      if (base) return base;
      const v = fields(result);
      const err = result.stderr;
      if (/memory allocation of \d+ bytes failed|capacity overflow/.test(err)) return { ...v, status: 'memory' };
      const panic = /panicked at[^\n]*\n?([^\n]*)/.exec(err);
      // assert!/assert_eq! (rustc < 1.73: "assertion failed: `(left == right)`", later "assertion `left == right` failed")
      if (panic && /assertion failed|assertion `[^`]*` failed/.test(err)) return { ...v, status: 'failed' };
      if (killed(result)) return { ...v, status: 'memory', note: 'killed' };
      if (/has overflowed its stack/.test(err)) return { ...v, status: 'runtime_error', note: 'stack overflow' };
      const note = panic ? (/panicked at '([^']*)'/.exec(err)?.[1] ?? panic[1]) : (result.signal ?? lastLine(err));
      return { ...v, status: 'runtime_error', note: note ? note.slice(0, 200) : undefined };
    },
  };
}

// ---------------------------------------------------------------- PHP

const PHP_EPILOGUE = '\necho "\\n", trim((string) fgets(STDIN)), "\\n";\n';
/** Debian's php-common extensions (what `php` loads there through its cli/conf.d), loaded where present. */
const PHP_EXTENSIONS = ['mbstring', 'ctype', 'iconv', 'calendar', 'tokenizer', 'bcmath', 'gmp', 'exif', 'fileinfo', 'gettext', 'posix', 'shmop', 'sockets', 'sysvmsg', 'sysvsem', 'sysvshm'];

export function phpRunner(): Runner {
  const found = findExecutable('php');
  if (!found) missing('php', 'php');
  const php = realpathSync(found);
  const probe = spawnSync(php, ['-n', '-r', 'echo PHP_VERSION, "\\n", ini_get("extension_dir"), "\\n";'], { encoding: 'utf8', timeout: 20_000 });
  if (probe.status !== 0) missing('php', `a working php (${found})`);
  const [version, extensionDir] = lines(probe.stdout);
  const extensions = PHP_EXTENSIONS.filter((e) => extensionDir && existsSync(join(extensionDir, `${e}.so`))).flatMap((e) => ['-d', `extension=${e}`]);
  return {
    language: 'php',
    version: `php-${version}`,
    memoryKind: 'as',
    processes: 64,
    code: completionCode,
    program(problem, code) {
      const tests = problem.tests.replace(/\s+$/, '');
      // the epilogue is PHP code: reopen PHP mode if the file ends outside it
      const reopen = tests.lastIndexOf('?>') > tests.lastIndexOf('<?php') ? '\n<?php' : '';
      return {
        files: { 'program.php': `${code}\n${tests}\n${reopen}${PHP_EPILOGUE}` },
        run: [php, '-n', '-d', 'display_errors=stderr', '-d', 'log_errors=0', '-d', 'html_errors=0', '-d', 'memory_limit=__MEMORY__M', ...extensions, 'program.php'],
      };
    },
    classify(result, nonce) {
      const base = baseVerdict(result, nonce);
      if (base) return base;
      const v = fields(result);
      const err = result.stderr;
      // errors of PHP's compile step: a parse error, a function declared twice (MultiPL-E's HumanEval_23 declares `strlen`)
      if (/^(PHP )?(Parse error: |Fatal error: +Cannot redeclare )/m.test(err)) return { ...v, status: 'compile_error' };
      if (/Allowed memory size of \d+ bytes exhausted|Out of memory \(allocated/.test(err)) return { ...v, status: 'memory' };
      if (/Uncaught Exception: Test failed!/.test(err)) return { ...v, status: 'failed' };
      if (killed(result)) return { ...v, status: 'memory', note: 'killed' };
      const m = /(?:PHP )?Fatal error: +(?:Uncaught )?([^\n]*)/.exec(err);
      return { ...v, status: 'runtime_error', note: (m?.[1] ?? result.signal ?? lastLine(err)).slice(0, 200) || undefined };
    },
  };
}

// ---------------------------------------------------------------- Ruby

/** test/unit runs the tests at exit (after any epilogue): run them here, then print the nonce once they passed. */
const RUBY_EPILOGUE = `
if defined?(Test::Unit::AutoRunner) && Test::Unit::AutoRunner.need_auto_run?
  exit(false) unless Test::Unit::AutoRunner.run
end
$stdout.write("\\n" + ($stdin.gets || "").strip + "\\n")
$stdout.flush
`;

export function rubyRunner(): Runner {
  const found = findExecutable('ruby');
  if (!found) missing('ruby', 'ruby');
  const ruby = realpathSync(found);
  const probe = spawnSync(ruby, ['-e', 'print RUBY_VERSION; require "test/unit/autorunner"'], { encoding: 'utf8', timeout: 20_000 });
  if (probe.status !== 0) missing('ruby', /test\/unit/.test(probe.stderr ?? '') ? 'the test-unit gem' : `a working ruby (${found})`);
  return {
    language: 'ruby',
    version: `ruby-${probe.stdout.trim()}`,
    memoryKind: 'as',
    processes: 64,
    code: completionCode,
    program(problem, code) {
      return { files: { 'program.rb': `${code}\n${problem.tests}\n${RUBY_EPILOGUE}` }, run: [ruby, 'program.rb'] };
    },
    classify(result, nonce) {
      const base = baseVerdict(result, nonce);
      if (base) return base;
      const v = fields(result);
      const err = result.stderr;
      const out = result.stdout;
      // a file that does not parse never starts (test/unit prints "Loaded suite" when it does)
      if (/:\d+: syntax errors?\b|\(SyntaxError\)/.test(err) && !/^Loaded suite/m.test(out)) return { ...v, status: 'compile_error' };
      if (/NoMemoryError|failed to allocate memory/.test(err + out)) return { ...v, status: 'memory' };
      // test/unit's summary: "1 tests, 3 assertions, 1 failures, 0 errors, ..."
      const summary = /(\d+) tests?, \d+ assertions?, (\d+) failures?, (\d+) errors?/.exec(out);
      if (summary && Number(summary[3]) > 0) {
        const error = /^Error: [^\n]*?: ([^\n]*)/m.exec(out);
        return { ...v, status: 'runtime_error', note: error?.[1]?.slice(0, 200) };
      }
      if (summary && Number(summary[2]) > 0) return { ...v, status: 'failed' };
      if (killed(result)) return { ...v, status: 'memory', note: 'killed' };
      const m = /: ([^\n]*\(\w+(?:::\w+)*\))$/m.exec(err);
      return { ...v, status: 'runtime_error', note: (m?.[1] ?? result.signal ?? lastLine(err)).slice(0, 200) || undefined };
    },
  };
}

// ---------------------------------------------------------------- Go

/** The test binary's main: the tests, then the nonce. Imports renamed so that they cannot clash with the sample's names. */
function goMain(pkg: string): string {
  return `package ${pkg}

import (
	cgbufio "bufio"
	cgfmt "fmt"
	cgos "os"
	cgstrings "strings"
	cgtesting "testing"
)

func TestMain(m *cgtesting.M) {
	if code := m.Run(); code != 0 {
		cgos.Exit(code)
	}
	line, _ := cgbufio.NewReader(cgos.Stdin).ReadString('\\n')
	cgfmt.Print("\\n" + cgstrings.TrimSpace(line) + "\\n")
	cgos.Exit(0)
}
`;
}

/**
 * The build, as a shell script: `go test -c`, with nothing from the host's Go settings, temporary files in the work
 * folder (the sandbox's own /tmp is not writable) and few files open at once (the sandbox allows 64: one build action
 * at a time, and no module index, which keeps a file open per package in Go 1.19). The build cache is the warm one
 * next to the script where the sandbox shows it read-only (Go 1.19 uses it without writing); otherwise, or if that
 * build fails over the cache (a Go that must write it), a private copy that is removed again, so that only the test
 * binary is kept (and cached for identical programs).
 */
function goBuildScript(go: string, warm = ''): string {
  return `#!/bin/sh
# codegauge: builds a Go test binary (go test -c, with go test's vet checks).
work="$PWD"
warm=${shellQuote(warm)}
build() {
  cache="$1"
  shift
  TMPDIR="$work/.codegauge-gotmp" GOTMPDIR="$work/.codegauge-gotmp" GOCACHE="$cache" GOPATH="$work/.codegauge-gopath" \\
    GOENV=off GOFLAGS= GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off CGO_ENABLED=0 GOMAXPROCS=2 GODEBUG=goindex=0 \\
    ${shellQuote(go)} test -p 1 -c -o program.test "$@"
}
clean() {
  chmod -R u+w "$work/.codegauge-gocache" "$work/.codegauge-gopath" "$work/.codegauge-gotmp" 2>/dev/null
  rm -rf "$work/.codegauge-gocache" "$work/.codegauge-gopath" "$work/.codegauge-gotmp" "$work/.codegauge-build.log"
}
mkdir -p "$work/.codegauge-gotmp"
if [ -n "$warm" ] && [ -d "$warm" ] && [ ! -w "$warm" ]; then
  build "$warm" "$@" >"$work/.codegauge-build.log" 2>&1
  status=$?
  if [ $status -eq 0 ] || ! grep -q -F -e 'read-only file system' -e GOCACHE -e "$warm" "$work/.codegauge-build.log"; then
    cat "$work/.codegauge-build.log" >&2
    clean
    exit $status
  fi
fi
[ -n "$warm" ] && [ -d "$warm" ] && cp -R "$warm" "$work/.codegauge-gocache" 2>/dev/null
mkdir -p "$work/.codegauge-gocache"
build "$work/.codegauge-gocache" "$@"
status=$?
clean
exit $status
`;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Standard packages a HumanEval solution may use: compiled (and vetted) once into the warm cache. */
const GO_WARM_IMPORTS = ['bufio', 'bytes', 'container/heap', 'container/list', 'errors', 'fmt', 'math', 'math/big', 'math/bits', 'os', 'reflect', 'regexp', 'sort', 'strconv', 'strings', 'testing', 'unicode', 'unicode/utf8'];

/**
 * A folder (outside /tmp, which the sandbox replaces with its own) holding the build script and a warm build cache:
 * `go test -c` with an empty cache runs vet on every standard package the test imports (seconds per program); a copy
 * of a cache that has them takes a fraction of that. Made once per Go installation, atomically; built from a
 * program of ours, outside the sandbox. Without a writable home folder the build runs from an inline script with an
 * empty cache.
 */
function goWarmRoot(go: string, version: string): string | undefined {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const root = join(base, 'codegauge', `go-${version}-${createHash('sha256').update(go).digest('hex').slice(0, 12)}`);
  const script = join(root, 'bin', 'codegauge-go-build');
  const unique = `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    // the sandbox mounts its own /tmp over the host's: a folder there would not be seen
    if (/^\/tmp(\/|$)/.test(existsSync(base) ? realpathSync(base) : base)) return undefined;
    mkdirSync(join(root, 'bin'), { recursive: true, mode: 0o755 });
    const text = goBuildScript(go, join(root, 'cache'));
    if (!existsSync(script) || readFileSync(script, 'utf8') !== text) {
      writeFileSync(join(root, 'bin', unique), text, { mode: 0o755 });
      chmodSync(join(root, 'bin', unique), 0o755);
      renameSync(join(root, 'bin', unique), script);
    }
    if (existsSync(join(root, 'cache'))) return root;
    const work = mkdtempSync(join(tmpdir(), 'codegauge-go-warm-'));
    const cache = join(root, `cache${unique}`);
    try {
      const imports = GO_WARM_IMPORTS.map((p) => (p === 'testing' ? `\t"testing"\n` : `\t_ "${p}"\n`)).join('');
      writeFileSync(join(work, 'program_test.go'), `package warm_test\n\nimport (\n${imports})\n\nfunc TestWarm(t *testing.T) {}\n`);
      writeFileSync(join(work, 'codegauge_main_test.go'), goMain('warm_test'));
      const r = spawnSync(go, ['test', '-c', '-o', 'program.test', 'program_test.go', 'codegauge_main_test.go'], {
        cwd: work, encoding: 'utf8', timeout: 300_000,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, GOCACHE: cache, GOPATH: join(work, 'gopath'), GOENV: 'off', GOFLAGS: '', GOPROXY: 'off', GOTOOLCHAIN: 'local', GOTELEMETRY: 'off', CGO_ENABLED: '0', GODEBUG: 'goindex=0' },
      });
      if (r.status === 0) {
        spawnSync('chmod', ['-R', 'a+rX', cache]);
        renameSync(cache, join(root, 'cache')); // fails harmlessly when another process made it first
      }
    } catch {
      // the build script works without a warm cache
    } finally {
      rmSync(cache, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    }
    return root;
  } catch {
    return undefined;
  }
}

export function goRunner(): Runner {
  const found = findExecutable('go');
  if (!found) missing('go', 'go');
  const go = realpathSync(found);
  const version = versionOf(go, ['version'], /go version go(\d+(?:\.\d+)*)/);
  if (version === 'unknown') missing('go', `a working go (${found})`);
  const root = goWarmRoot(go, version);
  const build = root ? [join(root, 'bin', 'codegauge-go-build')] : ['/bin/sh', '-c', goBuildScript(go), 'codegauge-go-build'];
  return {
    language: 'go',
    version: `go-${version}`,
    // the Go runtime reserves more address space at start than a memory limit allows (its heap is bounded by `data`)
    memoryKind: 'data',
    // the Go runtime starts threads per CPU; GOMAXPROCS=2 keeps them few
    processes: 256,
    code: completionCode,
    program(problem: Problem, code: string): Program {
      const pkg = /^\s*package\s+(\w+)/m.exec(code)?.[1] ?? /^\s*package\s+(\w+)/m.exec(problem.tests)?.[1] ?? 'main_test';
      return {
        files: { 'program_test.go': `${code}\n${problem.tests}\n`, 'codegauge_main_test.go': goMain(pkg) },
        compile: [...build, 'program_test.go', 'codegauge_main_test.go'],
        run: ['/usr/bin/env', 'GOMAXPROCS=2', './program.test'],
        mounts: [go],
      };
    },
    classify(result, nonce, phase) {
      if (phase === 'compile') return compileVerdict(result, nonce);
      const base = baseVerdict(result, nonce);
      if (base) return base;
      const v = fields(result);
      const text = `${result.stdout}\n${result.stderr}`;
      if (/fatal error: runtime: out of memory|runtime: cannot allocate memory|fatal error: out of memory/.test(text)) return { ...v, status: 'memory' };
      const panic = /^panic: ([^\n]*)/m.exec(text);
      if (panic) return { ...v, status: 'runtime_error', note: panic[1].slice(0, 200) };
      if (/^--- FAIL/m.test(text) || /^FAIL$/m.test(text)) return { ...v, status: 'failed' };
      if (killed(result)) return { ...v, status: 'memory', note: 'killed' };
      return { ...v, status: 'runtime_error', note: (result.signal ?? lastLine(result.stderr)).slice(0, 200) || undefined };
    },
  };
}

// ---------------------------------------------------------------- C#

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
        string line = global::System.Console.In.ReadLine();
        global::System.Console.Out.Write("\\n" + (line ?? "").Trim() + "\\n");
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
