import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { baseVerdict, compileVerdict, completionCode, fields, killed, lastLine, missing, versionOf, type Runner } from './kit.js';
import { findExecutable } from '../sandbox/paths.js';

/**
 * Rust, judging as MultiPL-E's evaluation script does (nuprl/MultiPL-E `evaluation/src/eval_rust.py`): `rustc
 * program.rs -o program` (rustc's defaults, as MultiPL-E: edition 2015, no optimisation, overflow checks on), then the
 * binary; the tests are a `fn main()` of `assert!`s. A failed compile is compile_error. The proof: the harness's main
 * reads the run's nonce and drains stdin first; nothing of the program runs before main (link sections, replaced
 * symbols and global assembly are refused).
 */

/** The harness's main: the proof first (read and drained before any code of the program runs), the tests, the proof. */
const RUST_MAIN = `
fn main() {
    let mut codegauge_line = String::new();
    let _ = ::std::io::stdin().read_line(&mut codegauge_line);
    let _ = ::std::io::Read::read_to_end(&mut ::std::io::stdin(), &mut Vec::new());
    codegauge_tests();
    println!();
    println!("{}", codegauge_line.trim());
}
`;

/** What could run code before main in Rust (an entry in .init_array, a symbol that replaces one) or reach the harness's own. */
const RUST_REFUSED = new Set(['link_section', 'export_name', 'no_mangle', 'global_asm', 'naked', 'codegauge_line']);

/** The first refused name of a Rust source outside comments, strings and character literals, or undefined. */
export function rustCodeBeforeMain(source: string): string | undefined {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/\/\/[^\n]*/g, ' ')
    .replace(/r(#*)"[\s\S]*?"\1/g, '""')
    .replace(/b?"(?:[^"\\]|\\[\s\S])*"/g, '""')
    .replace(/b?'(?:[^'\\\n]|\\[^\n]{1,10})'/g, "''");
  for (const word of code.match(/[A-Za-z_]\w*/g) ?? []) if (RUST_REFUSED.has(word)) return word;
  return undefined;
}

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
        vet: () => {
          const found = rustCodeBeforeMain(`${code}\n${problem.tests}`);
          return found === undefined ? undefined : `code that could run before main, or reach the harness's proof, is not allowed ("${found}")`;
        },
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

