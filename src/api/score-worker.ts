import { parentPort, workerData } from 'node:worker_threads';
import { parseMetric } from '../metrics/registry.js';
import { parallelSegments } from '../io/segments.js';
import { fitOnFiles, ScoreAccumulator, readyMetrics, type WorkerTask } from './score.js';

/**
 * One worker of a parallel `score`: reads the same files as the others but scores only its own stripes of
 * segments (the rest are passed over undecoded), and sends back its partial statistics.
 */
const task = workerData as WorkerTask;
try {
  const metrics = await readyMetrics(task.specs.map((spec) => parseMetric(spec, { language: task.language })));
  fitOnFiles(metrics, task.refPaths, task.hypPaths);
  const accumulator = new ScoreAccumulator(metrics, task.systems, task.options);
  const owns = (index: number) => Math.floor(index / task.stripe) % task.workers === task.worker;
  for (const { refs, hyps } of parallelSegments(task.refPaths, task.hypPaths, owns)) {
    accumulator.add(refs, hyps);
    if (accumulator.segments % 1000 === 0) parentPort!.postMessage({ type: 'progress', done: accumulator.segments });
  }
  parentPort!.postMessage({ type: 'done', partial: accumulator.partial() });
} catch (e) {
  const error = e as Error & { file?: string; line?: number };
  parentPort!.postMessage({ type: 'error', error: { name: error.name, message: error.message, file: error.file, line: error.line, stack: error.stack } });
}
