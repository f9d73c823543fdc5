import { randomBytes } from 'node:crypto';
import type { JobServer, ServerReply } from '../sandbox/job-server.js';

/**
 * One split sample on the host: the candidate's job (load the program, serve calls) and the harness's job (the
 * tests) run at once on two servers in two sandboxes, and the host relays the calls and replies between their data
 * channels. Only lines that carry this session's token are relayed: what an earlier job left in a channel, or a
 * line without the token, goes nowhere. When the candidate's process ends, the harness is told (`gone`), so that a
 * test waiting for a reply fails at once; when the tests are done, the candidate is told to end (`end`), and a
 * candidate that does not is killed with its sandbox.
 */
export interface SessionOutcome {
  candidate: ServerReply;
  harness: ServerReply;
  /** The candidate's program ran to its end and served calls (in-process, the tests would have started). */
  ready: boolean;
  /** The candidate sent more than the relay carries (a line over DATA_LINE_CAP). */
  flooded: boolean;
}

/** How long a candidate may take to end once the tests are done before its sandbox is killed. */
const END_GRACE_MS = 1000;

export async function runSession(candidate: JobServer, harness: JobServer, candidateJob: Record<string, unknown>, harnessJob: Record<string, unknown>, timeoutMs: number): Promise<SessionOutcome> {
  const token = randomBytes(16).toString('hex');
  const prefix = Buffer.from(`{"t":"${token}",`);
  const ready = Buffer.from(`{"t":"${token}","ready":1}`);
  const ours = (line: Buffer) => line.length >= prefix.length && prefix.compare(line, 0, prefix.length, 0, prefix.length) === 0;
  let isReady = false;
  let candidateDone = false;
  let harnessDone = false;
  let flooded = false;
  let endTimer: NodeJS.Timeout | undefined;
  candidate.resetData();
  harness.resetData();
  const end = () => {
    if (!harnessDone || !isReady || candidateDone || endTimer) return;
    candidate.sendData(`{"t":"${token}","end":1}`);
    endTimer = setTimeout(() => {
      if (!candidateDone) candidate.kill();
    }, END_GRACE_MS);
  };
  candidate.onData = (line) => {
    if (!ours(line)) return;
    if (!isReady && line.equals(ready)) {
      isReady = true;
      end();
      return;
    }
    if (!harnessDone) harness.sendData(line.toString('utf8'));
  };
  harness.onData = (line) => {
    if (ours(line) && !candidateDone) candidate.sendData(line.toString('utf8'));
  };
  candidate.onFlood = () => {
    flooded = true;
    candidate.kill();
  };
  harness.onFlood = () => harness.kill();
  const candidateRun = candidate.run({ ...candidateJob, token }, timeoutMs).then((reply) => {
    candidateDone = true;
    clearTimeout(endTimer);
    if (!harnessDone) harness.sendData(`{"t":"${token}","gone":1}`);
    return reply;
  });
  const harnessRun = harness.run({ ...harnessJob, token }, timeoutMs).then((reply) => {
    harnessDone = true;
    end();
    return reply;
  });
  const [c, h] = await Promise.all([candidateRun, harnessRun]);
  candidate.onData = harness.onData = undefined;
  candidate.onFlood = harness.onFlood = undefined;
  return { candidate: c, harness: h, ready: isReady, flooded };
}
