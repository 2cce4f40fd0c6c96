/**
 * Why a session ended early. These strings are the keys of `sessions.incomplete_reasons` in a summary.
 */
export type IncompleteReason =
  | 'admission_refused'
  | 'connect_failed'
  | 'connect_timeout'
  | 'handshake_timeout'
  | 'server_closed'
  | 'malformed_frame'
  | 'server_error'
  | 'drain_timeout'
  /** Server VAD (vLLM-Omni): speech or a response was still open, or the turns still moving, at the drain bound. */
  | 'turns_unsettled'
  /** The server's grant or capabilities do not take the run's input as given (camera frames it does not take, or past its limits): the run stops before its start. */
  | 'input_not_granted'
  /** The server sent a frame past `--max-frame-bytes`: refused before it was buffered whole. */
  | 'frame_too_large'
  /** The socket queued more than `--max-send-buffer-bytes` unsent: the server stopped reading. */
  | 'send_backpressure'
  /** Lockstep pacing: a unit's `sglang.unit.done` did not come within its bound. */
  | 'unit_timeout'
  | 'close_timeout'
  | 'send_failed'
  | 'trace_write_failed'
  /** The server refused what the client sent: the client broke the dialect's contract. */
  | 'client_protocol_error'
  | 'interrupted';

export interface TransportErrorInfo {
  url?: string;
  session_id?: string;
  /** HTTP status of a refused upgrade. */
  status?: number;
  /** WebSocket close code and reason, when the server closed. */
  close_code?: number;
  close_reason?: string;
  /** errno-style code of a socket error (ECONNREFUSED, …). */
  errno?: string;
  attempts?: number;
  /** The server's error code the session ended on. */
  server_code?: string;
}

/** A session-level transport fault; `reason` says how the session ends. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    readonly reason: IncompleteReason,
    message: string,
    readonly info: TransportErrorInfo = {},
  ) {
    super(message);
  }
  get code(): string {
    return `TRANSPORT_${this.reason.toUpperCase()}`;
  }
}
