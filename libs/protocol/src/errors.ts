export type ProtocolErrorCode =
  /** A frame that is not a JSON object with a string `type`. */
  | 'MALFORMED_FRAME'
  /** The server sent an `error` event. */
  | 'SERVER_ERROR'
  /** An event arrived that the current step of the flow cannot take. */
  | 'UNEXPECTED_EVENT';

export interface ProtocolErrorInfo {
  /** The event type involved, when there is one. */
  event_type?: string;
  /** The server's own error code and type, for SERVER_ERROR. */
  server_code?: string;
  server_type?: string;
  /** Whether the server said the error ends the session (native `sglang.fatal`). */
  fatal?: boolean;
  /** The first bytes of the offending frame, for the reason line. */
  excerpt?: string;
}

/** A wire-level fault. It ends only the session it happened on. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  constructor(
    readonly code: ProtocolErrorCode,
    message: string,
    readonly info: ProtocolErrorInfo = {},
  ) {
    super(message);
  }
}
