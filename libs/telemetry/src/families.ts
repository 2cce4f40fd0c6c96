/**
 * Metric families read at scrape time. Each one is a prom-client metric object whose `get()` reads
 * a recorder the run keeps anyway (a counter, an HDR histogram, a monitor): nothing is recorded
 * twice, and nothing is added to the per-packet path.
 */
import type { Histogram } from '@duplex-bench/metrics';

export type Labels = Record<string, string | number>;

/** One sample of a family: its value, and the labels that set it apart from its siblings. */
export interface Sample {
  value: number;
  labels?: Labels;
}

interface PromValue {
  value: number;
  labels: Labels;
  metricName?: string;
}

/** The shape prom-client's Registry reads from every metric it holds (`get()`), also what its aggregator pools. */
export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly aggregator: 'sum' | 'max';
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: PromValue[] }>;
  reset(): void;
  /** A histogram's own recorder, for exporters that cut their own buckets (OTLP): values are seconds × `scale`. */
  readonly hdr?: { read: () => Histogram | null; scale: number };
}

function family(name: string, help: string, type: Family['type'], values: () => PromValue[], aggregator: Family['aggregator'] = 'sum', hdr?: Family['hdr']): Family {
  return {
    hdr,
    name,
    help,
    type,
    aggregator,
    async get() {
      return { name, help, type, aggregator, values: values() };
    },
    reset() {
      // The recorders belong to the run: a registry reset leaves them as they are.
    },
  };
}

const samples = (read: () => number | Sample[]): PromValue[] => {
  const v = read();
  return typeof v === 'number' ? [{ value: v, labels: {} }] : v.map((s) => ({ value: s.value, labels: s.labels ?? {} }));
};

/** A count that only grows; `name` ends in `_total`. */
export function counter(name: string, help: string, read: () => number | Sample[]): Family {
  if (!name.endsWith('_total')) throw new Error(`counter ${name} must end in _total`);
  return family(name, help, 'counter', () => samples(read));
}

/** A value that goes up and down. */
export function gauge(name: string, help: string, read: () => number | Sample[], aggregator: Family['aggregator'] = 'sum'): Family {
  return family(name, help, 'gauge', () => samples(read), aggregator);
}

/**
 * An HDR histogram's values at or under each bound (ascending): a value counts under a bound when
 * the lowest value of its HDR bucket is at or under it. One pass over the counts array, no
 * allocation: at a scrape a second it must not cost the loop (an iterator of the recorded values
 * took 8-35 ms per histogram of 128,000 packets).
 */
export function cumulativeCounts(histogram: Histogram, bounds: number[]): { counts: number[]; sum: number } {
  const counts = new Array<number>(bounds.length).fill(0);
  if (histogram.totalCount === 0) return { counts, sum: 0 };
  const js = histogram as unknown as HdrCounts;
  if (typeof js.getCountAtIndex !== 'function' || !(js.subBucketHalfCount > 0)) throw new Error('cumulativeCounts needs a JS HDR histogram (hdr.build without WebAssembly)');
  const half = js.subBucketHalfCount;
  const last = Math.min(js.countsArrayIndex(histogram.maxValue), js.countsArrayLength - 1);
  let b = 0;
  let boundIndex = js.countsArrayIndex(bounds[0]);
  let total = 0;
  let sum = 0;
  for (let i = 0; i <= last; i++) {
    while (b < bounds.length && i > boundIndex) {
      counts[b++] = total;
      if (b < bounds.length) boundIndex = js.countsArrayIndex(bounds[b]);
    }
    const n = js.getCountAtIndex(i);
    if (n === 0) continue;
    total += n;
    // HDR's index layout: the first 2 × half indices are bucket 0 at unit steps; then bucket k
    // holds sub-buckets half..2·half−1 at steps of 2^k units. Each counts at its median value, as
    // HDR's own mean does.
    const bucket = i < 2 * half ? 0 : Math.floor(i / half) - 1;
    const step = 2 ** (bucket + js.unitMagnitude);
    const low = (bucket === 0 ? i : i - bucket * half) * step;
    sum += (low + Math.floor(step / 2)) * n;
  }
  while (b < bounds.length) counts[b++] = total;
  return { counts, sum };
}

interface HdrCounts {
  countsArrayLength: number;
  subBucketHalfCount: number;
  unitMagnitude: number;
  countsArrayIndex(value: number): number;
  getCountAtIndex(index: number): number;
}

/**
 * A Prometheus histogram over an HDR histogram of µs values, exposed in seconds (or, with
 * `scale`, another unit: RTF is recorded as ratio × 10⁶). The buckets are cut at scrape time.
 * `_sum` takes each HDR bucket at its median value (as HDR's mean does): good to its 3 digits.
 */
export function hdrHistogram(name: string, help: string, buckets: number[], read: () => Histogram | null, scale = 1e6): Family {
  const bounds = buckets.map((b) => Math.round(b * scale));
  return family(name, help, 'histogram', (): PromValue[] => {
    const h = read();
    const count = h?.totalCount ?? 0;
    const { counts: cumulative, sum } = h ? cumulativeCounts(h, bounds) : { counts: bounds.map(() => 0), sum: 0 };
    return [
      ...buckets.map((le, i) => ({ metricName: `${name}_bucket`, labels: { le }, value: cumulative[i] })),
      { metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: count },
      { metricName: `${name}_sum`, labels: {} as Labels, value: sum / scale },
      { metricName: `${name}_count`, labels: {} as Labels, value: count },
    ];
  }, 'sum', { read, scale });
}
