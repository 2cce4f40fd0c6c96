import { merge, Subscription, type MonoTypeOperatorFunction, type Observable } from 'rxjs';

export interface StreamPackets<T> {
  /** The connection's end: a session that breaks while streaming stops its ticks at once. */
  ended$: Observable<never>;
  /** A stop (SIGINT, a server error that ends the session): the ticks stop after the packet in hand. */
  stops: Array<Observable<unknown>>;
  /** The send path, tick to receipt (`sendPath`). */
  sends: Observable<T>;
  /** The stages after each send, in one operator (`afterSend`). */
  after: MonoTypeOperatorFunction<T>;
  /** Whether packet 0 went: the input stream then ends with the streaming. */
  started(): boolean;
  onStreamEnd(): void;
}

/** Streams every packet; resolves when every packet went (or a stop came), rejects when the socket broke. */
export function streamPackets<T>(s: StreamPackets<T>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let ended = false;
    // A Subscription up front: end() may run before subscribe() returns (a stop that came first).
    const sub = new Subscription();
    const end = (err?: unknown) => {
      if (ended) return;
      ended = true;
      if (s.started()) s.onStreamEnd();
      sub.unsubscribe();
      if (err) reject(err);
      else resolve();
    };
    sub.add(s.ended$.subscribe({ error: (err) => end(err) }));
    sub.add(merge(...s.stops).subscribe(() => end()));
    if (ended) return;
    sub.add(s.sends.pipe(s.after).subscribe({ complete: () => end(), error: (err) => end(err) }));
  });
}
