import type { IncompleteReason, NativeDrainReport, ServerEventSeqFigures } from '@duplex-bench/transport';
import type { ResponseRecord, SessionResponseMetrics, SessionSpeech, TurnRecord } from '@duplex-bench/metrics';

/** What one session came to: its line of sessions.jsonl (this lib writes and reads it), pooled into the summary; the session lib fills it. */
export interface SessionResult {
  id: string;
  completed: boolean;
  reason?: IncompleteReason;
  message?: string;
  violation: boolean;
  packets_sent: number;
  late: number;
  server_errors: number;
  /** Received server `error` events by their code (`error.code`, else `error.type`). */
  server_error_codes?: Record<string, number>;
  /** The server error that ended the session, when one did. */
  server_error?: { code?: string; fatal: boolean; message: string };
  drain?: NativeDrainReport;
  /** vLLM-Omni's own events, counted: listen decisions, resyncs asked, expiries, playback acknowledgements. */
  dialect_events?: Record<string, number>;
  /** The server's own event numbering (vLLM-Omni `server_event_seq`), when it numbers its events. */
  server_event_seq?: ServerEventSeqFigures;
  /** The input unit the server announced (vLLM-Omni `chunk_period_ms`), when it did. */
  server_chunk_period_ms?: number;
  /** Output audio rate the figures used: the flag's when given, else the server's grant, else the run's assumption. */
  output_sample_rate?: number;
  /** Output audio deltas counted by the rate each stated (vLLM-Omni `sample_rate_hz`), when the deltas state one. */
  delta_sample_rates?: Record<string, number>;
  /** Admission refusals before the session got its slot (or before it gave up). */
  admission_refusals?: number;
  /** The native server's unit (`native_unit_ms` of its grant), when it granted one. */
  native_unit_ms?: number;
  /** Completed model turns and the session's response figures, when the server answered with responses. */
  responses?: ResponseRecord[];
  response_metrics?: SessionResponseMetrics;
  /** A conversation's behaviour events (turns.jsonl), and its user and model speech at once, ms. */
  turns?: TurnRecord[];
  overlap_ms?: number;
  /** A conversation's steps, model speech spans and response events (speech.jsonl), for its timeline. */
  speech?: SessionSpeech;
  /** A conversation: passes through the script, and steps played. */
  conversation?: { passes: number; steps: number; /** Where the model speech spans came from: the VAD, or the live energy estimate. */ speech_spans: 'vad' | 'energy' };
}
