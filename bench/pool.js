// Throughput of the LLM server pool (`npm run bench`): N requests through codegauge's client to a fleet of local
// OpenAI-compatible servers that answer after a fixed latency. The ideal time is latency x requests / concurrency;
// the pool should stay within 1.2x of it. The servers run in a child process on 127.0.0.1 (a fleet is other
// machines: their work must not be counted against the client's).
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { createServer } from 'node:http';
import { LlmClient, parseModelSpec } from '../dist/index.js';

const LATENCY_MS = 100;
const REQUESTS = 400;

function startServer() {
  let inFlight = 0;
  let peak = 0;
  let served = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        served++;
        const { model } = JSON.parse(body);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
      }, LATENCY_MS);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/v1`, stats: () => ({ peak, served }) })));
}

if (process.argv[2] === '--servers') {
  // the child: start the servers, report their URLs, answer stats requests
  const fleet = await Promise.all(Array.from({ length: Number(process.argv[3]) }, startServer));
  process.on('message', () => process.send({ stats: fleet.map((f) => f.stats()) }));
  process.send({ urls: fleet.map((f) => f.url) });
} else {
  console.log(`\nLLM server pool: ${REQUESTS} requests, ${LATENCY_MS} ms fixed latency per request (servers in a child process)`);
  for (const { servers, concurrency } of [{ servers: 1, concurrency: 8 }, { servers: 2, concurrency: 16 }, { servers: 4, concurrency: 32 }]) {
    const child = fork(new URL(import.meta.url).pathname, ['--servers', String(servers)]);
    const next = () => new Promise((resolve) => child.once('message', resolve));
    const { urls } = await next();
    const client = new LlmClient({ baseUrls: urls, apiKey: 'x', concurrency, store: null, noCache: true, retries: 0 });
    const model = parseModelSpec('openai:bench');
    // one untimed round opens the connections and warms the code paths, as the other benches' warm-up runs do
    await Promise.all(Array.from({ length: concurrency }, (_, i) => client.chat(model, { messages: [{ role: 'user', content: `warm-up ${i}` }] })));
    child.send('stats');
    const { stats: warm } = await next();
    const started = Date.now();
    const cpu = process.cpuUsage();
    await Promise.all(Array.from({ length: REQUESTS }, (_, i) => client.chat(model, { messages: [{ role: 'user', content: `request ${i}` }] })));
    const seconds = (Date.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const ideal = (LATENCY_MS / 1000) * (REQUESTS / concurrency);
    child.send('stats');
    const { stats: per } = await next();
    child.kill();
    console.log(`  ${servers} server(s), concurrency ${concurrency}: ${seconds.toFixed(2)} s (ideal ${ideal.toFixed(2)} s, ${(seconds / ideal).toFixed(2)}x; target <= 1.2x); served ${per.map((p, i) => p.served - warm[i].served).join('/')}, peak in flight ${per.map((p) => p.peak).join('/')}; client CPU ${((used.user + used.system) / 1000 / REQUESTS).toFixed(2)} ms/request; load average ${loadavg()[0].toFixed(2)}`);
  }
}
