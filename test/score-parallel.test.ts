import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scoreFiles } from '../src/api/score.js';
import { InputError } from '../src/errors.js';

/** Worker threads change nothing but speed: the same scores, segment scores, levels and bootstrap intervals. */
describe('score on worker threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codegauge-parallel-'));
  const n = 1300; // several stripes of 512 segments, the last one short
  const refs = Array.from({ length: n }, (_, i) => (i % 7 === 0 ? ['def f(a):\n    return a + 1', 'def f(b):\n    return b+1'] : [`def g${i % 13}(x):\n    y = x * ${i % 5}\n    return y`]));
  const hyps = Array.from({ length: n }, (_, i) => `def g${i % 11}(x):\n    y = x * ${i % 3}\n    return y + ${i}`);
  const refPath = join(dir, 'refs.py.jsonl');
  const hypPath = join(dir, 'hyps.py.jsonl');
  writeFileSync(refPath, refs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(hypPath, hyps.map((h) => JSON.stringify(h)).join('\n') + '\n');
  const specs = ['bleu', 'chrf', 'rougeL:tok=code', 'ruby:lang=python'];

  it('gives results identical to one thread, with segments and confidence intervals', async () => {
    const common = { refPaths: [refPath], hypPaths: [hypPath, refPath.replace('refs', 'refs')], systems: ['a', 'b'], specs, segments: true, confidence: { samples: 200, seed: 7 }, parallelMinBytes: 0 };
    // The second system is the references' first strings: a file of arrays is not a hypothesis file, so use hyps twice.
    common.hypPaths = [hypPath, hypPath];
    const single = await scoreFiles({ ...common, workers: 1 });
    const threaded = await scoreFiles({ ...common, workers: 3 });
    expect(threaded).toEqual(single);
    expect(single.systems[0].scores[3].segment_details!.length).toBe(n);
    expect(single.systems[0].scores[0].signature).toContain('nrefs:var');
  });

  it('reports a bad line found by a worker as the input error it is', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, hyps.map((h, i) => (i === 900 ? '{oops' : JSON.stringify(h))).join('\n') + '\n');
    const run = scoreFiles({ refPaths: [refPath], hypPaths: [bad], systems: ['bad'], specs: ['bleu'], workers: 2, parallelMinBytes: 0 });
    await expect(run).rejects.toBeInstanceOf(InputError);
    await expect(run).rejects.toThrow(/bad\.jsonl:901: invalid JSON/);
  });
});
