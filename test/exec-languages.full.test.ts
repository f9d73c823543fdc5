import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { runnerFor } from '../src/exec/runners/registry.js';
import { runSample } from '../src/exec/sample.js';
import { Sandbox } from '../src/exec/sandbox/sandbox.js';
import { CASES, ENDLESS, has, hasBwrap, HUGE, tmp, type LanguageCase } from './exec-languages-cases.js';

/**
 * The long cases of test/exec-languages.test.ts (`npm run test:full`): every bundled prompt of Rust, PHP, Ruby, Go
 * and C# compiles with a stub body, and each runner's limits hold (an endless loop times out, a huge allocation is
 * `memory`). A language whose toolchain is not installed here is skipped (.ci/run installs them all).
 */
describe('bundled MultiPL-E HumanEval (Rust, PHP, Ruby, Go, C#): every prompt compiles with a stub body', () => {
  const check = (c: LanguageCase, run: (programs: { id: string; text: string }[], dir: string) => { ok: boolean; detail: string }) => {
    const dir = tmp();
    try {
      const programs = readBenchmark(c.set).problems.map((p) => ({ id: p.taskId, text: c.closed(p) }));
      const r = run(programs, dir);
      expect(r.ok, r.detail).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it.skipIf(!has(CASES[0]))('humaneval-rs: one crate of all 156 programs type-checks (rustc --emit=metadata; skipped without rustc)', () => {
    check(CASES[0], (programs, dir) => {
      // each program in a module of its own: its `fn main` is an ordinary function there
      const crate = `#![allow(warnings)]\n${programs.map((p) => `mod ${p.id.toLowerCase()} {\n${p.text}\n}\n`).join('')}fn main() {}\n`;
      writeFileSync(join(dir, 'all.rs'), crate);
      const r = spawnSync('rustc', ['--emit=metadata', '--crate-name', 'all', '-o', join(dir, 'all.rmeta'), join(dir, 'all.rs')], { encoding: 'utf8', timeout: 120_000 });
      return { ok: r.status === 0, detail: r.stderr.slice(0, 3000) };
    });
  }, 150_000);

  // MultiPL-E's PHP HumanEval_23 declares `strlen`, a PHP builtin: "Cannot redeclare strlen()", no sample can pass it
  it.skipIf(!has(CASES[1]))('humaneval-php: all 161 programs but HumanEval_23 (an upstream fault) lint (php -l; skipped without php)', () => {
    check(CASES[1], (programs, dir) => {
      const bad: string[] = [];
      for (const p of programs) {
        const file = join(dir, `${p.id}.php`);
        writeFileSync(file, p.text);
        const r = spawnSync('php', ['-n', '-d', 'display_errors=stderr', '-l', file], { encoding: 'utf8', timeout: 30_000 });
        if (r.status !== 0) bad.push(`${p.id}: ${r.stdout}${r.stderr}`);
      }
      return { ok: bad.length === 1 && /^HumanEval_23_strlen: [\s\S]*Cannot redeclare strlen\(\)/.test(bad[0]), detail: bad.join('\n') };
    });
  }, 120_000);

  it.skipIf(!has(CASES[2]))('humaneval-rb: all 161 programs compile (RubyVM::InstructionSequence, one ruby; skipped without ruby)', () => {
    check(CASES[2], (programs, dir) => {
      writeFileSync(join(dir, 'all.json'), JSON.stringify(programs));
      const script = 'require "json"; bad = JSON.parse(File.read(ARGV[0])).reject { |p| begin; RubyVM::InstructionSequence.compile(p["text"]); true; rescue SyntaxError => e; warn "#{p["id"]}: #{e.message}"; false; end }; exit(bad.empty? ? 0 : 1)';
      const r = spawnSync('ruby', ['-e', script, join(dir, 'all.json')], { encoding: 'utf8', timeout: 60_000 });
      return { ok: r.status === 0, detail: r.stderr.slice(0, 3000) };
    });
  }, 90_000);

  // MultiPL-E's Go tests of HumanEval 87 do not type-check (`[][]int{[]interface{}{0, 0}, ...}`): no sample can pass it
  it.skipIf(!has(CASES[3]))('humaneval-go: all 154 programs but HumanEval_87 (an upstream fault) pass go vet, one package each (skipped without go)', () => {
    check(CASES[3], (programs, dir) => {
      writeFileSync(join(dir, 'go.mod'), 'module codegauge.test/all\n\ngo 1.18\n');
      for (const p of programs) {
        mkdirSync(join(dir, p.id));
        writeFileSync(join(dir, p.id, 'program_test.go'), p.text);
      }
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, GOCACHE: join(dir, '.cache'), GOPATH: join(dir, '.gopath'), GOENV: 'off', GOFLAGS: '-mod=mod', GOPROXY: 'off', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
      const r = spawnSync('go', ['vet', './...'], { cwd: dir, encoding: 'utf8', timeout: 240_000, env });
      const failing = [...new Set([...r.stderr.matchAll(/^vet: (HumanEval_\w+)\//gm)].map((m) => m[1]))];
      return { ok: r.status !== null && JSON.stringify(failing) === JSON.stringify(['HumanEval_87_get_row']), detail: r.stderr.slice(0, 3000) };
    });
  }, 300_000);

  it.skipIf(!has(CASES[4]))('humaneval-cs: one assembly of all 158 programs compiles (mcs -d:DEBUG -r:System.Numerics.dll; skipped without mono and mcs)', () => {
    check(CASES[4], (programs, dir) => {
      // each program in a namespace of its own (its using directives open the namespace's body)
      writeFileSync(join(dir, 'all.cs'), programs.map((p) => `namespace ${p.id} {\n${p.text}}\n`).join(''));
      const r = spawnSync('mcs', ['-d:DEBUG', '-r:System.Numerics.dll', '-t:library', `-out:${join(dir, 'all.dll')}`, join(dir, 'all.cs')], { encoding: 'utf8', timeout: 120_000 });
      return { ok: r.status === 0, detail: `${r.stdout}${r.stderr}`.slice(0, 3000) };
    });
  }, 150_000);
});

/**
 * Hand-written completions (appended to each prompt, as the model would write them) for HumanEval 0, 2, 13, 35 and
 * 53, then for 53: a wrong answer, code that does not compile (twice: the second is the compile cache's), and an exit
 * with status 0 before the tests have run.
 */
describe.skipIf(!hasBwrap)('Rust, PHP, Ruby, Go and C# through `codegauge exec` in the sandbox (bwrap): limits', () => {
  it.each(CASES)('$set: an endless loop times out (under --timeout-retry always, once more with twice the time); 10 GB is `memory` ($toolchain; skipped without it)', async (c) => {
    if (!has(c)) return;
    const problem = readBenchmark(c.set).byKey.get('53')!;
    const runner = runnerFor(c.language);
    const sandbox = new Sandbox('bwrap');
    const loop = await runSample({ sandbox }, { problem, runner, code: problem.prompt + ENDLESS[c.language] }, { timeoutMs: 1500, memoryMb: 512, timeoutRetry: 'always' });
    expect(loop.verdict.status, loop.verdict.stderr).toBe('timeout');
    expect(loop.attempts.map((a) => [a.status, a.timeout_ms])).toEqual([['timeout', 1500], ['timeout', 3000]]);
    const huge = await runSample({ sandbox }, { problem, runner, code: problem.prompt + HUGE[c.language] }, { timeoutMs: 10_000, memoryMb: 512 });
    expect(huge.verdict.status, `${huge.verdict.note} ${huge.verdict.stderr}`).toBe('memory');
  }, 240_000);

});
