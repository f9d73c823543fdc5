// The codegauge side of `npm run bench`, the twin of bench/reference.py: one job on the bench's JSONL files, W
// untimed runs then N timed ones in this process, and one JSON line out (wall and CPU times in s, scores, peak RSS in MiB).
//   node bench/codegauge-job.js JOB --refs R --hyps H [--hyps2 H2] [--runs N] [--warmup W]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    refs: { type: 'string' },
    hyps: { type: 'string' },
    hyps2: { type: 'string' },
    runs: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
  },
});
const readJsonl = (path) => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const name = positionals[0];
const refs = readJsonl(values.refs);
const hyps = readJsonl(values.hyps);
const hyps2 = values.hyps2 ? readJsonl(values.hyps2) : null;
const refSets = refs.map((r) => [r]);

async function makeJob() {
  // Only what the job needs is imported, as the CLI does.
  const { scoreCorpus, scoreSentence } = await import('../dist/metrics/metric.js');
  switch (name) {
    case 'bleu': {
      const { Bleu } = await import('../dist/metrics/bleu.js');
      return () => ({ score: scoreCorpus(new Bleu(), hyps, refSets).score });
    }
    case 'chrf': {
      const { Chrf } = await import('../dist/metrics/chrf.js');
      return () => ({ score: scoreCorpus(new Chrf(), hyps, refSets).score });
    }
    case 'sbleu': {
      const { Bleu } = await import('../dist/metrics/bleu.js');
      return () => {
        const m = new Bleu({ effectiveOrder: true });
        return { scores: hyps.map((h, i) => scoreSentence(m, h, refSets[i])) };
      };
    }
    case 'schrf': {
      const { Chrf } = await import('../dist/metrics/chrf.js');
      return () => {
        const m = new Chrf();
        return { scores: hyps.map((h, i) => scoreSentence(m, h, refSets[i])) };
      };
    }
    case 'rougeL': {
      const { Rouge } = await import('../dist/metrics/rouge.js');
      return () => ({ score: scoreCorpus(new Rouge('rougeL'), hyps, refSets).score });
    }
    case 'meteor': {
      const { Meteor } = await import('../dist/metrics/meteor.js');
      // WordNet is loaded once per process, before timing, as reference.py loads NLTK's.
      new Meteor().align(['warm'], ['up']);
      return () => ({ score: scoreCorpus(new Meteor(), hyps, refSets).score });
    }
    case 'bootstrap': {
      const { compareSystems } = await import('../dist/api/compare.js');
      return async () => {
        const report = await compareSystems({ references: refSets, systems: [{ name: 'a', hypotheses: hyps }, { name: 'b', hypotheses: hyps2 }], metrics: ['bleu', 'chrf'], test: 'bs' });
        const paired = {};
        for (const s of report.systems[1].scores) paired[s.name === 'chrF2' ? 'chrF' : s.name] = { score: s.score, mean: s.mean, ci: s.ci, p_value: s.p_value };
        return { paired };
      };
    }
    case 'codebleu-python':
    case 'codebleu-javascript': {
      const { CodeBleu } = await import('../dist/metrics/codebleu.js');
      const lang = name.slice('codebleu-'.length);
      const warm = new CodeBleu(lang);
      await warm.ready();
      return async () => {
        const m = new CodeBleu(lang);
        await m.ready();
        return { score: scoreCorpus(m, hyps, refSets).score };
      };
    }
    default:
      throw new Error(`unknown job ${name}`);
  }
}

const job = await makeJob();
const times = [];
const cpu = [];
let result;
for (let i = 0; i < Number(values.warmup); i++) await job();
for (let i = 0; i < Number(values.runs); i++) {
  const start = process.hrtime.bigint();
  const startCpu = process.cpuUsage();
  result = await job();
  times.push(Number(process.hrtime.bigint() - start) / 1e9);
  const used = process.cpuUsage(startCpu);
  cpu.push((used.user + used.system) / 1e6); // all threads of the process: GC and JIT threads count against us
}
result.times = times;
result.cpu = cpu;
result.max_rss_mib = process.resourceUsage().maxRSS / 1024;
process.stdout.write(JSON.stringify(result) + '\n');
