import { createUsHistogram } from '@duplex-bench/metrics';
import { httpSummary, LatencyHistograms, PerSecond, RequestTally, type HttpSummary } from './http-summary';
import { mergeHttpSummaries } from './merge';
import { newRecord } from './request-record';

/** One process's summary of `n` requests, each 100 ms to its first token and 200 ms to its end. */
function part(n: number, load: HttpSummary['load'], goodput = false): HttpSummary {
  const tally = new RequestTally();
  const histograms = new LatencyHistograms(false, load.max_concurrency !== undefined);
  const per = new PerSecond(0);
  for (let i = 0; i < n; i++) {
    const r = { ...newRecord(i, i * 0.1), dispatched_s: i * 0.1, started_s: i * 0.1, first_token_s: i * 0.1 + 0.1, second_token_s: i * 0.1 + 0.11, last_token_s: i * 0.1 + 0.19, end_s: i * 0.1 + 0.2, tokens: 10, tokens_origin: 'usage' as const, chunks: 10 };
    tally.add(r, 0);
    histograms.recordRequest(r, true);
    per.add('offered', r.intended_s);
  }
  const cpu = { user: 0.1, system: 0.05, total: 0.15, cpu_s: 1, wall_s: 10 };
  return httpSummary({
    tally,
    histograms,
    send_lag: createUsHistogram(),
    late_sends: 0,
    max_send_lag_ms: 10,
    origin_s: 0,
    steady_from_s: 0,
    warmup_s: 0,
    load,
    interrupted: false,
    sse_events: n * 12,
    loop: { p50: 1, p99: 2, max: 3, over_80ms: 0 } as never,
    cpu,
    peak_rss_bytes: 1 << 27,
    rss: {} as never,
    timeline: per.done(),
    goodput: goodput ? { bounds: { ttft: 150 }, good: n, steady_good: n } : undefined,
  });
}

const open = (rate: number, max_concurrency?: number): HttpSummary['load'] => ({ mode: 'open', rate_rps: rate, arrivals: 'poisson', ...(max_concurrency ? { max_concurrency } : {}), endpoint: 'chat', stream: true, max_tokens: 16, prompts: 'p', seed: 1 });

describe('mergeHttpSummaries', () => {
  it('an open loop without a cap stays without one: no concurrency, no max_concurrency', () => {
    const m = mergeHttpSummaries([part(5, open(10)), part(5, open(10))]);
    expect(m.load).toMatchObject({ mode: 'open', rate_rps: 20 });
    expect(m.load).not.toHaveProperty('concurrency');
    expect(m.load).not.toHaveProperty('max_concurrency');
  });

  it('adds the caps, the per-second counts and the goodput of every process', () => {
    const m = mergeHttpSummaries([part(5, open(10, 3), true), part(7, open(10, 2), true)]);
    expect(m.load.max_concurrency).toBe(5);
    expect(m.timeline.offered.reduce((a, b) => a + b, 0)).toBe(12);
    expect(m.goodput).toMatchObject({ good: 12, share: 1 });
    expect(m.latency_ms.ttst.raw.count).toBe(12);
    expect(m.latency_ms.client_queue.raw.count).toBe(12);
  });

  it('a summary written before the new figures (no TTST histogram, no per-second counts, no by_origin) merges without them; goodput only when every process has it', () => {
    const old = part(4, open(10)) as Partial<HttpSummary> & HttpSummary;
    for (const key of Object.keys(old.histograms)) if (/^(ttst|time_per_output_token|client_queue|e2e_including_queue|output_tokens_per_s_per_user)_/.test(key)) delete old.histograms[key];
    delete (old as Partial<HttpSummary>).timeline;
    delete (old.tokens as Partial<HttpSummary['tokens']>).by_origin;
    const m = mergeHttpSummaries([old, part(6, open(10), true)]);
    expect(m.requests.completed).toBe(10);
    expect(m.latency_ms.ttft.raw.count).toBe(10);
    expect(m.latency_ms.ttst.raw.count).toBe(6);
    expect(m.timeline.offered.reduce((a, b) => a + b, 0)).toBe(6);
    expect(m.tokens.by_origin).toEqual({ usage: 6 });
    expect(m.goodput).toBeUndefined();
  });
});
