import type { PromScrape } from './prom-text';

/** A histogram family's cumulative buckets, summed over every label set but `le`. */
export interface Buckets {
  /** Upper bounds, ascending, +Inf last when the server sent it. */
  le: number[];
  cumulative: number[];
  count: number;
  sum: number;
}

/** `family`'s buckets in `scrape`, pooled over its label sets (stages, replicas, models); null when absent. */
export function bucketsOf(scrape: PromScrape, family: string): Buckets | null {
  const byLe = new Map<number, number>();
  let count = 0;
  let sum = 0;
  let seen = false;
  for (const s of scrape.samples) {
    if (s.name === `${family}_bucket`) {
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      if (Number.isNaN(le)) continue;
      byLe.set(le, (byLe.get(le) ?? 0) + s.value);
      seen = true;
    } else if (s.name === `${family}_count`) count += s.value;
    else if (s.name === `${family}_sum`) sum += s.value;
  }
  if (!seen) return null;
  const le = [...byLe.keys()].sort((a, b) => a - b);
  return { le, cumulative: le.map((b) => byLe.get(b) ?? 0), count, sum };
}

/**
 * What `later` holds that `earlier` did not: the observations between two scrapes. A bound missing
 * from `earlier` counts from 0; a counter that went down (the server restarted) leaves `later` as it is.
 */
export function bucketDelta(earlier: Buckets | null, later: Buckets): Buckets {
  if (!earlier) return later;
  const before = new Map(earlier.le.map((b, i) => [b, earlier.cumulative[i]]));
  const reset = later.count < earlier.count || later.le.some((b, i) => later.cumulative[i] < (before.get(b) ?? 0));
  if (reset) return later;
  return {
    le: later.le,
    cumulative: later.le.map((b, i) => later.cumulative[i] - (before.get(b) ?? 0)),
    count: later.count - earlier.count,
    sum: later.sum - earlier.sum,
  };
}

/**
 * The q-quantile (0..1) of bucketed observations as PromQL's histogram_quantile computes it: the
 * bucket where the rank q × count falls, linear within it from the bound below (0 below the first
 * positive bound); in the +Inf bucket, the highest finite bound. Null with no observations.
 */
export function bucketQuantile(b: Buckets, q: number): number | null {
  const top = b.cumulative.at(-1) ?? 0;
  const total = b.le.at(-1) === Infinity ? top : Math.max(b.count, top);
  if (!(total > 0)) return null;
  const rank = q * total;
  for (let i = 0; i < b.le.length; i++) {
    if (b.cumulative[i] < rank) continue;
    if (b.le[i] === Infinity) return i > 0 ? b.le[i - 1] : null;
    const lower = i > 0 ? b.le[i - 1] : Math.min(0, b.le[i]);
    const below = i > 0 ? b.cumulative[i - 1] : 0;
    const inBucket = b.cumulative[i] - below;
    if (inBucket <= 0) return b.le[i];
    return lower + ((b.le[i] - lower) * (rank - below)) / inBucket;
  }
  return b.le.filter(Number.isFinite).at(-1) ?? null;
}
