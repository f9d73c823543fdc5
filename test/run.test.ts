import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOfId } from '../src/config/shard.js';
import { readBenchmark } from '../src/exec/benchmarks/bundled.js';
import { startFakeLlmServer, type FakeServer } from './fixtures/fake-llm-server.js';
import { scriptedReply } from './fixtures/scripted-coder.js';
import { cli, ROOT } from './helpers.js';

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
    // auto never falls back to unisolated processes on Linux: it stops and names bubblewrap (resolveSandboxMode).
    expect(text).toContain('sandbox: auto            # bubblewrap; on Linux without it, an error saying what to install (process: limits only, no isolation)');
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
    // The docs' example of an exec signature (docs/execution.md) has the real one's fields and units (timeout 3 s, 1024 MB here).
    const example = /Signature: `(exec\|[^`]+)`/.exec(readFileSync(join(ROOT, 'docs', 'execution.md'), 'utf8'))![1];
    const fields = (sig: string) => sig.split('|').map((f) => (/^(runner|sandbox|problems|version):/.test(f) ? f.split(':')[0] : f));
    expect(fields(example)).toEqual(fields(run.scores.find((s: any) => s.metric === 'pass@1').signature));
    const score = JSON.parse(readFileSync(join(out, 'score.json'), 'utf8'));
    expect(score.kind).toBe('score');
    // `report` on the run folder reads all of its results at once.
    const report = await cli('report', out, '--out', join(dir, 'folder-report.html'));
    expect(report.code, report.err).toBe(0);
    expect(report.out).toContain('(score, compare, exec)');
    // One report builder: run's own report.html is what `report` builds from the folder, execution and score CIs included.
    const again = await cli('report', out, '--out', join(out, 'again.html'), '--title', 'codegauge starter run');
    expect(again.code, again.err).toBe(0);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(readFileSync(join(out, 'again.html'), 'utf8') === html).toBe(true);
    expect(html).toContain('<h2>Execution <small>exec/summary.json</small></h2>');
    const [lo, hi] = chrf.ci.map((x: number) => x.toFixed(2));
    expect(html).toContain(`<td>${chrf.score.toFixed(2)} [${lo}, ${hi}]</td>`);
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
    // The gate compares the numbers the table shows: BLEU's corpus score (12.37 for baseline), not its sentence mean.
    for (const c of sameRun.baseline.comparisons) {
      const shown = sameRun.scores.find((s: any) => s.system === c.system && s.metric === (c.kind === 'exec' ? 'pass@1' : c.metric));
      expect([c.aggregation, c.score, c.baseline_score]).toEqual([shown.aggregation, shown.score, shown.score]);
    }
    expect(sameRun.baseline.comparisons.find((c: any) => c.system === 'baseline' && c.metric === 'bleu:tok=code').score.toFixed(2)).toBe('12.37');
    expect(readFileSync(junit, 'utf8')).toContain('<testsuite name="codegauge gates"');
    expect(readFileSync(summary, 'utf8')).toContain('| codex | chrf |');
    // codex now answers with the baseline system's outputs: a large, significant regression.
    const worse = join(dir, 'worse.yaml');
    writeFileSync(worse, readFileSync(config, 'utf8').replace('codex: bundled:conala/codex.jsonl', 'codex: bundled:conala/baseline.jsonl'));
    const tripped = await cli('run', '--config', worse, '--store', store, '--baseline', 'main', '--fail-if-worse', '0.5', '--junit', junit);
    expect(tripped.code).toBe(1);
    expect(tripped.err).toMatch(/gate failed: codex chrf \(corpus\) is worse than baseline "main" by more than 1: difference -\d+\.\d+, 95% CI \[-\d+\.\d+, -\d+\.\d+\]/);
    expect(tripped.err).toMatch(/gate failed: codex bleu:tok=code \(corpus\) is worse than baseline "main" by more than 0\.5/);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<failure message="codex chrf \(corpus\) is worse than baseline/);
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
      expect(r.out).toMatch(/codex\s+chrf\s+corpus\s+41\.11/);
      expect(existsSync(join(here, 'codegauge-results', 'report.html'))).toBe(true);
    } finally {
      process.chdir(cwd);
    }
  });
});

/**
 * exec.systems entries that a model writes, through the scripted server (as test/eval.test.ts): HumanEval/53 is
 * always answered correctly, HumanEval/0 never, HumanEval/10 for even seeds, HumanEval/2 for seed 0 only; with
 * n = 4: c = 4, 0, 2, 1, so pass@1 = 43.75, pass@2 = 58.33, pass@4 = 75. Model `openai:worse` is always wrong.
 */
describe('codegauge run: samples generated by a configured model', () => {
  let server: FakeServer;
  let gdir: string;
  let gconfig: string;
  const humaneval = readBenchmark('humaneval');
  const ids = ['HumanEval/53', 'HumanEval/0', 'HumanEval/10', 'HumanEval/2'];
  const chosen = ids.map((id) => humaneval.problems.find((p) => p.taskId === id)!);
  const generationRequests = () => server.requests.filter((q) => q.body.messages?.[0]?.content?.startsWith('Complete the following'));
  const configText = (model: string, extra = '') => `out: gen-out
store: gen-store.sqlite
exec:
  problems: problems.jsonl
  systems:
    coder: {model: coder, n: 4, temperature: 0.8}
    canonical: canonical
  k: [1, 2, 4]
  jobs: 2
  fail_if_worse: 0
models:
  coder:
    model: ${model}
    base_url: ${server.url}
llm:
  retries: 0
${extra}`;

  beforeAll(async () => {
    gdir = mkdtempSync(join(tmpdir(), 'codegauge-run-gen-'));
    writeFileSync(join(gdir, 'problems.jsonl'), chosen.map((p) => JSON.stringify({ task_id: p.taskId, prompt: p.prompt, entry_point: p.entryPoint, canonical_solution: p.canonicalSolution, test: p.tests })).join('\n') + '\n');
    server = await startFakeLlmServer({ reply: (body) => scriptedReply(chosen, body) });
    gconfig = join(gdir, 'codegauge.config.yaml');
    writeFileSync(gconfig, configText('openai:coder'));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('generates n samples per problem (seed + s), extracts, executes and reports pass@k; a rerun sends no request and runs no program', async () => {
    const first = await cli('run', '--config', gconfig, '--format', 'json');
    expect(first.err).not.toMatch(/error/);
    expect(first.code).toBe(0);
    const run = JSON.parse(first.out);
    const pass = (system: string, k: number) => run.scores.find((s: any) => s.system === system && s.metric === `pass@${k}`).score;
    expect(pass('coder', 1)).toBeCloseTo(43.75, 10);
    expect(pass('coder', 2)).toBeCloseTo((100 * (1 + 0 + 5 / 6 + 0.5)) / 4, 10);
    expect(pass('coder', 4)).toBeCloseTo(75, 10);
    expect(pass('canonical', 1)).toBe(100);
    expect(generationRequests().map((q) => q.body.seed).sort()).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    expect(generationRequests().every((q) => q.body.temperature === 0.8 && q.body.model === 'coder')).toBe(true);
    expect(run.generation).toEqual([{ system: 'coder', model: 'openai:coder', n: 4, problems: 4, reused: 0, asked: 16 }]);
    expect(run.llm).toMatchObject({ requests: 16, cache_hits: 0 });
    expect(run.exec).toMatchObject({ ran: 20, reused: 0 });
    const out = join(gdir, 'gen-out', 'exec');
    const samples = readFileSync(join(out, 'samples', 'coder.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(samples).toHaveLength(16);
    expect(samples[0]).toMatchObject({ task_id: 'HumanEval/53', sample: 0, extraction: ['fenced', 'sanitized'] });
    expect(samples[0].raw).toContain('Here you go');
    expect(readFileSync(join(out, 'generations', 'coder.jsonl'), 'utf8').trim().split('\n')).toHaveLength(16);
    const before = server.requests.length;
    const second = await cli('run', '--config', gconfig, '--format', 'json');
    expect(second.code).toBe(0);
    const again = JSON.parse(second.out);
    expect(server.requests.length).toBe(before);
    expect(again.exec).toMatchObject({ ran: 0, reused: 20 });
    expect(again.generation[0]).toMatchObject({ reused: 16, asked: 0 });
    expect(again.llm).toMatchObject({ requests: 0 });
    expect(again.scores).toEqual(run.scores);
  });

  it('--shard i/N generates only the shard\'s problems', async () => {
    const seen: string[] = [];
    for (const i of [1, 2]) {
      const r = await cli('run', '--config', gconfig, '--shard', `${i}/2`, '--format', 'json');
      expect(r.err).not.toMatch(/error/);
      expect(r.code).toBe(0);
      const rows = readFileSync(join(gdir, 'gen-out', `shard-${i}-of-2`, 'exec', 'generations', 'coder.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const tasks = [...new Set(rows.map((g) => g.task_id as string))];
      for (const t of tasks) expect(shardOfId(t, 2)).toBe(i);
      expect(rows.length).toBe(tasks.length * 4);
      expect(JSON.parse(r.out).llm.requests).toBe(0); // the cache answers what the unsharded run asked
      seen.push(...tasks);
    }
    expect(seen.sort()).toEqual([...ids].sort());
  });

  it('a baseline gates pass@k of a generated system: another model that writes wrong code trips it', async () => {
    const saved = await cli('run', '--config', gconfig, '--save-baseline', 'gen');
    expect(saved.code).toBe(0);
    const same = await cli('run', '--config', gconfig, '--baseline', 'gen', '--format', 'json');
    expect(same.code).toBe(0);
    expect(JSON.parse(same.out).baseline.comparisons.find((c: any) => c.system === 'coder').status).toBe('passed');
    const worse = join(gdir, 'worse.yaml');
    writeFileSync(worse, configText('openai:worse'));
    const tripped = await cli('run', '--config', worse, '--baseline', 'gen');
    expect(tripped.code).toBe(1);
    expect(tripped.err).toMatch(/gate failed: coder passed \(mean\) is worse than baseline "gen" by more than 0/);
  });

  it('a server that fails: exit 1 with one line; what was answered is kept and the rerun asks only for the rest', async () => {
    let failing = true;
    const flaky = await startFakeLlmServer({
      reply: (body) => scriptedReply(chosen, body),
      fault: (_i, body) => (failing && body.messages[0].content.includes('def has_close_elements(') ? '500' : 'none'),
    });
    try {
      const config = join(gdir, 'flaky.yaml');
      writeFileSync(config, configText('openai:coder').replace(server.url, flaky.url).replace('gen-out', 'flaky-out').replace('gen-store', 'flaky-store'));
      const first = await cli('run', '--config', config);
      expect(first.code).toBe(1);
      expect(first.err.trim().split('\n').filter((l) => l.startsWith('codegauge:'))).toHaveLength(1);
      expect(first.err).toMatch(/500|boom/);
      expect(readFileSync(join(gdir, 'flaky-out', 'exec', 'generations', 'coder.jsonl'), 'utf8').trim().split('\n')).toHaveLength(12);
      failing = false;
      const before = flaky.requests.length;
      const second = await cli('run', '--config', config, '--format', 'json');
      expect(second.code).toBe(0);
      expect(flaky.requests.length - before).toBe(4);
      expect(JSON.parse(second.out).generation[0]).toMatchObject({ reused: 12, asked: 4 });
    } finally {
      await flaky.close();
    }
  });
});

describe('codegauge run --junit: a test case per judged segment', () => {
  it('segments under the judge\'s segment_threshold and segments the judge could not grade are failures with the reason', async () => {
    const jdir = mkdtempSync(join(tmpdir(), 'codegauge-run-judge-'));
    // ICE grades: "y = i" hypotheses 1 (25), the others 4 (100); segment 5's replies ("y = 4") never carry a grade.
    const server = await startFakeLlmServer({
      reply: (body) => {
        const text: string = body.messages.map((m: { content: string }) => m.content).join('\n');
        if (text.includes('y = 4')) return 'I cannot tell.';
        return /\by = \d/.test(text) ? 'Functional correctness: 1' : 'Functional correctness: 4';
      },
    });
    try {
      const refs = Array.from({ length: 6 }, (_, i) => `x = ${i}`);
      writeFileSync(join(jdir, 'refs.jsonl'), refs.map((r) => JSON.stringify(r)).join('\n') + '\n');
      writeFileSync(join(jdir, 'sys.jsonl'), refs.map((r, i) => JSON.stringify(i % 2 ? r : `y = ${i}`)).join('\n') + '\n');
      const config = join(jdir, 'codegauge.config.yaml');
      writeFileSync(config, `out: out\nstore: store.sqlite\ndata:\n  refs: refs.jsonl\n  lang: python\n  systems:\n    sys: sys.jsonl\nmodels:\n  judge:\n    model: openai:judge\n    base_url: ${server.url}\nllm:\n  retries: 0\njudges:\n  - method: ice\n    model: judge\n    segment_threshold: 50\n`);
      const junit = join(jdir, 'junit.xml');
      const r = await cli('run', '--config', config, '--junit', junit, '--format', 'json');
      expect(r.err).not.toMatch(/internal error/);
      expect(r.code).toBe(0);
      const run = JSON.parse(r.out);
      expect(run.judge_segments[0]).toMatchObject({ system: 'sys', metric: 'ice', threshold: 50 });
      expect(run.judge_segments[0].segments.map((s: any) => s.score)).toEqual([25, 100, 25, 100, null, 100]);
      expect(run.judge_segments[0].segments[4].error).toBeTruthy();
      const xml = readFileSync(junit, 'utf8');
      expect(xml).toContain('<testsuite name="codegauge judge segments" tests="6" failures="3"');
      expect(xml).toContain('<testcase classname="codegauge.judge.sys.ice" name="segment 1" time="0.000">\n      <failure message="sys ice segment 1: scored 25.00, under the threshold 50" type="below-threshold">');
      expect(xml).toMatch(/<testcase classname="codegauge\.judge\.sys\.ice" name="segment 5" time="0\.000">\n {6}<failure message="sys ice segment 5: the judge produced no score: [^"]+" type="judge-failure">/);
      expect(xml).toMatch(/<testcase classname="codegauge\.judge\.sys\.ice" name="segment 2" time="0\.000">\n {6}<system-out>ice = 100\.00<\/system-out>/);
    } finally {
      await server.close();
    }
  });
});
