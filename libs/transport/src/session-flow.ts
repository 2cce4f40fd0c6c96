import type { Subscription } from 'rxjs';
import type { ProtocolError } from '@duplex-bench/protocol';
import type { WsConnection } from './connection';
import type { NativeDrainReport, NativeFlowOptions } from './native-session';
import type { OpenAIFlowConfig } from './openai-session';
import type { VllmOmniFlowConfig } from './vllm-omni-session';

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

export type FlowOptions = NativeFlowOptions;

/** How the client drives one session of a dialect. */
export type DialectConfig =
  | { protocol: 'native' }
  | ({ protocol: 'openai' } & OpenAIFlowConfig)
  | ({ protocol: 'vllm-omni' } & VllmOmniFlowConfig);

/**
 * One session's dialect: the handshake, the frames that carry input, and the end of the session.
 * A flow holds the session's protocol state (open responses, turn commits), so each session has
 * its own; `attach` it to the connection before the handshake so it sees every frame.
 */
export interface SessionFlow {
  readonly protocol: DialectConfig['protocol'];
  /** Follows the session's received frames (and ends the session on a fatal server error). */
  attach(conn: WsConnection): Subscription;
  /** Whether the dialect defines a received type; others are counted, not refused. */
  isKnownType(type: string): boolean;
  handshake(conn: WsConnection, input_sample_rate: number, options: FlowOptions): Promise<SessionGrant>;
  /** The frame carrying packet `seq`. */
  append(event_id: string, seq: number, t_start_ms: number, audio_b64: string): string;
  /** Frames that follow the append of packet `seq` (turn commits), or null. */
  afterAppend(seq: number): string[] | null;
  /** Ends the input, waits (bounded) for the server's last output, and closes the session. */
  end(conn: WsConnection, options: FlowOptions): Promise<EndReport>;
  /** Whether this server `error` event ends the session (the client stops streaming and closes). */
  endsOn(error: ProtocolError): boolean;
  /** Whether a session that failed with `error` (its socket still open) is closed through `abort`. */
  closesOnFailure(error: unknown): boolean;
  /** Closes a failed session in the dialect's way (bounded, ending with a close frame). */
  abort(conn: WsConnection, error: unknown, options: FlowOptions): Promise<void>;
  serverEventSeq(): ServerEventSeqFigures | null;
  /** Events of the dialect's own that say something about the session, counted (vllm-omni: listen decisions, resyncs, expiries). */
  dialectEvents(): Record<string, number> | null;
}
