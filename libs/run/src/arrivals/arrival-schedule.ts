import { seeded } from '@duplex-bench/pacer';
import { constantOffsets } from './constant';
import { poissonOffsets } from './poisson';
import { drawDurationS, type SessionDuration } from './session-duration';

export type ArrivalProcess = 'poisson' | 'constant';

export interface ArrivalPlan {
  rate_per_s: number;
  process: ArrivalProcess;
  /** Arrivals are scheduled in [0, run_for_s) from the origin. */
  run_for_s: number;
  seed: number;
  duration: SessionDuration;
}

/** One intended session start, `offset_s` after the run's origin, and how long it streams. */
export interface PlannedArrival {
  index: number;
  offset_s: number;
  duration_s: number;
}

/** A bound on one schedule's length (it is held in memory, one small object per arrival). */
export const MAX_ARRIVALS = 1_000_000;

/**
 * The whole schedule, computed up front from the seed: every intended start is fixed before the
 * first session connects, so no session's start depends on how an earlier one went (open loop).
 * Gaps and durations come from two streams of the seed, so a change of duration distribution
 * leaves the arrival instants as they were.
 */
export function arrivalSchedule(plan: ArrivalPlan): PlannedArrival[] {
  const gaps = seeded(plan.seed);
  const lengths = seeded(plan.seed ^ 0x9e3779b9);
  const offsets = plan.process === 'constant' ? constantOffsets(plan.rate_per_s, plan.run_for_s, MAX_ARRIVALS) : poissonOffsets(plan.rate_per_s, plan.run_for_s, gaps, MAX_ARRIVALS);
  return offsets.map((offset_s, index) => ({ index, offset_s, duration_s: drawDurationS(plan.duration, lengths) }));
}
