/**
 * The code blocks of README.md and docs/*.md, and what the docs tests do with them.
 *
 * The convention: every fenced code block says, in its info string (the words after the opening fence), what it is.
 *
 * - `sh`: shell commands meant to run on the bundled data. test/docs-examples.test.ts runs the block with bash
 *   (`set -euo pipefail`) in a working folder of its page (one temporary folder per page, shared by the page's
 *   blocks in order, so a block can read what an earlier one wrote). The folder looks like a clone of this
 *   repository: `data/`, `bench/`, `examples/`, `dist/`, `bin/` and `node_modules/` are links to this checkout,
 *   `scripts/` a copy. `npx codegauge ...` runs this checkout's `bin/codegauge.js`; any other `npx` or `npm` fails.
 *   The block must exit 0, or N with the word `exit=N`.
 * - `sh slow`: the same, for a block that takes more than a few seconds; test/docs-examples.full.test.ts runs it
 *   (`npm run test:full`), with every other runnable block of its page, in order. `npm test` runs a page's other
 *   blocks without it, so no fast block may need what a slow one writes.
 * - `ts`: a module that uses the library. It is transpiled (types dropped), written into `test-output/` inside this
 *   package, so that `import ... from 'codegauge'` is this checkout's build, and run with node; it must exit 0 and
 *   print nothing on stderr. `ts slow` and `exit=N` as for `sh`.
 * - `output`: what the runnable block before it (`sh` or `ts`, with only prose between) printed on stdout; the test
 *   compares it line by line (trailing spaces ignored). A line `...` stands for any number of lines, and `…` inside
 *   a line for any text within that line: the docs elide what depends on the machine (a toolchain's version, a
 *   duration) or what is too long to show. `output numbers-vary`: the numbers are not compared (each is read as `0`)
 *   nor the spacing, the words are: for output whose numbers depend on the machine, such as a random model run by
 *   llama.cpp, whose results differ with the thread count and the CPU.
 * - `synopsis`: a command's shape with placeholders (`--refs REFS [--refs REFS2 ...]`), not a command to run.
 * - `LANG no-run REASON` (e.g. `sh no-run needs a model server`): shown, not run, because it needs what the tests do not
 *   have: a model server, a real model, a GPU, the network, Python's reference implementations, a CI system, or it is
 *   the test suite itself. The reason is required. `output no-run REASON` is output shown without a command that runs.
 *
 * A block with no such word fails the test, so a new block cannot go untested by accident. Every `codegauge`
 * command in `sh` blocks (run or not) and in synopses must name a command and options that exist (checked against
 * the command definitions). The CLI reference between the cli-reference markers of docs/cli.md is generated from the
 * command definitions and checked by test/report.test.ts; its blocks are left alone here.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import ts from 'typescript';
import { REFERENCE_END, REFERENCE_START } from '../src/cli/reference.js';
import { ROOT } from './helpers.js';

export type BlockKind = 'sh' | 'ts' | 'output' | 'synopsis' | 'no-run' | 'generated';

export type Block = {
  /** path relative to the repository root */
  file: string;
  /** line of the opening fence, 1-based */
  line: number;
  info: string;
  kind: BlockKind | undefined;
  /** why the block is not valid under the convention, if it is not */
  problem?: string;
  slow: boolean;
  exit: number;
  numbersVary: boolean;
  body: string;
};

/** README.md and every page of docs/. */
export function docFiles(): string[] {
  const docs = existsSync(join(ROOT, 'docs')) ? readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort() : [];
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

const RUNNABLE = new Set(['sh', 'ts']);

function classify(info: string): Pick<Block, 'kind' | 'problem' | 'slow' | 'exit' | 'numbersVary'> {
  const words = info.split(/\s+/).filter(Boolean);
  const base = { slow: false, exit: 0, numbersVary: false };
  const noRun = words.indexOf('no-run');
  if (noRun >= 0) {
    if (noRun !== 1) return { ...base, kind: undefined, problem: `"no-run" must follow the language (\`sh no-run REASON\`)` };
    if (words.length < 3) return { ...base, kind: undefined, problem: 'a no-run block must say why (`sh no-run needs a model server`)' };
    return { ...base, kind: 'no-run' };
  }
  const [first, ...rest] = words;
  if (first === undefined) return { ...base, kind: undefined, problem: 'no info string: mark it sh, ts, output, synopsis, or LANG no-run REASON' };
  if (first === 'synopsis' && rest.length === 0) return { ...base, kind: 'synopsis' };
  if (first === 'output') {
    if (rest.every((w) => w === 'numbers-vary')) return { ...base, kind: 'output', numbersVary: rest.length > 0 };
    return { ...base, kind: undefined, problem: `unknown word in "${info}" (output takes numbers-vary)` };
  }
  if (RUNNABLE.has(first)) {
    const block = { ...base, kind: first as BlockKind };
    for (const w of rest) {
      if (w === 'slow') block.slow = true;
      else if (/^exit=\d+$/.test(w)) block.exit = Number(w.slice(5));
      else return { ...base, kind: undefined, problem: `unknown word "${w}" in "${info}" (${first} takes slow and exit=N)` };
    }
    return block;
  }
  return { ...base, kind: undefined, problem: `"${info}" is not a known mark: sh, ts, output, synopsis, or LANG no-run REASON` };
}

/** The fenced code blocks of one Markdown file. */
export function parseBlocks(file: string, text = readFileSync(join(ROOT, file), 'utf8')): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  let generated = false;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].includes(REFERENCE_START)) generated = true;
    if (lines[i].includes(REFERENCE_END)) generated = false;
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(lines[i]);
    if (!open) continue;
    const fence = open[1];
    const info = open[2].trim();
    let end = i + 1;
    while (end < lines.length && !new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`).test(lines[end])) end++;
    const body = lines.slice(i + 1, end).join('\n') + '\n';
    const kind = generated ? { kind: 'generated' as const, slow: false, exit: 0, numbersVary: false } : classify(info);
    blocks.push({ file, line: i + 1, info, body, ...kind });
    i = end;
  }
  return blocks;
}

/** Blocks that break the convention: unmarked, unknown words, or an `output` with no runnable block before it. */
export function conventionProblems(blocks: Block[]): string[] {
  const problems: string[] = [];
  blocks.forEach((b, i) => {
    if (b.problem) problems.push(`${b.file}:${b.line}: ${b.problem}`);
    if (b.kind === 'output' && !(i > 0 && blocks[i - 1].file === b.file && RUNNABLE.has(blocks[i - 1].kind ?? ''))) {
      problems.push(`${b.file}:${b.line}: an output block must follow the sh or ts block that prints it (else mark it output no-run REASON)`);
    }
  });
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// Commands named in the docs exist, with their options.

/** `codegauge X [Y]` → its help text, from the CLI reference generated from the command definitions. */
export function helpByCommand(reference: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const m of reference.matchAll(/### `codegauge ([^`]+)`\n\n```\n([\s\S]*?)```/g)) map.set(m[1], m[2]);
  return map;
}

/** Splits a shell command line into words, keeping quoted text together (enough for the docs' commands). */
function words(command: string): string[] {
  const out: string[] = [];
  for (const m of command.matchAll(/"(?:[^"\\]|\\.)*"|'[^']*'|\S+/g)) out.push(m[0]);
  return out;
}

/** The codegauge invocations of a block: each as the words after `codegauge`. */
export function codegaugeCalls(block: Block): string[][] {
  const text = block.body.replace(/\\\n/g, ' ');
  const lines = block.kind === 'synopsis' ? [text.replace(/\n/g, ' ')] : text.split('\n').map((l) => l.replace(/(^|\s)#.*$/, ''));
  const calls: string[][] = [];
  for (const line of lines) {
    // a synopsis is one command, whose `|` separates alternatives; in a shell line `|`, `&&`, `;` separate commands
    for (const part of block.kind === 'synopsis' ? [line] : line.split(/&&|\|\||;|\s\|\s|\$\(/)) {
      const w = words(part);
      const at = w.findIndex((x, k) => x === 'codegauge' && (w[k - 1] === 'npx' || block.kind === 'synopsis'));
      if (at >= 0) calls.push(w.slice(at + 1));
    }
  }
  return calls;
}

/** What is wrong with one call: an unknown command or option. */
export function callProblems(call: string[], help: Map<string, string>): string[] {
  const name = call[0]?.replace(/[[\]()]/g, '');
  if (!name) return ['codegauge with no command'];
  const sub = call[1] && help.has(`${name} ${call[1]}`) ? `${name} ${call[1]}` : undefined;
  const command = sub ?? name;
  const text = help.get(command);
  if (!text) return [`no command "codegauge ${command}"`];
  if (!sub && help.has(`${name} run`) && call.length > 1) return [`"codegauge ${name} ${call[1]}": no such subcommand`];
  const problems: string[] = [];
  for (const word of call.slice(sub ? 2 : 1)) {
    const option = /^[[(|]*(--[a-z][a-z0-9-]*)/.exec(word)?.[1];
    if (!option || option === '--help') continue;
    if (!new RegExp(`(^|[\\s,])${option}(?=[\\s,=]|$)`, 'm').test(text)) problems.push(`codegauge ${command}: no option ${option}`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// Links.

/** GitHub's anchor of a heading. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/^ {0,3}(`{3,}|~{3,})[\s\S]*?^ {0,3}\1\s*$/gm, '');
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative links of a Markdown file (outside code) whose file or anchor does not exist. */
export function brokenLinks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
    .replace(/^ {0,3}(`{3,}|~{3,})[\s\S]*?^ {0,3}\1\s*$/gm, '')
    .replace(/`[^`\n]*`/g, '');
  const problems: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1];
    if (/^[a-z]+:/.test(target)) continue;
    const [path, anchor] = target.split('#');
    const resolved = path ? join(dirname(file), path) : file;
    if (!existsSync(join(ROOT, resolved))) {
      problems.push(`${file}: link to ${target}: no ${resolved}`);
      continue;
    }
    if (anchor && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) problems.push(`${file}: link to ${target}: no heading #${anchor} in ${resolved}`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// Running blocks.

/** A working folder that looks like a clone of this repository, with `npx codegauge` bound to this checkout. */
export function pageFolder(file: string): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), `codegauge-docs-${basename(file, '.md')}-`));
  for (const name of ['data', 'bench', 'examples', 'dist', 'bin', 'node_modules']) symlinkSync(join(ROOT, name), join(dir, name));
  // a copy: scripts compare import.meta.url with their argv[1], which a link would not match
  cpSync(join(ROOT, 'scripts'), join(dir, 'scripts'), { recursive: true });
  const shims = join(dir, '.shims');
  mkdirSync(shims);
  writeFileSync(
    join(shims, 'npx'),
    `#!/bin/sh\nif [ "$1" = codegauge ]; then shift; exec "${process.execPath}" "${join(ROOT, 'bin', 'codegauge.js')}" "$@"; fi\necho "docs test: only npx codegauge runs here" >&2\nexit 127\n`,
    { mode: 0o755 },
  );
  writeFileSync(join(shims, 'npm'), '#!/bin/sh\necho "docs test: npm does not run here; mark the block no-run" >&2\nexit 127\n', { mode: 0o755 });
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${shims}:${process.env.PATH ?? ''}` };
  delete env.GITHUB_STEP_SUMMARY;
  delete env.OPENAI_BASE_URL;
  delete env.OPENAI_API_KEY;
  return { dir, env };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** Runs one sh or ts block in its page's folder; returns what it printed. Throws, naming the block, when it fails. */
export async function runBlock(block: Block, dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const where = `${block.file}:${block.line}`;
  let r: { code: number | null; out: string; err: string };
  if (block.kind === 'ts') {
    const js = ts.transpileModule(block.body, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    const folder = join(ROOT, 'test-output', 'docs-examples'); // inside the package, so `codegauge` resolves to itself
    mkdirSync(folder, { recursive: true });
    const path = join(folder, `${block.file.replace(/[/.]/g, '_')}-${block.line}.mjs`);
    writeFileSync(path, js);
    r = await run(process.execPath, [path], dir, env);
    if (r.err !== '') throw new Error(`${where}: the ts block printed on stderr:\n${r.err}`);
  } else {
    r = await run('bash', ['-c', `set -euo pipefail\n${block.body}`], dir, env);
  }
  if (r.code !== block.exit) throw new Error(`${where}: exit ${r.code}, expected ${block.exit}\n--- stdout\n${r.out}\n--- stderr\n${r.err}`);
  return r.out;
}

function normalise(text: string, numbersVary: boolean): string[] {
  let lines = text.split('\n').map((l) => l.trimEnd());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (numbersVary) lines = lines.map((l) => l.replace(/\d+(?:\.\d+)?(?:e[+-]?\d+)?/g, '0').replace(/\s+/g, ' '));
  return lines;
}

function lineMatches(pattern: string, actual: string): boolean {
  if (!pattern.includes('…')) return pattern === actual;
  const re = new RegExp(`^${pattern.split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(actual);
}

/** Does `actual` (what a block printed) match the `output` block `expected`? (`...` lines, `…` in a line) */
export function outputMatches(expected: string, actual: string, numbersVary: boolean): boolean {
  const p = normalise(expected, numbersVary);
  const a = normalise(actual, numbersVary);
  const memo = new Map<string, boolean>();
  const match = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    if (memo.has(key)) return memo.get(key)!;
    let ok: boolean;
    if (i === p.length) ok = j === a.length;
    else if (p[i] === '...') ok = match(i + 1, j) || (j < a.length && match(i, j + 1));
    else ok = j < a.length && lineMatches(p[i], a[j]) && match(i + 1, j + 1);
    memo.set(key, ok);
    return ok;
  };
  return match(0, 0);
}

/**
 * Runs a page's runnable blocks in order (`slow` ones only when `withSlow`), checking each `output` block against
 * what its block printed. Returns the problems found, one per block.
 */
export async function runPage(file: string, withSlow: boolean): Promise<string[]> {
  const blocks = parseBlocks(file);
  const { dir, env } = pageFolder(file);
  const problems: string[] = [];
  try {
    let printed: string | undefined;
    for (const block of blocks) {
      if (block.kind === 'output') {
        if (printed !== undefined && !outputMatches(block.body, printed, block.numbersVary)) {
          problems.push(`${block.file}:${block.line}: the output shown differs from what the block printed:\n--- shown\n${block.body}--- printed\n${printed}`);
        }
        printed = undefined;
        continue;
      }
      printed = undefined;
      if (!RUNNABLE.has(block.kind ?? '') || (block.slow && !withSlow)) continue;
      try {
        const t0 = Date.now();
        printed = await runBlock(block, dir, env);
        if (process.env.CODEGAUGE_DOCS_TIMING) console.log(`${block.file}:${block.line} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      } catch (e) {
        problems.push((e as Error).message);
        break; // later blocks of the page may need what this one was to write
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return problems;
}
