import { countedRate, percentilesMs, type BehaviourRate, type Histogram, type PercentilesMs } from '@duplex-bench/metrics';

/** A proportion with its count and 95% Wilson interval. */
/** A blocking probability: its `count` is the arrivals it is over (arrived − client_skipped). */
export type ArrivalRate = BehaviourRate;

/** Arrivals counted by what became of them (see the `run` lib's ArrivalCounts). */
export interface ArrivalCountFigures {
  arrived: number;
  client_skipped: number;
  started: number;
  blocked: number;
  failed_to_open: number;
}

/** The summary's `arrivals` block: an open-loop run of sessions that arrive and leave. */
export interface ArrivalsSummary extends ArrivalCountFigures {
  process: 'poisson' | 'constant';
  rate_per_s: number;
  run_for_s: number;
  seed: number;
  session_duration: string;
  /** The duration distribution's stated mean, seconds (not the sample mean); measured where none is stated (measurement_origin says). */
  mean_session_s: number;
  /** Offered load: rate_per_s × mean_session_s. */
  offered_erlangs: number;
  max_in_flight: number;
  peak_in_flight: number;
  /** Sessions that arrived, started and completed their input. */
  completed: number;
  /** blocked ÷ (arrived − client_skipped), with its 95% Wilson interval. */
  blocking_probability: ArrivalRate;
  /** With `--warmup-s`: the same over arrivals intended at least warmup_s after the origin (the server starts empty). */
  steady?: ArrivalCountFigures & { from_s: number; blocking_probability: ArrivalRate };
  connect_ms: PercentilesMs;
  handshake_ms: PercentilesMs;
  start_lag_ms: PercentilesMs;
  measurement_origin: Record<string, string>;
}

export interface ArrivalsInput {
  process: 'poisson' | 'constant';
  rate_per_s: number;
  run_for_s: number;
  seed: number;
  session_duration: string;
  mean_session_s: number;
  /** Where mean_session_s comes from when it is not the stated mean of --session-duration (a measured mean). */
  mean_session_origin?: string;
  max_in_flight: number;
  peak_in_flight: number;
  completed: number;
  counts: ArrivalCountFigures;
  /** Present with a warm-up. */
  steady?: { from_s: number; counts: ArrivalCountFigures };
  connect: Histogram;
  handshake: Histogram;
  start_lag: Histogram;
}

export const ARRIVALS_ORIGIN: Record<string, string> = {
  arrived: 'arrivals whose intended start came before the end of --run-for (or the interrupt), client_skipped included',
  blocking_probability: 'blocked / (arrived - client_skipped); 95% Wilson interval',
  offered_erlangs: 'rate_per_s x mean_session_s, the stated mean of --session-duration',
  connect_ms: 'client: intended start (origin + the schedule offset) to the WebSocket open, every session whose connection opened (a vllm-omni refusal comes after it)',
  handshake_ms: "client: intended start to the dialect's handshake completed, admitted sessions",
  start_lag_ms: "client: the arrival timer's fire minus the intended start: the client's own lateness, not the server's",
};

/** blocked ÷ (arrived − client_skipped), with its 95% Wilson interval. */
export function blockingProbability(c: ArrivalCountFigures): ArrivalRate {
  const n = c.arrived - c.client_skipped;
  return countedRate(c.blocked, n);
}

/** The `arrivals` block. Pure. */
export function arrivalsSummary(i: ArrivalsInput): ArrivalsSummary {
  return {
    process: i.process,
    rate_per_s: i.rate_per_s,
    run_for_s: i.run_for_s,
    seed: i.seed,
    session_duration: i.session_duration,
    mean_session_s: i.mean_session_s,
    offered_erlangs: Math.round(i.rate_per_s * i.mean_session_s * 1e4) / 1e4,
    max_in_flight: i.max_in_flight,
    peak_in_flight: i.peak_in_flight,
    ...i.counts,
    completed: i.completed,
    blocking_probability: blockingProbability(i.counts),
    ...(i.steady ? { steady: { from_s: i.steady.from_s, ...i.steady.counts, blocking_probability: blockingProbability(i.steady.counts) } } : {}),
    connect_ms: percentilesMs(i.connect),
    handshake_ms: percentilesMs(i.handshake),
    start_lag_ms: percentilesMs(i.start_lag),
    measurement_origin: i.mean_session_origin ? { ...ARRIVALS_ORIGIN, offered_erlangs: `rate_per_s x mean_session_s, ${i.mean_session_origin}` } : ARRIVALS_ORIGIN,
  };
}
