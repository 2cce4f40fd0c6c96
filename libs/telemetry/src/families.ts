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
}

function family(name: string, help: string, type: Family['type'], values: () => PromValue[], aggregator: Family['aggregator'] = 'sum'): Family {
  return {
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

/** An HDR histogram's values at or under each bound: `lowestEquivalentValue` of each recorded bucket against `bounds`. */
export function cumulativeCounts(histogram: Histogram, bounds: number[]): number[] {
  const counts = new Array<number>(bounds.length).fill(0);
  const js = histogram as unknown as HdrIterable;
  if (histogram.totalCount === 0) return counts;
  if (!js.recordedValuesIterator) throw new Error('cumulativeCounts needs a JS HDR histogram (hdr.build without WebAssembly)');
  const it = js.recordedValuesIterator;
  it.reset();
  while (it.hasNext()) {
    const step = it.next();
    const low = js.lowestEquivalentValue(step.valueIteratedTo);
    // Bounds are few (a dozen): a linear walk is cheaper than a search.
    for (let b = 0; b < bounds.length; b++) if (low <= bounds[b]) counts[b] += step.countAtValueIteratedTo;
  }
  return counts;
}

interface HdrIterable {
  recordedValuesIterator?: { reset(): void; hasNext(): boolean; next(): { valueIteratedTo: number; countAtValueIteratedTo: number } };
  lowestEquivalentValue(value: number): number;
}

/**
 * A Prometheus histogram over an HDR histogram of µs values, exposed in seconds (or, with
 * `scale`, another unit: RTF is recorded as ratio × 10⁶). The buckets are cut at scrape time.
 * `_sum` is mean × count: HDR keeps no exact sum, so it is good to the histogram's 3 digits.
 */
export function hdrHistogram(name: string, help: string, buckets: number[], read: () => Histogram | null, scale = 1e6): Family {
  const bounds = buckets.map((b) => Math.round(b * scale));
  return family(name, help, 'histogram', (): PromValue[] => {
    const h = read();
    const count = h?.totalCount ?? 0;
    const cumulative = h ? cumulativeCounts(h, bounds) : bounds.map(() => 0);
    return [
      ...buckets.map((le, i) => ({ metricName: `${name}_bucket`, labels: { le }, value: cumulative[i] })),
      { metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: count },
      { metricName: `${name}_sum`, labels: {} as Labels, value: h && count > 0 ? (h.mean * count) / scale : 0 },
      { metricName: `${name}_count`, labels: {} as Labels, value: count },
    ];
  });
}
