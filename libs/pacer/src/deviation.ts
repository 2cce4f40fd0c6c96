/** Deviation of packet `seq`: its send start minus (send start of packet 0 + seq × period), in ms. */
export function deviationMs(start_s: number, origin_s: number, seq: number, period_ms: number): number {
  return (start_s - origin_s) * 1000 - seq * period_ms;
}

/** Late means off schedule by more than one packet, either way. */
export function isLate(deviation_ms: number, period_ms: number): boolean {
  return Math.abs(deviation_ms) > period_ms;
}

/** Start times for `count` sessions spread evenly over `spread_ms` from `gate_s`. */
export function spreadStarts(gate_s: number, count: number, spread_ms: number): number[] {
  const step_s = count > 0 ? spread_ms / 1000 / count : 0;
  return Array.from({ length: count }, (_, i) => gate_s + i * step_s);
}

/**
 * The first of a periodic job's lengths (its next ones are `whole`) for the `n`th of many that start
 * together: half of `whole` to all of it, spread by `n`, so the jobs of sessions started at one gate
 * (a part of their records handed over, say) fall on different ticks, not all on one.
 */
export function staggeredFirst(n: number, whole: number): number {
  const half = Math.floor(whole / 2);
  return half + ((n * 97) % (whole - half));
}
