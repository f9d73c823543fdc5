import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeBertScore, keepToken, windowIndices } from '../src/metrics/codebertscore.js';
import { scoreCorpus } from '../src/metrics/metric.js';
import { parseMetric } from '../src/metrics/registry.js';
import { scoreSegments, scoreSystems } from '../src/api/score.js';
import { UsageError } from '../src/errors.js';
import { transformersLoadError } from '../src/llm/transformers.js';
import { writeTinyBert } from './fixtures/tiny-bert.js';
import { cli, vector } from './helpers.js';

/** Values of scripts/vectors-codebertscore.py: NumPy on the tiny BERT's own definition, no transformers.js. */
const V = vector('codebertscore-tiny.json');
const root = mkdtempSync(join(tmpdir(), 'codegauge-cbs-'));
const dir = writeTinyBert(root);
const TOL = 2e-7; // float32 model outputs (ONNX Runtime vs NumPy) and float32-stored unit vectors

describe('CodeBERTScore helpers = code-bert-score', () => {
  it('drops punctuation-only tokens as mark_all_punc_tokens does', () => {
    expect(['(', '):', 'Ġ(', 'Ċ', 'ĠĠ', ',', '.', '"', '##'].map(keepToken)).toEqual([false, false, false, false, false, false, false, false, false]);
    expect(['+', '-', 'Ġ*', '/', '&&', '||', '~', 'x', 'Ġreturn', '<s>', '[CLS]', '##s', 'ĊĠĠĠreturn'].map(keepToken)).toEqual(new Array(13).fill(true));
  });
  it('windows long inputs as SLED get_window_indices', () => {
    expect(windowIndices(10, 16)).toEqual([[0, 10, 0, 10]]);
    // Values of the reference function (python: get_window_indices(40, 16, 0.5)).
    expect(windowIndices(40, 16)).toEqual([[0, 16, 0, 12], [8, 24, 4, 12], [16, 32, 4, 12], [24, 40, 4, 16]]);
    expect(windowIndices(20, 16)).toEqual([[0, 16, 0, 12], [4, 20, 8, 16]]);
    for (const total of [17, 33, 100, 513, 1000]) {
      const covered = windowIndices(total, 16).reduce((n, [cs, , us, ue]) => (expect(cs + us).toBe(n), n + ue - us), 0);
      expect(covered).toBe(total);
    }
  });
});

describe('CodeBERTScore through transformers.js = NumPy on the same tiny model', () => {
  const metrics: CodeBertScore[] = [];
  afterAll(async () => {
    for (const m of metrics) await m.close();
    rmSync(root, { recursive: true, force: true });
  });
  for (const c of V.cases) {
    it(c.name, async () => {
      const sourceOf = (refs: readonly string[]) => c.sources?.[c.refs.findIndex((r: string[]) => r[0] === refs[0])];
      const metric = new CodeBertScore({ lang: 'python', modelDir: dir, idf: c.idf, sources: c.sources !== null, sourceOf });
      metrics.push(metric);
      await metric.ready();
      const infos = c.refs.map((r: string[]) => metric.prepareReferences(r));
      let worst = 0;
      c.expected.forEach((e: { p: number; r: number; f1: number; f3: number }, i: number) => {
        const got = metric.scores(c.hyps[i], infos[i]);
        for (const k of ['p', 'r', 'f1', 'f3'] as const) {
          worst = Math.max(worst, Math.abs(got[k] - e[k]));
          expect(Math.abs(got[k] - e[k]), `${c.name} #${i} ${k}: ${got[k]} vs ${e[k]}`).toBeLessThan(TOL);
        }
      });
      console.log(`codebertscore ${c.name}: largest difference from NumPy ${worst.toExponential(2)} over ${c.expected.length} pairs x 4 measures`);
    }, 60_000);
  }

  let f1: CodeBertScore;
  beforeAll(async () => {
    f1 = parseMetric(`codebertscore:lang=python,model-dir=${dir}`) as CodeBertScore;
    metrics.push(f1);
    await f1.ready();
  }, 60_000);

  it('scores a corpus through the spine: mean F1 x 100, P/R/F1/F3 components, signature with model, layer and hash', () => {
    const c = V.cases.find((x: { name: string }) => x.name === 'idf=no');
    const result = scoreCorpus(f1, c.hyps, c.refs, { segments: true });
    const mean = (k: string) => (100 * c.expected.reduce((s: number, e: Record<string, number>) => s + e[k], 0)) / c.expected.length;
    expect(result.score).toBeCloseTo(mean('f1'), 4);
    expect(result.components!.F3).toBeCloseTo(mean('f3'), 4);
    expect(result.segments![0]).toBeCloseTo(100, 4);
    expect(result.name).toBe('CodeBERTScore-F1');
    expect(result.signature).toMatch(/^nrefs:var\|model:tiny-codebert-python\|layer:11\|onnx:[0-9a-f]{12}\|idf:no\|punc:no\|sources:no\|window:16\/0.5\|measure:f1\|version:/);
  });

  it('runs in the streaming score path (idf=no needs no first pass)', async () => {
    const report = await scoreSystems({ references: [['return a + b']], systems: [{ name: 's', hypotheses: ['return a + b'] }], metrics: [f1] });
    expect(report.systems[0].scores[0].score).toBeCloseTo(100, 4);
  });

  it('idf=yes on a streamed input without counting fails loudly', async () => {
    const m = new CodeBertScore({ lang: 'python', modelDir: dir, idf: true });
    metrics.push(m);
    await m.ready();
    const stream = [{ refs: ['return a'], hyps: ['return a'] }, { refs: ['return b'], hyps: ['return b'] }];
    await expect(scoreSegments({ stream, systems: ['s'], metrics: [m] })).rejects.toThrow(/idf=yes/);
  }, 60_000);
});

describe('CodeBERTScore model errors are usage errors (exit 2)', () => {
  const bad = mkdtempSync(join(tmpdir(), 'codegauge-cbs-bad-'));
  afterAll(() => rmSync(bad, { recursive: true, force: true }));
  const load = (spec: string) => (parseMetric(spec) as CodeBertScore).ready();

  it('a folder that does not exist', async () => {
    await expect(load(`codebertscore:lang=python,model-dir=${join(bad, 'nope')}`)).rejects.toThrow(/no such folder/);
  });
  it('missing files', async () => {
    const noOnnx = writeTinyBert(bad, { name: 'no-onnx', skip: [join('onnx', 'model.onnx')] });
    await expect(load(`codebertscore:lang=python,model-dir=${noOnnx}`)).rejects.toThrow(/no onnx\/model.onnx/);
    const noTok = writeTinyBert(bad, { name: 'no-tokenizer', skip: ['tokenizer.json'] });
    await expect(load(`codebertscore:lang=python,model-dir=${noTok}`)).rejects.toThrow(UsageError);
  });
  it('the wrong layer (an export of the full model, or another language\'s)', async () => {
    const full = writeTinyBert(bad, { name: 'full-12', layers: 12 });
    await expect(load(`codebertscore:lang=python,model-dir=${full}`)).rejects.toThrow(/has 12 hidden layers, but CodeBERTScore for python \(neulab\/codebert-python\) uses layer 11/);
    const python = writeTinyBert(bad, { name: 'python-11' });
    await expect(load(`codebertscore:lang=java,model-dir=${python}`)).rejects.toThrow(/uses layer 7/);
    const m = parseMetric(`codebertscore:lang=java,layer=11,model-dir=${python}`) as CodeBertScore;
    await m.ready();
    await m.close();
  }, 60_000);
  it('a model that cannot be loaded', async () => {
    const broken = writeTinyBert(bad, { name: 'broken' });
    writeFileSync(join(broken, 'onnx', 'model.onnx'), 'not a model');
    await expect(load(`codebertscore:lang=python,model-dir=${broken}`)).rejects.toThrow(/cannot load the model/);
  }, 60_000);
  it('a missing or half-installed transformers.js: one line with the command to run', () => {
    const notFound = (what: string) => Object.assign(new Error(`Cannot find package '${what}' imported from /p/node_modules/x.js`), { code: 'ERR_MODULE_NOT_FOUND' });
    const missing = transformersLoadError('codebertscore', notFound('@huggingface/transformers'));
    expect(missing).toBeInstanceOf(UsageError);
    expect(missing.message).toBe('codebertscore needs the optional package @huggingface/transformers; install it with: ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install @huggingface/transformers@3');
    // transformers.js present but its runtime missing or broken: not "install transformers.js" again as if absent.
    const broken = transformersLoadError('codebertscore', notFound('onnxruntime-node'));
    expect(broken).toBeInstanceOf(UsageError);
    expect(broken.message).toBe("codebertscore: @huggingface/transformers is installed but does not load (Cannot find package 'onnxruntime-node'); reinstall it with: ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install @huggingface/transformers@3");
  });
  it('sources=yes without problem statements, and bad spec values', async () => {
    await expect(load(`codebertscore:lang=python,sources=yes,model-dir=${writeTinyBert(bad, { name: 'src' })}`)).rejects.toThrow(/--problems/);
    expect(() => parseMetric('codebertscore:lang=python,measure=f2')).toThrow(/f1\|f3\|p\|r/);
    expect(() => parseMetric('codebertscore')).toThrow(/needs lang=/);
  });
});

describe('CodeBERTScore in `codegauge score`', () => {
  it('scores files with a model folder (idf=no streams in one pass)', async () => {
    const work = mkdtempSync(join(tmpdir(), 'codegauge-cbs-cli-'));
    const model = writeTinyBert(work);
    const c = V.cases.find((x: { name: string }) => x.name === 'idf=no');
    const refsFile = join(work, 'refs.jsonl');
    const hypsFile = join(work, 'hyps.py.jsonl');
    writeFileSync(refsFile, c.refs.map((r: string[]) => JSON.stringify(r)).join('\n') + '\n');
    writeFileSync(hypsFile, c.hyps.map((h: string) => JSON.stringify(h)).join('\n') + '\n');
    const r = await cli('score', '--refs', refsFile, '--hyps', hypsFile, '--metric', `codebertscore:model-dir=${model},measure=f3`, '--format', 'json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const score = JSON.parse(r.out).systems[0].scores[0];
    const mean = (100 * c.expected.reduce((s: number, e: { f3: number }) => s + e.f3, 0)) / c.expected.length;
    expect(score.score).toBeCloseTo(mean, 4);
    expect(score.name).toBe('CodeBERTScore-F3');
    const bad = await cli('score', '--refs', refsFile, '--hyps', hypsFile, '--metric', `codebertscore:model-dir=${join(work, 'nope')}`);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/no such folder/);
    rmSync(work, { recursive: true, force: true });
  }, 60_000);
});
