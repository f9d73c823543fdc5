import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, ROOT } from './helpers.js';

/**
 * What a team gets from `npm install codegauge`: the packed tarball installed into an empty project from the npm
 * registry (scripts/install-size.mjs). Needs the registry, as `npm ci` does; skipped, saying so, when it is not
 * reachable.
 */
const registry = spawnSync('npm', ['ping'], { encoding: 'utf8', timeout: 30_000 });
const reachable = registry.status === 0;
if (!reachable) console.warn(`install-size: skipped, the npm registry is not reachable (${(registry.stderr ?? '').trim().split('\n').pop()})`);

const METRICS = ['bleu', 'chrf', 'rougeL', 'meteor', 'codebleu:lang=python', 'ruby:lang=python', 'crystalbleu:k=50', 'nltk-bleu', 'codebleu-cgm'];

describe.skipIf(!reachable)('the packed package installed into an empty project', () => {
  it('fits in 300 MB, runs every metric with the numbers of this checkout, and names the optional model packages', async () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'install-size.mjs'), '--json'], { encoding: 'utf8', timeout: 540_000 });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as { mb: number; scores: { metric: string; score: number }[]; local: { status: number; stderr: string }; llama: { status: number; stderr: string } };
    expect(report.mb).toBeLessThanOrEqual(300);
    const conala = join(ROOT, 'data', 'conala');
    const here = await cli('score', '--refs', join(conala, 'refs.jsonl'), '--hyps', join(conala, 'codex.jsonl'), ...METRICS.flatMap((m) => ['--metric', m]), '--format', 'json');
    expect(here.code, here.err).toBe(0);
    const expected = (JSON.parse(here.out) as { systems: { scores: { metric: string; score: number }[] }[] }).systems[0].scores.map((s) => ({ metric: s.metric, score: s.score }));
    expect(report.scores).toEqual(expected);
    expect(report.local.status).toBe(2);
    // One line saying what to run, with the variable that keeps onnxruntime-node's install from fetching CUDA.
    expect(report.local.stderr).toBe('codegauge: error: --embed local (sentence embeddings on this machine) needs the optional package @huggingface/transformers; install it with: ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install @huggingface/transformers@3');
    expect(report.llama.status).toBe(2);
    expect(report.llama.stderr).toMatch(/npm install node-llama-cpp@3\.21\.1/);
  }, 600_000);
});
