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
  if (!(value_ms >= 0)) throw new RangeError(`cannot record ${value_ms} ms`);
  histogram.recordValue(Math.round(value_ms * 1000));
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
