import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cosine, createEmbedder } from '../src/llm/embeddings.js';
import { TINY_VOCAB, expectedTinyEmbedding, writeTinyEmbedder } from './fixtures/tiny-embedder.js';

describe('local embeddings through a real transformers.js pipeline', () => {
  it('mean-pools and normalises a tiny ONNX BERT built for the test, offline', async () => {
    const dir = writeTinyEmbedder(mkdtempSync(join(tmpdir(), 'codegauge-embed-')));
    const embed = await createEmbedder({ spec: 'local', modelDir: dir });
    expect(embed.id).toBe('local:tiny-minilm');
    const [a, b, c] = await embed(['The user shall login', 'the user shall login.', 'display a list of items']);
    const id = (w: string) => TINY_VOCAB.indexOf(w);
    const expected = expectedTinyEmbedding([2, id('the'), id('user'), id('shall'), id('login'), 3]);
    a.forEach((v, i) => expect(v).toBeCloseTo(expected[i], 5));
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    expect(cosine(a, b)).toBeGreaterThan(cosine(a, c));
    expect(cosine(a, a)).toBeCloseTo(1, 12);
  }, 60_000);
});
