export type ResultsInputCode =
  /** A run directory to merge that holds no `samples.msgpack`. */
  | 'NO_SAMPLES'
  /** A run file that is there but cannot be read (`samples.msgpack`, `duplex_metrics.json`, a line of `turns.jsonl` or `speech.jsonl`). */
  | 'BAD_RUN_FILE';

/** A run directory given by the user that cannot be read back. The message names the file; the app decides the exit status. */
export class ResultsInputError extends Error {
  override readonly name = 'ResultsInputError';
  constructor(
    readonly code: ResultsInputCode,
    message: string,
  ) {
    super(message);
  }
}
