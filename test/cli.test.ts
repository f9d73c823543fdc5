import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Bleu, scoreCorpus } from '../src/index.js';
import { VERSION } from '../src/version.js';
import { cli, readJson, ROOT, vector } from './helpers.js';

let dir: string;
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

const readme = vector('sacrebleu.json').generated.readme_corpus;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-cli-'));
});

describe('codegauge --version', () => {
  it('prints the version alone, with or without a command tree loaded', async () => {
    for (const argv of [['--version'], ['-V'], ['score', '--version']]) {
      const r = await cli(...argv);
      expect([r.code, r.out, r.err]).toEqual([0, `${VERSION}\n`, '']);
    }
  });
});

describe('codegauge score', () => {
  it('scores several systems with several references and prints a table with signatures', async () => {
    const ref1 = file('ref1.txt', readme.refs_streams[0].join('\n') + '\n');
    const ref2 = file('ref2.txt', readme.refs_streams[1].join('\n') + '\n');
    const sys = file('sys.txt', readme.hyps.join('\n') + '\n');
    const sys2 = file('other.txt', readme.refs_streams[0].join('\n') + '\n');
    const r = await cli('score', '--refs', ref1, '--refs', ref2, '--hyps', sys, '--hyps', sys2, '--metric', 'bleu', '--metric', 'chrf:nw=2');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/^system\s+bleu\s+chrf:nw=2$/);
    expect(lines[2]).toMatch(/^sys\s+48\.53\s+59\.15$/);
    expect(r.out).toContain(`bleu: BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:${VERSION}`);
    expect(r.out).toContain(`chrf:nw=2: chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:${VERSION}`);
  });

  it('--confidence gives sacrebleu\'s bootstrap estimate (n_bootstrap=1000, seed 12345) and signature', async () => {
    const ref1 = file('cref1.txt', readme.refs_streams[0].join('\n') + '\n');
    const ref2 = file('cref2.txt', readme.refs_streams[1].join('\n') + '\n');
    const sys = file('csys.txt', readme.hyps.join('\n') + '\n');
    const r = await cli('score', '--refs', ref1, '--refs', ref2, '--hyps', sys, '--metric', 'bleu', '--metric', 'chrf', '--confidence', '--format', 'json');
    expect(r.code).toBe(0);
    const [bleu, chrf] = JSON.parse(r.out).systems[0].scores;
    for (const [got, expected] of [[bleu, readme.bootstrap_ci_1000.bleu], [chrf, readme.bootstrap_ci_1000.chrF2]]) {
      expect(Math.abs(got.confidence.mean - expected.mean)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(got.confidence.ci - expected.ci)).toBeLessThanOrEqual(1e-9);
    }
    expect(bleu.signature).toBe(`nrefs:2|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:${VERSION}`);
    const table = await cli('score', '--refs', ref1, '--refs', ref2, '--hyps', sys, '--metric', 'bleu', '--confidence');
    expect(table.out).toContain('48.53 (μ = 46.96 ± 46.75)');
  });

  it('prints JSON with sentence scores that use the same options', async () => {
    const refs = file('r.jsonl', ['"def f(x):\\n    return x + 1"', '["a = 1", "a=1"]', '""'].join('\n') + '\n');
    const hyps = file('h.jsonl', ['"def f(y):\\n    return y + 1"', '"a = 1"', '"x"'].join('\n') + '\n');
    const r = await cli('score', '--refs', refs, '--hyps', hyps, '--metric', 'bleu:tok=code,eff=yes', '--metric', 'rougeL:tok=code', '--segments', '--format', 'json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.systems).toHaveLength(1);
    expect(json.systems[0].name).toBe('h');
    const [bleu, rouge] = json.systems[0].scores;
    expect(Object.keys(bleu).sort()).toEqual(['metric', 'name', 'score', 'segments', 'signature']);
    expect(bleu.metric).toBe('bleu:tok=code,eff=yes');
    expect(bleu.signature).toBe(`nrefs:var|case:mixed|eff:yes|tok:code|smooth:exp|version:${VERSION}`);
    const metric = new Bleu({ tokenize: 'code', effectiveOrder: true });
    const refsPerSeg = [['def f(x):\n    return x + 1'], ['a = 1', 'a=1'], ['']];
    const hypList = ['def f(y):\n    return y + 1', 'a = 1', 'x'];
    expect(bleu.score).toBe(scoreCorpus(metric, hypList, refsPerSeg).score);
    expect(bleu.segments).toEqual(hypList.map((h, i) => scoreCorpus(metric, [h], [refsPerSeg[i]]).score));
    expect(bleu.segments[1]).toBeCloseTo(100, 9);
    expect(rouge.segments).toHaveLength(3);
    expect(rouge.segments[2]).toBe(0);
  });

  it('treats CRLF like LF and keeps empty lines as empty segments', async () => {
    const lf = file('lf.txt', 'the cat sat\n\non the mat\n');
    const crlf = file('crlf.txt', 'the cat sat\r\n\r\non the mat\r\n');
    const hyps = file('hyp3.txt', 'the cat sat\nsomething\non a mat\n');
    const a = await cli('score', '--refs', lf, '--hyps', hyps, '--metric', 'chrf', '--format', 'json', '--segments');
    const b = await cli('score', '--refs', crlf, '--hyps', hyps, '--metric', 'chrf', '--format', 'json', '--segments');
    expect(a.code).toBe(0);
    expect(JSON.parse(a.out)).toEqual(JSON.parse(b.out));
    expect(JSON.parse(a.out).systems[0].scores[0].segments[1]).toBe(0);
  });

  it('handles a 1 MB segment', async () => {
    const big = 'x = compute(a, b) + 1\n'.repeat(48_000);
    const refs = file('big-ref.jsonl', JSON.stringify(big) + '\n' + JSON.stringify('y = 2') + '\n');
    const hyps = file('big-hyp.jsonl', JSON.stringify(big.replaceAll('+ 1', '- 1')) + '\n' + JSON.stringify('y = 2') + '\n');
    const r = await cli('score', '--refs', refs, '--hyps', hyps, '--metric', 'bleu:tok=code', '--metric', 'chrf', '--metric', 'meteor:tok=code', '--metric', 'rouge2:tok=code', '--format', 'json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const scores = JSON.parse(r.out).systems[0].scores.map((s: { score: number }) => s.score);
    for (const s of scores) expect(s).toBeGreaterThan(50);
  });
});

describe('help texts say what the commands take', () => {
  it('score: a model folder is model-dir=DIR; report: exec, eval and run folders', async () => {
    const score = await cli('score', '--help');
    expect(score.out).toContain('model-dir=DIR');
    expect(score.out).not.toContain('model-dir=FILE');
    const report = await cli('report', '--help');
    const text = report.out.replace(/\s+/g, ' '); // help wraps lines
    expect(text).toContain('exec and eval folders');
    expect(text).toContain('run folders');
  });
});

describe('codegauge score: bad input', () => {
  it('different lengths name both files and both counts, exit 2', async () => {
    const refs = file('three.txt', 'a\nb\nc\n');
    const hyps = file('two.txt', 'a\nb\n');
    const r = await cli('score', '--refs', refs, '--hyps', hyps, '--metric', 'bleu');
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${hyps} has 2 segments, ${refs} has 3`);
  });

  it('an unknown metric lists the valid ones; an unknown key lists the valid keys', async () => {
    const refs = file('one.txt', 'a\n');
    let r = await cli('score', '--refs', refs, '--hyps', refs, '--metric', 'blue');
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown metric "blue"');
    for (const name of ['bleu', 'chrf', 'rouge1', 'rouge2', 'rougeL', 'rougeLsum', 'meteor', 'nltk-bleu']) expect(r.err).toContain(`  ${name}`);
    r = await cli('score', '--refs', refs, '--hyps', refs, '--metric', 'bleu:tokenize=13a');
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown key "tokenize" for metric bleu');
    expect(r.err).toContain('tok=13a|intl|char|none|code');
    r = await cli('score', '--refs', refs, '--hyps', refs, '--metric', 'chrf:beta=zero');
    expect(r.code).toBe(2);
    expect(r.err).toContain('invalid value "zero" for chrf key beta');
  });

  it('invalid JSON, a non-string line and an empty line report file:line', async () => {
    const refs = file('ok.jsonl', '"a"\n"b"\n');
    for (const [name, content, message] of [
      ['badjson.jsonl', '"a"\n{oops\n', ':2: invalid JSON'],
      ['number.jsonl', '"a"\n42\n', ':2: expected a JSON string, got number'],
      ['blank.jsonl', '"a"\n\n"b"\n', ':2: empty line'],
    ]) {
      const hyps = file(name, content);
      const r = await cli('score', '--refs', refs, '--hyps', hyps, '--metric', 'bleu');
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${hyps}${message}`);
    }
  });

  it('invalid UTF-8 names the file and line', async () => {
    const refs = file('ascii.txt', 'a\nb\n');
    const hyps = file('latin1.txt', Buffer.from([0x61, 0x0a, 0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const r = await cli('score', '--refs', refs, '--hyps', hyps, '--metric', 'chrf');
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${hyps}:2: invalid UTF-8`);
  });

  it('an empty reference file and a missing file are errors', async () => {
    const empty = file('empty.txt', '');
    let r = await cli('score', '--refs', empty, '--hyps', empty, '--metric', 'bleu');
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${empty}: no segments`);
    r = await cli('score', '--refs', join(dir, 'nope.txt'), '--hyps', empty, '--metric', 'bleu');
    expect(r.code).toBe(2);
    expect(r.err).toContain('nope.txt: file not found');
  });

  it('missing required options is a usage error', async () => {
    const r = await cli('score', '--metric', 'bleu');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/required option/);
  });
});

describe('the installed bin', () => {
  it('runs the README quick start on the bundled CoNaLa corpus', () => {
    const out = execFileSync(process.execPath, [
      join(ROOT, 'bin/codegauge.js'), 'score', '--refs', 'data/conala/refs.jsonl',
      '--hyps', 'data/conala/baseline.jsonl', '--hyps', 'data/conala/codex.jsonl',
      '--metric', 'bleu:tok=code', '--metric', 'chrf', '--metric', 'rougeL:tok=code', '--metric', 'meteor:tok=code', '--format', 'json',
    ], { cwd: ROOT, encoding: 'utf8' });
    const json = JSON.parse(out);
    expect(json.systems.map((s: { name: string }) => s.name)).toEqual(['baseline', 'codex']);
    // Codex is far better than the 2018 baseline on every metric (as in the paper's human grades).
    for (let m = 0; m < 4; m++) expect(json.systems[1].scores[m].score).toBeGreaterThan(json.systems[0].scores[m].score);
  });

  it('exits 2 on bad input', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/codegauge.js'), 'score', '--refs', 'missing.txt', '--hyps', 'x', '--metric', 'bleu'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('missing.txt: file not found');
  });
});

describe('codegauge score: code metrics', () => {
  it('takes the language from --lang or from a file name like hyps.py.jsonl, and prints components and levels', async () => {
    const refs = file('refs.py.jsonl', ['"def f(x):\\n    y = x + 1\\n    return y"', '"print(1)"'].join('\n') + '\n');
    const hyps = file('hyps.py.jsonl', ['"def f(a):\\n    b = a + 1\\n    return b"', '"print(2)"'].join('\n') + '\n');
    const inferred = await cli('score', '--refs', refs, '--hyps', hyps, '--metric', 'codebleu', '--metric', 'ruby', '--segments', '--format', 'json');
    expect(inferred.err).toBe('');
    const [codebleu, ruby] = JSON.parse(inferred.out).systems[0].scores;
    expect(codebleu.signature).toContain('lang:python');
    expect(Object.keys(codebleu.components)).toEqual(['ngram', 'weighted_ngram', 'syntax', 'dataflow']);
    expect(ruby.segment_details).toEqual(['graph', 'tree']);
    expect(ruby.details).toEqual({ graph: 1, tree: 1, string: 0 });
    const table = await cli('score', '--refs', refs, '--hyps', hyps, '--metric', 'codebleu:lang=python', '--metric', 'ruby', '--lang', 'python');
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/  hyps codebleu:lang=python: ngram=\d+\.\d\d weighted_ngram=/);
    expect(table.out).toMatch(/  hyps ruby: graph=1 tree=1 string=0/);
    const plain = file('plain.jsonl', '"x"\n"y"\n');
    const missing = await cli('score', '--refs', plain, '--hyps', plain, '--metric', 'ruby');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('metric ruby needs lang=');
  });
});

describe('codegauge compare', () => {
  it('prints sacrebleu-shaped JSON with the baseline first and p-values for the others', async () => {
    const toy = vector('sacrebleu.json').generated.paired_tests_toy;
    const refs = file('toy-refs.txt', toy.refs_streams[0].join('\n') + '\n');
    const base = file('toy-base.txt', toy.baseline.join('\n') + '\n');
    const sys = file('toy-sys.txt', toy.system.join('\n') + '\n');
    const r = await cli('compare', '--refs', refs, '--hyps', base, '--hyps', sys, '--metric', 'bleu', '--metric', 'chrf', '--paired-bs', '--format', 'json');
    expect(r.err).toMatch(/^warning: toy-sys: only \d+ segments; a paired test on so few is rough/);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.systems.map((s: { name: string }) => s.name)).toEqual(['toy-base', 'toy-sys']);
    expect(json.systems[0].scores[0].p_value).toBeNull();
    expect(json.systems[1].scores[0].p_value).toBe(toy.bs.results.BLEU[1].p_value);
    expect(json.systems[1].scores[1].p_value).toBe(toy.bs.results.chrF2[1].p_value);
    expect(Object.keys(json.systems[1].scores[0]).sort()).toEqual(['ci', 'mean', 'metric', 'name', 'p_value', 'score', 'signature']);
    const table = await cli('compare', '--refs', refs, '--hyps', base, '--hyps', sys, '--metric', 'bleu', '--paired-ar', '--samples', '2000', '--seed', '3');
    expect(table.code).toBe(0);
    expect(table.out).toContain('Baseline: toy-base');
    expect(table.out).toContain('paired approximate randomization, 2000 trials, seed 3');
    expect(table.out).toContain('|ar:2000|seed:3|');
  });
  it('rejects a missing or double test choice, a single system and a bad --samples', async () => {
    const f = file('cmp.txt', 'a\nb\n');
    expect((await cli('compare', '--refs', f, '--hyps', f, '--hyps', f, '--metric', 'bleu')).err).toContain('choose one test');
    expect((await cli('compare', '--refs', f, '--hyps', f, '--hyps', f, '--metric', 'bleu', '--paired-bs', '--paired-ar')).code).toBe(2);
    expect((await cli('compare', '--refs', f, '--hyps', f, '--metric', 'bleu', '--paired-bs')).err).toContain('at least one system');
    const bad = await cli('compare', '--refs', f, '--hyps', f, '--hyps', f, '--metric', 'bleu', '--paired-bs', '--samples', '0');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--samples must be an integer from 1 to 1000000');
  });
});

describe('codegauge meta', () => {
  it('correlates metric columns with the truth, per corpus and per group, from JSONL or CSV', async () => {
    const rows = [
      { problem: 'a', passed: true, bleu: 0.9, chrf: 0.8 },
      { problem: 'a', passed: false, bleu: 0.2, chrf: 0.3 },
      { problem: 'a', passed: true, bleu: 0.7, chrf: 0.4 },
      { problem: 'b', passed: false, bleu: 0.1, chrf: null },
      { problem: 'b', passed: true, bleu: 0.6, chrf: 0.9 },
      { problem: 'b', passed: false, bleu: 0.3, chrf: 0.2 },
    ];
    const jsonl = file('meta.jsonl', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const r = await cli('meta', '--input', jsonl, '--truth', 'passed', '--metric-column', 'bleu', '--metric-column', 'chrf', '--group', 'problem', '--samples', '50', '--format', 'json');
    expect(r.err).toBe('');
    const json = JSON.parse(r.out);
    expect(json.metrics.map((m: { metric: string; n: number }) => [m.metric, m.n])).toEqual([['bleu', 6], ['chrf', 5]]);
    const bleu = json.metrics[0];
    expect(Object.keys(bleu.corpus)).toEqual(['pearson', 'spearman', 'kendall_b', 'kendall_c']);
    expect(bleu.corpus.kendall_b.p).toBeGreaterThan(0);
    expect(bleu.corpus.pearson.ci).toHaveLength(2);
    expect(bleu.example.groups).toBe(2);
    expect(bleu.pairwise_kendall.tau).toBe(1);
    const csv = file('meta.csv', 'problem,passed,bleu\na,1,0.9\na,0,0.2\nb,1,0.6\nb,0,0.3\n');
    const c = await cli('meta', '--input', csv, '--truth', 'passed', '--metric-column', 'bleu', '--samples', '0');
    expect(c.code).toBe(0);
    expect(c.out).toContain('bleu  (n = 4)');
  });
  it('names the file, line and column of a bad value, and an unknown column', async () => {
    const bad = file('bad.jsonl', '{"t": 1, "m": 0.5}\n{"t": 0, "m": "high"}\n');
    let r = await cli('meta', '--input', bad, '--truth', 't', '--metric-column', 'm');
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${bad}:2: column "m": expected a number, got "high"`);
    r = await cli('meta', '--input', bad, '--truth', 't', '--metric-column', 'x');
    expect(r.code).toBe(2);
    expect(r.err).toContain('no column "x"; columns: t, m');
  });
});

describe('codegauge meta --model-pairs and codegauge aggregate', () => {
  it('runs the model-pair study on a long table and bins the verdicts', async () => {
    const items = readJson<any[]>('data/codegen-metrics/conala-all-grades.json.gz').slice(0, 120);
    const systems = ['baseline', 'tranx-annot', 'codex'];
    const rows = items.flatMap((x, i) => systems.map((s) => JSON.stringify({ item: i, system: s, output: x[s], grade: x[`grade-${s}`], chrf: x[`chrf-${s}`] })));
    const input = file('pairs.jsonl', rows.join('\n') + '\n');
    const r = await cli('meta', '--input', input, '--truth', 'grade', '--metric-column', 'chrf', '--group', 'item', '--system', 'system', '--output-column', 'output', '--model-pairs', '--samples', '0', '--study-samples', '100', '--format', 'json');
    expect(r.err).toBe('');
    const mp = JSON.parse(r.out).model_pairs;
    expect(mp.systems.slice(0, 3)).toEqual(systems);
    expect(mp.synthetic).toBeGreaterThan(10);
    const bins = mp.bins.chrf;
    expect(bins.map((b: { bin: string }) => b.bin)).toEqual(['<2', '[2,5)', '[5,10)', '>=10']);
    expect(bins.reduce((s: number, b: { pairs: number }) => s + b.pairs, 0)).toBe((mp.systems.length * (mp.systems.length - 1)) / 2);
    const missing = await cli('meta', '--input', input, '--truth', 'grade', '--metric-column', 'chrf', '--model-pairs');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--model-pairs needs --group');
  });
  it('aggregates graders with M-MSR or the mean', async () => {
    const human = readJson<any[]>('data/codegen-metrics/hs-human-grades.json.gz');
    const rows = human.flatMap((x, i) => Object.entries<number>(x['grade-gcnn']).map(([w, g]) => JSON.stringify({ item: i, grader: w, grade: g })));
    const input = file('grades.jsonl', rows.join('\n') + '\n');
    const r = await cli('aggregate', '--input', input, '--task', 'item', '--worker', 'grader', '--label', 'grade', '--format', 'json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.items).toHaveLength(human.length);
    expect(Object.keys(json.skills)).toEqual(['grader1', 'grader2', 'grader3', 'grader4']);
    const mean = await cli('aggregate', '--input', input, '--task', 'item', '--worker', 'grader', '--label', 'grade', '--method', 'mean', '--format', 'json');
    const first = Object.values<number>(human[0]['grade-gcnn']);
    expect(JSON.parse(mean.out).items[0].label).toBeCloseTo(first.reduce((s, x) => s + x, 0) / first.length, 12);
  });
});
