import { constants as osConstants } from 'node:os';
import type { Runner, Verdict } from '../runners/kit.js';
import type { ServerReply } from '../sandbox/job-server.js';
import type { RunResult } from '../sandbox/types.js';
import type { SessionOutcome } from './session.js';

const SIGNAL_NAMES = new Map(Object.entries(osConstants.signals).map(([name, n]) => [n as number, name]));

/** A server's report of a job as a run's result (stdout and stderr decoded, the output cap applied). */
export function replyToResult(reply: ServerReply, outputCap: number): RunResult {
  const signal = typeof reply.signal === 'number' ? (SIGNAL_NAMES.get(reply.signal) ?? `SIG${reply.signal}`) : (reply.signal ?? null);
  const stdout = reply.stdout ? Buffer.from(reply.stdout, 'base64') : Buffer.alloc(0);
  const cpu = typeof reply.cpu === 'number' ? reply.cpu : reply.killed_cpu;
  const lost = reply.lost !== undefined && !reply.killed && !reply.timed_out;
  return {
    exitCode: reply.exit ?? null,
    signal,
    stdout: stdout.subarray(0, outputCap).toString('utf8'),
    stderr: reply.stderr ? Buffer.from(reply.stderr, 'base64').toString('utf8') : '',
    timedOut: reply.timed_out === true,
    outputExceeded: (reply.stdout_size ?? 0) > outputCap,
    durationMs: Math.round(reply.ms ?? 0),
    ...(typeof cpu === 'number' ? { cpuMs: Math.round(cpu) } : {}),
    ...(lost ? { sandboxError: reply.lost } : {}),
  };
}

interface HarnessResult {
  result?: 'passed' | 'failed' | 'error' | 'memory' | 'gone' | 'unsupported';
  error?: string;
  note?: string;
  why?: string;
  candidate?: boolean;
}

/** No candidate ever prints this: a run classified with it counts as one that did not finish its tests. */
const NO_PROOF = '\u0000no proof\u0000';

/**
 * The verdict of a split sample. The tests decide (passed, failed, an error), except where the candidate's process
 * ended the session: then what ended it (a timeout, memory, output, an exit, a crash) is the verdict, as it would be
 * had the tests run in its process. `unsupported`: the tests need what the boundary cannot carry.
 */
export function boundaryVerdict(outcome: SessionOutcome, runner: Runner, outputCap: number): { verdict: Verdict; cpuMs?: number } | { unsupported: string } {
  const h = (outcome.harness.result ?? null) as HarnessResult | null;
  if (h?.result === 'unsupported') return { unsupported: h.why ?? 'the tests need what the boundary cannot carry' };
  const candidate = replyToResult(outcome.candidate, outputCap);
  const harness = replyToResult(outcome.harness, outputCap);
  const cpus = [candidate.cpuMs, harness.cpuMs].filter((c): c is number => c !== undefined);
  const cpuMs = cpus.length === 2 ? cpus[0] + cpus[1] : undefined;
  const stderr = [harness.stderr.trimEnd(), candidate.stderr.trimEnd()].filter(Boolean).join('\n');
  const v = { exitCode: candidate.exitCode, durationMs: Math.max(candidate.durationMs, harness.durationMs), stderr };
  const done = (verdict: Verdict) => ({ verdict, ...(cpuMs !== undefined ? { cpuMs } : {}) });
  if (outcome.flooded) return done({ ...v, status: 'output_limit', note: 'a reply larger than the relay carries' });
  if (candidate.outputExceeded) return done({ ...v, status: 'output_limit', note: 'more output than the limit' });
  switch (h?.result) {
    case 'passed':
      if (outcome.ready) return done({ ...v, status: 'passed' });
      break; // the tests never called it: the program itself must still have run to its end
    case 'failed':
      return done({ ...v, status: 'failed', ...(h.note || h.error ? { note: (h.note ?? h.error)!.slice(0, 200) } : {}) });
    case 'memory':
      return done({ ...v, status: 'memory' });
    case 'error': {
      // the candidate's own exception, read as its runner reads a last line of stderr (a runner's sign of memory,
      // such as pyodide's index-sized overflow, stays memory)
      if (h.candidate && h.error) {
        const own = runner.classify({ ...candidate, exitCode: 1, signal: null, timedOut: false, outputExceeded: false, stderr: `${h.error.replace(/^CandidateError: /, '')}\n` }, NO_PROOF, 'run');
        if (own.status === 'memory') return done({ ...v, status: 'memory', ...(own.note ? { note: own.note } : {}) });
      }
      return done({ ...v, status: 'runtime_error', note: (h.note ?? h.error ?? '').slice(0, 200) || undefined });
    }
  }
  if (!h && !candidate.timedOut) {
    // the harness did not report: it ran out of time (the tests' own loop), or its server stopped
    if (harness.timedOut) return done({ ...v, status: 'timeout' });
    return done({ ...v, status: 'sandbox_error', note: `the tests' harness stopped without a verdict${outcome.harness.lost ? ` (${outcome.harness.lost})` : ''}` });
  }
  if (candidate.sandboxError) return done({ ...v, status: 'sandbox_error', note: candidate.sandboxError });
  const own = runner.classify(candidate, NO_PROOF, 'run');
  return done({ ...own, durationMs: v.durationMs, stderr });
}
