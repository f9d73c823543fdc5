import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli } from './helpers.js';

/** `codegauge init && codegauge run` on the bundled data, offline: every result file, resume, baselines and gates end to end. */
let dir: string;
let config: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codegauge-run-'));
  config = join(dir, 'codegauge.config.yaml');
});

describe('codegauge init && codegauge run', () => {
  it('init writes a commented starter config; a second init refuses to overwrite it', async () => {
    const r = await cli('init', '--config', config);
    expect(r.code).toBe(0);
    const text = readFileSync(config, 'utf8');
    expect(text).toContain('bundled:conala/refs.jsonl');
    expect(text).toMatch(/^# judges:/m); // the LLM part is there, commented out
    const again = await cli('init', '--config', config);
    expect(again.code).toBe(2);
    expect(again.err).toContain('exists; use --force');
  });

  it('run writes every result file and the report; a second run runs no program', async () => {
    const first = await cli('run', '--config', config, '--format', 'json');
    expect(first.err).not.toContain('internal error');
    expect(first.code).toBe(0);
    const run = JSON.parse(first.out);
    const out = join(dir, 'codegauge-results');
    for (const f of ['score.json', 'compare.json', 'exec/results.jsonl', 'exec/summary.json', 'items.jsonl', 'run.json', 'report.html']) expect(existsSync(join(out, f)), f).toBe(true);
    expect(run.exec.ran).toBe(10);
    const chrf = run.scores.find((s: any) => s.system === 'codex' && s.metric === 'chrf');
    expect(chrf.score).toBeCloseTo(41.11, 1); // the README's table
    expect(chrf.ci[0]).toBeLessThan(chrf.score);
    expect(run.scores.find((s: any) => s.metric === 'pass@1').score).toBe(100); // canonical solutions pass
    const score = JSON.parse(readFileSync(join(out, 'score.json'), 'utf8'));
    expect(score.kind).toBe('score');
    // `report` on the run folder reads all of its results at once.
    const report = await cli('report', out, '--out', join(dir, 'folder-report.html'));
    expect(report.code, report.err).toBe(0);
    expect(report.out).toContain('(score, compare, exec)');
    expect(JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')).kind).toBe('compare');
    const second = JSON.parse((await cli('run', '--config', config, '--format', 'json')).out);
    expect(second.exec).toMatchObject({ ran: 0, reused: 10 });
  });

  it('--save-baseline, then --baseline with --fail-if-worse: not tripping on the same data, tripping on a worse system', async () => {
    const store = join(dir, 'store.sqlite');
    const saved = await cli('run', '--config', config, '--store', store, '--save-baseline', 'main');
    expect(saved.code).toBe(0);
    expect(saved.out).toContain('saved baseline "main"');
    const junit = join(dir, 'junit.xml');
    const summary = join(dir, 'summary.md');
    const same = await cli('run', '--config', config, '--store', store, '--baseline', 'main', '--fail-if-worse', '0.5', '--junit', junit, '--summary', summary, '--format', 'json');
    expect(same.code).toBe(0);
    const sameRun = JSON.parse(same.out);
    expect(sameRun.baseline.comparisons.every((c: any) => c.status === 'passed')).toBe(true);
    expect(readFileSync(junit, 'utf8')).toContain('<testsuite name="codegauge gates"');
    expect(readFileSync(summary, 'utf8')).toContain('| codex | chrf |');
    // codex now answers with the baseline system's outputs: a large, significant regression.
    const worse = join(dir, 'worse.yaml');
    writeFileSync(worse, readFileSync(config, 'utf8').replace('codex: bundled:conala/codex.jsonl', 'codex: bundled:conala/baseline.jsonl'));
    const tripped = await cli('run', '--config', worse, '--store', store, '--baseline', 'main', '--fail-if-worse', '0.5', '--junit', junit);
    expect(tripped.code).toBe(1);
    expect(tripped.err).toMatch(/gate failed: codex chrf is worse than baseline "main" by more than 1: difference -\d+\.\d+, 95% CI \[-\d+\.\d+, -\d+\.\d+\]/);
    expect(tripped.err).toMatch(/gate failed: codex bleu:tok=code is worse than baseline "main" by more than 0\.5/);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<failure message="codex chrf is worse than baseline/);
  });

  it('a run on other references says the baseline is not comparable', async () => {
    const store = join(dir, 'store.sqlite');
    const refs = join(dir, 'refs.jsonl');
    writeFileSync(refs, readFileSync(join(__dirname, '..', 'data', 'conala', 'refs.jsonl'), 'utf8').replace('os.kill', 'os.killpg'));
    const other = join(dir, 'other.yaml');
    writeFileSync(other, readFileSync(config, 'utf8').replace('refs: bundled:conala/refs.jsonl', `refs: ${refs}`));
    const r = await cli('run', '--config', other, '--store', store, '--baseline', 'main');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/gate not evaluated: baseline "main" is not comparable: signatures differ/);
  });

  it('--baseline with an unknown name is a usage error listing the saved ones', async () => {
    const r = await cli('run', '--config', config, '--store', join(dir, 'store.sqlite'), '--baseline', 'nope');
    expect(r.code).toBe(2);
    expect(r.err).toContain('no baseline "nope"');
    expect(r.err).toContain('saved: main');
  });

  it('codegauge init && codegauge run in an empty folder, with no options', async () => {
    const here = mkdtempSync(join(tmpdir(), 'codegauge-init-'));
    const cwd = process.cwd();
    process.chdir(here);
    try {
      expect((await cli('init')).code).toBe(0);
      const r = await cli('run');
      expect(r.err).not.toContain('error');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/codex\s+chrf\s+41\.11/);
      expect(existsSync(join(here, 'codegauge-results', 'report.html'))).toBe(true);
    } finally {
      process.chdir(cwd);
    }
  });
});
