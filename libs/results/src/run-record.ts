import { readRunJson, writeRunJson } from './run-files';

/** A (monotonic, wall) pair: the process's monotonic clock mapped to wall time at one instant. */
export interface ClockPair {
  monotonic_s: number;
  epoch_ms: number;
}

/** A host's offset to the reference clock (`--time-url`), measured before the start. */
export interface ClockOffsetRecord {
  reference: string;
  /** Reference time minus this host's wall clock, ms. */
  offset_ms: number;
  /** Half the round trip it was read in. */
  uncertainty_ms: number;
  rtt_ms: number;
  samples: number;
}

/** One invocation of `record` into a directory, oldest first. */
export interface Invocation {
  command: string[];
  started_epoch_ms: number;
  ended_epoch_ms: number | null;
  /** Null while it runs, or when it ended without writing its end (killed). */
  interrupted: boolean | null;
  to_record: number;
  recorded: number;
  completed: number;
}

/**
 * run.json: what a run was. One shape for every kind (a run of sessions, a launched run, a
 * recording, an HTTP run, a launched HTTP run); the kinds fill the fields that are theirs.
 * Written by `writeRunRecord` (each writer states `satisfies RunRecord`), read by `readRunRecord`.
 */
export interface RunRecord {
  /** The command line, secrets redacted. */
  command: string[];
  /** Realtime runs: the dialect spoken. */
  protocol?: string;
  dialect?: Record<string, unknown>;
  server_grant?: unknown;
  /** How the load was laid out: processes, sessions, packets, duration, shards, arrivals. */
  layout?: Record<string, unknown>;
  /** A launched run's CPU placement. */
  cpu_plan?: unknown;
  /** This host (its `boot_id` tells two runs on one kernel's clock apart). */
  host: { boot_id?: string | null };
  /** The project's revision the run was made with. */
  project: object;
  /** The monotonic clock mapped to wall time at the start. */
  clock?: ClockPair & { source?: string };
  started_s?: number;
  ended_s?: number | null;
  /** The start gate on the monotonic clock, s; null before it was passed. */
  gate_s?: number | null;
  /** With --start-at: the (monotonic, wall) pair the gate was mapped from. */
  gate_clock?: ClockPair | null;
  clock_offset?: ClockOffsetRecord | null;
  /** The client's own loop, as measured in the run. */
  load?: unknown;
  input_audio?: unknown;
  conversation?: unknown;
  /** A launched run: its children, each with its outcome. */
  children?: unknown[];
  processes?: number;
  /** A recording: each invocation into the directory, and what the latest one set out to do. */
  invocations?: Invocation[];
  packet_ms?: number;
  packet_ms_source?: string;
  dataset?: string;
  samples?: { total: number; skipped_done: number; to_record: number; recorded: number; completed: number };
  /** An HTTP run: the server and model it asked. */
  url?: string;
  model?: string;
}

/** The run.json of `dir`; null when there is none; one that does not parse throws RunFileError naming it. */
export function readRunRecord(dir: string): Promise<RunRecord | null> {
  return readRunJson<RunRecord>(dir, 'run');
}

/** Writes `dir`'s run.json whole: a reader finds the earlier record or this one, never part of one. */
export function writeRunRecord(dir: string, record: RunRecord): Promise<void> {
  return writeRunJson(dir, 'run', record);
}
