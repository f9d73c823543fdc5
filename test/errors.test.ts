import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../src/cli/main.js';
import { InputError, OutputError, ServerError } from '../src/errors.js';
import { lockOutput } from '../src/io/lock.js';
import { startFakeLlmServer, type FakeServer } from './fixtures/fake-llm-server.js';
import { cli, ROOT } from './helpers.js';

/**
 * The error contract, command by command: every bad input, bad option and unwritable output is one line naming
 * what is wrong, exit 2; a server failure exit 1; never a stack trace.
 */
let dir: string;
let server: FakeServer;
const path = (name: string) => join(dir, name);
const put = (name: string, content: string | Buffer) => {
  writeFileSync(path(name), content);
  return path(name);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-errors-'));
  put('refs.txt', 'return a + b\nprint(x)\n');
  put('hyps.txt', 'return a+b\nprint(y)\n');
  put('short.txt', 'return a+b\n');
  put('refs.py.jsonl', '"def f(a):\\n    return a"\n"print(1)"\n');
  put('hyps.py.jsonl', '"def f(a):\\n    return a + 1"\n"print(2)"\n');
  put('bad.jsonl', '"fine"\n{not json\n');
  put('lines.jsonl', `"a"\n${JSON.stringify('x\n'.repeat(40000))}\n`); // 40,000 x 40,000 sentence pairs on line 2
  put('long-a.txt', `${Array.from({ length: 20000 }, (_, i) => `t${(i * 7) % 5}`).join(' ')}\n`);
  put('long-b.txt', `${Array.from({ length: 20000 }, (_, i) => `t${(i * 3) % 5}`).join(' ')}\n`);
  put('latin1.txt', Buffer.from([0x61, 0x0a, 0xe9, 0x0a]));
  put('table.jsonl', '{"grade": 1, "m": 0.5, "item": "a", "sys": "s", "w": "x"}\n{"grade": 2, "m": 0.7, "item": "b", "sys": "s", "w": "y"}\n{"grade": 3, "m": 0.9, "item": "c", "sys": "s", "w": "x"}\n');
  put('dataset.json', JSON.stringify([{ question_id: 1, requirement: 'The user shall log in.', implementation_layer: 'frontend', programming_language: 'react' }]));
  put('dataset-bad.json', JSON.stringify([{ question_id: 1, requirement: 'ok' }, { question_id: 2, requirement: 42 }]));
  put('pairs.jsonl', '{"input_requirement": "a", "reverse_generated_requirement": "b"}\n');
  put('req.txt', 'The user shall log in.\n');
  put('app.py', 'def login():\n    pass\n');
  put('a-file', 'not a folder\n');
  put('openai.yaml', `out: ${JSON.stringify(path('run-out'))}\ndata:\n  refs: refs.py.jsonl\n  lang: python\n  systems:\n    s: hyps.py.jsonl\nmodels:\n  judge: {model: openai:m}\njudges:\n  - {method: ice, model: judge}\n`);
  mkdirSync(path('a-folder'));
  server = await startFakeLlmServer({ reply: () => '{"grade": 4}' });
});

afterAll(async () => {
  await server?.close();
});

interface Case {
  name: string;
  args: () => string[];
  code: number;
  words: (string | RegExp)[];
  env?: Record<string, string>;
}

const inFolder = () => path('a-file'); // a file where a folder is expected: cannot be created or written
const llm = () => ['--base-url', server.url, '--cache-file', path('cache.sqlite')];

const CASES: Case[] = [
  // score
  { name: 'score without --refs', args: () => ['score', '--hyps', path('hyps.txt'), '--metric', 'bleu'], code: 2, words: ["required option '--refs <file>'"] },
  { name: 'score with an unknown metric', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'blue'], code: 2, words: ['unknown metric "blue"'] },
  { name: 'score with an unknown metric key', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'bleu:tokenize=13a'], code: 2, words: ['unknown key "tokenize"'] },
  { name: 'score --confidence-n 2e9', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'bleu', '--confidence', '--confidence-n', '2e9'], code: 2, words: ['--confidence-n must be an integer from 1 to 1000000'] },
  { name: 'score --confidence-n abc', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'bleu', '--confidence', '--confidence-n', 'abc'], code: 2, words: ['"abc"'] },
  { name: 'score --seed without --confidence', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'bleu', '--seed', '7'], code: 2, words: ['--seed does nothing without --confidence'] },
  { name: 'score --format xml', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'bleu', '--format', 'xml'], code: 2, words: ['--format', 'table, json'] },
  { name: 'score with a missing file', args: () => ['score', '--refs', path('nope.txt'), '--hyps', path('hyps.txt'), '--metric', 'bleu'], code: 2, words: ['nope.txt', 'file not found'] },
  { name: 'score with a folder as input', args: () => ['score', '--refs', path('a-folder'), '--hyps', path('hyps.txt'), '--metric', 'bleu'], code: 2, words: ['a-folder', 'is a folder'] },
  { name: 'score with files of different lengths', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('short.txt'), '--metric', 'bleu'], code: 2, words: ['differ in length', 'short.txt has 1 segments', 'refs.txt has 2'] },
  { name: 'score with invalid JSON on line 2', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('bad.jsonl'), '--metric', 'bleu'], code: 2, words: ['bad.jsonl:2: invalid JSON'] },
  { name: 'score with invalid UTF-8 on line 2', args: () => ['score', '--refs', path('latin1.txt'), '--hyps', path('hyps.txt'), '--metric', 'bleu'], code: 2, words: ['latin1.txt:2: invalid UTF-8'] },
  { name: 'score with an unknown --lang', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'codebleu', '--lang', 'cobol'], code: 2, words: ['invalid language "cobol"'] },
  { name: 'score past ROUGE-Lsum\'s work bound', args: () => ['score', '--refs', path('lines.jsonl'), '--hyps', path('lines.jsonl'), '--metric', 'rougeLsum'], code: 2, words: ['segment 2 (line 2 of the input files): ROUGE-Lsum: the union LCS of 40000 x 40000 sentences', 'exceeds the bound of 2^34 steps'] },
  { name: 'score past a lowered --max-work', args: () => ['score', '--refs', path('long-a.txt'), '--hyps', path('long-b.txt'), '--metric', 'rougeL', '--max-work', '2^20'], code: 2, words: ['segment 1 (line 1 of the input files): ROUGE-L: an LCS of', 'tokens exceeds the bound of 2^20 word steps (split such long lines, or raise it with --max-work)'] },
  { name: 'score --max-work abc', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'rougeL', '--max-work', 'abc'], code: 2, words: ['--max-work must be a whole number of steps'] },
  { name: 'score with an unknown option', args: () => ['score', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'bleu', '--metrics', 'x'], code: 2, words: ["unknown option '--metrics'"] },
  // compare
  { name: 'compare --samples 1e11', args: () => ['compare', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--hyps', path('refs.txt'), '--metric', 'bleu', '--paired-bs', '--samples', '1e11'], code: 2, words: ['--samples must be an integer from 1 to 1000000'] },
  { name: 'compare --samples abc', args: () => ['compare', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--hyps', path('refs.txt'), '--metric', 'bleu', '--paired-bs', '--samples', 'abc'], code: 2, words: ['--samples'] },
  { name: 'compare without a test', args: () => ['compare', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--hyps', path('refs.txt'), '--metric', 'bleu'], code: 2, words: ['choose one test'] },
  { name: 'compare with one system', args: () => ['compare', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--metric', 'bleu', '--paired-ar'], code: 2, words: ['needs a baseline and at least one system'] },
  { name: 'compare --seed -1', args: () => ['compare', '--refs', path('refs.txt'), '--hyps', path('hyps.txt'), '--hyps', path('refs.txt'), '--metric', 'bleu', '--paired-bs', '--seed', '-1'], code: 2, words: ['--seed must be an integer from 0'] },
  // meta
  { name: 'meta --bins without --model-pairs', args: () => ['meta', '--input', path('table.jsonl'), '--truth', 'grade', '--metric-column', 'm', '--bins', '1,2'], code: 2, words: ['--bins does nothing without --model-pairs'] },
  { name: 'meta --system without --model-pairs', args: () => ['meta', '--input', path('table.jsonl'), '--truth', 'grade', '--metric-column', 'm', '--system', 'sys'], code: 2, words: ['--system does nothing without --model-pairs'] },
  { name: 'meta --bins not increasing', args: () => ['meta', '--input', path('table.jsonl'), '--truth', 'grade', '--metric-column', 'm', '--model-pairs', '--group', 'item', '--system', 'sys', '--bins', '5,2'], code: 2, words: ['--bins must be increasing positive numbers'] },
  { name: 'meta with an unknown column', args: () => ['meta', '--input', path('table.jsonl'), '--truth', 'grades', '--metric-column', 'm'], code: 2, words: ['table.jsonl', 'no column "grades"'] },
  { name: 'meta --samples abc', args: () => ['meta', '--input', path('table.jsonl'), '--truth', 'grade', '--metric-column', 'm', '--samples', 'abc'], code: 2, words: ['--samples'] },
  { name: 'meta --model-pairs without --group', args: () => ['meta', '--input', path('table.jsonl'), '--truth', 'grade', '--metric-column', 'm', '--model-pairs', '--system', 'sys'], code: 2, words: ['--model-pairs needs --group'] },
  // aggregate
  { name: 'aggregate --method median', args: () => ['aggregate', '--input', path('table.jsonl'), '--task', 'item', '--worker', 'w', '--label', 'grade', '--method', 'median'], code: 2, words: ['--method', 'mmsr, mean'] },
  { name: 'aggregate with an unknown label column', args: () => ['aggregate', '--input', path('table.jsonl'), '--task', 'item', '--worker', 'w', '--label', 'score'], code: 2, words: ['no column "score"'] },
  // sbc run
  { name: 'sbc run --limit abc', args: () => ['sbc', 'run', '--dataset', path('dataset.json'), '--model', 'openai:m', '--out', path('sbc-out'), '--limit', 'abc', ...llm()], code: 2, words: ['--limit must be an integer'] },
  { name: 'sbc run --iterations 0', args: () => ['sbc', 'run', '--dataset', path('dataset.json'), '--model', 'openai:m', '--out', path('sbc-out'), '--iterations', '0', ...llm()], code: 2, words: ['--iterations must be an integer from 1'] },
  { name: 'sbc run --base-url not-a-url', args: () => ['sbc', 'run', '--dataset', path('dataset.json'), '--model', 'openai:m', '--out', path('sbc-out'), '--base-url', 'not-a-url'], code: 2, words: ['--base-url must be an http(s) URL', '"not-a-url"'] },
  { name: 'sbc run with a wrong dataset field', args: () => ['sbc', 'run', '--dataset', path('dataset-bad.json'), '--model', 'openai:m', '--out', path('sbc-out'), ...llm()], code: 2, words: ['dataset-bad.json', 'item 1, field "requirement"'] },
  { name: 'sbc run with an unknown model kind', args: () => ['sbc', 'run', '--dataset', path('dataset.json'), '--model', 'gpt4', '--out', path('sbc-out'), ...llm()], code: 2, words: ['invalid model "gpt4"'] },
  {
    name: 'sbc run with --embed local and no model on this machine',
    args: () => ['sbc', 'run', '--dataset', path('dataset.json'), '--model', 'openai:m', '--out', path('sbc-embed'), ...llm()],
    env: { HF_ENDPOINT: 'http://127.0.0.1:9', CODEGAUGE_MODEL_CACHE: join(tmpdir(), 'codegauge-no-models') },
    code: 2,
    words: ['cannot load the local embedding model', '--embed-model-dir', '--embed ollama:MODEL', '--embed openai:MODEL'],
  },
  { name: 'sbc run --out where a file is', args: () => ['sbc', 'run', '--dataset', path('dataset.json'), '--model', 'openai:m', '--out', join(inFolder(), 'out'), ...llm(), '--embed', 'openai:e'], code: 2, words: ['a-file', 'cannot write'] },
  { name: 'sbc run --cache-file where a file is', args: () => ['sbc', 'run', '--dataset', path('dataset.json'), '--model', 'openai:m', '--out', path('sbc-cache'), '--base-url', server.url, '--cache-file', join(inFolder(), 'c.sqlite'), '--embed', 'openai:e'], code: 2, words: ['a-file', 'cannot write'] },
  // sbc score
  { name: 'sbc score with a missing input', args: () => ['sbc', 'score', '--input', path('pairs-typo.jsonl'), '--out', path('score-out'), ...llm()], code: 2, words: ['--input: file not found', 'pairs-typo.jsonl'] },
  { name: 'sbc score --out where a file is', args: () => ['sbc', 'score', '--input', path('pairs.jsonl'), '--out', join(inFolder(), 'x'), ...llm(), '--embed', 'openai:e'], code: 2, words: ['a-file', 'cannot write'] },
  // sbc check
  { name: 'sbc check --requirement with a typo', args: () => ['sbc', 'check', '--requirement', path('req_typo.txt'), '--code', path('app.py'), ...llm()], code: 2, words: ['--requirement: file not found', 'req_typo.txt'] },
  { name: 'sbc check --min-score abc', args: () => ['sbc', 'check', '--requirement', path('req.txt'), '--code', path('app.py'), '--min-score', 'abc', ...llm()], code: 2, words: ['--min-score must be a number from 0 to 1'] },
  { name: 'sbc check --format xml', args: () => ['sbc', 'check', '--requirement', path('req.txt'), '--code', path('app.py'), '--format', 'xml', ...llm()], code: 2, words: ['--format', 'table, json'] },
  { name: 'sbc check without a requirement', args: () => ['sbc', 'check', '--code', path('app.py'), ...llm()], code: 2, words: ['--requirement FILE or --requirement-text TEXT'] },
  { name: 'sbc check with a missing --code', args: () => ['sbc', 'check', '--requirement', path('req.txt'), '--code', path('app_typo.py'), ...llm()], code: 2, words: ['--code: file not found'] },
  { name: 'sbc check --embed-model-dir without a model', args: () => ['sbc', 'check', '--requirement', path('req.txt'), '--code', path('app.py'), '--embed-model-dir', path('a-folder'), ...llm()], code: 2, words: ['--embed-model-dir', 'no config.json'] },
  // judge
  { name: 'judge --method bogus', args: () => ['judge', '--method', 'bogus', '--model', 'openai:m', '--refs', path('refs.py.jsonl'), '--hyps', path('hyps.py.jsonl'), ...llm()], code: 2, words: ['--method', 'dsa, dsa-simple, ice'] },
  { name: 'judge --max-depth 0', args: () => ['judge', '--method', 'dsa', '--model', 'openai:m', '--refs', path('refs.py.jsonl'), '--hyps', path('hyps.py.jsonl'), '--max-depth', '0', ...llm()], code: 2, words: ['--max-depth must be an integer from 1'] },
  { name: 'judge --repeat abc', args: () => ['judge', '--method', 'ice', '--model', 'openai:m', '--refs', path('refs.py.jsonl'), '--hyps', path('hyps.py.jsonl'), '--repeat', 'abc', ...llm()], code: 2, words: ['--repeat'] },
  { name: 'judge with an invalid model', args: () => ['judge', '--method', 'ice', '--model', 'm', '--refs', path('refs.py.jsonl'), '--hyps', path('hyps.py.jsonl'), ...llm()], code: 2, words: ['invalid model "m"'] },
  { name: 'judge --explain where a file is', args: () => ['judge', '--method', 'ice', '--model', 'openai:m', '--refs', path('refs.py.jsonl'), '--hyps', path('hyps.py.jsonl'), '--explain', join(inFolder(), 'explain'), ...llm()], code: 2, words: ['a-file', 'cannot write'] },
  { name: 'judge --cache-file where a file is', args: () => ['judge', '--method', 'ice', '--model', 'openai:m', '--refs', path('refs.py.jsonl'), '--hyps', path('hyps.py.jsonl'), '--base-url', server.url, '--cache-file', join(inFolder(), 'c.sqlite')], code: 2, words: ['a-file', 'cannot write', '--cache-file'] },
  { name: 'judge against a server that is down', args: () => ['judge', '--method', 'ice', '--model', 'openai:m', '--refs', path('refs.py.jsonl'), '--hyps', path('hyps.py.jsonl'), '--base-url', 'http://127.0.0.1:9/v1', '--retries', '0', '--cache-file', path('down.sqlite')], code: 1, words: ['the judge failed on 2 sample(s)'] },
  // eval
  { name: 'eval with an openai: model and no server', args: () => ['eval', '--benchmark', 'humaneval', '--model', 'openai:m', '--out', path('eval-out')], env: { OPENAI_BASE_URL: '' }, code: 2, words: ['--model openai:m: an openai: model needs an OpenAI-compatible server', '--base-url URL or set OPENAI_BASE_URL'] },
  { name: 'eval --k above --n', args: () => ['eval', '--benchmark', 'humaneval', '--model', 'openai:m', '--n', '2', '--k', '1,5', '--out', path('eval-out'), ...llm()], code: 2, words: ['--k 5: pass@k needs at least k samples per problem, and --n is 2'] },
  { name: 'run with an openai: judge and no server', args: () => ['run', '--config', path('openai.yaml'), '--store', path('run.sqlite')], env: { OPENAI_BASE_URL: '' }, code: 2, words: ['openai.yaml', 'judges.0.model', 'openai:m: an openai: model needs an OpenAI-compatible server'] },
  // report and demo
  { name: 'report on an unrecognised file', args: () => ['report', path('refs.txt'), '--out', path('r.html')], code: 2, words: ['refs.txt', 'unrecognised'] },
  { name: 'report on a missing file', args: () => ['report', path('nothing.json'), '--out', path('r.html')], code: 2, words: ['nothing.json', 'file not found'] },
  { name: 'report --out on a folder', args: () => ['report', path('sbc-report.jsonl'), '--out', path('a-folder')], code: 2, words: ['a-folder', 'cannot write', 'is a folder'] },
  { name: 'report --out inside a file', args: () => ['report', path('sbc-report.jsonl'), '--out', join(inFolder(), 'r.html')], code: 2, words: ['a-file', 'cannot write'] },
  { name: 'demo --out where a file is', args: () => ['demo', '--out', inFolder()], code: 2, words: ['a-file', 'cannot write'] },
  { name: 'demo --format xml', args: () => ['demo', '--out', path('demo'), '--format', 'xml'], code: 2, words: ['--format', 'table, json'] },
  // the program itself
  { name: 'an unknown command', args: () => ['scroe'], code: 2, words: ["codegauge: error: unknown command 'scroe' (did you mean score?)"] },
  { name: 'an option value its parser refuses, in the one style', args: () => ['judge', '--method', 'ice', '--model', 'openai:m', '--refs', path('refs.py.jsonl'), '--hyps', path('hyps.py.jsonl'), '--timeout', '-1'], code: 2, words: [/^codegauge: error: --timeout must be a number from 0\.001 to 86400, got "-1"\n$/] },
  { name: 'a choice commander refuses, in the one style', args: () => ['eval', '--benchmark', 'humaneval', '--model', 'openai:m', '--out', path('x'), '--sandbox', 'docker'], code: 2, words: [/^codegauge: error: --sandbox must be one of auto, bwrap, process, pyodide, got "docker"\n$/] },
];

describe('the error contract: one line, the right exit code, no stack trace', () => {
  beforeAll(() => {
    put('sbc-report.jsonl', '{"input_requirement": "a", "reverse_generated_requirement": "b", "final_accuracy_score": 0.5}\n');
  });
  it('covers at least 40 cases across every command', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    const commands = new Set(CASES.map((c) => c.args()[0]));
    for (const command of ['score', 'compare', 'meta', 'aggregate', 'sbc', 'judge', 'report', 'demo']) expect(commands).toContain(command);
  });
  for (const c of CASES) {
    it(c.name, async () => {
      const saved = { ...process.env };
      Object.assign(process.env, c.env ?? {});
      try {
        const r = await cli(...c.args());
        expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
        expect(r.err).not.toContain('internal error');
        for (const w of c.words) expect(r.err).toMatch(typeof w === 'string' ? new RegExp(w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : w);
        expect(r.code, r.err).toBe(c.code);
        // One style: commander's own usage errors too read `codegauge: error: ...`, on one line.
        expect(r.err).not.toMatch(/^error:/m);
        if (c.code === 2) expect(r.err.trim().split('\n').filter((l) => l.startsWith('codegauge: error')).length).toBe(1);
      } finally {
        process.env = saved;
      }
    });
  }
});

describe('exit codes of the library errors and of bugs', () => {
  const io = () => {
    let err = '';
    return { io: { out: () => {}, err: (s: string) => void (err += s) }, text: () => err };
  };
  it('maps input, output and server errors, and reports a bug as one with its stack only behind --debug', () => {
    const a = io();
    expect(exitCodeOf(new InputError('bad', 'f.jsonl', 3), a.io, false)).toBe(2);
    expect(a.text()).toBe('codegauge: error: f.jsonl:3: bad\n');
    const b = io();
    expect(exitCodeOf(new OutputError('/x/y', 'permission denied'), b.io, false)).toBe(2);
    const c = io();
    expect(exitCodeOf(new ServerError('model server said 500'), c.io, false)).toBe(1);
    const d = io();
    expect(exitCodeOf(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES', path: '/root/x' }), d.io, false)).toBe(2);
    expect(d.text()).toBe('codegauge: error: /root/x: permission denied\n');
    const bug = new TypeError("Cannot read properties of undefined (reading 'x')");
    const e = io();
    expect(exitCodeOf(bug, e.io, false)).toBe(1);
    expect(e.text()).toContain('internal error');
    expect(e.text()).toContain('--debug');
    expect(e.text()).not.toMatch(/\n\s+at /);
    const f = io();
    exitCodeOf(bug, f.io, true);
    expect(f.text()).toMatch(/\n\s+at /);
  });
});

describe('output locks', () => {
  it('refuses a folder another live process is writing, and takes over a lock left by a dead one', () => {
    const out = path('locked');
    mkdirSync(out, { recursive: true });
    const sleeper = spawn('sleep', ['30']);
    try {
      writeFileSync(join(out, '.codegauge.lock'), String(sleeper.pid));
      expect(() => lockOutput(out)).toThrow(/being written by another codegauge process \(pid \d+\)/);
    } finally {
      sleeper.kill();
    }
    writeFileSync(join(out, '.codegauge.lock'), '2147483646'); // no such process
    const release = lockOutput(out);
    expect(existsSync(join(out, '.codegauge.lock'))).toBe(true);
    release();
    expect(existsSync(join(out, '.codegauge.lock'))).toBe(false);
  });

  it('sbc run on a folder in use stops with a clear message before any request', async () => {
    const out = path('busy');
    mkdirSync(out, { recursive: true });
    const sleeper = spawn('sleep', ['30']);
    try {
      writeFileSync(join(out, '.codegauge.lock'), String(sleeper.pid));
      const before = server.requests.length;
      const r = await cli('sbc', 'run', '--dataset', path('dataset.json'), '--model', 'openai:m', '--out', out, ...llm(), '--embed', 'openai:e');
      expect(r.code).toBe(2);
      expect(r.err).toContain('being written by another codegauge process');
      expect(server.requests.length).toBe(before);
    } finally {
      sleeper.kill();
    }
  });
});

describe('the launcher', () => {
  const bin = join(ROOT, 'bin', 'codegauge.js');
  const built = existsSync(join(ROOT, 'dist', 'cli', 'main.js'));
  it.skipIf(!built)('leaves quietly with exit 0 when the reader closes the pipe early', () => {
    const lines = Array.from({ length: 20000 }, (_, i) => `return value_${i} + ${i}`).join('\n') + '\n';
    const refs = put('pipe-refs.txt', lines);
    const r = spawnSync('bash', ['-c', `node "${bin}" score --refs "${refs}" --hyps "${refs}" --metric bleu --segments --format json | head -c 10 >/dev/null; echo "exit:\${PIPESTATUS[0]}"`], { encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('exit:0');
    expect(r.stderr).toBe('');
  });
  it.skipIf(!built)('prints help with exit 0', () => {
    const r = spawnSync('node', [bin, 'score', '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--metric <spec>');
  });
});

// Read-only folders do not stop root, so the permission case is only meaningful for other users.
describe.skipIf(process.getuid?.() === 0)('permissions', () => {
  it('an unwritable report folder is a usage error naming it', async () => {
    const locked = path('ro');
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    const r = await cli('report', path('sbc-report.jsonl'), '--out', join(locked, 'r.html'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('permission denied');
  });
});
