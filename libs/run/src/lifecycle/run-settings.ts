import type { ServerMetricsOptions, TelemetryOptions } from '@duplex-bench/cli';
import type { SloTerm } from '@duplex-bench/results';
import type { ArrivalProcess } from '../arrivals/arrival-schedule';
import type { SessionDuration } from '../arrivals/session-duration';
import type { DialectOptions } from '../dialect-options';
import type { Shard } from '../shard';
import type { StallKind } from '../inject-stall';

// The settings of a run and of a recording, as the commands' flags give them (validated there).

/** `--conversation` and the bounds its figures are read with, as `run` and `record` take them. */
export interface ConversationOptions {
  /** `--conversation`: a built-in script's name or a script file. */
  conversation?: string;
  max_stop_s: number;
  takeover_min_ms: number;
}


/** `--arrival-rate` and its companions, validated. */
export interface ArrivalOptions {
  rate_per_s: number;
  process: ArrivalProcess;
  duration: SessionDuration;
  run_for_s: number;
  max_in_flight: number;
  seed: number;
}

export interface RunOptions extends DialectOptions, ConversationOptions, TelemetryOptions, ServerMetricsOptions {
  url: string;
  /** Sessions of this run (a shard's share); their ids count from `first_session` of `sessions_total`. */
  concurrency: number;
  /** `--arrival-rate`: sessions arrive on an open-loop schedule instead (`concurrency` is then 0). */
  arrivals: ArrivalOptions | null;
  first_session: number;
  sessions_total: number;
  shard?: Shard;
  start_at_ms?: number;
  /** The reference clock to measure the offset against; null: none. */
  time_url: string | null;
  clock_offset_ms: number;
  processes: number;
  /**
   * Each session's input, s (`--duration`). With `conversation_once`, 0 as parsed, then the longest
   * one pass of the script can take (`ConversationInput.passBoundS`) once the script is read.
   */
  duration_s: number;
  /**
   * `--conversation` without `--duration` (and without `--arrival-rate`): each session plays the
   * script once, to its own end, and then ends its input; false: for `duration_s`, the script
   * starting again until then.
   */
  conversation_once: boolean;
  output: string;
  output_sample_rate: number;
  /** False when `--output-sample-rate` was not given: the dialect's usual rate, and nothing is asked of the server. */
  output_sample_rate_given: boolean;
  audio?: string;
  inject_stall_ms: number;
  inject_stall_kind: StallKind;
  /** `--sampler`: the external /proc sampler, and how often it looks; `shared_dir`: a launcher's sampler writes there (`--sampler-dir`). */
  sampler: { interval_ms: number; shared_dir?: string } | null;
  trace: 'full' | 'events' | 'off';
  keep_traces: boolean;
  start_spread_ms: number;
  warmup_s: number;
  connect_timeout_ms: number;
  /** `--drain-timeout-s`; not given, each dialect's own bound (`drainTimeoutMs`). */
  drain_timeout_ms?: number;
  open_parallel: number;
  start_timeout_ms: number;
  cpu_affinity: 'auto' | 'off';
  allow_unqualified: boolean;
  /** No `--url`: the run serves the built-in mock itself (`withBuiltinMock`); its URL replaces `url`. */
  builtin_mock?: { mock_profile?: string };
  /** `--slo`: the terms the run is judged on at its end (exit 4 when one fails). */
  slo?: SloTerm[];
  /** `--abort-on-fail`: end the run as soon as a term can no longer pass, or a percentile has failed for `grace_s`. */
  abort_on_fail?: { grace_s: number };
  quiet: boolean;
}

/** `record --arrival-rate`: samples arrive on an open-loop schedule, each a session as long as its sample. */
export interface RecordArrivals {
  rate_per_s: number;
  process: ArrivalProcess;
  /** Arrivals are scheduled for this long at most (and one per sample left); undefined: until every sample arrived. */
  run_for_s?: number;
  max_in_flight: number;
  seed: number;
  /** Arrivals intended this long after the origin are also counted apart (steady). */
  warmup_s: number;
}

export interface RecordOptions extends DialectOptions, ConversationOptions, TelemetryOptions {
  url: string;
  /** No `--url`: the built-in mock serves the recording (recordMain starts it and sets `url`). */
  builtin_mock?: { mock_profile?: string };
  /** Sessions at a time; 0 with arrivals. */
  concurrency: number;
  arrivals: RecordArrivals | null;
  per_subset: number;
  output: string;
  dataset?: string;
  /** With --conversation: each sample's length; the script starts again until it ends, seconds. */
  duration_s: number;
  min_input_s: number;
  max_input_s: number;
  output_sample_rate: number;
  output_sample_rate_given: boolean;
  trace: 'full' | 'events' | 'off';
  /** Where finished sessions are replayed: a process pool (default), the recording process itself, or nowhere. */
  postprocess: 'pool' | 'inline' | 'off';
  connect_timeout_ms: number;
  /** `--drain-timeout-s`; not given, each dialect's own bound (`drainTimeoutMs`). */
  drain_timeout_ms?: number;
  allow_unqualified: boolean;
  quiet: boolean;
}

