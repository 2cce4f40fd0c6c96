import { UsageError } from '@duplex-bench/cli';

/**
 * The libs' errors whose codes all mean the user's input was wrong (a flag, a dataset, a run
 * directory or file given): RunInputError (BAD_PACKET_MS, BAD_CHUNK_PERIOD, BAD_TURN_DETECTION,
 * BAD_DATASET), ResultsInputError (NO_SAMPLES, BAD_RUN_FILE), RunDirError, ConformanceError (NO_SUCH_PATH,
 * NO_SESSIONS_DIR, NO_TRACES), ExperimentError (BAD_SLO, BAD_ARM), ReportInputError
 * (NOT_A_RUN, NO_SAMPLES, BAD_RUN_FILE, NO_MOCK_STATS), RunFileError (a run file given, or one of
 * its directory, that does not read: the same status as BAD_RUN_FILE). Any other error is a failure. Known by the
 * name each class gives itself, so this module loads no lib (a command loads only the libs it calls);
 * errors.spec.ts holds the names to the classes.
 */
export const BAD_INPUT_ERRORS = new Set(['RunInputError', 'ResultsInputError', 'RunDirError', 'ConformanceError', 'ExperimentError', 'ReportInputError', 'RunFileError']);

/** A lib's bad-input error as the CLI's UsageError (one line on stderr, exit status 2); undefined for any other error. */
export function usageOf(err: unknown): UsageError | undefined {
  if (err instanceof UsageError) return err;
  if (err instanceof Error && BAD_INPUT_ERRORS.has(err.name)) return new UsageError(err.message, { cause: err });
  return undefined;
}
