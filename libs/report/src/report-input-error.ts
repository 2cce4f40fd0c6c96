export type ReportInputCode =
  /** The directory holds no `summary.json`: not a run, a recording or a merged run. */
  | 'NOT_A_RUN'
  /** No `samples.msgpack` in the directory, no process directories and no merged sources. */
  | 'NO_SAMPLES'
  /** A file of the run (or `--mock-stats`) that is there but cannot be read. */
  | 'BAD_RUN_FILE'
  /** The `--mock-stats` file given does not exist. */
  | 'NO_MOCK_STATS';

/** A directory or file given to the report that it cannot draw; the message names it. The app decides the exit status. */
export class ReportInputError extends Error {
  override readonly name = 'ReportInputError';
  constructor(
    readonly code: ReportInputCode,
    message: string,
  ) {
    super(message);
  }
}
