import { TestScheduler } from 'rxjs/testing';
import { monotonicClock, nodeTimerHost, schedulerTimerHost, timersOn } from './clock';
import { ManualTimers } from './testing';

describe('clocks and timer hosts', () => {
  it('timersOn keeps a timer host as it is, and gives a plain clock real timers that read it', () => {
    const manual = new ManualTimers();
    expect(timersOn(manual)).toBe(manual);
    const fixed = { now_s: () => 42 };
    const host = timersOn(fixed);
    expect(host.now_s()).toBe(42);
    expect(host.arm).toBe(nodeTimerHost.arm);
  });

  it('the monotonic clock never goes back', () => {
    let last = monotonicClock.now_s();
    for (let i = 0; i < 1000; i++) {
      const now = monotonicClock.now_s();
      expect(now).toBeGreaterThanOrEqual(last);
      last = now;
    }
  });

  it('schedulerTimerHost fires on an RxJS scheduler in virtual time, and cancels', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    const host = schedulerTimerHost(scheduler);
    const fired: number[] = [];
    host.arm(80, () => fired.push(host.now_s()));
    const cancel = host.arm(40, () => fired.push(-1));
    cancel();
    host.afterIo(() => fired.push(host.now_s()));
    scheduler.flush();
    expect(fired).toEqual([0, 0.08]);
  });
});
