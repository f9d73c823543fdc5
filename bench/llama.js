// Tokens per second of the embedded llama.cpp runtime by thread count (`npm run bench`): a local model asked through
// codegauge's own client, one sequence at a time, fresh contexts per thread count, thread counts interleaved over
// rounds. Generation is a JSON-schema reply with one bounded string (the grammar path the judges take), so a model
// of random weights writes the same number of tokens each time; prompt evaluation is a prompt of ~2,000 tokens.
//
//   npm run build && node bench/llama.js [--model llama:PATH.gguf | hf:...] [--threads 1,2,4] [--rounds 3]
//
// Without --model it writes the tiny random model of the tests (scripts/tiny-gguf.mjs) and measures that: its
// figures show the runtime's per-token overhead and how threads behave on this machine, not a real model's speed.
// On a machine with fewer cores than threads, llama.cpp's threads wait on each other by spinning: that is the case
// this bench is for (node-llama-cpp's default of 4 threads on 2 cores).
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LlmClient, parseModelSpec } from '../dist/index.js';
import { defaultThreads } from '../dist/llm/threads.js';

const ROOT = new URL('..', import.meta.url).pathname;
const argv = process.argv.slice(2);
const arg = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
let model = arg('--model');
if (!model) {
  const dir = join(ROOT, 'test-output', 'bench');
  mkdirSync(dir, { recursive: true });
  const { writeTinyGguf } = await import(pathToFileURL(join(ROOT, 'scripts', 'tiny-gguf.mjs')).href);
  model = `llama:${writeTinyGguf(join(dir, 'tiny.gguf'))}`;
}
const threads = (arg('--threads') ?? `1,2,4,${defaultThreads()}`).split(',').map(Number).filter((t, i, all) => t > 0 && all.indexOf(t) === i);
const rounds = Number(arg('--rounds') ?? 3);
const spec = parseModelSpec(model);
const schema = { name: 'bench', schema: { type: 'object', properties: { text: { type: 'string', maxLength: 400 } }, required: ['text'], additionalProperties: false } };
const prompt = 'Describe what this code does.\n\n' + 'def f(xs):\n    return [x * 2 for x in xs if x % 3]\n'.repeat(40);

console.log(`\nllama.cpp tokens/s by thread count: ${model}, ${rounds} interleaved round(s), default threads here ${defaultThreads()}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const results = new Map(threads.map((t) => [t, { generate: [], prompt: [] }]));
for (let round = 0; round < rounds; round++) {
  for (const t of round % 2 ? [...threads].reverse() : threads) {
    const client = new LlmClient({ concurrency: 1, store: null, local: { threads: t } });
    // An untimed request loads the model and creates this thread count's context.
    await client.chat(spec, { messages: [{ role: 'user', content: `warm-up ${round}` }], maxTokens: 8 });
    const warm = client.localUsage();
    await client.chat(spec, { messages: [{ role: 'user', content: `${prompt}\n(round ${round})` }], schema, maxTokens: 2000, seed: round });
    const u = client.localUsage();
    const generated = u.completionTokens - warm.completionTokens;
    const generatingS = (u.generatingMs - warm.generatingMs) / 1000;
    const promptS = (u.busyMs - warm.busyMs) / 1000 - generatingS;
    results.get(t).generate.push(generated / generatingS);
    results.get(t).prompt.push((u.promptTokens - warm.promptTokens) / promptS);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log('threads  generation tok/s (median [min-max])   prompt tok/s (median)');
for (const [t, r] of results) {
  console.log(`${String(t).padStart(7)}  ${median(r.generate).toFixed(0).padStart(8)} [${Math.min(...r.generate).toFixed(0)}-${Math.max(...r.generate).toFixed(0)}]${' '.repeat(18)}${median(r.prompt).toFixed(0).padStart(8)}`);
}
console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
