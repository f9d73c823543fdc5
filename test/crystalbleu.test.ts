import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CrystalBleu, readNgramsFile } from '../src/metrics/crystalbleu.js';
import { NltkBleu } from '../src/metrics/nltk-bleu.js';
import { scoreCorpus, scoreSentence, prepareAll, corpusStatistics, sumRows } from '../src/metrics/metric.js';
import { parseMetric } from '../src/metrics/registry.js';
import { InputError, UsageError } from '../src/errors.js';
import { exactExp, exactLog } from '../src/metrics/exact-math.js';
import { scoreSegments, scoreSystems } from '../src/api/score.js';
import { cli, vector } from './helpers.js';

/** Vectors of sola-st/crystalbleu `bleu_ignoring.py` on Debian's NLTK 3.8 (scripts/vectors-crystalbleu.py). */
const V = vector('crystalbleu.json');
const tmp = mkdtempSync(join(tmpdir(), 'crystalbleu-'));

interface Case {
  name: string;
  tok: 'code' | 'ws';
  k: number;
  data?: string;
  hyps?: string[];
  refs?: string[][];
  corpus?: string;
  ignored: string[][];
  corpus_bleu: number;
  sentence_bleu: number[];
  bleu: number;
}

function dataOf(c: Case): { hyps: string[]; refs: string[][] } {
  return c.data ? V.datasets[c.data] : { hyps: c.hyps!, refs: c.refs! };
}

/** Equal to the last bit or within a few ulps (V8's and glibc's log/exp may differ in the last place). */
function close(got: number, expected: number): boolean {
  return got === expected || Math.abs(got - expected) <= 4 * Number.EPSILON * Math.abs(expected);
}

describe('CrystalBLEU = sola-st/crystalbleu on NLTK 3.8', () => {
  let exact = 0;
  let total = 0;
  let exactSegments = 0;
  let segments = 0;
  for (const c of V.cases as Case[]) {
    it(c.name, () => {
      const { hyps, refs } = dataOf(c);
      let metric: CrystalBleu;
      if (c.corpus !== undefined) {
        const file = join(tmp, `${c.name.replace(/\W+/g, '-')}.txt`);
        writeFileSync(file, c.corpus);
        metric = parseMetric(`crystalbleu:k=${c.k},tok=${c.tok},corpus=${file}`) as CrystalBleu;
      } else {
        metric = parseMetric(`crystalbleu:k=${c.k},tok=${c.tok}`) as CrystalBleu;
      }
      const result = scoreCorpus(metric, hyps, refs, { segments: true });
      expect(metric.ignoredNgrams()).toEqual(c.ignored);
      // On NLTK's 0-1 scale (x100 then /100 would not round-trip).
      const got = metric.fraction(sumRows(result.statistics));
      total++;
      if (got === c.corpus_bleu) exact++;
      expect(close(got, c.corpus_bleu), `${got} vs ${c.corpus_bleu}`).toBe(true);
      for (let i = 0; i < result.statistics.rows; i++) {
        const s = metric.fraction(result.statistics.data.subarray(i * metric.statsSize, (i + 1) * metric.statsSize));
        segments++;
        if (s === c.sentence_bleu[i]) exactSegments++;
        expect(close(s, c.sentence_bleu[i]), `segment ${i}: ${s} vs ${c.sentence_bleu[i]}`).toBe(true);
      }
      // k=0 is NLTK BLEU on the same tokens.
      if (c.k === 0) expect(scoreCorpus(new NltkBleu(c.tok), hyps, refs).score / 100).toBe(c.bleu);
      expect(result.signature).toMatch(new RegExp(`^nrefs:(\\d+|var)\\|k:${c.k}\\|corpus:${c.corpus !== undefined ? 'file' : 'refs'}\\|ignored:${c.ignored.length}@[0-9a-f]{8}\\|tok:${c.tok}\\|`));
    });
  }
  it('reports how many corpus scores are bit-identical', () => {
    expect(total).toBe(V.cases.length);
    // Every value agrees within 4 ulps; with correctly rounded exp/log nearly all are bit-identical (glibc's are
    // correctly rounded on all but rare arguments).
    console.log(`crystalbleu vectors: ${exact}/${total} corpus scores and ${exactSegments}/${segments} sentence scores bit-identical`);
    expect(exact).toBe(total);
    expect(exactSegments).toBeGreaterThanOrEqual(segments - 3);
  });
});

describe('correctly rounded exp and log = CPython math (glibc) on random arguments', () => {
  const { libm } = V;
  it('log', () => {
    const same = libm.log_args.filter((x: number, i: number) => exactLog(x) === libm.log[i]).length;
    const v8 = libm.log_args.filter((x: number, i: number) => Math.log(x) === libm.log[i]).length;
    console.log(`log: ${same}/${libm.log.length} bit-identical (Math.log: ${v8})`);
    expect(same).toBeGreaterThanOrEqual(libm.log.length - 5);
    libm.log_args.forEach((x: number, i: number) => expect(close(exactLog(x), libm.log[i])).toBe(true));
  });
  it('exp', () => {
    const same = libm.exp_args.filter((x: number, i: number) => exactExp(x) === libm.exp[i]).length;
    const v8 = libm.exp_args.filter((x: number, i: number) => Math.exp(x) === libm.exp[i]).length;
    console.log(`exp: ${same}/${libm.exp.length} bit-identical (Math.exp: ${v8})`);
    expect(same).toBeGreaterThanOrEqual(libm.exp.length - 5);
    libm.exp_args.forEach((x: number, i: number) => expect(close(exactExp(x), libm.exp[i])).toBe(true));
  });
});

describe('CrystalBLEU ignored sets', () => {
  const c = (V.cases as Case[]).find((x) => x.name === 'python tok=code k=50')!;
  const { hyps, refs } = dataOf(c);

  it('are written and read back, so that two runs compare on the same set', () => {
    const first = new CrystalBleu({ k: 50 });
    const a = scoreCorpus(first, hyps, refs).score;
    const file = join(tmp, 'ngrams.json');
    writeFileSync(file, JSON.stringify(first.ngramsFile()));
    expect(readNgramsFile(file).ngrams.length).toBe(50);
    // Scored on other references, the file keeps the first run's set.
    const second = parseMetric(`crystalbleu:ngrams=${file}`) as CrystalBleu;
    expect(scoreCorpus(second, hyps, refs).score).toBe(a);
    expect(second.ignoredNgrams()).toEqual(c.ignored);
    expect(second.signature(1)).toContain('corpus:ngrams-file|ignored:50@');
    expect(second.signature(1).split('|ignored:')[1].slice(0, 11)).toBe(first.signature(1).split('|ignored:')[1].slice(0, 11));
  });

  it('k on an n-gram file takes its k most frequent n-grams (= k on the same corpus); more than it holds is refused', async () => {
    const file = join(tmp, 'ngrams-k.json');
    const written = new CrystalBleu({ k: 50 });
    scoreCorpus(written, hyps, refs);
    writeFileSync(file, JSON.stringify(written.ngramsFile()));
    const direct = new CrystalBleu({ k: 10 });
    const expected = scoreCorpus(direct, hyps, refs).score;
    const fromFile = parseMetric(`crystalbleu:ngrams=${file},k=10`) as CrystalBleu;
    expect(scoreCorpus(fromFile, hyps, refs).score).toBe(expected);
    expect(scoreCorpus(parseMetric(`crystalbleu:ngrams=${file}`), hyps, refs).score).not.toBe(expected); // all 50 ignored
    expect(fromFile.ignoredNgrams()).toEqual(c.ignored.slice(0, 10));
    expect(fromFile.signature(1)).toContain('|k:10|corpus:ngrams-file|ignored:10@');
    // Without k the signature names the file's k, not the default 500.
    const all = parseMetric(`crystalbleu:ngrams=${file}`) as CrystalBleu;
    expect(all.signature(1)).toContain('|k:50|corpus:ngrams-file|ignored:50@');
    await expect(parseMetric(`crystalbleu:ngrams=${file},k=100`).ready!()).rejects.toThrow(`crystalbleu: k=100, but ${file} holds only the 50 most frequent n-grams (written with k=50); write it again with k >= 100, or leave k out`);
  });

  it('scoreSystems counts the references first (fitReferences), then scores in one pass', async () => {
    const report = await scoreSystems({ references: refs, systems: [{ name: 'a', hypotheses: hyps }], metrics: ['crystalbleu:k=50'] });
    expect(close(report.systems[0].scores[0].score / 100, c.corpus_bleu)).toBe(true);
  });

  it('a stream that was not counted first fails loudly instead of using a partial set', async () => {
    const stream = refs.map((r, i) => ({ refs: r, hyps: [hyps[i]] }));
    const run = () => scoreSegments({ stream, systems: ['a'], metrics: ['crystalbleu:k=50'] });
    await expect(run()).rejects.toThrow(UsageError);
    await expect(run()).rejects.toThrow(/corpus=FILE or ngrams=FILE/);
  });

  it('sentence scores go through the same path', () => {
    const metric = new CrystalBleu({ k: 50 });
    const stats = corpusStatistics(metric, hyps, prepareAll(metric, refs));
    expect(metric.scoreFromStatistics(sumRows(stats)) / 100).toBeCloseTo(c.corpus_bleu, 14);
    // NLTK method0: no 3-gram in a 2-token pair gives the smallest double as precision, not 0.
    expect(scoreSentence(new CrystalBleu({ ngrams: [] }), 'return x', ['return x']) / 100).toBe(1.491668146240062e-154); // = sentence_bleu([['return', 'x']], ['return', 'x'])
    expect(scoreSentence(new CrystalBleu({ ngrams: [['return'], ['x']] }), 'return x', ['return x'])).toBe(0); // no unigram left
  });

  it('bad files and keys are clear errors', () => {
    expect(() => parseMetric('crystalbleu:k=-1')).toThrow(UsageError);
    expect(() => parseMetric('crystalbleu:tok=13a')).toThrow(/key tok; expected code\|ws/);
    expect(() => parseMetric('crystalbleu:corpus=a.txt,ngrams=b.json')).toThrow(/not both/);
    const missing = parseMetric(`crystalbleu:corpus=${join(tmp, 'missing.txt')}`);
    return Promise.all([
      expect(missing.ready!()).rejects.toThrow(InputError),
      expect(parseMetric(`crystalbleu:ngrams=${join(tmp, 'missing.json')}`).ready!()).rejects.toThrow(/cannot read/),
      (async () => {
        const bad = join(tmp, 'bad.json');
        writeFileSync(bad, '{"kind": "other"}');
        await expect(parseMetric(`crystalbleu:ngrams=${bad}`).ready!()).rejects.toThrow(/not a crystalbleu n-gram file/);
        const ws = join(tmp, 'ws.json');
        writeFileSync(ws, JSON.stringify({ ...new CrystalBleu({ tokenize: 'ws', ngrams: [['a']] }).ngramsFile() }));
        await expect(parseMetric(`crystalbleu:ngrams=${ws},tok=code`).ready!()).rejects.toThrow(/tok=ws/);
      })(),
    ]);
  });
});

describe('CrystalBLEU in `codegauge score`', () => {
  const c = (V.cases as Case[]).find((x) => x.name === 'python tok=code k=50')!;
  const { hyps, refs } = dataOf(c);
  const refsFile = join(tmp, 'refs.jsonl');
  const hypsFile = join(tmp, 'hyps.py.jsonl');
  writeFileSync(refsFile, refs.map((r) => JSON.stringify(r[0])).join('\n') + '\n');
  writeFileSync(hypsFile, hyps.map((h) => JSON.stringify(h)).join('\n') + '\n');

  it('scores with a written n-gram set (ngrams=FILE) and equals the library', async () => {
    const metric = new CrystalBleu({ k: 50 });
    const expected = scoreCorpus(metric, hyps, refs).score;
    const file = join(tmp, 'cli-ngrams.json');
    writeFileSync(file, JSON.stringify(metric.ngramsFile()));
    const r = await cli('score', '--refs', refsFile, '--hyps', hypsFile, '--metric', `crystalbleu:ngrams=${file}`, '--format', 'json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const score = JSON.parse(r.out).systems[0].scores[0];
    expect(score.score).toBe(expected);
    expect(score.signature).toContain('|ignored:50@');
  });

  it('the default corpus (the references) is counted in a first pass over the files; --write-ngrams writes the set for ngrams=FILE', async () => {
    const expected = scoreCorpus(new CrystalBleu({ k: 50 }), hyps, refs).score;
    const written = join(tmp, 'written-ngrams.json');
    const r = await cli('score', '--refs', refsFile, '--hyps', hypsFile, '--metric', 'crystalbleu:k=50', '--write-ngrams', written, '--format', 'json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).systems[0].scores[0].score).toBe(expected);
    const again = await cli('score', '--refs', refsFile, '--hyps', hypsFile, '--metric', `crystalbleu:ngrams=${written}`, '--format', 'json');
    expect(JSON.parse(again.out).systems[0].scores[0].score).toBe(expected);
  });
});
