import { UsageError } from '@duplex-bench/cli';
import { ExperimentError } from '@duplex-bench/experiments';
import { ReportInputError } from '@duplex-bench/report';
import { ConformanceError } from '@duplex-bench/conformance';
import { ResultsInputError, RunDirError } from '@duplex-bench/results';
import { RunInputError } from '@duplex-bench/run';

/**
 * The libs' errors whose codes all mean the user's input was wrong (a flag, a dataset, a run
 * directory or file given): RunInputError (BAD_PACKET_MS, BAD_CHUNK_PERIOD, BAD_TURN_DETECTION,
 * BAD_DATASET), ResultsInputError (NO_SAMPLES, BAD_RUN_FILE), RunDirError, ConformanceError (NO_SUCH_PATH,
 * NO_SESSIONS_DIR, NO_TRACES), ExperimentError (BAD_SLO, BAD_ARM), ReportInputError
 * (NOT_A_RUN, NO_SAMPLES, BAD_RUN_FILE, NO_MOCK_STATS). Any other error is a failure.
 */
const BAD_INPUT = [RunInputError, ResultsInputError, RunDirError, ConformanceError, ExperimentError, ReportInputError];

/** A lib's bad-input error as the CLI's UsageError (one line on stderr, exit status 2); undefined for any other error. */
export function usageOf(err: unknown): UsageError | undefined {
  if (err instanceof UsageError) return err;
  if (BAD_INPUT.some((type) => err instanceof type)) return new UsageError((err as Error).message, { cause: err });
  return undefined;
}
