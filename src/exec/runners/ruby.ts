import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { baseVerdict, completionCode, fields, killed, lastLine, missing, type Runner } from './kit.js';
import { findExecutable } from '../sandbox/paths.js';

/**
 * Ruby, judging as MultiPL-E does (`eval_ruby.py`): `ruby program.rb`; the tests are a test/unit case. test/unit
 * runs its tests at exit, so the epilogue runs them itself (`Test::Unit::AutoRunner.run`) and prints the proof only
 * after they pass; the proof is read and stdin drained by a line before the program's own.
 */

/** test/unit runs the tests at exit (after any epilogue): run them here, then print the nonce once they passed. */
const RUBY_PRELUDE = 'codegauge_proof = (lambda { n = ($stdin.gets || "").strip; $stdin.read; -> { n } }).call\n';
const RUBY_EPILOGUE = `
if defined?(Test::Unit::AutoRunner) && Test::Unit::AutoRunner.need_auto_run?
  exit(false) unless Test::Unit::AutoRunner.run
end
$stdout.write("\\n" + codegauge_proof.call + "\\n")
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
      return { files: { 'program.rb': `${RUBY_PRELUDE}${code}\n${problem.tests}\n${RUBY_EPILOGUE}` }, run: [ruby, 'program.rb'] };
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

