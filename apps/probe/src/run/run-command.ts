import type { RunIo } from '@duplex-bench/cli';
import { runSessions, type RunHooks, type RunOptions, renderRunSummary } from '@duplex-bench/run';
import { monotonicClock, type Clock } from '@duplex-bench/pacer';

export type { RunHooks } from '@duplex-bench/run';

/** `probe run`: the run of sessions, its summary rendered for a person. Returns the exit status. */
export function runCommand(options: RunOptions, io: RunIo, clock: Clock = monotonicClock, hooks: RunHooks = {}): Promise<number> {
  return runSessions(options, io, renderRunSummary, clock, hooks);
}
