import { expect } from 'vitest';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { findExecutable } from '../src/exec/sandbox/paths.js';
import { runBatch, why } from './exec-fixtures.js';

/**
 * mbpp_3 (is_not_prime) of MultiPL-E's MBPP translations, hand-written right and wrong bodies per language, shared by
 * test/exec-mbpp.test.ts (the interpreted languages) and its .full twin (the compiled ones, seconds a program).
 * Java, C++, Rust and C# bodies leave the closing brace to the tests, as MultiPL-E's stop tokens cut them.
 */
export interface Mbpp3Case {
  set: string;
  toolchain: string;
  fast: boolean;
  right: string;
  wrong: string;
}

export const MBPP_3: Mbpp3Case[] = [
  { set: 'mbpp-js', toolchain: 'node', fast: true, right: '  if (n < 2) return true;\n  for (let i = 2; i * i <= n; i++) if (n % i === 0) return true;\n  return false;\n}\n', wrong: '  return false;\n}\n' },
  { set: 'mbpp-ts', toolchain: 'node', fast: true, right: '  if (n < 2) return true;\n  for (let i = 2; i * i <= n; i++) if (n % i === 0) return true;\n  return false;\n}\n', wrong: '  return false;\n}\n' },
  { set: 'mbpp-php', toolchain: 'php', fast: true, right: '    if ($n < 2) return true;\n    for ($i = 2; $i * $i <= $n; $i++) if ($n % $i == 0) return true;\n    return false;\n}\n', wrong: '    return false;\n}\n' },
  { set: 'mbpp-rb', toolchain: 'ruby', fast: true, right: '  return true if n < 2\n  (2..Math.sqrt(n)).any? { |i| n % i == 0 }\nend\n', wrong: '  false\nend\n' },
  { set: 'mbpp-java', toolchain: 'javac', fast: false, right: '        if (n < 2) return true;\n        for (long i = 2; i * i <= n; i++) if (n % i == 0) return true;\n        return false;\n', wrong: '        return false;\n' },
  { set: 'mbpp-cpp', toolchain: 'g++', fast: false, right: '    if (n < 2) return true;\n    for (long i = 2; i * i <= n; i++) if (n % i == 0) return true;\n    return false;\n', wrong: '    return false;\n' },
  { set: 'mbpp-go', toolchain: 'go', fast: false, right: '    if n < 2 {\n        return true\n    }\n    for i := 2; i*i <= n; i++ {\n        if n%i == 0 {\n            return true\n        }\n    }\n    return false\n}\n', wrong: '    return false\n}\n' },
  { set: 'mbpp-rs', toolchain: 'rustc', fast: false, right: '    if n < 2 { return true; }\n    let mut i = 2;\n    while i * i <= n { if n % i == 0 { return true; } i += 1; }\n    false\n', wrong: '    false\n' },
  { set: 'mbpp-cs', toolchain: 'mcs', fast: false, right: '        if (n < 2) return true;\n        for (long i = 2; i * i <= n; i++) if (n % i == 0) return true;\n        return false;\n', wrong: '        return false;\n' },
];

/** The right body passes and the wrong one fails through the real runner (nothing to check without the toolchain). */
export async function checkMbpp3(c: Mbpp3Case): Promise<void> {
  if (!findExecutable(c.toolchain)) return;
  const rows = await runBatch('bwrap', readBenchmark(c.set), [
    { name: 'right', task_id: 'mbpp_3_is_not_prime', completion: c.right },
    { name: 'wrong', task_id: 'Mbpp/3', completion: c.wrong },
  ], { timeoutMs: 30_000, jobs: 2 });
  expect(rows.right.status, why(rows.right)).toBe('passed');
  expect(rows.wrong.status, why(rows.wrong)).toBe('failed');
}
