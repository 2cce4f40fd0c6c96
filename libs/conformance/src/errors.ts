export type ConformanceErrorCode =
  /** The path given to check does not exist. */
  | 'NO_SUCH_PATH'
  /** A directory given to check holds no `sessions/` directory. */
  | 'NO_SESSIONS_DIR'
  /** A run directory whose sessions kept no trace to check. */
  | 'NO_TRACES';

/** What check was given cannot be graded: the caller decides what it means (the probe: bad input, exit 2). */
export class ConformanceError extends Error {
  override readonly name = 'ConformanceError';
  constructor(
    readonly code: ConformanceErrorCode,
    message: string,
    /** The path given. */
    readonly path: string,
  ) {
    super(message);
  }
}
