import * as hdr from 'hdr-histogram-js';

export type Histogram = hdr.Histogram;

/** Percentiles of a duration, in ms; values recorded in µs. */
export interface PercentilesMs {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  p99_9: number | null;
  max: number | null;
}

/** An HDR histogram of µs values, 3 significant digits, up to an hour (resizes past it). */
export function createUsHistogram(): Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
}

/** Records a duration in ms at µs resolution; negative values are a caller's bug, so they throw. */
export function recordMs(histogram: Histogram, value_ms: number): void {
  if (!(value_ms >= 0)) notRecordable(value_ms);
  const us = Math.round(value_ms * 1000);
  if (!recordCounted(histogram as unknown as CountedHistogram, us)) histogram.recordValue(us);
}

/**
 * The error for a value `recordMs` cannot record, made apart from it: with the message's template in
 * its body, the compiled pacing record turned a value into a string for every packet it recorded.
 */
function notRecordable(value_ms: number): never {
  throw new RangeError(`cannot record ${value_ms} ms`);
}

/** The parts of hdr-histogram-js's JavaScript histogram (`JsHistogram`) that `recordCounted` reads and calls. */
interface CountedHistogram {
  readonly subBucketHalfCountMagnitude?: number;
  readonly unitMagnitude?: number;
  readonly countsArrayLength?: number;
  incrementCountAtIndex?(index: number): void;
  updateMinAndMax?(value: number): void;
  incrementTotalCount?(): void;
}

/**
 * Records `us` as `recordValue` does, with its bucket found by integer arithmetic: hdr-histogram-js
 * finds it with `Math.log2`, `Math.floor` and two `Math.pow`, about 100 ns a value here, and the
 * probe records 8 values a packet cycle (the pacing histograms, the receive delays). For a value
 * under 2^31, `floor(log2(v))` is `31 - clz32(v)` and `floor(v / 2^k)` is `v >>> k`: the same index.
 * Returns false, recording nothing, when the histogram is not such a one (a WebAssembly one), the
 * value is past 2^31 µs, or its index is past the counts (`recordValue` then resizes).
 */
function recordCounted(h: CountedHistogram, us: number): boolean {
  const half = h.subBucketHalfCountMagnitude;
  const unit = h.unitMagnitude;
  if (half === undefined || unit !== 0 || h.countsArrayLength === undefined || !h.incrementCountAtIndex || !h.updateMinAndMax || !h.incrementTotalCount) return false;
  if (us >= 2 ** 31) return false;
  const bucket = Math.max(31 - Math.clz32(us) - half, 0);
  const index = (bucket << half) + (us >>> bucket);
  if (index >= h.countsArrayLength) return false;
  h.incrementCountAtIndex(index);
  h.updateMinAndMax(us);
  h.incrementTotalCount();
  return true;
}

const roundUs = (us: number): number => Math.round(us) / 1000;

export function percentilesMs(histogram: Histogram): PercentilesMs {
  const count = histogram.totalCount;
  if (count === 0) return { count, p50: null, p90: null, p99: null, p99_9: null, max: null };
  // A percentile reads the top of its bucket, which can pass the exact max: clamp to it.
  const max = histogram.maxValue;
  const at = (p: number) => roundUs(Math.min(histogram.getValueAtPercentile(p), max));
  return { count, p50: at(50), p90: at(90), p99: at(99), p99_9: at(99.9), max: roundUs(max) };
}

/** Compressed base64: the form histograms take across threads, processes and files. */
export function encodeHistogram(histogram: Histogram): string {
  return hdr.encodeIntoCompressedBase64(histogram);
}

export function decodeHistogram(encoded: string): Histogram {
  return hdr.decodeFromCompressedBase64(encoded);
}

/** A new histogram holding every value of `parts`. */
export function mergeHistograms(parts: Histogram[]): Histogram {
  const merged = createUsHistogram();
  for (const part of parts) merged.add(part);
  return merged;
}
