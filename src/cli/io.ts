/** What every command prints through, and how a finished command asks for a non-zero exit. */
export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
  /** A progress reporter for long commands (a bar on a terminal, nothing in pipes and CI). */
  progress?: (label: string, detail?: () => string) => (done: number, total: number) => void;
}

/** Exit codes: 0 success, 1 a failed check, a server failure or a bug, 2 bad input or usage. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A command that completed but must signal failure (e.g. `sbc check` below its minimum) sets this. */
export const exitRequest = { code: 0 };
