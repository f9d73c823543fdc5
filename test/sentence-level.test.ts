import { describe, expect, it } from 'vitest';
import { scoreSystems } from '../src/index.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, vector } from './helpers.js';

/** `score --segments` follows sacrebleu's CLI: sentence BLEU with effective order unless `eff` is given. */
describe('sentence scores = sacrebleu --sentence-level', () => {
  const expected = vector('sacrebleu_sentence_level.json');
  const lines = (path: string) => readJsonLines(path);
  const refs = lines('data/conala/refs.jsonl').map((r) => [(Array.isArray(r) ? r[0] : r).replaceAll('\n', ' ')]);
  const hyps = lines('data/conala/codex.jsonl').map((h: string) => h.replaceAll('\n', ' '));

  it('equals every segment score, with eff:yes in the segment signature only', async () => {
    const report = await scoreSystems({ references: refs, systems: [{ name: 'codex', hypotheses: hyps }], metrics: ['bleu'], segments: true });
    const bleu = report.systems[0].scores[0];
    expect(bleu.segments!.length).toBe(expected.scores.length);
    bleu.segments!.forEach((x, i) => expect(Math.abs(x - expected.scores[i])).toBeLessThan(1e-6));
    expect(bleu.signature).toContain('|eff:no|');
    expect(`BLEU|${bleu.segment_signature}`.replace(/version:[^|]+$/, '')).toBe(expected.signature.replace(/version:[^|]+$/, ''));
  });

  it('an explicit eff=no keeps the corpus setting for sentences (and differs on segments with a zero precision)', async () => {
    const report = await scoreSystems({ references: refs, systems: [{ name: 'codex', hypotheses: hyps }], metrics: ['bleu:eff=no'], segments: true });
    const bleu = report.systems[0].scores[0];
    expect(bleu.segment_signature).toBeUndefined();
    const differing = bleu.segments!.filter((x, i) => Math.abs(x - expected.scores[i]) > 1e-6).length;
    expect(differing).toBe(7);
  });
});

function readJsonLines(relative: string): any[] {
  return readFileSync(join(ROOT, relative), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
}
