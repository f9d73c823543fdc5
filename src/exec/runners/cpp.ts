import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findExecutable } from '../sandbox/paths.js';
import { baseVerdict, compileVerdict, completionCode, fields, missing, versionOf, type Runner } from './kit.js';

/**
 * C++ (g++ -std=c++17 -O1). The proof: a constructor of the harness's, with the first priority a program may use
 * (101), reads the run's nonce from stdin and drains it before any static initialiser or `main` of the program
 * runs; the harness's main calls the program's (the tests) and prints the nonce after it. Code that could run before
 * that constructor (constructor or init_priority attributes, sections such as .init_array, ifunc resolvers, inline
 * assembly) is refused: the program is preprocessed first, and the preprocessed lines of the program itself (what
 * macros made of them included) are checked before it is compiled.
 */
const PRELUDE = `#pragma once
#include <unistd.h>
static char codegauge_proof[128];
__attribute__((constructor(101))) static void codegauge_take_proof() {
  unsigned long n = 0;
  char c;
  while (read(0, &c, 1) == 1 && c != '\\n') if (n + 1 < sizeof codegauge_proof) codegauge_proof[n++] = c;
  char sink[4096];
  while (read(0, sink, sizeof sink) > 0) { }
}
`;

const EPILOGUE = `#pragma once
#undef main
#include <iostream>
int main() {
  int r = codegauge_user_main();
  if (r != 0) return r;
  std::cout << std::endl << codegauge_proof << std::endl;
  return 0;
}
`;

/** Attributes that put code before main (or out of the program's reach): refused inside `__attribute__((...))` or `[[...]]`. */
const BEFORE_MAIN_ATTRIBUTES = new Set(['constructor', 'init_priority', 'section', 'ifunc', 'alias', 'weakref']);
/** Names refused anywhere in the program's own lines: inline assembly, and the harness's own. */
const REFUSED_NAMES = new Set(['asm', '__asm', '__asm__', 'codegauge_proof', 'codegauge_take_proof']);

/**
 * The first construct of the program's own preprocessed lines that could run code before main, or undefined. Line
 * markers (`# 12 "program.cpp" 2`) tell which lines are the program's (the harness's prelude and epilogue are
 * headers of their own); strings and character literals are skipped.
 */
export function codeBeforeMain(preprocessed: string, file = 'program.cpp'): string | undefined {
  let own = false;
  const kept: string[] = [];
  for (const line of preprocessed.split('\n')) {
    const marker = /^# \d+ "([^"]*)"/.exec(line);
    if (marker) {
      own = marker[1] === file;
      continue;
    }
    if (own) kept.push(line.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""'));
  }
  const code = kept.join('\n');
  for (const word of code.match(/[A-Za-z_]\w*/g) ?? []) if (REFUSED_NAMES.has(word)) return word;
  const attribute = /__attribute(?:__)?\s*\(\(|\[\[/g;
  for (let m = attribute.exec(code); m; m = attribute.exec(code)) {
    const close = m[0] === '[[' ? ']]' : '))';
    let depth = 0;
    let i = m.index + m[0].length;
    for (; i < code.length; i++) {
      const c = code[i];
      if (c === '(' || c === '[') depth++;
      else if ((c === ')' || c === ']') && depth > 0) depth--;
      else if (depth === 0 && code.startsWith(close, i)) break;
    }
    for (const word of code.slice(m.index + m[0].length, i).match(/[A-Za-z_]\w*/g) ?? []) {
      const bare = word.replace(/^__(\w+)__$/, '$1');
      if (BEFORE_MAIN_ATTRIBUTES.has(bare)) return `${m[0] === '[[' ? '[[' : '__attribute__(('}${word}`;
    }
  }
  return undefined;
}

export function cppRunner(): Runner {
  const gpp = findExecutable('g++');
  if (!gpp) missing('cpp', 'g++');
  const version = versionOf(gpp, ['-dumpfullversion'], /(\d+(?:\.\d+)*)/);
  return {
    language: 'cpp',
    version: `g++-${version}`,
    memoryKind: 'as',
    processes: 64,
    code: completionCode,
    program(problem, code) {
      let source = `${code}\n${problem.tests}\n`;
      // main, renamed, is an ordinary function: falling off its end must still return 0
      const end = source.lastIndexOf('}');
      if (/\bint\s+main\s*\(/.test(source) && end >= 0) source = `${source.slice(0, end)}    return 0;\n${source.slice(end)}`;
      const text = `#include "codegauge_prelude.h"\n#define main codegauge_user_main\n${source}\n#include "codegauge_epilogue.h"\n`;
      return {
        files: { 'program.cpp': text, 'codegauge_prelude.h': PRELUDE, 'codegauge_epilogue.h': EPILOGUE },
        compile: [gpp, '-std=c++17', '-E', '-o', 'program.ii', 'program.cpp'],
        vet(workDir) {
          const found = codeBeforeMain(readFileSync(join(workDir, 'program.ii'), 'utf8'));
          return found === undefined ? undefined : `code that could run before main is not allowed ("${found}")`;
        },
        build: [gpp, '-std=c++17', '-O1', '-o', 'program', 'program.ii'],
        run: ['./program'],
      };
    },
    classify(result, nonce, phase) {
      const v = fields(result);
      if (phase === 'compile') return compileVerdict(result, nonce);
      const base = baseVerdict(result, nonce);
      if (base) return base;
      if (/std::bad_alloc/.test(result.stderr)) return { ...v, status: 'memory' };
      if (/Assertion .* failed/.test(result.stderr) || result.signal === 'SIGABRT' || result.exitCode === 134) return { ...v, status: 'failed' };
      return { ...v, status: 'runtime_error', note: result.signal ?? undefined };
    },
  };
}
