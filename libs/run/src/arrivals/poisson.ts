import { exponential } from '@duplex-bench/pacer';

/**
 * Poisson arrivals at `rate_per_s`: the gaps are exponential draws, and instant k is the sum of
 * the first k gaps from the origin (the previous INTENDED instant, never the previous actual start).
 */
export function poissonOffsets(rate_per_s: number, run_for_s: number, random: () => number, max_count: number): number[] {
  const mean_s = 1 / rate_per_s;
  const out: number[] = [];
  for (let t = exponential(random, mean_s); t < run_for_s && out.length < max_count; t += exponential(random, mean_s)) out.push(t);
  return out;
}
