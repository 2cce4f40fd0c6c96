import type { TimerHost } from './clock';
import { DeadlineScheduler } from './deadline-scheduler';

/** A hand-driven host: time moves only when the test says, and timers can be made to wake early. */
class ManualHost implements TimerHost {
  t_s = 0;
  armed: Array<{ at_s: number; fn: () => void; live: boolean }> = [];
  afterIoQueue: Array<() => void> = [];
  earlyBy_ms = 0;
  now_s = (): number => this.t_s;
  arm(delay_ms: number, fn: () => void): () => void {
    const timer = { at_s: this.t_s + Math.max(0, delay_ms - this.earlyBy_ms) / 1000, fn, live: true };
    this.earlyBy_ms = 0; // only the next wake comes early
    this.armed.push(timer);
    return () => {
      timer.live = false;
    };
  }
  afterIo(fn: () => void): () => void {
    this.afterIoQueue.push(fn);
    return () => undefined;
  }
  liveTimers(): number {
    return this.armed.filter((t) => t.live).length;
  }
  /** Moves time to `t_s`, firing timers due on the way. */
  advanceTo(t_s: number): void {
    for (;;) {
      const next = this.armed.filter((t) => t.live && t.at_s <= t_s).sort((a, b) => a.at_s - b.at_s)[0];
      if (!next) break;
      this.t_s = Math.max(this.t_s, next.at_s);
      next.live = false;
      next.fn();
    }
    this.t_s = t_s;
  }
}

describe('DeadlineScheduler', () => {
  it('keeps one timer armed however many deadlines are pending', () => {
    const host = new ManualHost();
    const scheduler = new DeadlineScheduler({ host });
    for (let i = 0; i < 100; i++) scheduler.schedule(1 + i * 0.001, () => undefined);
    expect(host.liveTimers()).toBe(1);
    scheduler.schedule(0.5, () => undefined);
    expect(host.liveTimers()).toBe(1);
  });

  it('re-arms on an early wake instead of firing early', () => {
    const host = new ManualHost();
    host.earlyBy_ms = 2;
    const scheduler = new DeadlineScheduler({ host });
    const fired: number[] = [];
    scheduler.schedule(0.08, (t) => fired.push(t));
    host.advanceTo(0.079);
    expect(fired).toEqual([]);
    expect(scheduler.stats().early_wakes).toBe(1);
    host.advanceTo(0.1);
    expect(fired).toEqual([0.08]);
  });

  it('fires at most maxFiresPerWake callbacks, then yields to I/O', () => {
    const host = new ManualHost();
    const scheduler = new DeadlineScheduler({ host, maxFiresPerWake: 4 });
    let fired = 0;
    for (let i = 0; i < 10; i++) scheduler.schedule(0.01, () => fired++);
    host.advanceTo(0.02);
    expect(fired).toBe(4);
    expect(host.afterIoQueue).toHaveLength(1);
    host.afterIoQueue.shift()?.();
    expect(fired).toBe(8);
    host.afterIoQueue.shift()?.();
    expect(fired).toBe(10);
    expect(scheduler.stats()).toMatchObject({ capped_wakes: 2, fires: 10 });
  });

  it('does not run a cancelled callback', () => {
    const host = new ManualHost();
    const scheduler = new DeadlineScheduler({ host });
    const fired: string[] = [];
    const cancel = scheduler.schedule(0.01, () => fired.push('a'));
    scheduler.schedule(0.02, () => fired.push('b'));
    cancel();
    host.advanceTo(1);
    expect(fired).toEqual(['b']);
  });

  it('reports how late the timer fired', () => {
    const host = new ManualHost();
    const scheduler = new DeadlineScheduler({ host });
    scheduler.schedule(0.01, () => undefined);
    host.armed[0].at_s = 0.025;
    host.advanceTo(1);
    expect(scheduler.stats().max_lateness_ms).toBeCloseTo(15, 6);
  });

  it('runs equal deadlines in the order they were armed, a timer armed again moved to its new deadline', () => {
    const host = new ManualHost();
    const scheduler = new DeadlineScheduler({ host });
    const fired: string[] = [];
    const timers = ['a', 'b', 'c', 'd'].map((name) => ({ name, timer: scheduler.timer(() => fired.push(name)) }));
    timers[2].timer.at(0.01);
    timers[0].timer.at(0.01);
    timers[3].timer.at(0.005);
    timers[1].timer.at(0.01);
    timers[3].timer.at(0.02); // moved later while armed: once, at its new deadline
    timers[1].timer.cancel();
    timers[1].timer.cancel(); // twice: nothing more
    expect(scheduler.stats().pending).toBe(3);
    host.advanceTo(1);
    expect(fired).toEqual(['c', 'a', 'd']);
    expect(scheduler.stats().pending).toBe(0);
  });

  it('fires in deadline order, then arming order, through many timers armed, moved and cancelled', () => {
    const host = new ManualHost();
    const scheduler = new DeadlineScheduler({ host, maxFiresPerWake: 1000 });
    // A reference: every arming's (deadline, arming number), the live one per timer.
    let armings = 0;
    const live = new Map<number, { deadline_s: number; n: number }>();
    const fired: number[] = [];
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const timers = Array.from({ length: 200 }, (_, id) =>
      scheduler.timer(() => {
        fired.push(id);
        live.delete(id);
      }),
    );
    for (let step = 0; step < 2000; step++) {
      const id = Math.floor(random() * timers.length);
      if (random() < 0.2) {
        timers[id].cancel();
        live.delete(id);
      } else {
        // Few distinct deadlines, so ties are many.
        const deadline_s = 0.001 * (1 + Math.floor(random() * 40));
        timers[id].at(deadline_s);
        live.set(id, { deadline_s, n: armings++ });
      }
    }
    const expected = [...live.entries()].sort((x, y) => x[1].deadline_s - y[1].deadline_s || x[1].n - y[1].n).map(([id]) => id);
    expect(scheduler.stats().pending).toBe(expected.length);
    host.advanceTo(1);
    expect(fired).toEqual(expected);
  });
});
