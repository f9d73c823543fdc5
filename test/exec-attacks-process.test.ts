import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRoot } from '../src/exec/sandbox/identity.js';
import { findExecutable } from '../src/exec/sandbox/paths.js';
import { PY_AFTER, PY_CORRECT, PY_DOUBLE, PY_FORGERS } from './exec-attacks.js';
import { processesWith, runBatch, why } from './exec-fixtures.js';
import { ROOT } from './helpers.js';

/**
 * `--sandbox process`: no namespaces, so what it defends rests on the uid. As root each slot's programs run as an
 * unprivileged uid of this process's own: they cannot read codegauge's environment, signal it, or escape the process
 * limit, and everything the uid still runs is killed after each sample. (As another user they run as that user; the
 * README's table says what that leaves open.) The verdicts are split at the boundary as in bwrap.
 */
const runs = !!findExecutable('prlimit') && process.platform === 'linux';

describe.skipIf(!runs)('process mode: a pass is still earned', () => {
  it('no forger passes; a correct sample after them passes, a wrong one fails', async () => {
    const rows = await runBatch('process', [PY_DOUBLE], [...PY_FORGERS.filter((s) => s.name !== 'read-host'), ...PY_AFTER]);
    for (const s of PY_FORGERS) if (rows[s.name]) expect(rows[s.name].status, `${s.name}: ${why(rows[s.name])}`).not.toBe('passed');
    expect(rows['correct-after'].status, why(rows['correct-after'])).toBe('passed');
    expect(rows['wrong-after'].status).toBe('failed');
  }, 120_000);
});

describe.skipIf(!runs || !isRoot())('process mode as root: programs cannot reach codegauge', () => {
  it("cannot read codegauge's environment, cannot kill it, cannot escape the process limit, and leave nothing running", () => {
    const dir = mkdtempSync(join(tmpdir(), 'codegauge-process-'));
    try {
      const secret = `cg-secret-${process.pid}-${Date.now()}`;
      const marker = `cgprocbomb${process.pid}${Date.now()}`;
      const samples = [
        // every process's environment /proc shows, searched for the secret codegauge was started with
        { task_id: PY_DOUBLE.taskId, completion: `    import os, sys\n    for pid in os.listdir('/proc'):\n        if pid.isdigit():\n            try:\n                if b'${secret}' in open('/proc/%s/environ' % pid, 'rb').read():\n                    sys.stderr.write('FOUND the secret in %s\\n' % pid)\n            except OSError:\n                pass\n    return 2 * x\n` },
        // every process it can see, killed (codegauge among them, were it allowed)
        { task_id: PY_DOUBLE.taskId, completion: `    import os, signal\n    for pid in os.listdir('/proc'):\n        if pid.isdigit() and int(pid) != os.getpid():\n            try:\n                os.kill(int(pid), signal.SIGKILL)\n            except OSError:\n                pass\n    return 2 * x\n` },
        // more processes than the limit allows, each holding the output pipes, then the sample ends
        { task_id: PY_DOUBLE.taskId, completion: `    import os\n    n = 0\n    for _ in range(300):\n        try:\n            if os.fork() == 0:\n                os.setsid()\n                os.execv('/bin/sleep', ['/bin/sleep', '60', '${marker}'])\n            n += 1\n        except OSError:\n            break\n    import sys\n    sys.stderr.write('forked %d\\n' % n)\n    return 2 * x\n` },
        { task_id: PY_DOUBLE.taskId, completion: PY_CORRECT },
      ];
      writeFileSync(join(dir, 'samples.jsonl'), samples.map((s) => JSON.stringify(s) + '\n').join(''));
      writeFileSync(join(dir, 'problems.jsonl'), JSON.stringify({ task_id: PY_DOUBLE.taskId, prompt: PY_DOUBLE.prompt, test: PY_DOUBLE.tests, entry_point: 'double' }) + '\n');
      const started = Date.now();
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/codegauge.js'), 'exec', '--problems', join(dir, 'problems.jsonl'), '--samples', join(dir, 'samples.jsonl'), '--out', join(dir, 'out'), '--sandbox', 'process', '--jobs', '1', '--timeout', '10', '--k', '1'], { encoding: 'utf8', env: { ...process.env, CODEGAUGE_TEST_SECRET: secret }, timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      const rows = readFileSync(join(dir, 'out', 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { status: string; stderr: string });
      expect(rows[0].stderr).not.toContain('FOUND');
      // the killer reaches only its own server: a correct answer, or the runner it stopped (never codegauge, never a
      // sandbox error)
      expect(rows.map((row) => row.status)).toEqual(['passed', expect.stringMatching(/^(passed|runtime_error)$/), 'passed', 'passed']);
      // the process limit (64) held: forks beyond it failed
      expect(Number(/forked (\d+)/.exec(rows[2].stderr)?.[1])).toBeLessThan(64);
      // orphans that left their group and held the pipes neither outlived the sample nor kept the run waiting
      expect(processesWith(marker)).toEqual([]);
      expect(Date.now() - started).toBeLessThan(100_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
