#!/usr/bin/env node
// The quarantine entries of MultiPL-E's MBPP translations (data/exec/quarantine.json): MultiPL-E bundles no reference
// solutions for them, so each task is run with a stub body that compiles for any signature and fails when called. A
// task whose program then does not compile (or parse) has tests no sample can pass; one whose stub passes has tests that
// assert nothing. C#: tests that compare a List, Dictionary or HashSet (or a Tuple holding one) with Equals or == compare
// references, so no returned value is the expected object. Prints the entries as JSON; run after `npm run build`:
//   node scripts/exec-quarantine-mbpp.mjs [--only ts,java,...] [--from DIR (results of an earlier run: DIR/out-<lang>)]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { readBenchmark } = await import(join(root, 'dist/exec/benchmarks/bundled.js'));
const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);

/** A body for any signature that fails when called; Java, C++, Rust and C# leave the closing brace to the tests. */
const STUBS = {
  js: '  throw new Error("stub");\n}\n',
  ts: '  throw new Error("stub");\n}\n',
  java: '        throw new UnsupportedOperationException();\n',
  cpp: '    throw 1;\n',
  rs: '    unimplemented!()\n',
  php: '    throw new Exception("stub");\n}\n',
  rb: '  raise "stub"\nend\n',
  go: '    panic("stub")\n}\n',
  cs: '        throw new NotImplementedException();\n',
};
const NAMES = { js: 'JavaScript', ts: 'TypeScript', java: 'Java', cpp: 'C++', rs: 'Rust', php: 'PHP', rb: 'Ruby', go: 'Go', cs: 'C#' };
const langs = option('--only')?.split(',') ?? Object.keys(STUBS);
const from = option('--from');
const work = from ?? mkdtempSync(join(tmpdir(), 'codegauge-quarantine-'));

/** The first line of a compiler's complaint that says what is wrong, without paths and positions. */
function firstError(stderr) {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l && !/^(#|codegauge:)/.test(l));
  // javac, rustc, mcs, g++: "...error: what" / "error[E0308]: what" / "error CS1021: what"
  const tagged = lines.find((l) => /\berror(\[\w+\]| CS\d+)?:/.test(l));
  const line = tagged ?? lines.find((l) => /error|Error|expected|unexpected|cannot|undefined|missing/.test(l) && !/^\d+ errors?$/.test(l)) ?? "a message longer than the kept end of stderr";
  return line.replace(/^.*?\berror(\[\w+\]| CS\d+)?:\s*/, '').replace(/^\S*(program|Main|main|program_test)\.\w+[:(]\d+[:,]?\d*\)?:?\s*/, '').replace(/\s+in \/sandbox\/\S+ on line \d+$/, '').slice(0, 160);
}

const entries = {};
for (const lang of langs) {
  const set = readBenchmark(`mbpp-${lang}`);
  const out = join(work, `out-${lang}`);
  if (!existsSync(join(out, 'results.jsonl'))) {
    const samples = join(work, `${lang}.jsonl`);
    writeFileSync(samples, set.problems.map((p) => JSON.stringify({ task_id: p.taskId, completion: STUBS[lang] })).join('\n') + '\n');
    spawnSync(process.execPath, [join(root, 'bin/codegauge.js'), 'exec', '--benchmark', `mbpp-${lang}`, '--samples', samples, '--out', out, '--jobs', '2', '--timeout', '10', '--k', '1'], { stdio: 'inherit' });
  }
  const rows = readFileSync(join(out, 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const found = {};
  for (const row of rows) {
    const key = set.byKey.get(row.task_id.replace(/^mbpp_(\d+)_.*$/, '$1'))?.key;
    if (lang === 'cpp' && row.status === 'compile_error') {
      // g++'s template errors run past the kept end of stderr: its first error, compiled once more to a syntax check
      const program = join(work, 'first-error.cpp');
      writeFileSync(program, `${set.byKey.get(key).prompt}${STUBS.cpp}${set.byKey.get(key).tests}`);
      row.stderr = spawnSync('g++', ['-std=c++17', '-fsyntax-only', '-fmax-errors=1', program], { encoding: 'utf8' }).stderr;
    }
    // JavaScript has no compile step: a test that does not parse is a SyntaxError when the program runs
    const unparsed = lang === 'js' && row.status === 'runtime_error' && /^SyntaxError/m.test(row.stderr);
    if (row.status === 'compile_error' || unparsed) found[key] = `the tests do not ${unparsed ? 'parse' : 'compile'} as ${NAMES[lang]} (MultiPL-E upstream fault: ${firstError(row.stderr)}) for every sample`;
    else if (row.passed) found[key] = 'the tests assert nothing (MultiPL-E upstream fault: a body that only fails passes them)';
  }
  if (lang === 'cs') {
    const byReference = /(\.Equals\(|==\s*)\(*(new (List|Dictionary|HashSet)<|Tuple\.Create\([^;]*new (List|Dictionary|HashSet)<)/;
    for (const p of set.problems) {
      if (found[p.key] === undefined && byReference.test(p.tests)) found[p.key] = 'the tests compare a List, Dictionary or HashSet by reference (MultiPL-E upstream fault: no returned collection is the expected object)';
    }
  }
  entries[`mbpp-${lang}`] = Object.fromEntries(Object.entries(found).sort((a, b) => Number(a[0]) - Number(b[0])));
  console.error(`mbpp-${lang}: ${rows.length} stubs, ${Object.keys(found).length} quarantined`);
}
console.log(JSON.stringify(entries, null, 2));
