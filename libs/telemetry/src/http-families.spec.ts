import { createUsHistogram, recordMs } from '@duplex-bench/metrics';
import type { Family } from './families';
import { httpFamilies, type HttpSource } from './http-families';

/** Each family's samples as `series{labels}` → value, read now (a histogram's as its _bucket, _sum and _count). */
async function scrape(families: Family[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of families) {
    for (const v of (await f.get()).values) {
      const labels = Object.entries(v.labels).map(([k, x]) => `${k}=${x}`).join(',');
      const name = v.metricName ?? f.name;
      out[labels ? `${name}{${labels}}` : name] = v.value;
    }
  }
  return out;
}

function source() {
  const latency = { ttft: createUsHistogram(), itl: createUsHistogram(), e2e: createUsHistogram() };
  const state = { requests: { sent: 0, completed: 0, in_flight: 0, late_sends: 0 }, errors: {} as Record<string, number> };
  const h: HttpSource = { requests: () => state.requests, errors: () => state.errors, latency: () => latency };
  return { h, state, latency };
}

describe('httpFamilies', () => {
  it('serves the request counts under their own names, read at each scrape', async () => {
    const { h, state } = source();
    const families = httpFamilies(h);
    state.requests = { sent: 10, completed: 6, in_flight: 3, late_sends: 2 };
    let got = await scrape(families);
    expect([got.duplex_bench_requests_sent_total, got.duplex_bench_requests_completed_total, got.duplex_bench_requests_in_flight, got.duplex_bench_requests_late_total]).toEqual([10, 6, 3, 2]);
    state.requests = { sent: 11, completed: 9, in_flight: 0, late_sends: 2 };
    got = await scrape(families);
    expect([got.duplex_bench_requests_sent_total, got.duplex_bench_requests_completed_total, got.duplex_bench_requests_in_flight]).toEqual([11, 9, 0]);
    expect(families.find((f) => f.name === 'duplex_bench_requests_in_flight')?.type).toBe('gauge');
  });

  it('serves one error sample per class, and none before the first error', async () => {
    const { h, state } = source();
    const errors = httpFamilies(h).find((f) => f.name === 'duplex_bench_request_errors_total');
    if (!errors) throw new Error('no error family');
    expect((await errors.get()).values).toEqual([]);
    state.errors = { http_4xx: 3, timeout: 1 };
    expect((await errors.get()).values).toEqual([
      { value: 3, labels: { class: 'http_4xx' } },
      { value: 1, labels: { class: 'timeout' } },
    ]);
  });

  it('exposes TTFT, the inter-chunk wait and end to end each from its own histogram, in seconds', async () => {
    const { h, latency } = source();
    const families = httpFamilies(h);
    recordMs(latency.ttft, 120);
    recordMs(latency.itl, 3);
    recordMs(latency.itl, 30);
    recordMs(latency.e2e, 900);
    const got = await scrape(families);
    expect([got.duplex_bench_request_ttft_seconds_count, got.duplex_bench_request_inter_chunk_seconds_count, got.duplex_bench_request_e2e_seconds_count]).toEqual([1, 2, 1]);
    expect(got.duplex_bench_request_ttft_seconds_sum).toBeCloseTo(0.12, 3);
    expect(got.duplex_bench_request_e2e_seconds_sum).toBeCloseTo(0.9, 3);
    // 120 ms: above the 0.1 s bound, under the 0.15 s one.
    expect([got['duplex_bench_request_ttft_seconds_bucket{le=0.1}'], got['duplex_bench_request_ttft_seconds_bucket{le=0.15}']]).toEqual([0, 1]);
    // The inter-chunk buckets resolve milliseconds: 3 ms falls between 2.5 and 5 ms.
    expect([got['duplex_bench_request_inter_chunk_seconds_bucket{le=0.0025}'], got['duplex_bench_request_inter_chunk_seconds_bucket{le=0.005}'], got['duplex_bench_request_inter_chunk_seconds_bucket{le=+Inf}']]).toEqual([0, 1, 2]);
    recordMs(latency.e2e, 1100);
    expect((await scrape(families)).duplex_bench_request_e2e_seconds_count).toBe(2);
  });
});
