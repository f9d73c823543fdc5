import type { Limits, RunResult, Sandbox } from './sandbox.js';

/** A long-lived interpreter inside one worker slot's sandbox that runs one program at a time. */
export interface WarmSlotServer {
  /** Set once the server cannot run another program (timed out, killed, lost): the pool starts a new one. */
  readonly dead: boolean;
  run(files: Record<string, string>, file: string, stdin: string, limits: Limits): Promise<RunResult>;
  close(): void;
}

/**
 * One warm server per worker slot, started on first use (with the interpreter mounted into the sandbox) and
 * replaced when it dies or no longer fits the limits asked for.
 */
export class WarmPool<S extends WarmSlotServer> {
  private readonly servers = new Map<number, S>();

  constructor(
    protected readonly sandbox: Sandbox,
    what: string,
    private readonly start: (interpreter: string, slot: number, limits: Limits) => S,
    private readonly fits: (server: S, limits: Limits) => boolean = () => true,
  ) {
    if (sandbox.mode !== 'bwrap') throw new Error(`the warm ${what} runner needs the bwrap sandbox`);
  }

  /** Runs `file` (one of `files`) with `interpreter` in slot `slot`'s server. */
  async run(interpreter: string, files: Record<string, string>, file: string, stdin: string, limits: Limits, slot: number): Promise<RunResult> {
    let server = this.servers.get(slot);
    if (!server || server.dead || !this.fits(server, limits)) {
      server?.close();
      this.sandbox.mount(interpreter);
      server = this.start(interpreter, slot, limits);
      this.servers.set(slot, server);
    }
    const result = await server.run(files, file, stdin, limits);
    if (server.dead) {
      server.close();
      this.servers.delete(slot);
    }
    return result;
  }

  close(): void {
    for (const server of this.servers.values()) server.close();
    this.servers.clear();
  }
}
