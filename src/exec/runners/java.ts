import { existsSync, realpathSync } from 'node:fs';
import { UsageError } from '../../errors.js';
import type { Problem } from '../benchmarks/problems.js';
import { findExecutable } from '../sandbox/paths.js';
import { baseVerdict, compileVerdict, completionCode, fields, missing, versionOf, type Runner } from './kit.js';

/** javatuples, which MultiPL-E's Java prompts import, where Debian's libjavatuples-java puts it. */
export const JAVATUPLES_JAR = '/usr/share/java/javatuples.jar';

/**
 * Java 17 (javac, java). The proof: the harness's main reads the run's nonce from stdin and drains it before any
 * class of the program is initialised (the JVM initialises a class on first use), calls the program's main (the
 * tests), and prints the nonce after it returns.
 */
export function javaRunner(): Runner {
  const javac = findExecutable('javac');
  const java = findExecutable('java');
  if (!javac || !java) missing('java', !javac ? 'javac' : 'java');
  const version = versionOf(javac, ['-version'], /javac (\S+)/);
  const javacReal = realpathSync(javac);
  const javaReal = realpathSync(java);
  const classpath = ['.', JAVATUPLES_JAR].join(':');
  return {
    language: 'java',
    version: `java-${version}`,
    memoryKind: 'none', // the JVM reserves address space; -Xmx bounds the heap
    processes: 512,
    code: completionCode,
    program(problem, code) {
      const source = `${code}\n${problem.tests}\n`;
      // the class with main: MultiPL-E's `class Problem`, HumanEval-X's `public class Main`
      const main = /public\s+class\s+(\w+)/.exec(source)?.[1] ?? /class\s+(\w+)/.exec(source)?.[1] ?? 'Problem';
      const publicClass = /public\s+class\s+(\w+)/.exec(source)?.[1];
      const file = `${publicClass ?? main}.java`;
      const wrapper = `
class CodegaugeMain {
  public static void main(String[] args) throws Throwable {
    java.io.InputStream in = System.in;
    StringBuilder line = new StringBuilder();
    for (int c = in.read(); c >= 0 && c != '\\n'; c = in.read()) line.append((char) c);
    while (in.read() >= 0) { }
    System.setIn(new java.io.ByteArrayInputStream(new byte[0]));
    ${main}.main(args);
    System.out.println();
    System.out.println(line.toString().trim());
    System.out.flush();
  }
}
`;
      return {
        files: { [file]: source + wrapper },
        compile: [javacReal, '-J-Xmx512m', '-J-XX:+UseSerialGC', '-J-XX:TieredStopAtLevel=1', '-proc:none', '-encoding', 'UTF-8', '-nowarn', '-cp', classpath, file],
        run: [javaReal, '-Xmx__MEMORY__m', '-Xss8m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-ea', '-cp', classpath, 'CodegaugeMain'],
      };
    },
    classify(result, nonce, phase) {
      const v = fields(result);
      if (phase === 'compile') return compileVerdict(result, nonce);
      const base = baseVerdict(result, nonce);
      if (base) return base;
      if (/OutOfMemoryError/.test(result.stderr)) return { ...v, status: 'memory' };
      if (/AssertionError/.test(result.stderr)) return { ...v, status: 'failed' };
      const m = /Exception in thread "main" (\S+)/.exec(result.stderr);
      return { ...v, status: 'runtime_error', note: m?.[1] };
    },
  };
}

/**
 * A whole language's missing dependency, found before any sample runs (exit 2): MultiPL-E's Java prompts import
 * javatuples, and without its jar every sample would be a compile_error that says nothing of the cause.
 */
export function checkJavaProblems(problems: Problem[], jar = JAVATUPLES_JAR): void {
  const needs = problems.some((p) => p.language === 'java' && /\bimport\s+org\.javatuples\b/.test(p.prompt + p.tests));
  if (needs && !existsSync(jar)) {
    throw new UsageError(`these Java problems import org.javatuples, but ${jar} is missing; install it (apt-get install libjavatuples-java)`);
  }
}
