import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Problem } from '../benchmarks/problems.js';
import { baseVerdict, compileVerdict, completionCode, fields, killed, lastLine, missing, versionOf, type Program, type Runner } from './kit.js';
import { findExecutable } from '../sandbox/paths.js';

/**
 * Go, judging as MultiPL-E does (`eval_go.py`): `go test` on a `_test.go` file, split into a build (`go test -c`,
 * which runs the same `go vet` checks as `go test`; a failure is compile_error, MultiPL-E's "[build failed]") and a
 * run of the test binary. The harness's file, first in the build, takes the proof from stdin in a package variable
 * initialised before any of the program's; its `TestMain` prints it after `m.Run()` passes.
 */

/** The test binary's main: the tests, then the nonce. Imports renamed so that they cannot clash with the sample's names. */
function goMain(pkg: string): string {
  return `package ${pkg}

import (
	cgbufio "bufio"
	cgfmt "fmt"
	cgio "io"
	cgos "os"
	cgstrings "strings"
	cgtesting "testing"
)

// initialised first: this file comes first, and this variable depends on nothing
var codegaugeProof = codegaugeTakeProof()

func codegaugeTakeProof() string {
	r := cgbufio.NewReader(cgos.Stdin)
	line, _ := r.ReadString('\\n')
	cgio.Copy(cgio.Discard, r)
	return cgstrings.TrimSpace(line)
}

func TestMain(m *cgtesting.M) {
	if code := m.Run(); code != 0 {
		cgos.Exit(code)
	}
	cgfmt.Print("\\n" + codegaugeProof + "\\n")
	cgos.Exit(0)
}
`;
}

/** The program may not name the harness's proof, nor link to it by another name. */
export function goReachesProof(source: string): string | undefined {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/"(?:[^"\\\n]|\\.)*"|`[^`]*`/g, '""');
  if (/\/\/go:linkname\b/.test(code)) return 'go:linkname';
  const named = /\bcodegauge\w*/.exec(code.replace(/\/\/[^\n]*/g, ' '));
  return named?.[0];
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
        // the harness's file first: its variables are initialised before the program's
        compile: [...build, 'codegauge_main_test.go', 'program_test.go'],
        vet: () => {
          const found = goReachesProof(`${code}\n${problem.tests}`);
          return found === undefined ? undefined : `the program may not reach the harness's proof ("${found}")`;
        },
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

