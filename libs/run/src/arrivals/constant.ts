/** Constant arrivals at `rate_per_s`: instant k is k ÷ rate exactly (a product, so no sum drifts), the first at the origin. */
export function constantOffsets(rate_per_s: number, run_for_s: number, max_count: number): number[] {
  const out: number[] = [];
  for (let k = 0; k / rate_per_s < run_for_s && out.length < max_count; k++) out.push(k / rate_per_s);
  return out;
}
