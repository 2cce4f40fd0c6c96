import { ProtocolError } from '@duplex-bench/protocol';
import { TransportError, type IncompleteReason } from '@duplex-bench/transport';
import { TraceWriteError } from '@duplex-bench/tracer';

/** Maps any error a session can end with (of transport, protocol, tracer) to its incomplete reason: the one owner of that mapping. */
export function reasonOf(err: unknown): { reason: IncompleteReason; message: string } {
  if (err instanceof TransportError) return { reason: err.reason, message: err.message };
  if (err instanceof ProtocolError) {
    return { reason: err.code === 'MALFORMED_FRAME' ? 'malformed_frame' : 'server_error', message: err.message };
  }
  if (err instanceof TraceWriteError) return { reason: 'trace_write_failed', message: err.message };
  return { reason: 'server_closed', message: err instanceof Error ? err.message : String(err) };
}

/** What ended a session, where a server that closes the session after an `error` event ended it for that error. */
export function endedBy(err: unknown, lastServerError: ProtocolError | null): { reason: IncompleteReason; message: string } {
  const r = reasonOf(err);
  if (r.reason === 'server_closed' && lastServerError) return { reason: 'server_error', message: `${lastServerError.message}; then ${r.message}` };
  return r;
}
