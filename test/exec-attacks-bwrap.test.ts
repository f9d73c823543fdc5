import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bwrapAvailable } from '../src/exec/sandbox/bwrap.js';
import { JS_AFTER, JS_CORRECT, JS_DOUBLE, JS_FORGERS, JS_NEIGHBOURS, JS_RESOURCES, JS_WRONG, JSX_DOUBLE, PY_AFTER, PY_DOUBLE, PY_FORGERS, PY_NEIGHBOURS, PY_PROCESS_NEIGHBOURS, PY_RESOURCES } from './exec-attacks.js';
import { processesWith, runBatch, why } from './exec-fixtures.js';

/**
 * The default sandbox (bwrap), attacked as a model that learned to game its tests would: every program is real and
 * runs only inside the sandbox. One worker runs each batch in order, so each probe follows its attacker on the same
 * servers. A pass must be earned; nothing of one sample reaches the next; every resource is bounded.
 */
const hasBwrap = bwrapAvailable();

describe.skipIf(!hasBwrap)('bwrap, Python: verdicts that cannot be forged or disturbed', () => {
  it('no forger passes, none finds the tests; attackers leave nothing for the next sample; resources are bounded', async () => {
    const samples = [...PY_FORGERS, ...PY_NEIGHBOURS, ...PY_PROCESS_NEIGHBOURS, ...PY_RESOURCES, ...PY_AFTER];
    const rows = await runBatch('bwrap', [PY_DOUBLE], samples);
    for (const s of PY_FORGERS) {
      expect(rows[s.name].status, `${s.name}: ${why(rows[s.name])}`).not.toBe('passed');
      expect(rows[s.name].stderr, s.name).not.toContain('FOUND');
      expect(rows[s.name].isolation, s.name).toBe('boundary');
    }
    // an attacker may break itself; what it must not do is reach the probe after it
    for (const s of [...PY_NEIGHBOURS, ...PY_PROCESS_NEIGHBOURS].filter((x) => x.name.startsWith('probe'))) expect(rows[s.name].status, `${s.name}: ${why(rows[s.name])}`).toBe('passed');
    expect(rows['correct-after'].status, why(rows['correct-after'])).toBe('passed');
    expect(rows['wrong-after'].status, why(rows['wrong-after'])).toBe('failed');
    // a value that is not plain is a failure of its own kind, with the type named
    expect(rows['always-equal'].note).toMatch(/not a plain value/);
    // 8 MiB files until the 64 MiB tmpfs is full: bounded in total, not only per file
    expect(rows['disk-fill'].status, why(rows['disk-fill'])).toBe('runtime_error');
    const wrote = Number(/wrote (\d+) MiB, then No space left on device/.exec(rows['disk-fill'].stderr)?.[1]);
    expect(wrote, why(rows['disk-fill'])).toBeLessThanOrEqual(64);
    expect(rows['output-flood'].status, why(rows['output-flood'])).toBe('output_limit');
    expect(rows.memory.status, why(rows.memory)).toBe('memory');
  }, 120_000);

  it('an endless loop and a fork bomb end in timeout and leave nothing running', async () => {
    const marker = `cgforkbomb${process.pid}${Date.now()}`;
    const bomb = `    import os\n    for _ in range(100000):\n        try:\n            if os.fork() == 0:\n                os.execv('/bin/sleep', ['/bin/sleep', '30', '${marker}'])\n        except OSError:\n            break\n    while True:\n        pass\n`;
    const rows = await runBatch('bwrap', [PY_DOUBLE], [
      { name: 'loop', task_id: PY_DOUBLE.taskId, completion: '    while True:\n        pass\n' },
      { name: 'bomb', task_id: PY_DOUBLE.taskId, completion: bomb },
      { name: 'correct-after', task_id: PY_DOUBLE.taskId, completion: '    return 2 * x\n' },
    ], { timeoutMs: 1000 });
    expect(rows.loop.status).toBe('timeout');
    expect(rows.bomb.status).toBe('timeout');
    // `starved`: the loop had the CPU, so no retry; under load it may have had less than half a core, and a retry then
    for (const row of [rows.loop, rows.bomb]) for (const a of row.attempts.slice(0, -1)) expect(a.cpu_ms ?? 0).toBeLessThan(a.timeout_ms / 2);
    expect(rows['correct-after'].status).toBe('passed');
    expect(processesWith(marker)).toEqual([]);
  }, 60_000);
});

describe.skipIf(!hasBwrap)('bwrap, JavaScript: verdicts that cannot be forged or disturbed', () => {
  it('no forger passes; no Worker changes what the next one sees; resources are bounded', async () => {
    const samples = [...JS_FORGERS, ...JS_NEIGHBOURS, ...JS_RESOURCES, ...JS_AFTER];
    const rows = await runBatch('bwrap', [JS_DOUBLE], samples, { memoryMb: 256 });
    for (const s of JS_FORGERS) {
      expect(rows[s.name].status, `${s.name}: ${why(rows[s.name])}`).not.toBe('passed');
      expect(rows[s.name].stderr, s.name).not.toMatch(/FOUND|SPAWNED|LOADED/);
    }
    for (const s of JS_NEIGHBOURS.filter((x) => x.name.startsWith('probe'))) expect(rows[s.name].status, `${s.name}: ${why(rows[s.name])}`).toBe('passed');
    expect(rows['correct-after'].status, why(rows['correct-after'])).toBe('passed');
    expect(rows['wrong-after'].status, why(rows['wrong-after'])).toBe('failed');
    expect(rows['output-flood'].status, why(rows['output-flood'])).toBe('output_limit');
    expect(rows.memory.status, why(rows.memory)).toBe('memory');
  }, 120_000);

  it("HumanEval-X's rule: a failed console.assert fails the sample, split or in one process", async () => {
    const rows = await runBatch('bwrap', [JSX_DOUBLE], [
      { name: 'right', task_id: JSX_DOUBLE.taskId, completion: '  return 2 * x\n}\n' },
      { name: 'wrong', task_id: JSX_DOUBLE.taskId, completion: '  return null\n}\n' },
    ]);
    expect(rows.right.status, why(rows.right)).toBe('passed');
    expect(rows.wrong.status, why(rows.wrong)).toBe('failed');
    expect(rows.wrong.isolation).toBe('boundary');
  }, 60_000);

  it('TypeScript splits as JavaScript does: a forger fails, the answer passes, a syntax error is compile_error', async () => {
    const ts = { ...JS_DOUBLE, taskId: 'attack/double-ts', key: 'attack/double-ts', language: 'typescript' as const, prompt: 'function double(x: number): number {\n', tests: `declare var require: any;\n${JS_DOUBLE.tests}` };
    const rows = await runBatch('bwrap', [ts], [
      { name: 'right', task_id: ts.taskId, completion: JS_CORRECT },
      { name: 'exit', task_id: ts.taskId, completion: `${JS_WRONG}process.exit(0);\n` },
      { name: 'syntax', task_id: ts.taskId, completion: '  return 2 * x;;; }}}\n' },
    ]);
    expect(rows.right.status, why(rows.right)).toBe('passed');
    expect(rows.exit.status).toBe('failed');
    expect(rows.syntax.status, why(rows.syntax)).toBe('compile_error');
  }, 60_000);
});

describe.skipIf(!hasBwrap)('sandbox uids', () => {
  it('are a random block of this process, two per slot (candidate, harness): concurrent runs never share one', async () => {
    const { sandboxUid, isSandboxUid } = await import('../src/exec/sandbox/identity.js');
    expect(sandboxUid(0)).not.toBe(sandboxUid(0, 'harness'));
    expect(sandboxUid(1)).not.toBe(sandboxUid(0, 'harness'));
    expect(isSandboxUid(sandboxUid(7, 'harness'))).toBe(true);
    expect(sandboxUid(0)).toBeGreaterThanOrEqual(2 ** 20);
    // another process draws its own block (the module's draw, repeated)
    const source = readFileSync('src/exec/sandbox/identity.ts', 'utf8');
    expect(source).toMatch(/randomInt\(/);
  });
});
