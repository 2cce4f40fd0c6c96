export type ExperimentErrorCode =
  /** An `--slo` term that does not read as `figure<=number`, names no known figure, or has no number. */
  | 'BAD_SLO'
  /** An `--arm` that is not `LABEL=FLAGS`, has a label of other characters, or sets a flag compare sets itself. */
  | 'BAD_ARM';

/** A sweep's or a comparison's settings that cannot be run; the message names the flag. The app decides the exit status. */
export class ExperimentError extends Error {
  override readonly name = 'ExperimentError';
  constructor(
    readonly code: ExperimentErrorCode,
    message: string,
  ) {
    super(message);
  }
}
