import { take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { schedulerTimerHost } from './clock';
import { ManualTimers } from './testing';
import { after, every } from './waits';

describe('after', () => {
  it('emits once at the delay on the given timers, then completes (marbles)', () => {
    const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    ts.run(({ expectObservable }) => {
      expectObservable(after(schedulerTimerHost(ts), 250)).toBe('250ms (a|)', { a: undefined });
    });
  });

  it('unsubscribing cancels the armed timer', () => {
    const timers = new ManualTimers();
    const sub = after(timers, 100).subscribe();
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([100]);
    sub.unsubscribe();
    expect(timers.pending).toEqual([]);
  });
});

describe('every', () => {
  it('emits each period, counting from 0 (marbles)', () => {
    const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    ts.run(({ expectObservable }) => {
      expectObservable(every(schedulerTimerHost(ts), 250).pipe(take(3))).toBe('250ms a 249ms b 249ms (c|)', { a: 0, b: 1, c: 2 });
    });
  });

  it('arms the next wake from when the last one ran, and stops when unsubscribed', () => {
    const timers = new ManualTimers();
    const seen: Array<[number, number]> = [];
    const sub = every(timers, 250, { background: true }).subscribe((n) => seen.push([timers.now, n]));
    timers.fire();
    timers.fire(40); // 40 ms late: the next is due 250 ms after this one ran
    expect(seen).toEqual([
      [250, 0],
      [540, 1],
    ]);
    expect(timers.pending.map((t) => [t.due_ms, t.background])).toEqual([[790, true]]);
    sub.unsubscribe();
    expect(timers.pending).toEqual([]);
  });
});
