import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { baseVerdict, completionCode, fields, killed, lastLine, missing, type Runner } from './kit.js';
import { findExecutable } from '../sandbox/paths.js';

/**
 * PHP, judging as MultiPL-E does (`eval_php.py`): `php program.php`; a parse error is compile_error, an uncaught
 * exception (the tests throw `Exception("Test failed!")`) a failure. Run with no php.ini (`-n`) and the extensions
 * of Debian's php-common loaded explicitly. The proof is read and stdin drained by a line before the program's own.
 */
const lines = (text: string) => text.trim().split('\n');

/** The proof, read and drained before the program's first line; printed by the epilogue after the tests. */
const PHP_PRELUDE = '<?php $codegauge_proof = (function () { $n = trim((string) fgets(STDIN)); while (!feof(STDIN) && fread(STDIN, 65536) !== false) { } return function () use ($n) { return $n; }; })(); ?>\n';
const PHP_EPILOGUE = '\necho "\\n", $codegauge_proof(), "\\n";\n';
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
        files: { 'program.php': `${PHP_PRELUDE}${code}\n${tests}\n${reopen}${PHP_EPILOGUE}` },
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

