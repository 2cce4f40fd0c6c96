export type RunInputCode =
  /** A packet length that is not a whole number of samples at the input rate (`--packet-ms`). */
  | 'BAD_PACKET_MS'
  /** The server's announced `chunk_period_ms` is not a whole number of samples at the input rate. */
  | 'BAD_CHUNK_PERIOD'
  /** A turn detection the chosen dialect does not take. */
  | 'BAD_TURN_DETECTION'
  /** A `--dataset` that cannot be read as WAV files. */
  | 'BAD_DATASET'
  /** A `--session-duration` that is not fixed:S, exp:MEAN or lognormal:MEAN,COV. */
  | 'BAD_SESSION_DURATION';


/**
 * Input given by the user (a flag, a dataset, a server's announced unit) that a run cannot take.
 * The message names the flag or the file; the app decides the exit status.
 */
export class RunInputError extends Error {
  override readonly name = 'RunInputError';
  constructor(
    readonly code: RunInputCode,
    message: string,
  ) {
    super(message);
  }
}
