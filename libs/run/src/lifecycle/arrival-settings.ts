import { UsageError } from '@duplex-bench/cli';
import { MAX_ARRIVALS, type ArrivalProcess } from '../arrivals/arrival-schedule';
import { CONVERSATION_LENGTH, parseSessionDuration, type SessionDuration } from '../arrivals/session-duration';
import { RunInputError } from '../input-error';
import type { ArrivalOptions } from './run-settings';

/** The arrival flags as parsed (ARRIVAL_FLAGS). */
export interface ArrivalFlagValues {
  'arrival-rate'?: number;
  arrivals: string;
  'session-duration'?: string;
  'run-for'?: number;
  'max-in-flight': number;
  seed: number;
  duration?: number;
  conversation?: string;
}

/** The arrival flags as parsed, into options; null without `--arrival-rate`. Throws UsageError. */
export function arrivalOptions(f: ArrivalFlagValues): ArrivalOptions | null {
  const rate = f['arrival-rate'];
  if (rate === undefined) {
    for (const name of ['session-duration', 'run-for'] as const) if (f[name] !== undefined) throw new UsageError(`--${name} is for --arrival-rate`);
    return null;
  }
  let duration: SessionDuration;
  try {
    // With a conversation and no duration asked, each session plays the script once: its own length.
    const spec = f['session-duration'] ?? (f.conversation !== undefined ? CONVERSATION_LENGTH : undefined);
    duration = spec !== undefined ? parseSessionDuration(spec) : { kind: 'fixed', s: f.duration ?? NaN };
  } catch (err) {
    throw err instanceof RunInputError ? new UsageError(err.message, { cause: err }) : err;
  }
  if (duration.kind === 'fixed' && Number.isNaN(duration.s)) throw new UsageError('--arrival-rate needs --session-duration or --duration');
  if (duration.kind === 'conversation' && f.conversation === undefined) throw new UsageError(`--session-duration ${CONVERSATION_LENGTH} is the length of a --conversation: give one`);
  const run_for_s = f['run-for'] ?? f.duration;
  if (run_for_s === undefined) throw new UsageError('--arrival-rate needs --run-for or --duration');
  if (rate * run_for_s > MAX_ARRIVALS) throw new UsageError(`--arrival-rate ${rate} for ${run_for_s} s is more than ${MAX_ARRIVALS} arrivals`);
  return { rate_per_s: rate, process: f.arrivals as ArrivalProcess, duration, run_for_s, max_in_flight: f['max-in-flight'], seed: f.seed };
}
