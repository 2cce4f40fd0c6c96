import { after } from '@duplex-bench/pacer';
import { EmptyError, filter, firstValueFrom, map, NEVER, race, startWith, switchMap, take } from 'rxjs';
import type { Connection } from './connection';
import { TransportError, type IncompleteReason } from './errors';

/**
 * Resolves once the session has been `idle()` for `quiet_ms` with no event arriving: every event
 * restarts the wait, and one that opens something (a response, a turn) stops it until it is done.
 * With `moving`, only the events it names restart the wait (the others are let through unseen).
 * Bounded by `drain_ms` (a `drain_timeout`, or `reason`, naming `busy()`); a session that closes
 * meanwhile rejects as `server_closed`. Both waits run on the connection's timers. Dialects without
 * an end-of-input receipt end their sessions this way.
 */
export async function waitForQuiet(
  conn: Connection,
  o: { idle: () => boolean; busy: () => string; quiet_ms: number; drain_ms: number; session_id: string; moving?: (type: string) => boolean; reason?: IncompleteReason },
): Promise<void> {
  const moving = o.moving;
  try {
    await firstValueFrom(
      race(
        (moving ? conn.events$.pipe(filter((e) => moving(e.frame.type))) : conn.events$).pipe(
          startWith(null),
          switchMap(() => (o.idle() ? after(conn.timers, o.quiet_ms) : NEVER)),
          take(1),
        ),
        after(conn.timers, o.drain_ms).pipe(
          map(() => {
            throw new TransportError(o.reason ?? 'drain_timeout', `server not done within ${o.drain_ms} ms (${o.busy()})`, { url: conn.url, session_id: o.session_id });
          }),
        ),
      ),
    );
  } catch (err) {
    if (err instanceof EmptyError) throw new TransportError('server_closed', 'session closed before its responses were done', { url: conn.url });
    throw err;
  }
}
