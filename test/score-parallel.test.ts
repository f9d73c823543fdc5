import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scoreFiles } from '../src/api/score.js';
import { InputError } from '../src/errors.js';
import { parallelSegments, readSegmentFile, segmentWindows } from '../src/io/segments.js';

/**
 * Worker threads change nothing but speed: the same scores, segment scores, levels and bootstrap intervals, and the
 * same input error (the first in input order, naming the file and line) whichever thread meets it.
 */
describe('score on worker threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codegauge-parallel-'));
  const n = 1300;
  const refs = Array.from({ length: n }, (_, i) => (i % 7 === 0 ? ['def f(a):\n    return a + 1', 'def f(b):\n    return b+1'] : [`def g${i % 13}(x):\n    y = x * ${i % 5}\n    return y`]));
  const hyps = Array.from({ length: n }, (_, i) => `def g${i % 11}(x):\n    y = x * ${i % 3}\n    return y + ${i}`);
  const write = (name: string, lines: string[], end = '\n') => {
    const path = join(dir, name);
    writeFileSync(path, lines.join('\n') + end);
    return path;
  };
  const refPath = write('refs.py.jsonl', refs.map((r) => JSON.stringify(r)));
  const hypPath = write('hyps.py.jsonl', hyps.map((h) => JSON.stringify(h)));
  // Small windows (a few hundred bytes of the reference file each), so that even this input is shared out.
  const threaded = { parallelMinBytes: 0, windowBytes: 2000 };

  /** The error of a run (null when it succeeds), as the CLI would print it. */
  const failure = (run: Promise<unknown>) =>
    run.then(
      () => null,
      (e: Error) => ({ kind: e instanceof InputError ? 'input' : 'other', message: e.message, line: (e as InputError).line, file: (e as InputError).file }),
    );

  it('gives results identical to one thread, with segments and confidence intervals', async () => {
    const common = { refPaths: [refPath], hypPaths: [hypPath, hypPath], systems: ['a', 'b'], specs: ['bleu', 'chrf', 'rougeL:tok=code', 'ruby:lang=python'], segments: true, confidence: { samples: 200, seed: 7 }, ...threaded };
    const single = await scoreFiles({ ...common, workers: 1 });
    expect(single.systems[0].scores[3].segment_details!.length).toBe(n);
    expect(single.systems[0].scores[0].signature).toContain('nrefs:var');
    // Main thread alone on its first window (the workers take the rest), then free to take what it gets to first.
    for (const [workers, mainWindows] of [[2, 1], [3, 1], [2, undefined], [3, undefined]] as const) {
      expect(await scoreFiles({ ...common, workers, mainWindows })).toEqual(single);
    }
  });

  it('gives identical results for lines of very uneven length, several reference files, CRLF and no final newline', async () => {
    // Lines from empty to ~20 kB: some windows hold no line start at all, others one long line.
    const text = (i: number) => (i % 97 === 0 ? 'x = 1\n'.repeat(3000 + i) : i % 5 === 0 ? '' : `return ${'a + '.repeat(i % 40)}${i}`);
    const m = 600;
    const r1 = write('uneven-r1.jsonl', Array.from({ length: m }, (_, i) => JSON.stringify(text(i))));
    const r2 = write('uneven-r2.jsonl', Array.from({ length: m }, (_, i) => JSON.stringify(text(i + 1))), '');
    const h = write('uneven-h.txt', Array.from({ length: m }, (_, i) => `return ${i}  + a\r`));
    const common = { refPaths: [r1, r2], hypPaths: [h], systems: ['h'], specs: ['bleu', 'chrf'], segments: true, ...threaded, windowBytes: 3000 };
    const single = await scoreFiles({ ...common, workers: 1 });
    expect(single.systems[0].scores[0].segments!.length).toBe(m);
    for (const [workers, mainWindows] of [[2, 1], [3, 2], [3, undefined]] as const) {
      expect(await scoreFiles({ ...common, workers, mainWindows })).toEqual(single);
    }
  });

  it('reports a bad line found by a worker as the input error it is, naming its line', async () => {
    const bad = write('bad.jsonl', hyps.map((h, i) => (i === 900 ? '{oops' : JSON.stringify(h))));
    const run = scoreFiles({ refPaths: [refPath], hypPaths: [bad], systems: ['bad'], specs: ['bleu'], workers: 2, ...threaded, mainWindows: 1 });
    await expect(run).rejects.toBeInstanceOf(InputError);
    await expect(run).rejects.toThrow(/bad\.jsonl:901: invalid JSON/);
  });

  // Each case: the error a single thread reports, whichever thread meets it (and whatever the others met after it).
  const cases: [string, () => { refPaths: string[]; hypPaths: string[] }][] = [
    ['two bad lines in windows of different threads: the first', () => ({ refPaths: [refPath], hypPaths: [write('bad2.jsonl', hyps.map((h, i) => (i === 700 || i === 1250 ? '"unterminated' : JSON.stringify(h))))] })],
    ['a bad line in the first window and one later', () => ({ refPaths: [refPath], hypPaths: [write('bad3.jsonl', hyps.map((h, i) => (i === 3 || i === 1000 ? '42' : JSON.stringify(h))))] })],
    ['invalid UTF-8 in the last window', () => ({ refPaths: [refPath], hypPaths: [join(dir, 'utf8.jsonl')] })],
    ['a hypothesis file one line short', () => ({ refPaths: [refPath], hypPaths: [write('short1.jsonl', hyps.slice(0, n - 1).map((h) => JSON.stringify(h)))] })],
    ['a hypothesis file that ends in the middle', () => ({ refPaths: [refPath], hypPaths: [write('short-mid.jsonl', hyps.slice(0, 777).map((h) => JSON.stringify(h)))] })],
    ['a hypothesis file that ends in the middle without a final newline', () => ({ refPaths: [refPath], hypPaths: [write('short-mid-nonl.jsonl', hyps.slice(0, 777).map((h) => JSON.stringify(h)), '')] })],
    ['a hypothesis file that ends in the middle, before a bad line of the references', () => ({ refPaths: [write('refs-bad-late.jsonl', refs.map((r, i) => (i === 1200 ? '[' : JSON.stringify(r))))], hypPaths: [write('short-mid2.jsonl', hyps.slice(0, 500).map((h) => JSON.stringify(h)))] })],
    ['a hypothesis file longer than the references', () => ({ refPaths: [refPath], hypPaths: [write('long.jsonl', [...hyps, 'a', 'b'].map((h) => JSON.stringify(h)))] })],
    ['a second reference file that ends in the middle', () => ({ refPaths: [refPath, write('refs-short.jsonl', refs.slice(0, 650).map((r) => JSON.stringify(r)))], hypPaths: [hypPath] })],
    ['an empty hypothesis file', () => ({ refPaths: [refPath], hypPaths: [write('empty.jsonl', [], '')] })],
    ['an empty line in the last window', () => ({ refPaths: [refPath], hypPaths: [write('blank.jsonl', hyps.map((h, i) => (i === n - 2 ? '' : JSON.stringify(h))))] })],
  ];
  writeFileSync(join(dir, 'utf8.jsonl'), Buffer.concat([Buffer.from(hyps.slice(0, 1290).map((h) => JSON.stringify(h)).join('\n') + '\n'), Buffer.from([0x22, 0xff, 0x22, 0x0a]), Buffer.from(hyps.slice(1291).map((h) => JSON.stringify(h)).join('\n') + '\n')]));
  for (const [name, files] of cases) {
    it(`names the same file and line as one thread: ${name}`, async () => {
      const common = { ...files(), systems: ['s'], specs: ['bleu', 'chrf'], ...threaded };
      const single = await failure(scoreFiles({ ...common, workers: 1 }));
      expect(single).not.toBeNull();
      expect(single!.kind).toBe('input');
      for (const [workers, mainWindows] of [[2, 1], [3, 1], [2, undefined], [3, 4]] as const) {
        expect(await failure(scoreFiles({ ...common, workers, mainWindows }))).toEqual(single);
      }
    });
  }

  it('an error in scoring on the main thread is thrown at once, as with one thread', async () => {
    const common = { refPaths: [join(dir, 'missing.jsonl')], hypPaths: [hypPath], systems: ['s'], specs: ['bleu'], ...threaded };
    expect(await failure(scoreFiles({ ...common, workers: 2 }))).toEqual(await failure(scoreFiles({ ...common, workers: 1 })));
  });

  it('splits files into windows of whole lines, with their numbers and offsets in every file', () => {
    const a = write('win-a.txt', ['aaaa', 'b', '', 'cccccccc', 'd'], ''); // line starts 0 5 7 8 17; size 18
    const b = write('win-b.txt', ['1', '22', '333', '4444', '55555']); // line starts 0 2 5 9 14; size 20
    const c = write('win-c.txt', ['x', 'y', 'z']); // three lines
    const windows = segmentWindows([a, b, c], [0, 1, 5, 6, 8, 9, 17]);
    expect(windows).toEqual([
      { line: 0, offsets: [0, 0, 0] },
      { line: 1, offsets: [5, 2, 2] },
      { line: 1, offsets: [5, 2, 2] },
      { line: 2, offsets: [7, 5, 4] },
      { line: 3, offsets: [8, 9, 6] },
      { line: 4, offsets: [17, 14, null] },
      { line: 4, offsets: [17, 14, null] },
    ]);
    // Past the last line start of the first file: its end, with its number of lines.
    const a2 = write('win-a2.txt', ['aa', 'bbbbbb'], ''); // line starts 0 3; size 9
    expect(segmentWindows([a2, b], [0, 5])).toEqual([
      { line: 0, offsets: [0, 0] },
      { line: 2, offsets: [9, 5] },
    ]);
    // Reading a window gives those lines, numbered in the whole file.
    const got = [...parallelSegments([a], [b], { window: { line: 1, offsets: [5, 2], ends: [8, 9] } })];
    expect(got).toEqual([
      { refs: ['b'], hyps: ['22'], index: 1 },
      { refs: [''], hyps: ['333'], index: 2 },
    ]);
  });
});

/** The reader checks UTF-8 a buffer at a time and slices lines without a decoder: the same strings and errors. */
describe('segment reader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codegauge-reader-'));
  const file = (name: string, bytes: Buffer | string) => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  const decode = (bytes: Buffer) => new TextDecoder('utf-8', { fatal: true }).decode(bytes);

  it('reads BOMs, CRLF, non-ASCII text and lines longer than its buffer as a UTF-8 decoder per line would', () => {
    const long = 'é'.repeat(700_000) + '中'; // 1.4 MB: past the 1 MiB buffer, a character across its end
    const lines = ['plain', '\ufeffa line that starts with a BOM', 'café 中文 😀', '', long, 'x\r', 'last'];
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines.join('\n').replace('x\r', 'x\r\r'))]);
    const path = file('mixed.txt', bytes);
    // What a decoder per line gives (it drops a BOM at the start of each line, and the reader one '\r' before '\n').
    const expected = bytes.subarray(3).toString('binary').split('\n').map((l) => decode(Buffer.from(l.replace(/\r$/, ''), 'binary')));
    expect(readSegmentFile(path).segments.map((s) => s[0])).toEqual(expected);
    expect(expected[1]).toBe('a line that starts with a BOM');
    expect(expected[4]).toBe(long);
  });

  it('names the first line that is not UTF-8, wherever it is in the buffer', () => {
    const good = Array.from({ length: 50 }, (_, i) => `line ${i} é`);
    for (const bad of [0, 2, 49]) {
      const parts = good.map((l, i) => (i === bad ? Buffer.from([0x61, 0xc3, 0x28]) : Buffer.from(l)));
      const path = file(`bad${bad}.txt`, Buffer.concat(parts.flatMap((p, i) => (i ? [Buffer.from('\n'), p] : [p]))));
      expect(() => readSegmentFile(path)).toThrow(new RegExp(`bad${bad}\\.txt:${bad + 1}: invalid UTF-8`));
    }
    // Two bad lines: the first is named.
    const two = file('two.txt', Buffer.concat([Buffer.from('ok\n'), Buffer.from([0xff]), Buffer.from('\nok\n'), Buffer.from([0xfe]), Buffer.from('\n')]));
    expect(() => readSegmentFile(two)).toThrow(/two\.txt:2: invalid UTF-8/);
  });
});
