/**
 * codegauge's one error contract. The library throws these; the CLI maps them to exit codes:
 * - InputError (and its kinds): the user's input or usage is wrong -> one line naming the file, line, field or
 *   option, exit 2.
 * - OutputError: a file or folder cannot be written (permissions, a folder in the way, disk full) -> one line
 *   naming the path, exit 2.
 * - ServerError: a model server or other service failed -> one line with the reason, exit 1.
 * Anything else is a bug: "internal error", exit 1, with the stack only behind --debug.
 */
export class CodegaugeError extends Error {
  override name = 'CodegaugeError';
}

/** Bad input or usage. `file`/`line` locate it; the message then starts with `file:line: `. */
export class InputError extends CodegaugeError {
  override name = 'InputError';
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
  ) {
    super(file ? `${file}${line ? `:${line}` : ''}: ${message}` : message);
  }
}

/** An option or argument that cannot be used as given (named in the message). */
export class UsageError extends InputError {
  override name = 'UsageError';
}

/**
 * A segment whose computation would exceed a documented work bound (e.g. ROUGE-L's LCS on a line of a million
 * tokens of a tiny vocabulary). Bounds count operations, so the same input fails on every machine, except
 * tree-sitter's parse time limit (ParseBoundError), which only a clock can bound; the scoring loop adds which
 * segment it was.
 */
export class WorkBoundError extends InputError {
  override name = 'WorkBoundError';
}

/** A file or folder that cannot be written or created. */
export class OutputError extends CodegaugeError {
  override name = 'OutputError';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: cannot write: ${reason}`);
  }
}

/** A model server (or another service codegauge talks to) failed. */
export class ServerError extends CodegaugeError {
  override name = 'ServerError';
}

const WRITE_ERROR_REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a folder',
  ENOTDIR: 'a part of the path is not a folder',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  ENOENT: 'no such file or folder',
  EEXIST: 'a file is in the way',
  EDQUOT: 'disk quota exceeded',
};

/** A Node.js file-system error as an OutputError naming the path, or undefined when it is not one. */
export function asOutputError(error: unknown, fallbackPath?: string): OutputError | undefined {
  const e = error as NodeJS.ErrnoException | undefined;
  if (!e || typeof e.code !== 'string' || !(e.code in WRITE_ERROR_REASONS)) return undefined;
  return new OutputError(e.path ?? fallbackPath ?? '(unknown path)', WRITE_ERROR_REASONS[e.code]);
}

/** Runs a write and turns a file-system failure into an OutputError naming `path`. */
export function writing<T>(path: string, write: () => T): T {
  try {
    return write();
  } catch (e) {
    throw asOutputError(e, path) ?? e;
  }
}
