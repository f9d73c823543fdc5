import { parentPort, workerData } from 'node:worker_threads';
import { loadMetrics } from '../metrics/specs.js';
import { parallelSegments, segmentWindows } from '../io/segments.js';
import { Claims, fitOnFiles, ScoreAccumulator, readyMetrics, type WorkerResult, type WorkerTask } from './score.js';

/**
 * One worker of a parallel `score`: takes windows of lines from the last one back (see `Claims`) until it meets a
 * window another thread has, scores each on its own, and sends back their partial statistics, with the error of the
 * first window (in input order) that had one. It goes on past an error: what matters is the first error in input
 * order, so the windows before it are still to be read.
 */
const task = workerData as WorkerTask;
const claims = new Claims(task.starts.length, task.shared);
const result: WorkerResult = { windows: [] };
const describe = (e: unknown) => {
  const error = e as Error & { file?: string; line?: number };
  return { name: error.name, message: error.message, file: error.file, line: error.line, stack: error.stack };
};
try {
  // Only the modules of the metrics named (see specs.ts): a thread's start-up is part of a parallel run's time.
  const metrics = await readyMetrics(await loadMetrics(task.specs, { language: task.language, maxWork: task.maxWork }));
  fitOnFiles(metrics, task.refPaths, task.hypPaths);
  const windows = segmentWindows([...task.refPaths, ...task.hypPaths], task.starts);
  let pending = 0;
  for (let w = claims.claimFromBack(task.id); w > 0; w = claims.claimFromBack(task.id)) {
    const { line, offsets } = windows[w];
    if (offsets.some((o) => o === null)) {
      result.error = { window: w, short: true, name: 'Error', message: 'short file' };
      continue;
    }
    const ends = w + 1 < windows.length ? windows[w + 1].offsets.map((o) => o ?? Infinity) : undefined;
    const accumulator = new ScoreAccumulator(metrics, task.systems, task.options);
    try {
      for (const { refs, hyps, index } of parallelSegments(task.refPaths, task.hypPaths, { window: { line, offsets: offsets as number[], ends } })) {
        accumulator.add(refs, hyps, index);
        if (++pending === 1000) {
          claims.addWorkerSegments(pending);
          pending = 0;
        }
      }
    } catch (e) {
      result.error = { window: w, ...describe(e) };
      continue;
    }
    result.windows.push({ window: w, partial: accumulator.partial() });
  }
} catch (e) {
  // Loading or the scan failed: the main thread stops at its next window, and this error is the run's.
  claims.fail();
  result.error = { window: -1, ...describe(e) };
}
parentPort!.postMessage(result);
