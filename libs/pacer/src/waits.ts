import { Observable } from 'rxjs';
import type { TimerHost } from './clock';

/** Emits once, `delay_ms` after subscription, on `timers` (real or a test's), then completes. */
export function after(timers: TimerHost, delay_ms: number): Observable<void> {
  return new Observable<void>((subscriber) =>
    timers.arm(delay_ms, () => {
      subscriber.next();
      subscriber.complete();
    }),
  );
}

/**
 * Emits every `period_ms` on `timers` until unsubscribed; each wake arms the next from when it
 * ran, so a late wake delays the ones after it (a repeating chore's cadence, not a deadline's).
 * `background`: the timer alone does not keep the process alive.
 */
export function every(timers: TimerHost, period_ms: number, options?: { background?: boolean }): Observable<number> {
  return new Observable<number>((subscriber) => {
    let n = 0;
    let cancel = (): void => undefined;
    const arm = (): void => {
      cancel = timers.arm(
        period_ms,
        () => {
          subscriber.next(n++);
          if (!subscriber.closed) arm();
        },
        options,
      );
    };
    arm();
    return () => cancel();
  });
}
