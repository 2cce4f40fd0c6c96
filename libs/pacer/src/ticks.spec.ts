import { map, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { schedulerTimerHost, type TimerHost } from './clock';
import { DeadlineScheduler } from './deadline-scheduler';
import { ticks, type Tick } from './ticks';

function newTestScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/** Collects [virtual ms, seq, due ms] for every tick, so lateness is visible in the assertion. */
function record(ts: TestScheduler, source: ReturnType<typeof ticks>): Array<[number, number, number]> {
  const seen: Array<[number, number, number]> = [];
  source.subscribe((t: Tick) => seen.push([ts.now(), t.seq, Math.round(t.due_s * 1000)]));
  return seen;
}

describe('ticks', () => {
  it('emits one tick per period from the start, then completes', () => {
    const ts = newTestScheduler();
    ts.run(({ expectObservable }) => {
      const scheduler = new DeadlineScheduler({ host: schedulerTimerHost(ts) });
      const seqs = ticks(scheduler, { start_s: 0.01, period_ms: 80, count: 3 }).pipe(map((t) => t.seq));
      expectObservable(seqs).toBe('10ms a 79ms b 79ms (c|)', { a: 0, b: 1, c: 2 });
    });
  });

  it('keeps deadlines on origin + N × period over many ticks (no drift)', () => {
    const ts = newTestScheduler();
    ts.run(() => {
      // A period that is not a whole number of ms: drift from rounding would accumulate if
      // each deadline were computed from the previous fire.
      const scheduler = new DeadlineScheduler({ host: schedulerTimerHost(ts) });
      const seen = record(ts, ticks(scheduler, { start_s: 0, period_ms: 33.4, count: 1000 }));
      ts.flush();
      expect(seen).toHaveLength(1000);
      const last = seen[999];
      expect(last[0]).toBe(Math.ceil(999 * 33.4));
      for (const [now, seq] of seen) expect(now - seq * 33.4).toBeLessThan(1);
    });
  });

  it('sends a late tick at once and does not shift the ones after it', () => {
    const ts = newTestScheduler();
    ts.run(() => {
      const base = schedulerTimerHost(ts);
      let arms = 0;
      // The second timer wakes 150 ms late, as if the loop had been blocked.
      const host: TimerHost = { ...base, arm: (delay, fn) => base.arm(delay + (++arms === 2 ? 150 : 0), fn) };
      const scheduler = new DeadlineScheduler({ host });
      const seen = record(ts, ticks(scheduler, { start_s: 0, period_ms: 80, count: 5 }));
      ts.flush();
      expect(seen).toEqual([
        [0, 0, 0],
        [230, 1, 80],
        [230, 2, 160],
        [240, 3, 240],
        [320, 4, 320],
      ]);
    });
  });

  it('starts at once when the start is in the past, and measures from the actual first send', () => {
    const ts = newTestScheduler();
    ts.run(() => {
      const scheduler = new DeadlineScheduler({ host: schedulerTimerHost(ts) });
      ts.schedule(() => {
        const seen = record(ts, ticks(scheduler, { start_s: 0.1, period_ms: 80, count: 3 }));
        ts.schedule(() => expect(seen).toEqual([[500, 0, 500], [580, 1, 580], [660, 2, 660]]), 1000);
      }, 500);
    });
  });

  it('stops when unsubscribed mid-stream and leaves nothing armed', () => {
    const ts = newTestScheduler();
    ts.run(({ expectObservable }) => {
      const scheduler = new DeadlineScheduler({ host: schedulerTimerHost(ts) });
      const source = ticks(scheduler, { start_s: 0, period_ms: 80, count: 10 }).pipe(map((t) => t.seq));
      expectObservable(source, '^ 200ms !').toBe('a 79ms b 79ms c', { a: 0, b: 1, c: 2 });
      ts.schedule(() => expect(scheduler.stats().pending).toBe(0), 300);
    });
  });

  it('completes at once for a count of 0 and refuses a bad period', () => {
    const ts = newTestScheduler();
    ts.run(({ expectObservable }) => {
      const scheduler = new DeadlineScheduler({ host: schedulerTimerHost(ts) });
      expectObservable(ticks(scheduler, { start_s: 0, period_ms: 80, count: 0 })).toBe('|');
      expect(() => ticks(scheduler, { start_s: 0, period_ms: 0, count: 1 })).toThrow(RangeError);
    });
  });

  it('lets many sessions share one scheduler in deadline order', () => {
    const ts = newTestScheduler();
    ts.run(() => {
      const scheduler = new DeadlineScheduler({ host: schedulerTimerHost(ts) });
      const order: string[] = [];
      for (const [name, start] of [['b', 0.04], ['a', 0], ['c', 0.06]] as const) {
        ticks(scheduler, { start_s: start, period_ms: 80, count: 2 }).pipe(take(2)).subscribe((t) => order.push(`${name}${t.seq}`));
      }
      ts.flush();
      expect(order).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'c1']);
    });
  });
});
