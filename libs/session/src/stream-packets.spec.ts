import { NEVER, Subject, tap, type Observable } from 'rxjs';
import { streamPackets } from './stream-packets';

function streaming(sends: Observable<number>, o: { ended$?: Observable<never>; stops?: Array<Observable<unknown>> } = {}) {
  const after: number[] = [];
  let ends = 0;
  const done = streamPackets({
    ended$: o.ended$ ?? NEVER,
    stops: o.stops ?? [],
    sends,
    after: tap((n: number) => after.push(n)),
    started: () => after.length > 0,
    onStreamEnd: () => ends++,
  });
  return { done, after, ends: () => ends };
}

describe('streamPackets', () => {
  it('resolves when every packet went, each through the stages after its send, and ends the stream once', async () => {
    const sends = new Subject<number>();
    const s = streaming(sends);
    sends.next(0);
    sends.next(1);
    sends.complete();
    await s.done;
    expect(s.after).toEqual([0, 1]);
    expect(s.ends()).toBe(1);
  });

  it('stops after the packet in hand on a stop, and rejects at once when the connection broke', async () => {
    const sends = new Subject<number>();
    const stop = new Subject<void>();
    const stopped = streaming(sends, { stops: [stop] });
    sends.next(0);
    stop.next();
    sends.next(1);
    await stopped.done;
    expect(stopped.after).toEqual([0]);
    const ended = new Subject<never>();
    const broke = streaming(new Subject<number>(), { ended$: ended });
    ended.error(new Error('socket closed'));
    await expect(broke.done).rejects.toThrow('socket closed');
    // No packet went: the input stream never started, so it does not end.
    expect(broke.ends()).toBe(0);
  });
});
