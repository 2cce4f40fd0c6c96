import type { Connection, FlowOptions, SessionFlow } from '@duplex-bench/transport';
import { reasonOf } from './outcome';

/**
 * Closes a session that ended early. Where the dialect's flow says so (native: after a server
 * error; vllm-omni: always) it closes the session in the dialect's way and waits (bounded) for
 * the server's `session.closed`; then the socket closes with a close frame, dropped only when the
 * server does not answer in time. Returns what went wrong on the way, if anything did.
 */
export async function closeAfterFault(conn: Connection, flow: SessionFlow, err: unknown, options: FlowOptions): Promise<string | null> {
  let note: string | null = null;
  if (conn.isOpen && flow.closesOnFailure(err)) {
    try {
      await flow.abort(conn, err, options);
    } catch (closeErr) {
      note = reasonOf(closeErr).message;
    }
  }
  conn.fail(err instanceof Error ? err : new Error(String(err)));
  return note;
}
