import type { Clock } from './clock';
import type { DeadlineScheduler } from './deadline-scheduler';

/**
 * Blocks the loop for `stall_ms` half a millisecond before the packet slot nearest `mid_s` after
 * `origin_s`, so every session whose tick falls inside the stall is held by all of it. A test seam
 * (`--inject-stall-ms`): it proves the pacing check can fail. `hold` blocks the loop in its own
 * way (a GC storm, a synchronous disk write); by default a spin.
 */
export function scheduleStall(scheduler: DeadlineScheduler, clock: Clock, origin_s: number, mid_s: number, packet_ms: number, stall_ms: number, hold?: (ms: number) => void): void {
  const slot = Math.round((mid_s * 1000) / packet_ms);
  scheduler.schedule(origin_s + (slot * packet_ms - 0.5) / 1000, () => {
    if (hold) return hold(stall_ms);
    const until = clock.now_s() + stall_ms / 1000;
    while (clock.now_s() < until) {
      // Deliberately blocks the loop.
    }
  });
}
