import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadLanguage } from '../src/code/languages.js';
import { parseCode } from '../src/code/syntax-tree.js';
import { UsageError } from '../src/errors.js';
import { BENCHMARKS, readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { execLanguage, readProblems } from '../src/exec/benchmarks/problems.js';
import type { ExecRow } from '../src/exec/run.js';
import { csharpRunner } from '../src/exec/runners/csharp.js';
import { goRunner } from '../src/exec/runners/go.js';
import { phpRunner } from '../src/exec/runners/php.js';
import { runnerFor } from '../src/exec/runners/registry.js';
import { rubyRunner } from '../src/exec/runners/ruby.js';
import { rustRunner } from '../src/exec/runners/rust.js';
import { runSample } from '../src/exec/sample.js';
import { findExecutable } from '../src/exec/sandbox/paths.js';
import { Sandbox } from '../src/exec/sandbox/sandbox.js';
import { extractCode, loadExtractor } from '../src/extract/extract.js';
import { hostBait } from './exec-fixtures.js';
import { CASES, has, hasBwrap, tmp } from './exec-languages-cases.js';
import { cli } from './helpers.js';

/**
 * Rust, PHP, Ruby, Go and C#: the bundled MultiPL-E sets (data/multipl-e, see its PROVENANCE.md), every prompt sound code,
 * and the runners end to end in the sandbox: hand-written solutions pass, wrong code fails, code that does not
 * compile is compile_error, exiting 0 early is not a pass, an endless loop times out, a huge allocation is `memory`.
 * A language whose toolchain is not installed here is skipped (.ci/run installs them all).
 */
function docComment(prompt: string, marker: string): string[] {
  const lines = prompt.replace(/\n$/, '').split('\n');
  const first = lines.findIndex((l) => l.trimStart().startsWith(marker));
  return first < 0 ? [] : lines.slice(first, -1);
}

describe('bundled MultiPL-E HumanEval (Rust, PHP, Ruby, Go, C#): the data', () => {
  beforeAll(async () => {
    await Promise.all(CASES.map((c) => loadLanguage(c.grammar)));
  });

  it.each(CASES)('$set: $count problems, as MultiPL-E has them', ({ set, language, count, missing }) => {
    expect(BENCHMARKS[set]).toMatchObject({ language, file: `multipl-e/${set}.jsonl.gz` });
    const problems = readBenchmark(set).problems;
    expect(problems).toHaveLength(count);
    const keys = new Set(problems.map((p) => Number(p.key)));
    expect(Array.from({ length: 164 }, (_, n) => n).filter((n) => !keys.has(n))).toEqual(missing);
    expect(problems.map((p) => Number(p.key))).toEqual([...keys].sort((a, b) => a - b));
    for (const p of problems) {
      expect(p).toMatchObject({ language, format: 'multipl-e' });
      expect(p.taskId).toMatch(/^HumanEval_\d+_\w+$/);
      expect(p.stopTokens?.length).toBeGreaterThan(0);
    }
    expect(problems[0].taskId).toBe('HumanEval_0_has_close_elements');
  });

  it("MultiPL-E's language fields (rs, php, rb, go_test.go, cs) and names are read as the runners' languages", () => {
    expect(['rs', 'rust', 'php', 'rb', 'ruby', 'go', 'golang', 'go_test.go', 'cs', 'csharp', 'C#'].map((n) => execLanguage(n))).toEqual(['rust', 'rust', 'php', 'ruby', 'ruby', 'go', 'go', 'go', 'csharp', 'csharp', 'csharp']);
    // a MultiPL-E file read without --lang takes each record's own language field
    const dir = tmp();
    const file = join(dir, 'go.jsonl');
    const go = readBenchmark('humaneval-go').problems[0];
    writeFileSync(file, JSON.stringify({ name: go.taskId, language: 'go_test.go', prompt: go.prompt, tests: go.tests, stop_tokens: go.stopTokens }) + '\n');
    expect(readProblems(file).problems[0].language).toBe('go');
  });

  it.each(CASES)('$set: every prompt parses with tree-sitter, alone and with a stub body and its tests; its doc comment is all comment', ({ set, grammar, marker, closed }) => {
    const bad: string[] = [];
    for (const p of readBenchmark(set).problems) {
      const comment = docComment(p.prompt, marker);
      if (comment.length === 0 || comment.some((l) => !l.trimStart().startsWith(marker))) bad.push(`${p.taskId}: doc comment`);
      // (C#'s prompt opens its class too)
      const alone = grammar === 'ruby' ? `${p.prompt}end\n` : grammar === 'c_sharp' ? `${p.prompt}    }\n}\n` : `${p.prompt}}\n`;
      if (parseCode(grammar, alone).hasError) bad.push(`${p.taskId}: prompt`);
      if (parseCode(grammar, closed(p)).hasError) bad.push(`${p.taskId}: prompt + stub + tests`);
    }
    expect(bad).toEqual([]);
  });
});

/** Every prompt with a stub body and its tests, checked by the real toolchain (outside the sandbox: the data is ours). */
const SOLUTIONS: Record<string, Record<string, { completion?: string; solution?: string }>> = {
  rust: {
    '0': { completion: '    for i in 0..numbers.len() {\n        for j in (i + 1)..numbers.len() {\n            if (numbers[i] - numbers[j]).abs() < threshold {\n                return true;\n            }\n        }\n    }\n    false\n' },
    '2': { completion: '    number - number.floor()\n' },
    '13': { completion: '    let (mut x, mut y) = (a.abs(), b.abs());\n    while y != 0 {\n        let r = x % y;\n        x = y;\n        y = r;\n    }\n    x\n' },
    '35': { completion: '    *l.iter().max().unwrap()\n' },
    '53': { completion: '    x + y\n' },
    wrong: { completion: '    x - y\n' },
    broken: { completion: '    x + "y"\n' },
    early: { completion: '    ::std::process::exit(0)\n' },
  },
  php: {
    '0': { completion: '    $n = count($numbers);\n    for ($i = 0; $i < $n; $i++) {\n        for ($j = $i + 1; $j < $n; $j++) {\n            if (abs($numbers[$i] - $numbers[$j]) < $threshold) {\n                return true;\n            }\n        }\n    }\n    return false;\n}\n' },
    '2': { completion: '    return $number - floor($number);\n}\n' },
    '13': { completion: '    $a = abs($a);\n    $b = abs($b);\n    while ($b != 0) {\n        [$a, $b] = [$b, $a % $b];\n    }\n    return $a;\n}\n' },
    '35': { completion: '    return max($l);\n}\n' },
    '53': { completion: '    return $x + $y;\n}\n' },
    wrong: { completion: '    return $x - $y;\n}\n' },
    broken: { completion: '    return $x + ;\n}\n' },
    early: { completion: '    return $x + $y;\n}\nexit(0);\n' },
  },
  ruby: {
    '0': { completion: '  numbers.combination(2).any? { |a, b| (a - b).abs < threshold }\nend\n' },
    '2': { completion: '  number - number.floor\nend\n' },
    '13': { completion: '  a.gcd(b)\nend\n' },
    '35': { completion: '  l.max\nend\n' },
    '53': { completion: '  x + y\nend\n' },
    wrong: { completion: '  x - y\nend\n' },
    broken: { completion: '  x + (y\nend\n' },
    early: { completion: '  x + y\nend\nexit(0)\n' },
  },
  go: {
    '0': { completion: '    for i := 0; i < len(numbers); i++ {\n        for j := i + 1; j < len(numbers); j++ {\n            d := numbers[i] - numbers[j]\n            if d < 0 {\n                d = -d\n            }\n            if d < threshold {\n                return true\n            }\n        }\n    }\n    return false\n}\n' },
    '2': { completion: '    return number - float64(int(number))\n}\n' },
    '13': { completion: '    for b != 0 {\n        a, b = b, a%b\n    }\n    if a < 0 {\n        return -a\n    }\n    return a\n}\n' },
    '35': { completion: '    m := l[0]\n    for _, v := range l[1:] {\n        if v > m {\n            m = v\n        }\n    }\n    return m\n}\n' },
    '53': { completion: '    return x + y\n}\n' },
    wrong: { completion: '    return x - y\n}\n' },
    broken: { completion: '    return x + "y"\n}\n' },
    // a whole program (the tests are appended): os is not among the prompt's imports
    early: { solution: 'package add_test\n\nimport (\n    "fmt"\n    "os"\n    "testing"\n)\n\nvar _ = fmt.Sprint\nvar _ testing.T\n\nfunc init() {\n    os.Exit(0)\n}\n\nfunc add(x int, y int) int {\n    return x + y\n}\n' },
  },
  // the method's body (the tests close the method)
  csharp: {
    '0': { completion: '        for (int i = 0; i < numbers.Count; i++) {\n            for (int j = i + 1; j < numbers.Count; j++) {\n                if (Math.Abs(numbers[i] - numbers[j]) < threshold) {\n                    return true;\n                }\n            }\n        }\n        return false;\n' },
    '2': { completion: '        return number - (float) Math.Floor(number);\n' },
    '13': { completion: '        while (b != 0) {\n            long r = a % b;\n            a = b;\n            b = r;\n        }\n        return Math.Abs(a);\n' },
    '35': { completion: '        return l.Max();\n' },
    '53': { completion: '        return x + y;\n' },
    wrong: { completion: '        return x - y;\n' },
    broken: { completion: '        return x + "y";\n' },
    early: { completion: '        Environment.Exit(0);\n        return x + y;\n' },
  },
};

/** Code that loops forever and code that asks for 10 GB, as completions of HumanEval 53. */
describe.skipIf(!hasBwrap)('Rust, PHP, Ruby, Go and C# through `codegauge exec` in the sandbox (bwrap)', () => {
  it.each(CASES)('$set: right solutions pass; wrong, not compiling and exiting early do not ($toolchain; skipped without it)', async (c) => {
    if (!has(c)) return;
    const dir = tmp();
    const s = SOLUTIONS[c.language];
    const samples = [
      { task_id: 'HumanEval/0', ...s['0'] },
      { task_id: 'HumanEval/2', ...s['2'] },
      { task_id: 'HumanEval/13', ...s['13'] },
      { task_id: 'HumanEval/35', ...s['35'] },
      { task_id: 'HumanEval/53', ...s['53'] },
      { task_id: 'HumanEval/53', ...s.wrong },
      { task_id: 'HumanEval/53', ...s.broken },
      { task_id: 'HumanEval/53', ...s.broken },
      { task_id: 'HumanEval/53', ...s.early },
    ];
    const file = join(dir, 'hand.jsonl');
    writeFileSync(file, samples.map((x) => JSON.stringify(x) + '\n').join(''));
    const r = await cli('exec', '--benchmark', c.set, '--samples', file, '--out', join(dir, 'out'), '--sandbox', 'bwrap', '--jobs', '2', '--timeout', '10', '--k', '1', '--format', 'json');
    const rows = readFileSync(join(dir, 'out', 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ExecRow);
    const detail = rows.map((row) => `${row.task_id} ${row.status} ${row.note ?? ''} ${row.stderr.slice(-400)}`).join('\n');
    expect(r.code, `${r.err}\n${detail}`).toBe(0);
    expect(rows.map((row) => row.status), detail).toEqual(['passed', 'passed', 'passed', 'passed', 'passed', 'failed', 'compile_error', 'compile_error', 'failed']);
    expect(rows[8].note).toBe('exited before the tests finished');
    const summary = JSON.parse(r.out) as { systems: { pass_at: Record<string, number>; problems: number; signature: string }[] };
    expect(summary.systems[0].problems).toBe(5);
    expect(summary.systems[0].pass_at['1']).toBeCloseTo((4 + 1 / 5) / 5, 12);
    expect(summary.systems[0].signature).toMatch({ rust: /runner:rustc-\d+\.\d+\.\d+\|/, php: /runner:php-8\.\d+\.\d+\|/, ruby: /runner:ruby-\d+\.\d+\.\d+\|/, go: /runner:go-1\.\d+(\.\d+)?\|/, csharp: /runner:mono-6\.\d+(\.\d+)*\|/ }[c.language as string]!);
  }, 240_000);

  it.skipIf(!findExecutable('go'))('go: a vet error fails the build as in `go test` (compile_error)', async () => {
    const problem = readBenchmark('humaneval-go').byKey.get('53')!;
    const { verdict } = await runSample({ sandbox: new Sandbox('bwrap') }, { problem, runner: runnerFor('go'), code: `${problem.prompt}    _ = fmt.Sprintf("%d", "x")\n    return x + y\n}\n` }, { timeoutMs: 10_000, memoryMb: 512 });
    expect(verdict.status, verdict.stderr).toBe('compile_error');
    expect(verdict.stderr).toMatch(/Sprintf format %d has arg "x" of wrong type string/);
  }, 120_000);

  describe.skipIf(!has(CASES[4]))('csharp (skipped without mono and mcs)', () => {
    const run = async (completion: string, sandbox = new Sandbox('bwrap')) => {
      const problem = readBenchmark('humaneval-cs').byKey.get('53')!;
      return (await runSample({ sandbox }, { problem, runner: runnerFor('csharp'), code: problem.prompt + completion }, { timeoutMs: 10_000, memoryMb: 512 })).verdict;
    };

    it("MultiPL-E's premise: under mono a failed Debug.Assert only prints (MONO_TRACE_LISTENER=Console.Error) and the program exits 0", () => {
      const dir = tmp();
      try {
        writeFileSync(join(dir, 'p.cs'), 'using System.Diagnostics;\nclass P {\n    static void Main() {\n        Debug.Assert(1 + 1 == 3);\n        System.Console.WriteLine("went on");\n    }\n}\n');
        const built = spawnSync('mcs', ['-d:DEBUG', `-out:${join(dir, 'p.exe')}`, join(dir, 'p.cs')], { encoding: 'utf8', timeout: 60_000 });
        expect(built.status, built.stderr).toBe(0);
        const r = spawnSync('mono', [join(dir, 'p.exe')], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, MONO_TRACE_LISTENER: 'Console.Error' } });
        expect(r.status).toBe(0);
        expect(r.stdout).toBe('went on\n');
        expect(r.stderr).toContain('System.Diagnostics.DefaultTraceListener.Fail');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);

    it('the harness makes a failed Debug.Assert end the program: failed, in both sandbox modes', async () => {
      for (const sandbox of [new Sandbox('bwrap'), new Sandbox('process')]) {
        const verdict = await run('        return x - y;\n', sandbox);
        expect(verdict.status, verdict.stderr).toBe('failed');
        expect(verdict.exitCode).toBe(1);
        expect(verdict.stderr).toMatch(/^codegauge: Debug\.Assert failed\n[\s\S]*at Problem\.Main/);
        expect((await run('        return x + y;\n', sandbox)).status).toBe('passed');
      }
    }, 120_000);

    it('a program that removes the assertion listener is not a pass; an uncaught exception is runtime_error', async () => {
      const cleared = await run('        Debug.Listeners.Clear();\n        return x - y;\n');
      expect(cleared.status, cleared.stderr).toBe('runtime_error');
      expect(cleared.stderr).toContain('removed the Debug.Assert listener');
      const thrown = await run('        throw new InvalidOperationException("no");\n');
      expect(thrown.status, thrown.stderr).toBe('runtime_error');
      expect(thrown.note).toBe('System.InvalidOperationException: no');
      const deep = await run('        return Add(x, y + 1);\n');
      expect([deep.status, deep.note], deep.stderr).toEqual(['runtime_error', 'stack overflow']);
    }, 120_000);

    // MultiPL-E's C# tests of these call Equals on the expected null (a NullReferenceException when the answer is null,
    // false otherwise) or compare a Dictionary by reference: right answers fail, as in MultiPL-E itself
    it('upstream faults: right answers to HumanEval 12, 111 and 162 cannot pass', async () => {
      const set = readBenchmark('humaneval-cs');
      const right: Record<string, string> = {
        '12': '        if (strings.Count == 0) return null;\n        string best = strings[0];\n        foreach (var s in strings) if (s.Length > best.Length) best = s;\n        return best;\n',
        '111': '        var counts = new Dictionary<string,long>();\n        foreach (var w in test.Split(new[] { \' \' }, StringSplitOptions.RemoveEmptyEntries)) counts[w] = counts.ContainsKey(w) ? counts[w] + 1 : 1;\n        var most = counts.Count == 0 ? 0 : counts.Values.Max();\n        return counts.Where(e => e.Value == most).ToDictionary(e => e.Key, e => e.Value);\n',
        '162': '        if (text.Length == 0) return null;\n        return string.Concat(MD5.Create().ComputeHash(Encoding.ASCII.GetBytes(text)).Select(b => b.ToString("x2")));\n',
      };
      const statuses: Record<string, string> = {};
      for (const [key, body] of Object.entries(right)) {
        const problem = set.byKey.get(key)!;
        statuses[key] = (await runSample({ sandbox: new Sandbox('bwrap') }, { problem, runner: runnerFor('csharp'), code: problem.prompt + body }, { timeoutMs: 10_000, memoryMb: 512 })).verdict.status;
      }
      expect(statuses).toEqual({ '12': 'runtime_error', '111': 'failed', '162': 'runtime_error' });
    }, 120_000);

    it('Debian\'s mcs compiles C# 7 (tuples, out var, patterns), not Roslyn-only syntax such as local functions', async () => {
      expect((await run('        var (a, b) = (x, y);\n        object o = a;\n        if (o is long n && long.TryParse(b.ToString(), out var m)) return n + m;\n        return -1;\n')).status).toBe('passed');
      const local = await run('        long Sum(long p, long q) { return p + q; }\n        return Sum(x, y);\n');
      expect(local.status, local.stderr).toBe('compile_error');
    }, 120_000);
  });
});

/** Attacks on one compiled (Rust), one interpreted (Ruby) and one managed (C#, mono) language: the host stays untouched. */
describe.skipIf(!hasBwrap)('sandbox (bwrap): Rust, Ruby and C# programs cannot write outside their folder or reach the host network', () => {
  const { target, port, connections } = hostBait('codegauge-languages-');
  const targets = () => [target, join(process.cwd(), `codegauge-attack-${process.pid}.txt`), '/usr/codegauge-attack', '/etc/codegauge-attack'];

  it.skipIf(!findExecutable('rustc'))('rust', async () => {
    const problem = readBenchmark('humaneval-rs').byKey.get('53')!;
    const writes = targets().map((t) => `    let _ = ::std::fs::write(${JSON.stringify(t)}, "x");\n`).join('');
    const code = `${problem.prompt}${writes}    if ::std::net::TcpStream::connect(("127.0.0.1", ${port()})).is_ok() { ::std::process::exit(3); }\n    x + y\n`;
    const { verdict } = await runSample({ sandbox: new Sandbox('bwrap') }, { problem, runner: runnerFor('rust'), code }, { timeoutMs: 10_000, memoryMb: 512 });
    expect(verdict.status, verdict.stderr).toBe('passed');
    for (const t of targets()) expect(existsSync(t), t).toBe(false);
    expect(connections()).toBe(0);
  }, 120_000);

  it.skipIf(!findExecutable('ruby'))('ruby', async () => {
    const problem = readBenchmark('humaneval-rb').byKey.get('53')!;
    const writes = targets().map((t) => `  begin; File.write(${JSON.stringify(t)}, "x"); rescue SystemCallError; end\n`).join('');
    const code = `${problem.prompt}${writes}  begin\n    require 'socket'\n    TCPSocket.new('127.0.0.1', ${port()}).close\n    exit!(3)\n  rescue SystemCallError\n  end\n  x + y\nend\n`;
    const { verdict } = await runSample({ sandbox: new Sandbox('bwrap') }, { problem, runner: runnerFor('ruby'), code }, { timeoutMs: 10_000, memoryMb: 512 });
    expect(verdict.status, verdict.stderr).toBe('passed');
    for (const t of targets()) expect(existsSync(t), t).toBe(false);
    expect(connections()).toBe(0);
  }, 60_000);

  it.skipIf(!has(CASES[4]))('csharp', async () => {
    const problem = readBenchmark('humaneval-cs').byKey.get('53')!;
    const writes = targets().map((t) => `        try { System.IO.File.WriteAllText(${JSON.stringify(t)}, "x"); } catch (Exception) { }\n`).join('');
    const connect = `        try { new System.Net.Sockets.TcpClient("127.0.0.1", ${port()}).Close(); Environment.Exit(3); } catch (Exception) { }\n`;
    const { verdict } = await runSample({ sandbox: new Sandbox('bwrap') }, { problem, runner: runnerFor('csharp'), code: `${problem.prompt}${writes}${connect}        return x + y;\n` }, { timeoutMs: 10_000, memoryMb: 512 });
    expect(verdict.status, verdict.stderr).toBe('passed');
    for (const t of targets()) expect(existsSync(t), t).toBe(false);
    expect(connections()).toBe(0);
  }, 60_000);
});

describe('extraction for Rust, PHP, Ruby, Go and C#', () => {
  beforeAll(async () => {
    await Promise.all(CASES.map((c) => loadExtractor(c.language)));
  });

  /** A chat reply: prose, a fenced whole program with an import, a helper and the function, prose. */
  const REPLIES: Record<string, string> = {
    rust: 'Here it is:\n\n```rust\nuse std::cmp::max;\n\nfn bigger(a: isize, b: isize) -> isize {\n    max(a, b)\n}\n\nfn max_element(l: Vec<isize>) -> isize {\n    l.into_iter().fold(isize::MIN, bigger)\n}\n\nfn main() {\n    println!("{}", max_element(vec![1, 2]));\n}\n```\nIt folds.',
    php: 'Sure.\n```php\n<?php\nfunction bigger($a, $b) {\n    return $a > $b ? $a : $b;\n}\n\nfunction max_element($l) {\n    $m = PHP_INT_MIN;\n    foreach ($l as $v) {\n        $m = bigger($m, $v);\n    }\n    return $m;\n}\n\necho max_element([1, 2]);\n```\n',
    ruby: 'Sure:\n```ruby\nrequire \'set\'\n\ndef bigger(a, b)\n  a > b ? a : b\nend\n\ndef max_element(l)\n  l.reduce { |m, v| bigger(m, v) }\nend\n\nputs max_element([1, 2])\n```\n',
    go: '```go\npackage main\n\nimport (\n    "fmt"\n    "sort"\n)\n\nfunc max_element(l []int) int {\n    c := append([]int{}, l...)\n    sort.Ints(c)\n    return c[len(c)-1]\n}\n\nfunc main() {\n    fmt.Println(max_element([]int{1, 2}))\n}\n```',
    csharp: 'Here is the solution:\n\n```csharp\nusing System;\nusing System.Collections.Generic;\nusing System.Text.RegularExpressions;\n\nclass Solution {\n    static long Bigger(long a, long b) => a > b ? a : b;\n\n    public static long MaxElement(List<long> l) {\n        long m = long.MinValue;\n        foreach (var v in l) m = Bigger(m, v);\n        return m;\n    }\n\n    static void Main() {\n        Console.WriteLine(MaxElement(new List<long> { 1, 2 }));\n    }\n}\n```\nIt folds.',
  };

  it.each(CASES)('$set: a fenced whole program keeps imports, the function and its helpers under the prompt head', ({ set, language }) => {
    const problem = readBenchmark(set).byKey.get('35')!;
    const e = extractCode(REPLIES[language], problem);
    expect(e.steps).toContain('sanitized');
    const solution = e.solution!;
    expect(solution).not.toMatch(/fn main|func main|echo max_element|puts max_element|void Main/);
    // the prompt's head (doc comment, Go's package and imports, `<?php`) comes first, once
    const head = problem.prompt.slice(0, problem.prompt.lastIndexOf('\n', problem.prompt.length - 2) + 1);
    expect(solution.startsWith(head) || solution.includes(head)).toBe(true);
    if (language === 'go') {
      expect(solution.match(/^package /gm)).toHaveLength(1);
      expect(solution).toContain('import (\n\t"sort"\n)'); // "fmt" is the prompt's already
    }
    if (language === 'rust') expect(solution).toMatch(/use std::cmp::max;[\s\S]*fn bigger[\s\S]*fn max_element[\s\S]*fold\(isize::MIN, bigger\)\n$/);
    if (language === 'php') expect(solution.match(/<\?php/g)).toHaveLength(1);
    if (language === 'ruby') expect(solution).toMatch(/^require 'set'/);
    // using directives precede the prompt's (only those it lacks); the helper and the method go into its class, whose
    // tests close the method
    if (language === 'csharp') expect(solution).toMatch(/^using System\.Text\.RegularExpressions;\nusing System;\n[\s\S]*class Problem \{\n[\s\S]*    static long Bigger[^\n]*\n    public static long MaxElement[\s\S]*return m;\n$/);
  });

  it('csharp: a bare expression-bodied method becomes a block inside the prompt\'s class, and passes (mono; skipped without it)', async () => {
    const problem = readBenchmark('humaneval-cs').byKey.get('35')!;
    const e = extractCode('```cs\npublic static long MaxElement(List<long> l) => l.Max();\n```', problem);
    expect(e.steps).toEqual(expect.arrayContaining(['fenced', 'method-without-class', 'sanitized']));
    expect(e.solution).toMatch(/\n    public static long MaxElement\(List<long> l\) \{\n        return l\.Max\(\);\n$/);
    if (!has(CASES[4]) || !hasBwrap) return;
    const runner = runnerFor('csharp');
    const { verdict } = await runSample({ sandbox: new Sandbox('bwrap') }, { problem, runner, code: runner.code(problem, { index: 0, taskId: problem.taskId, line: 1, solution: e.solution }) }, { timeoutMs: 10_000, memoryMb: 512 });
    expect(verdict.status, `${e.solution}\n${verdict.stderr}`).toBe('passed');
  }, 60_000);

  it.each(CASES)('$set: a completion is cut at MultiPL-E\'s stop tokens', ({ set, language }) => {
    const problem = readBenchmark(set).byKey.get('53')!;
    const body = { rust: '    x + y\n}\n\nfn main() {}\n', php: '    return $x + $y;\n}\n\nfunction other() {}\n', ruby: '  x + y\nend\n\nputs 1\n', go: '    return x + y\n}\nfunc other() {}\n', csharp: '        return x + y;\n    }\n    public static void Other() { }\n' }[language as string]!;
    const e = extractCode(body, problem);
    expect(e.steps).toContain('stop-token');
    expect(e.completion).toBe({ rust: '    x + y', php: '    return $x + $y;\n}\n', ruby: '  x + y\nend', go: '    return x + y\n}', csharp: '        return x + y;' }[language as string]);
  });

  it.each(CASES)('$set: the extracted program passes in the sandbox ($toolchain; skipped without it)', async (c) => {
    if (!has(c) || !hasBwrap) return;
    const problem = readBenchmark(c.set).byKey.get('35')!;
    const e = extractCode(REPLIES[c.language], problem);
    const runner = runnerFor(c.language);
    const { verdict } = await runSample({ sandbox: new Sandbox('bwrap') }, { problem, runner, code: runner.code(problem, { index: 0, taskId: problem.taskId, line: 1, solution: e.solution }) }, { timeoutMs: 10_000, memoryMb: 512 });
    expect(verdict.status, `${e.solution}\n${verdict.stderr}`).toBe('passed');
  }, 120_000);
});

describe('a missing toolchain is one usage error naming what to install', () => {
  it.each([
    ['rust', rustRunner, /cannot run rust samples: rustc not found; install rustc \(apt-get install rustc, or rustup\)/],
    ['php', phpRunner, /cannot run php samples: php not found; install php \(apt-get install php-cli\)/],
    ['ruby', rubyRunner, /cannot run ruby samples: ruby not found; install ruby with test-unit \(apt-get install ruby\)/],
    ['go', goRunner, /cannot run go samples: go not found; install go \(apt-get install golang-go\)/],
    ['csharp', csharpRunner, /cannot run csharp samples: mono not found; install mono and mcs \(apt-get install mono-mcs\)/],
  ] as const)('%s', (_name, factory, message) => {
    const path = process.env.PATH;
    const empty = tmp();
    process.env.PATH = empty;
    try {
      expect(() => factory()).toThrow(UsageError);
      expect(() => factory()).toThrow(message);
    } finally {
      process.env.PATH = path;
    }
  });
});
