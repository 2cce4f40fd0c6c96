import { createUsHistogram, recordMs, type Histogram } from '@duplex-bench/metrics';
import { duplexFamilies, type DuplexSource, type LiveBehaviour } from './duplex-families';
import type { Family } from './families';
import { LiveResponses, LiveSessions } from './live-recorders';

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

function source(behaviour?: () => LiveBehaviour | null) {
  const state = { packets: { sent: 0, late: 0 }, streams: { started: 0, active: 0 } };
  const d: DuplexSource = {
    packets: () => state.packets,
    deviation: createUsHistogram(),
    streams: () => state.streams,
    sessions: new LiveSessions(),
    responses: new LiveResponses(),
    ...(behaviour ? { behaviour } : {}),
  };
  return { d, state };
}

const histogramOf = (...values_ms: number[]): Histogram => {
  const h = createUsHistogram();
  for (const v of values_ms) recordMs(h, v);
  return h;
};

describe('duplexFamilies', () => {
  it('serves packets, streams and sessions as the run counts them, read at each scrape', async () => {
    const { d, state } = source();
    const families = duplexFamilies(d);
    state.packets = { sent: 5000, late: 12 };
    state.streams = { started: 40, active: 31 };
    d.sessions.ended(true, undefined);
    d.sessions.ended(false, 'handshake_timeout');
    d.sessions.ended(false, 'handshake_timeout');
    d.sessions.ended(false, 'server_error');
    let got = await scrape(families);
    expect(got).toMatchObject({
      duplex_bench_packets_sent_total: 5000,
      duplex_bench_packets_late_total: 12,
      duplex_bench_sessions_started_total: 40,
      duplex_bench_sessions_active: 31,
      duplex_bench_sessions_completed_total: 1,
      'duplex_bench_sessions_incomplete_total{reason=handshake_timeout}': 2,
      'duplex_bench_sessions_incomplete_total{reason=server_error}': 1,
    });
    state.streams = { started: 40, active: 0 };
    d.sessions.ended(true, undefined);
    got = await scrape(families);
    expect([got.duplex_bench_sessions_active, got.duplex_bench_sessions_completed_total]).toEqual([0, 2]);
    expect(families.find((f) => f.name === 'duplex_bench_sessions_active')?.type).toBe('gauge');
  });

  it("serves the pacing deviation in seconds at sub-millisecond resolution, from the pacing recorder's histogram", async () => {
    const { d } = source();
    recordMs(d.deviation, 0.3);
    recordMs(d.deviation, 0.7);
    recordMs(d.deviation, 25);
    const got = await scrape(duplexFamilies(d));
    expect([
      got['duplex_bench_pacing_deviation_seconds_bucket{le=0.0005}'],
      got['duplex_bench_pacing_deviation_seconds_bucket{le=0.001}'],
      got['duplex_bench_pacing_deviation_seconds_bucket{le=0.02}'],
      got['duplex_bench_pacing_deviation_seconds_bucket{le=0.03}'],
      got.duplex_bench_pacing_deviation_seconds_count,
    ]).toEqual([1, 2, 2, 3, 3]);
  });

  it("serves the responses' TTFT and TTFP in seconds and RTF as a ratio, from the live recorders", async () => {
    const { d } = source();
    const families = duplexFamilies(d);
    d.responses.add({ ttft_ms: 140, ttfp_ms: 420, rtf: 0.85 });
    d.responses.add({ ttft_ms: 160, ttfp_ms: null, rtf: 1.2 });
    const got = await scrape(families);
    expect([got['duplex_bench_response_ttft_seconds_bucket{le=0.125}'], got['duplex_bench_response_ttft_seconds_bucket{le=0.15}'], got['duplex_bench_response_ttft_seconds_bucket{le=0.175}']]).toEqual([0, 1, 2]);
    expect(got.duplex_bench_response_ttfp_seconds_count).toBe(1);
    expect(got.duplex_bench_response_ttfp_seconds_sum).toBeCloseTo(0.42, 3);
    // Under 1 is faster than real time: one response each side of it.
    expect([got['duplex_bench_response_rtf_bucket{le=0.8}'], got['duplex_bench_response_rtf_bucket{le=0.9}'], got['duplex_bench_response_rtf_bucket{le=1}'], got['duplex_bench_response_rtf_bucket{le=1.25}']]).toEqual([0, 1, 1, 2]);
    expect(got.duplex_bench_response_rtf_sum).toBeCloseTo(2.05, 3);
  });

  it('serves no behaviour families without a conversation', () => {
    const names = duplexFamilies(source().d).map((f) => f.name);
    expect(names.filter((n) => n.startsWith('duplex_bench_behaviour_'))).toEqual([]);
  });

  it('serves the behaviour families empty until the run ends, then its latencies in seconds and its counts', async () => {
    let behaviour: LiveBehaviour | null = null;
    const families = duplexFamilies(source(() => behaviour).d);
    let got = await scrape(families);
    expect([
      got.duplex_bench_behaviour_response_latency_seconds_count,
      got.duplex_bench_behaviour_stop_latency_seconds_count,
      got.duplex_bench_behaviour_cancel_latency_seconds_count,
      got.duplex_bench_behaviour_pauses_total,
      got.duplex_bench_behaviour_takeovers_total,
      got.duplex_bench_behaviour_backchannels_total,
      got.duplex_bench_behaviour_yields_total,
    ]).toEqual([0, 0, 0, 0, 0, 0, 0]);
    behaviour = { response: histogramOf(450, 700), stop: histogramOf(900), cancel: histogramOf(300, 350, 2600), pauses: 6, takeovers: 2, backchannels: 9, yields: 1 };
    got = await scrape(families);
    expect([got.duplex_bench_behaviour_response_latency_seconds_count, got.duplex_bench_behaviour_stop_latency_seconds_count, got.duplex_bench_behaviour_cancel_latency_seconds_count]).toEqual([2, 1, 3]);
    expect(got['duplex_bench_behaviour_response_latency_seconds_bucket{le=0.5}']).toBe(1);
    expect(got.duplex_bench_behaviour_stop_latency_seconds_sum).toBeCloseTo(0.9, 3);
    expect([got.duplex_bench_behaviour_pauses_total, got.duplex_bench_behaviour_takeovers_total, got.duplex_bench_behaviour_backchannels_total, got.duplex_bench_behaviour_yields_total]).toEqual([6, 2, 9, 1]);
  });
});
