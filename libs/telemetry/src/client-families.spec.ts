import { createUsHistogram, recordMs } from '@duplex-bench/metrics';
import { clientFamilies } from './client-families';
import type { Family } from './families';

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

describe('clientFamilies', () => {
  afterEach(() => jest.restoreAllMocks());

  it("serves the loop monitor's lag histogram in seconds, read at each scrape", async () => {
    let lag = createUsHistogram();
    const families = clientFamilies({ loopLag: () => lag });
    recordMs(lag, 1.5);
    recordMs(lag, 30);
    let got = await scrape(families);
    expect(got.duplex_bench_event_loop_lag_seconds_count).toBe(2);
    expect([got['duplex_bench_event_loop_lag_seconds_bucket{le=0.002}'], got['duplex_bench_event_loop_lag_seconds_bucket{le=0.04}']]).toEqual([1, 2]);
    expect(got.duplex_bench_event_loop_lag_seconds_sum).toBeCloseTo(0.0315, 4);
    lag = createUsHistogram(); // a fresh monitor: the family follows it
    got = await scrape(families);
    expect(got.duplex_bench_event_loop_lag_seconds_count).toBe(0);
  });

  it("serves the process's CPU seconds by mode and its resident memory, as the process reports them at the scrape", async () => {
    const cpu = jest.spyOn(process, 'cpuUsage').mockReturnValue({ user: 2_500_000, system: 750_000 });
    jest.spyOn(process.memoryUsage, 'rss').mockReturnValue(123_456_789);
    const families = clientFamilies({ loopLag: () => createUsHistogram() });
    const got = await scrape(families);
    expect(got['duplex_bench_cpu_seconds_total{mode=user}']).toBe(2.5);
    expect(got['duplex_bench_cpu_seconds_total{mode=system}']).toBe(0.75);
    expect(got.duplex_bench_resident_memory_bytes).toBe(123_456_789);
    cpu.mockReturnValue({ user: 3_000_000, system: 750_000 });
    expect((await scrape(families))['duplex_bench_cpu_seconds_total{mode=user}']).toBe(3);
    // Whole process figures: nothing but a plain cpuUsage() (no baseline argument) is asked for.
    expect(cpu.mock.calls.every((args) => args.length === 0)).toBe(true);
  });

  it('serves garbage-collection pauses and the trace backlog only where the command watches them', async () => {
    const bare = clientFamilies({ loopLag: () => createUsHistogram() }).map((f) => f.name);
    expect(bare).not.toContain('duplex_bench_gc_pauses_total');
    expect(bare).not.toContain('duplex_bench_gc_pause_seconds_total');
    expect(bare).not.toContain('duplex_bench_trace_backlog_bytes');

    let gc = { count: 4, total_ms: 250 };
    let backlog = 4096;
    const families = clientFamilies({ loopLag: () => createUsHistogram(), gc: () => gc, backlogBytes: () => backlog });
    let got = await scrape(families);
    expect([got.duplex_bench_gc_pauses_total, got.duplex_bench_gc_pause_seconds_total, got.duplex_bench_trace_backlog_bytes]).toEqual([4, 0.25, 4096]);
    gc = { count: 5, total_ms: 1250 };
    backlog = 0;
    got = await scrape(families);
    expect([got.duplex_bench_gc_pauses_total, got.duplex_bench_gc_pause_seconds_total, got.duplex_bench_trace_backlog_bytes]).toEqual([5, 1.25, 0]);
    expect(families.find((f) => f.name === 'duplex_bench_trace_backlog_bytes')?.type).toBe('gauge');
  });
});
