import { EmptyError, filter, firstValueFrom, throwError, timeout } from 'rxjs';
import type { ReceivedEvent, WsConnection } from './connection';
import { TransportError, type IncompleteReason } from './errors';

/**
 * The next event of `type` (or of any of several types), or a TransportError with `reason` after
 * `timeout_ms`. A session that breaks meanwhile rejects with its own error; one that closes
 * cleanly rejects as server_closed.
 */
export async function waitForEvent(
  conn: WsConnection,
  type: string | readonly string[],
  timeout_ms: number,
  reason: IncompleteReason,
): Promise<ReceivedEvent> {
  const wanted = typeof type === 'string' ? (t: string) => t === type : (t: string) => type.includes(t);
  const name = typeof type === 'string' ? type : type[0];
  try {
    return await firstValueFrom(
      conn.events$.pipe(
        filter((e) => wanted(e.frame.type)),
        timeout({
          first: timeout_ms,
          with: () => throwError(() => new TransportError(reason, `no ${name} within ${timeout_ms} ms`, { url: conn.url })),
        }),
      ),
    );
  } catch (err) {
    if (err instanceof EmptyError) {
      throw new TransportError('server_closed', `session closed before ${name}`, { url: conn.url });
    }
    throw err;
  }
}
