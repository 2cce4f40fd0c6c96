import { after } from '@duplex-bench/pacer';
import { EmptyError, filter, firstValueFrom, map, race } from 'rxjs';
import type { Connection, ReceivedEvent } from './connection';
import { TransportError, type IncompleteReason } from './errors';

/**
 * The next event of `type` (or of any of several types), or a TransportError with `reason` after
 * `timeout_ms`. A session that breaks meanwhile rejects with its own error; one that closes
 * cleanly rejects as server_closed. The bound runs on the connection's timers.
 */
export async function waitForEvent(
  conn: Connection,
  type: string | readonly string[],
  timeout_ms: number,
  reason: IncompleteReason,
): Promise<ReceivedEvent> {
  const wanted = typeof type === 'string' ? (t: string) => t === type : (t: string) => type.includes(t);
  const name = typeof type === 'string' ? type : type[0];
  try {
    return await firstValueFrom(
      race(
        conn.events$.pipe(filter((e) => wanted(e.frame.type))),
        after(conn.timers, timeout_ms).pipe(
          map(() => {
            throw new TransportError(reason, `no ${name} within ${timeout_ms} ms`, { url: conn.url });
          }),
        ),
      ),
    );
  } catch (err) {
    if (err instanceof EmptyError) {
      throw new TransportError('server_closed', `session closed before ${name}`, { url: conn.url });
    }
    throw err;
  }
}
