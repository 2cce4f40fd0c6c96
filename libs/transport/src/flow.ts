import type { Subscription } from 'rxjs';
import { monotonicClock, type Clock } from '@duplex-bench/pacer';
import type { LegacyTurnDetection, ProtocolError, TurnDetection } from '@duplex-bench/protocol';
import type { Connection } from './connection';

/** What a server states about the session it opened, read by the dialect's flow. */
export interface SessionGrant {
  /** Output PCM rate the server states, when it states one. */
  output_sample_rate?: number;
  /** Input unit the server announces (vLLM-Omni `capabilities.chunk_period_ms`). */
  chunk_period_ms?: number;
  /** The native server's unit (`native_unit_ms` of its grant). */
  native_unit_ms?: number;
}

export interface EndReport {
  /** The native server's drain figures. */
  drain?: NativeDrainReport;
}

/** Counts of `server_event_seq` (vLLM-Omni), when the server stamps its events. */
export interface ServerEventSeqFigures {
  seen: number;
  gaps: number;
  missing_events: number;
  not_rising: number;
}

/** Called with each control frame the flow sends and the time it went, so it can be traced. */
export type SentHook = (frame: string, sent_s: number) => void;

/** What every flow is given: the clock, a hook that traces each control frame sent, and its bounds. */
export interface FlowOptions {
  clock?: Clock;
  onSend?: SentHook;
  handshake_timeout_ms?: number;
  drain_timeout_ms?: number;
  close_timeout_ms?: number;
}

/** The flows' default bounds, ms: one table. */
export const FLOW_TIMEOUTS = { handshake_timeout_ms: 10_000, drain_timeout_ms: 30_000, close_timeout_ms: 5_000 };

/**
 * vLLM-Omni's client bounds: 30 s for the handshake (`handshake_timeout_s`; the server holds
 * clients up to 120 s while it warms up) and 20 s for the close (`close(timeout_s=20.0)`).
 */
export const VLLM_TIMEOUTS = { handshake_timeout_ms: 30_000, close_timeout_ms: 20_000 };

/**
 * vLLM-Omni's bound on the end of input when the user gave none: their eval runner waits for
 * `response.done` at most `max(20.0, duration + 20.0)` s after the final commit
 * (benchmarks/duplex/omni_duplex_eval_runner.py), `duration` being the clip's; here the input the
 * session sent, ms.
 */
export function vllmDrainTimeoutMs(input_ms: number): number {
  return Math.max(20_000, input_ms + 20_000);
}

/** A session's bound on the end of input, ms: the one given, else its dialect's for an input of `input_ms`. */
export function drainTimeoutMs(protocol: DialectConfig['protocol'], given_ms: number | undefined, input_ms: number): number {
  if (given_ms !== undefined) return given_ms;
  return protocol === 'vllm-omni' ? vllmDrainTimeoutMs(input_ms) : FLOW_TIMEOUTS.drain_timeout_ms;
}

/** Stamps, sends and traces one control frame: the one place a flow sends outside the paced appends. */
export function sendTraced(conn: Connection, frame: string, options: FlowOptions): void {
  const sent_s = (options.clock ?? monotonicClock).now_s();
  conn.send(frame);
  options.onSend?.(frame, sent_s);
}

export interface NativeDrainReport {
  accepted_end_ms?: number;
  consumed_ms?: number;
  discarded_ms?: number;
  padding_ms?: number;
}

export interface OpenAIFlowConfig {
  turn_detection: TurnDetection;
  /** With `turn_detection: 'none'`: commit and ask for a response after this many packets. */
  commit_every_packets: number;
  /** Output rate to ask for; left to the server when not given. */
  output_sample_rate?: number;
  /** How long the server must stay quiet before the session is closed (default 200 ms). */
  end_quiet_ms?: number;
}

export interface VllmOmniFlowConfig {
  /** `model` of the URL and of `session.update`; omitted when not given. */
  model?: string;
  turn_detection: 'server_vad' | 'none';
  /** Commit after this many packets (`--turn-detection none`); with server VAD only the last commit is sent. */
  commit_every_packets: number;
  /** Output rate asked for in `session.update` (their client asks 24,000 Hz unless told otherwise). */
  output_sample_rate?: number;
  /** Playback acknowledgements this often (their benchmark: every 0.25 s). */
  ack_every_ms?: number;
  /** Test hook: never acknowledge playback, to show the turns an ack-only server then blocks. */
  no_playback_ack?: boolean;
  /** How long the server must stay quiet after the last commit is answered before the session closes. */
  end_quiet_ms?: number;
  /** The assistant's reference voice, a data URL, sent as `session.ref_audio`. */
  ref_audio?: string;
  /** Raw fields merged into `session.update.session` (`--session-extra`). */
  session_extra?: Record<string, unknown>;
  /** Lease heartbeat period (their client: 30 s). */
  heartbeat_every_ms?: number;
  /** Camera frames, sent as the session's capabilities say (`vllmFrameTransport`). */
  video?: CameraFrames;
}

/**
 * A camera's frames, the same for every session (audio's `VideoFrames`): JPEGs as base64 bytes,
 * their sizes, and the rate they stand for (null: one per native unit, or one a second).
 */
export interface CameraFrames {
  base64: Uint8Array[];
  bytes: number[];
  fps: number | null;
}

/** sglang-omni's legacy (turn-based) protocol, `--profile qwen3-omni-half-duplex`. */
export interface LegacyFlowConfig {
  /** Asked for in the opening `session.update`; a `session.updated` that echoes another type fails the session. */
  turn_detection: LegacyTurnDetection;
  /** Silence after the input's end before the liveness probe, ms (their client: 1 s). */
  tail_ms: number;
}

/** How the client drives one session of a dialect. */
export type DialectConfig =
  | { protocol: 'native'; video?: CameraFrames }
  | ({ protocol: 'openai' } & OpenAIFlowConfig)
  | ({ protocol: 'vllm-omni' } & VllmOmniFlowConfig)
  | ({ protocol: 'sglang-legacy' } & LegacyFlowConfig);

/**
 * One session's dialect: the handshake, the frames that carry input, and the end of the session.
 * A flow holds the session's protocol state (open responses, turn commits), so each session has
 * its own; `attach` it to the connection before the handshake so it sees every frame.
 */
export interface SessionFlow {
  readonly protocol: DialectConfig['protocol'];
  /** Follows the session's received frames (and ends the session on a fatal server error). */
  attach(conn: Connection): Subscription;
  /** Whether the dialect defines a received type; others are counted, not refused. */
  isKnownType(type: string): boolean;
  handshake(conn: Connection, input_sample_rate: number, options: FlowOptions): Promise<SessionGrant>;
  /** The frame carrying packet `seq`. */
  append(event_id: string, seq: number, t_start_ms: number, audio_b64: Uint8Array): Buffer;
  /** Frames that follow the append of packet `seq` (turn commits), or null. */
  afterAppend(seq: number): string[] | null;
  /** Ends the input, waits (bounded) for the server's last output, and closes the session. */
  end(conn: Connection, options: FlowOptions): Promise<EndReport>;
  /** Whether this server `error` event ends the session (the client stops streaming and closes). */
  endsOn(error: ProtocolError): boolean;
  /** Whether a session that failed with `error` (its socket still open) is closed through `abort`. */
  closesOnFailure(error: unknown): boolean;
  /** Closes a failed session in the dialect's way (bounded, ending with a close frame). */
  abort(conn: Connection, error: unknown, options: FlowOptions): Promise<void>;
  serverEventSeq(): ServerEventSeqFigures | null;
  /** Events of the dialect's own that say something about the session, counted (vllm-omni: listen decisions, resyncs, expiries). */
  dialectEvents(): Record<string, number> | null;
  /** Output audio deltas counted by the rate each stated, where the dialect's deltas state one. */
  deltaSampleRates?(): Record<string, number> | null;
}
