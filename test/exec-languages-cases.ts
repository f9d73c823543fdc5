import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageId } from '../src/code/languages.js';
import type { ExecLanguage, Problem } from '../src/exec/benchmarks/problems.js';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { findExecutable } from '../src/exec/sandbox/paths.js';

/** The MultiPL-E languages beyond C++, Java and TypeScript, shared by test/exec-languages.test.ts and its .full twin. */
export interface LanguageCase {
  set: string;
  language: ExecLanguage;
  grammar: LanguageId;
  count: number;
  missing: number[];
  /** Doc-comment marker of the prompts. */
  marker: string;
  /** A body that compiles for any signature (the prompt's function left open). */
  stub: string;
  /** The function closed with the stub (the tests of Rust close it themselves). */
  closed: (p: Problem) => string;
  toolchain: string;
}

export const CASES: LanguageCase[] = [
  {
    set: 'humaneval-rs', language: 'rust', grammar: 'rust', count: 156, missing: [22, 32, 38, 50, 103, 125, 137, 148], marker: '///',
    stub: '    unimplemented!()\n', closed: (p) => `${p.prompt}    unimplemented!()\n${p.tests}`, toolchain: 'rustc',
  },
  {
    set: 'humaneval-php', language: 'php', grammar: 'php', count: 161, missing: [32, 38, 50], marker: '//',
    stub: '    return null;\n}\n', closed: (p) => `${p.prompt}    return null;\n}\n${p.tests}`, toolchain: 'php',
  },
  {
    set: 'humaneval-rb', language: 'ruby', grammar: 'ruby', count: 161, missing: [32, 38, 50], marker: '#',
    stub: '  nil\nend\n', closed: (p) => `${p.prompt}  nil\nend\n${p.tests}`, toolchain: 'ruby',
  },
  {
    set: 'humaneval-go', language: 'go', grammar: 'go', count: 154, missing: [12, 32, 38, 50, 90, 103, 125, 128, 137, 162], marker: '//',
    stub: '    panic("stub")\n}\n', closed: (p) => `${p.prompt}    panic("stub")\n}\n${p.tests}`, toolchain: 'go',
  },
  {
    // the tests close the method (and the class)
    set: 'humaneval-cs', language: 'csharp', grammar: 'c_sharp', count: 158, missing: [32, 38, 50, 103, 125, 137], marker: '//',
    stub: '        throw new NotImplementedException();\n', closed: (p) => `${p.prompt}        throw new NotImplementedException();\n${p.tests}`, toolchain: 'mcs',
  },
];

/** The toolchain is there (C#: mcs, and mono that runs it and the programs). */
export const has = (c: LanguageCase) => (c.language === 'csharp' ? ['mcs', 'mono'] : [c.toolchain]).every((t) => !!findExecutable(t));
export const hasBwrap = bwrapAvailable();
export const tmp = () => mkdtempSync(join(tmpdir(), 'codegauge-languages-'));

export const ENDLESS: Record<string, string> = {
  rust: '    loop {}\n',
  php: '    while (true) {}\n}\n',
  ruby: '  loop {}\nend\n',
  go: '    for {\n    }\n}\n',
  csharp: '        while (true) { }\n',
};
export const HUGE: Record<string, string> = {
  rust: '    let v = vec![1u8; 10 << 30];\n    x + y + v[12345] as isize\n',
  php: '    $s = str_repeat("x", 10 << 30);\n    return $x + $y + strlen($s);\n}\n',
  ruby: '  s = "x" * (10 << 30)\n  x + y + s.size\nend\n',
  go: '    v := make([]byte, 10<<30)\n    v[12345] = 1\n    return x + y + int(v[12345])\n}\n',
  // (.NET arrays stop short of 2^31 elements)
  csharp: '        var v = new byte[2000000000];\n        v[12345] = 1;\n        return x + y + v[12345];\n',
};

