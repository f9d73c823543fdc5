import { describe, expect, it } from 'vitest';
import { Bleu, Chrf, computeBleu, scoreCorpus, scoreSentence, tokenize13a, tokenizeChar, tokenizeIntl } from '../src/index.js';
import { bleuScore } from '../src/metrics/bleu.js';
import { pyRstrip, pySplit } from '../src/compat/python-strings.js';
import { codePointArray, codePointArrayWithoutWhitespace } from '../src/metrics/ngram-match.js';
import { VERSION } from '../src/version.js';
import { vector } from './helpers.js';

const sb = vector('sacrebleu.json');
const verbatim = sb.verbatim_tests;
const generated = sb.generated;
const readme = verbatim['test/test_bleu.py'].readme_corpus;
/** sacrebleu takes reference *streams*; codegauge takes references per segment. */
const perSegment = (streams: string[][]) => streams[0].map((_, i) => streams.map((s) => s[i]));
const sig = (s: string) => s.replace(/version:[^|]+$/, `version:${VERSION}`);

describe('sacrebleu tokenizers', () => {
  for (const tc of generated.tokenizers) {
    it(`tokenizes ${JSON.stringify(tc.input)}`, () => {
      // As the vectors note, BLEU rstrips a segment before tokenizing it.
      const line = pyRstrip(tc.input);
      expect(tokenize13a(line)).toBe(tc['13a']);
      expect(tokenizeIntl(line)).toBe(tc.intl);
      expect(tokenizeChar(line)).toBe(tc.char);
      expect(line).toBe(tc.none);
    });
  }
});

describe('BLEU (sacrebleu test_bleu.py)', () => {
  const refs = perSegment(readme.refs_streams);
  for (const tc of verbatim['test/test_bleu.py']['corpus_bleu_cases (kwargs -> score, abs tol 1e-8)']) {
    it(`corpus_bleu ${JSON.stringify(tc.kwargs)} on ${tc.hyps === 'readme' ? 'readme' : 'empty'} hyps = ${tc.score}`, () => {
      const hyps = tc.hyps === 'readme' ? readme.hyps : tc.hyps;
      const bleu = new Bleu({ tokenize: tc.kwargs.tokenize, smooth: tc.kwargs.smooth_method });
      expect(scoreCorpus(bleu, hyps, refs).score).toBeCloseTo(tc.score, 6);
    });
  }

  it('max_ngram_order 1..6', () => {
    for (const [order, formatted] of Object.entries<string>(verbatim['test/test_bleu.py']['max_ngram_order (BLEU(max_ngram_order=k).corpus_score, formatted %.2f)'])) {
      expect(scoreCorpus(new Bleu({ maxOrder: Number(order) }), readme.hyps, refs).score.toFixed(2)).toBe(formatted);
    }
  });

  it('raw corpus BLEU with floor smoothing and effective order', () => {
    for (const tc of verbatim['test/test_bleu.py']['raw_corpus_bleu (tokenize=none, smooth=floor, use_effective_order=True, force=True), score/100']) {
      const bleu = new Bleu({ tokenize: 'none', smooth: 'floor', smoothValue: tc.floor ?? undefined, effectiveOrder: true });
      expect(scoreCorpus(bleu, tc.hyps, perSegment(tc.refs_streams)).score / 100).toBeCloseTo(tc.bleu, 9);
    }
  });

  it('sufficient statistics', () => {
    const tc = verbatim['test/test_bleu.py'].statistics;
    const result = scoreCorpus(new Bleu({ tokenize: 'none' }), [tc.hyp], [[tc.ref]]);
    const row = Array.from(result.statistics.data);
    expect(row.slice(2, 6)).toEqual(tc.counts);
    expect(row.slice(6, 10)).toEqual(tc.totals);
  });

  it('compute_bleu from statistics', () => {
    const tc = verbatim['test/test_bleu.py']['compute_bleu (correct,total,sys_len,ref_len) -> score/100, default smooth none'];
    expect(computeBleu(tc.correct, tc.total, tc.sys_len, tc.ref_len, 'none', null, false, 4).score / 100).toBeCloseTo(tc.score, 9);
  });

  it('degenerate statistics with floor smoothing give 0', () => {
    for (const [correct, total, sysLen, refLen, floor] of verbatim['test/test_bleu.py']['degenerate stats with smooth_method=floor (correct,total,sys_len,ref_len,floor) -> 0.0']) {
      expect(computeBleu(correct, total, sysLen, refLen, 'floor', floor, false, 4).score).toBe(0);
    }
  });
});

describe('sentence BLEU (sacrebleu test_sentence_bleu.py, effective order)', () => {
  const tcs = verbatim['test/test_sentence_bleu.py (use_effective_order=True, abs tol 1e-3)'];
  for (const [smooth, value, lowercase, tokenize, score] of tcs['cases [smooth_method, smooth_value, lowercase, tokenize, score]']) {
    it(`${smooth}[${value}] lc=${lowercase} tok=${tokenize} = ${score}`, () => {
      const bleu = new Bleu({ smooth, smoothValue: value ?? undefined, lowercase, tokenize, effectiveOrder: true });
      expect(Math.abs(scoreSentence(bleu, tcs.sys, [tcs.ref]) - score)).toBeLessThanOrEqual(1e-3);
    });
  }
  it('scores 0 with no matching unigram under every smoothing', () => {
    for (const smooth of ['exp', 'floor', 'add-k', 'none'] as const) {
      expect(scoreSentence(new Bleu({ smooth, effectiveOrder: true }), tcs.zero_case.sys, [tcs.zero_case.ref])).toBe(0);
    }
  });
});

describe('sentence BLEU, generated with sacrebleu 2.6.0 (parity 1e-6)', () => {
  for (const tc of generated.sentence_bleu_defaults) {
    it(`${JSON.stringify(tc.hyp).slice(0, 50)}`, () => {
      for (const smooth of ['exp', 'floor', 'add-k', 'none'] as const) {
        const expected = tc[smooth];
        const bleu = new Bleu({ smooth, effectiveOrder: true });
        const result = scoreCorpus(bleu, [tc.hyp], [tc.refs]);
        const details = bleu.details(result.statistics.data);
        expect(Math.abs(result.score - expected.score)).toBeLessThanOrEqual(1e-6);
        expect(details.counts).toEqual(expected.counts);
        expect(details.totals).toEqual(expected.totals);
        expect(details.sysLen).toBe(expected.sys_len);
        expect(details.refLen).toBe(expected.ref_len);
        expect(result.signature).toBe(sig(expected.signature));
      }
      const noEff = scoreSentence(new Bleu({ effectiveOrder: false }), tc.hyp, tc.refs);
      expect(Math.abs(noEff - tc.effective_order_false_exp)).toBeLessThanOrEqual(1e-6);
    });
  }
});

describe('chrF (sacrebleu test_chrf.py)', () => {
  const chrf = verbatim['test/test_chrf.py'];
  const cases: [string, ConstructorParameters<typeof Chrf>[0], number][] = [
    ['eps_smoothing=True, char_order=6, word_order=0, beta=3 (corpus_chrf; abs tol 1e-4)', { epsSmoothing: true, beta: 3 }, 1e-4],
    ['eps_smoothing=False (default effective-order), beta=3', { beta: 3 }, 1e-6],
    ['remove_whitespace=False (whitespace=True), beta=3, eps_smoothing=False', { beta: 3, whitespace: true }, 1e-6],
  ];
  for (const [key, options, tol] of cases) {
    it(key, () => {
      for (const [hyps, refs, score] of chrf[key]) {
        const result = scoreCorpus(new Chrf(options), hyps, refs.map((r: string) => [r]));
        expect(Math.abs(result.score - score)).toBeLessThanOrEqual(tol);
      }
    });
  }
  it('sentence_chrf with eps smoothing (beta 2)', () => {
    for (const [hyp, refs, score] of chrf['sentence_chrf(eps_smoothing=True) defaults beta=2']) {
      expect(Math.abs(scoreSentence(new Chrf({ epsSmoothing: true }), hyp, refs) - score)).toBeLessThanOrEqual(1e-6);
    }
  });
});

describe('chrF caches and buffers reused across segments', () => {
  it('code point arrays own their memory (the scratch buffer is reused)', () => {
    const long = 'def f(x):\n    return [y \u00e9\ud83d\ude00 for y in x]\n'.repeat(300);
    const a = codePointArrayWithoutWhitespace(long);
    const copy = Int32Array.from(a);
    const b = codePointArrayWithoutWhitespace('x = 1');
    expect(a).toEqual(copy);
    expect(Array.from(b)).toEqual([120, 61, 49]);
    expect(a).toEqual(codePointArray(pySplit(long).join('')));
    expect(codePointArrayWithoutWhitespace('')).toHaveLength(0);
  });
  it('a long-lived instance gives every segment the statistics of a fresh one (texts repeated, in both roles)', () => {
    const texts = ['def add(a, b):\n    return a + b\n', 'def add(x, y):\n    return x + y\n', 'return sum([a, b])', 'caf\u00e9 \u4e2d\u6587 \ud83d\ude00', ''];
    // each text comes back as a new string object, as it does from a file
    const fresh = (i: number) => (texts[i] + ' ').slice(0, -1);
    const segments: [number, number[]][] = [[0, [1]], [2, [1]], [0, [1]], [1, [0]], [1, [2]], [1, [3]], [3, [3]], [4, [0]], [0, [4]], [2, [0, 1]], [2, [1, 0]], [0, [0]]];
    for (const options of [{}, { wordOrder: 2 }, { lowercase: true, whitespace: true }]) {
      const kept = new Chrf(options);
      for (const [h, refs] of segments) {
        const once = new Chrf(options);
        const a = new Float64Array(kept.statsSize);
        const b = new Float64Array(once.statsSize);
        kept.segmentStatistics(fresh(h), kept.prepareReferences(refs.map(fresh)), a, 0);
        once.segmentStatistics(fresh(h), once.prepareReferences(refs.map(fresh)), b, 0);
        expect(Array.from(a), `${h} vs ${refs}`).toEqual(Array.from(b));
      }
    }
  });
});

describe('sentence chrF variants, generated with sacrebleu 2.6.0 (parity 1e-6)', () => {
  const variants: Record<string, ConstructorParameters<typeof Chrf>[0]> = {
    chrF2_default: {},
    'chrF2++': { wordOrder: 2 },
    chrF2_eps: { epsSmoothing: true },
    chrF2_whitespace: { whitespace: true },
    chrF2_lowercase: { lowercase: true },
  };
  for (const tc of generated.sentence_chrf) {
    it(`${JSON.stringify(tc.hyp).slice(0, 50)}`, () => {
      for (const [variant, options] of Object.entries(variants)) {
        const metric = new Chrf(options);
        const result = scoreCorpus(metric, [tc.hyp], [tc.refs]);
        expect(Math.abs(result.score - tc[variant].score)).toBeLessThanOrEqual(1e-6);
        expect(metric.name).toBe(tc[variant].name);
        expect(result.signature).toBe(sig(tc[variant].signature));
      }
    });
  }
});

describe('README corpus (two reference streams)', () => {
  const r = generated.readme_corpus;
  const refs = perSegment(r.refs_streams);
  it('BLEU with its formatted details and signature', () => {
    const bleu = new Bleu();
    const result = scoreCorpus(bleu, r.hyps, refs);
    expect(Math.abs(result.score - r.bleu.score)).toBeLessThanOrEqual(1e-6);
    const d = bleu.details(result.statistics.data.length === 10 ? result.statistics.data : sumAll(result.statistics.data, 10));
    const formatted = `BLEU|${result.signature} = ${result.score.toFixed(2)} ${d.precisions.map((p) => p.toFixed(1)).join('/')} (BP = ${d.bp.toFixed(3)} ratio = ${(d.sysLen / d.refLen).toFixed(3)} hyp_len = ${d.sysLen} ref_len = ${d.refLen})`;
    expect(formatted).toBe(sig(r.bleu.formatted.split(' = ')[0]) + ' = ' + r.bleu.formatted.split(' = ').slice(1).join(' = '));
  });
  it('chrF2 and chrF2++', () => {
    expect(Math.abs(scoreCorpus(new Chrf(), r.hyps, refs).score - r.chrF2.score)).toBeLessThanOrEqual(1e-6);
    expect(Math.abs(scoreCorpus(new Chrf({ wordOrder: 2 }), r.hyps, refs).score - r['chrF2++'].score)).toBeLessThanOrEqual(1e-6);
    expect(scoreCorpus(new Chrf({ wordOrder: 2 }), r.hyps, refs).signature).toBe(sig(r['chrF2++'].formatted.split(' = ')[0].replace(/^chrF2\+\+\|/, '')));
  });
});

function sumAll(data: Float64Array, size: number): Float64Array {
  const out = new Float64Array(size);
  for (let i = 0; i < data.length; i++) out[i % size] += data[i];
  return out;
}

describe('BLEU score without details', () => {
  it('bleuScore equals computeBleu(...).score bit for bit (every smoothing, effective order, empty orders)', () => {
    let state = 5;
    const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let k = 0; k < 4000; k++) {
      const order = 1 + Math.floor(next() * 5);
      const sysLen = Math.floor(next() * 30);
      const refLen = Math.floor(next() * 30);
      const total = Array.from({ length: order }, (_, n) => (next() < 0.1 ? 0 : Math.max(0, sysLen - n)));
      const correct = total.map((t) => (next() < 0.3 ? 0 : Math.floor(next() * (t + 1))));
      const stats = [sysLen, refLen, ...correct, ...total];
      for (const smooth of ['exp', 'floor', 'add-k', 'none'] as const) {
        for (const value of [null, 0.5]) {
          for (const eff of [false, true]) {
            const expected = computeBleu(correct, total, sysLen, refLen, smooth, value, eff, order).score;
            expect(Object.is(bleuScore(stats, order, smooth, value, eff), expected)).toBe(true);
          }
        }
      }
    }
  });
});
