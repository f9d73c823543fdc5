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
