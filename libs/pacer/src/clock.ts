import type { SchedulerLike } from 'rxjs';

/** A source of time in seconds. Measurements only ever read a monotonic clock through this. */
export interface Clock {
  now_s(): number;
}

/** A clock that can also wake us up: the one place the pacer touches timers. */
export interface TimerHost extends Clock {
  /**
   * Calls `fn` after about `delay_ms`; the returned function cancels it. Wakes may come early.
   * `background`: the timer alone does not keep the process alive (a monitor's, not a deadline's).
   */
  arm(delay_ms: number, fn: () => void, options?: { background?: boolean }): () => void;
  /** Calls `fn` once pending I/O has had its turn; the returned function cancels it. */
  afterIo(fn: () => void): () => void;
}

const NS_PER_S = 1e9;

/** Host monotonic clock (CLOCK_MONOTONIC on Linux), shared by every process of one host. */
export const monotonicClock: Clock = {
  now_s: () => Number(process.hrtime.bigint()) / NS_PER_S,
};

/** Real timers on the monotonic clock. */
export const nodeTimerHost: TimerHost = {
  now_s: monotonicClock.now_s,
  arm(delay_ms, fn, options) {
    const handle = setTimeout(fn, delay_ms);
    if (options?.background) handle.unref();
    return () => clearTimeout(handle);
  },
  afterIo(fn) {
    const handle = setImmediate(fn);
    return () => clearImmediate(handle);
  },
};

/** Real timers that read `clock` (a test's fixed or stepped clock, or the host's). */
export function timersOn(clock: Clock): TimerHost {
  return 'arm' in clock ? (clock as TimerHost) : { ...nodeTimerHost, now_s: () => clock.now_s() };
}

/** Timers on an RxJS scheduler, so tests can run the pacer in virtual time (`TestScheduler.run`). */
export function schedulerTimerHost(scheduler: SchedulerLike): TimerHost {
  return {
    now_s: () => scheduler.now() / 1000,
    arm(delay_ms, fn) {
      const subscription = scheduler.schedule(fn, delay_ms);
      return () => subscription.unsubscribe();
    },
    afterIo(fn) {
      const subscription = scheduler.schedule(fn, 0);
      return () => subscription.unsubscribe();
    },
  };
}
