import { EmptyError, filter, firstValueFrom, throwError, timeout } from 'rxjs';
import type { ReceivedEvent, WsConnection } from './connection';
import { TransportError, type IncompleteReason } from './errors';

/**
 * The next event of `type`, or a TransportError with `reason` after `timeout_ms`. A session that
 * breaks meanwhile rejects with its own error; one that closes cleanly rejects as server_closed.
 */
export async function waitForEvent(
  conn: WsConnection,
  type: string,
  timeout_ms: number,
  reason: IncompleteReason,
): Promise<ReceivedEvent> {
  try {
    return await firstValueFrom(
      conn.events$.pipe(
        filter((e) => e.frame.type === type),
        timeout({
          first: timeout_ms,
          with: () => throwError(() => new TransportError(reason, `no ${type} within ${timeout_ms} ms`, { url: conn.url })),
        }),
      ),
    );
  } catch (err) {
    if (err instanceof EmptyError) {
      throw new TransportError('server_closed', `session closed before ${type}`, { url: conn.url });
    }
    throw err;
  }
}
