import type { Histogram } from '@duplex-bench/metrics';
import { counter, gauge, hdrHistogram, type Family } from './families';

/** What an HTTP/SSE load run already counts, read at scrape time. */
export interface HttpSource {
  requests(): { sent: number; completed: number; in_flight: number; late_sends: number };
  /** Failed requests by class (`http_4xx`, `timeout`, …). */
  errors(): Record<string, number>;
  /** µs histograms, every request (warm-up included), from each request's intended start. */
  latency(): { ttft: Histogram; itl: Histogram; e2e: Histogram };
}

const LATENCY_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10, 15, 20, 30, 60];
const ITL_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28];

export function httpFamilies(h: HttpSource): Family[] {
  return [
    counter('duplex_bench_requests_sent_total', 'HTTP requests sent', () => h.requests().sent),
    counter('duplex_bench_requests_completed_total', 'HTTP requests that ended with a complete response', () => h.requests().completed),
    gauge('duplex_bench_requests_in_flight', 'HTTP requests sent and not ended', () => h.requests().in_flight),
    counter('duplex_bench_requests_late_total', 'Requests sent more than --max-send-lag-ms after their intended start (open loop: the client fell behind)', () => h.requests().late_sends),
    counter('duplex_bench_request_errors_total', 'HTTP requests that failed, by error class', () => Object.entries(h.errors()).map(([cls, value]) => ({ value, labels: { class: cls } }))),
    hdrHistogram('duplex_bench_request_ttft_seconds', 'Per request: intended start to the first token chunk received (client clock)', LATENCY_BUCKETS_S, () => h.latency().ttft),
    hdrHistogram('duplex_bench_request_inter_chunk_seconds', 'Per streamed chunk after the first: the wait since the previous token chunk (client clock)', ITL_BUCKETS_S, () => h.latency().itl),
    hdrHistogram('duplex_bench_request_e2e_seconds', 'Per request: intended start to the end of the response (client clock)', LATENCY_BUCKETS_S, () => h.latency().e2e),
  ];
}
