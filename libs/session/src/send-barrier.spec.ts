import { DeadlineScheduler } from '@duplex-bench/pacer';
import { VirtualTime } from '@duplex-bench/pacer/testing';
import { END_STEP_S, SendBarrier } from './send-barrier';

/** A barrier's sessions on one virtual clock: each asks for its turn, and `gone` says when (ms) each was let go. */
function sessions(n: number) {
  const time = new VirtualTime();
  const scheduler = new DeadlineScheduler({ host: time });
  const barrier = new SendBarrier();
  const gone: Array<number | null> = Array.from({ length: n }, () => null);
  barrier.expect(n);
  const ask = (i: number) => void barrier.turn(scheduler).then(() => (gone[i] = Math.round(time.now_s() * 1000)));
  return { time, barrier, gone, ask };
}

describe('SendBarrier', () => {
  it('lets no session go before every expected one reported, and at once when none is expected', async () => {
    const s = sessions(2);
    s.ask(0);
    s.barrier.done();
    await s.time.advance(1000);
    expect(s.gone[0]).toBeNull();
    s.barrier.done();
    s.ask(1);
    await s.time.advance(100);
    expect(s.gone).toEqual([1000, 1000 + END_STEP_S * 1000]);
    const none = new SendBarrier();
    none.expect(0);
    await expect(none.turn(new DeadlineScheduler({ host: new VirtualTime() }))).resolves.toBeUndefined();
  });

  it('lets the sessions go one step apart once it passed, in the order they asked, each held as long as the starts were spread', async () => {
    const n = 5;
    const s = sessions(n);
    // Sessions finish sending one step apart, as they started; each asks for its turn then.
    for (let i = 0; i < n; i++) {
      s.barrier.done();
      s.ask(i);
      await s.time.advance(END_STEP_S * 1000);
    }
    await s.time.advance(100);
    const passed_ms = (n - 1) * END_STEP_S * 1000;
    expect(s.gone).toEqual(Array.from({ length: n }, (_, i) => passed_ms + i * END_STEP_S * 1000));
    // Each held from its own ask to its release: the same for every session.
    const held = s.gone.map((t, i) => (t as number) - i * END_STEP_S * 1000);
    expect(new Set(held).size).toBe(1);
  });
});
