import { Observable } from 'rxjs';
import type { DeadlineScheduler } from './deadline-scheduler';

/** One packet slot. Times are seconds on the scheduler's clock. */
export interface Tick {
  seq: number;
  /** When this tick was due: origin_s + seq × period (packet 0: its own fire time). */
  due_s: number;
  /** When the tick fired: the send start of this packet. */
  fired_s: number;
  /** Send start of packet 0; every deadline is measured from it. */
  origin_s: number;
}

export interface TicksOptions {
  /** When packet 0 should go. The origin is when it actually fires, as the pacing check measures. */
  start_s: number;
  period_ms: number;
  count: number;
}

/**
 * Absolute-deadline ticks: tick N is due at origin + N × period, never at "last fire + period",
 * so a late tick does not move later ones; an overdue tick fires at once and is counted late by the caller.
 */
export function ticks(scheduler: DeadlineScheduler, options: TicksOptions): Observable<Tick> {
  const { start_s, period_ms, count } = options;
  if (!(period_ms > 0)) throw new RangeError(`period_ms must be positive, got ${period_ms}`);
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a whole number, got ${count}`);
  const period_s = period_ms / 1000;
  return new Observable<Tick>((subscriber) => {
    if (count === 0) {
      subscriber.complete();
      return undefined;
    }
    let seq = 0;
    let origin_s = NaN;
    // One timer for the session's every packet, armed again at each: no object per packet.
    const timer = scheduler.timer(fire);
    timer.at(start_s);
    function fire(fired_s: number): void {
      if (seq === 0) origin_s = fired_s;
      const due_s = origin_s + seq * period_s;
      subscriber.next({ seq, due_s, fired_s, origin_s });
      seq++;
      if (seq >= count) subscriber.complete();
      else if (!subscriber.closed) timer.at(origin_s + seq * period_s);
    }
    return timer.cancel;
  });
}
