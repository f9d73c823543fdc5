import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { STARTER_CONFIG } from '../src/config/starter.js';
import { InputError } from '../src/errors.js';
import { cli } from './helpers.js';

/** The config schema: a wrong key or value is an error naming the file, the line and what is allowed. */
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-config-'));
});
function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
function errorOf(path: string): InputError {
  try {
    loadConfig(path);
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an error');
}

describe('config validation', () => {
  it('the starter config is valid and its defaults are filled in', () => {
    const { config } = loadConfig(write('starter.yaml', STARTER_CONFIG));
    expect(Object.keys(config.data!.systems)).toEqual(['baseline', 'best-tranx', 'codex']);
    expect(config.exec!.k).toEqual([1]);
    expect(config.llm.concurrency).toBe(4);
    expect(config.judges).toEqual([]);
  });

  it('an unknown key names the file, its line and the allowed keys', () => {
    const path = write('typo.yaml', 'version: 1\ndata:\n  refs: bundled:conala/refs.jsonl\n  sytems:\n    a: bundled:conala/codex.jsonl\n');
    const e = errorOf(path);
    expect(e.file).toBe(path);
    expect(e.line).toBe(4);
    expect(e.message).toContain('data.sytems: unknown key "sytems"; allowed: refs, systems, lang, problems');
  });

  it('a wrong enum value lists the allowed values, at its line', () => {
    const path = write('enum.yaml', STARTER_CONFIG.replace('test: paired-bs', 'test: bootstrap'));
    const e = errorOf(path);
    const line = STARTER_CONFIG.split('\n').findIndex((l) => l.includes('test: paired-bs')) + 1;
    expect(e.line).toBe(line);
    expect(e.message).toContain('compare.test: "bootstrap" is not allowed; allowed values: paired-bs, paired-ar');
  });

  it('a bad metric spec, a missing file and an unknown baseline system are located', () => {
    let e = errorOf(write('metric.yaml', STARTER_CONFIG.replace('  - rougeL:tok=code', '  - rougeL:tok=kode')));
    expect(e.message).toMatch(/metrics\.2: .*tok/);
    e = errorOf(write('file.yaml', STARTER_CONFIG.replace('bundled:conala/codex.jsonl', 'nowhere.jsonl')));
    expect(e.message).toContain('data.systems.codex: file not found');
    expect(e.line).toBe(STARTER_CONFIG.split('\n').findIndex((l) => l.includes('codex: bundled')) + 1);
    e = errorOf(write('base.yaml', STARTER_CONFIG.replace('baseline: baseline', 'baseline: gpt')));
    expect(e.message).toContain('"gpt" is not a system; allowed values: baseline, best-tranx, codex');
  });

  it('JSON configs are read the same way, with lines', () => {
    const path = write('c.json', '{\n  "version": 1,\n  "metrics": ["chrf"],\n  "colour": "red"\n}\n');
    const e = errorOf(path);
    expect(e.line).toBe(4);
    expect(e.message).toContain('unknown key "colour"');
  });

  it('invalid YAML and a wrong type are input errors with a line; the CLI exits 2', async () => {
    expect(errorOf(write('bad.yaml', 'data: [\n')).message).toContain('invalid YAML');
    const e = errorOf(write('type.yaml', 'confidence: many\n'));
    expect(e.message).toContain('confidence: expected number, got string');
    expect(e.line).toBe(1);
    const r = await cli('run', '--config', join(dir, 'type.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/type\.yaml:1: confidence: expected number/);
  });

  it('a judge naming no model and no spec is an error listing the models', () => {
    const path = write('judge.yaml', STARTER_CONFIG + 'judges:\n  - method: dsa\n    model: gpt\n');
    expect(errorOf(path).message).toContain('"gpt" is neither a name in models (none) nor a model spec');
  });

  it('the starter\'s commented-out model parts are valid once uncommented', () => {
    const lines = STARTER_CONFIG.split('\n');
    const from = lines.findIndex((l) => l.startsWith('# models:'));
    const text = lines
      .map((l, i) => (i >= from && l.startsWith('# ') ? l.slice(2) : l))
      .map((l) => l.replace(/^ {4}# coder: \{/, '    coder: {'))
      .join('\n');
    expect(text).toMatch(/^judges:/m);
    const { config } = loadConfig(write('uncommented.yaml', text));
    expect(config.exec!.systems.coder).toEqual({ model: 'coder', n: 10, temperature: 0.8, max_tokens: 1024, seed: 0 });
    expect(config.judges[0]).toMatchObject({ method: 'dsa-simple', model: 'judge', segment_threshold: 50 });
    expect(config.llm.batch).toBe(false);
  });

  it('generated exec systems: defaults, an unknown model, a misspelt key, a bad n or name are located', () => {
    const exec = (systems: string) => STARTER_CONFIG.replace('    canonical: canonical   #', `${systems}\n    canonical: canonical   #`);
    const line = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
    const ok = loadConfig(write('gen-ok.yaml', exec('    coder: {model: "openai:coder"}')));
    expect(ok.config.exec!.systems.coder).toEqual({ model: 'openai:coder', n: 1, seed: 0 });
    let text = exec('    coder: {model: coder, n: 4}');
    let e = errorOf(write('gen-model.yaml', text));
    expect(e.message).toContain('exec.systems.coder.model: "coder" is neither a name in models (none) nor a model spec');
    expect(e.line).toBe(line(text, 'coder: {model'));
    text = exec('    coder:\n      model: openai:coder\n      temprature: 0.8');
    e = errorOf(write('gen-key.yaml', text));
    expect(e.message).toContain('exec.systems.coder.temprature: unknown key "temprature"; allowed: model, n, temperature, max_tokens, seed');
    expect(e.line).toBe(line(text, 'temprature'));
    e = errorOf(write('gen-n.yaml', exec('    coder: {model: openai:coder, n: 0}')));
    expect(e.message).toContain('exec.systems.coder.n: must be at least 1');
    e = errorOf(write('gen-type.yaml', exec('    coder: 3')));
    expect(e.message).toContain('exec.systems.coder: expected a string or an object with keys model, n, temperature, max_tokens, seed');
    e = errorOf(write('gen-name.yaml', exec('    "a/b": {model: openai:coder}')));
    expect(e.message).toContain('exec.systems.a/b: a system name of letters, digits, . _ - @');
    e = errorOf(write('threshold.yaml', STARTER_CONFIG + 'judges:\n  - method: dsa\n    model: openai:j\n    segment_threshold: 101\n'));
    expect(e.message).toContain('judges.0.segment_threshold: must be at most 100');
  });

  it('run without a config here says how to make one', async () => {
    const r = await cli('run', '--config', join(dir, 'absent.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('--config: file not found');
  });
});
