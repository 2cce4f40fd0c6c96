export type SessionInputCode =
  /** A packet length that is not a whole number of samples at the input rate (`--packet-ms`). */
  | 'BAD_PACKET_MS'
  /** The server's announced `chunk_period_ms` is not a whole number of samples at the input rate. */
  | 'BAD_CHUNK_PERIOD'
  /** A turn detection the chosen dialect does not take. */
  | 'BAD_TURN_DETECTION'
  /** A `--dataset` that cannot be read as WAV files. */
  | 'BAD_DATASET'
  /** A run directory to merge that holds no `samples.msgpack`. */
  | 'NO_SAMPLES'
  /** A run file that is there but cannot be read (`samples.msgpack`, `duplex_metrics.json`). */
  | 'BAD_RUN_FILE';

/**
 * Input given by the user (a flag, a dataset, a run directory) that a session or a run cannot take.
 * The message names the flag or the file; the app decides the exit status.
 */
export class SessionInputError extends Error {
  override readonly name = 'SessionInputError';
  constructor(
    readonly code: SessionInputCode,
    message: string,
  ) {
    super(message);
  }
}
