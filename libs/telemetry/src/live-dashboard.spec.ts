import { createUsHistogram, recordMs } from '@duplex-bench/metrics';
import { counter, gauge, hdrHistogram } from './families';
import { LiveDashboard, readRow, type DashboardState } from './live-dashboard';
import { TelemetryError } from './metrics-endpoint';

/** A clock the test moves by hand. */
const manual = () => {
  const c = { t: 50, now_s: () => c.t };
  return c;
};

function recorders() {
  const r = { sent: 0, active: 3, reasons: { server_closed: 1, drain_timeout: 2 } as Record<string, number>, ttfp: createUsHistogram() };
  const families = [
    counter('duplex_bench_packets_sent_total', 'sent', () => r.sent),
    gauge('duplex_bench_sessions_active', 'active', () => r.active),
    counter('duplex_bench_sessions_incomplete_total', 'by reason', () => Object.entries(r.reasons).map(([reason, value]) => ({ value, labels: { reason } }))),
    hdrHistogram('duplex_bench_response_ttfp_seconds', 'ttfp', [0.1, 1], () => r.ttfp),
  ];
  return { r, families };
}

describe('readRow', () => {
  it('reads each family as /metrics would: counters and gauges pooled, labels apart, histograms as ms percentiles', async () => {
    const { r, families } = recorders();
    r.sent = 1250;
    for (const ms of [100, 200, 800]) recordMs(r.ttfp, ms);
    const row = await readRow(families, 2.5);
    expect(row).toEqual({
      t_s: 2.5,
      values: { duplex_bench_packets_sent_total: 1250, duplex_bench_sessions_active: 3, duplex_bench_sessions_incomplete_total: 3 },
      labelled: { duplex_bench_sessions_incomplete_total: { 'reason="server_closed"': 1, 'reason="drain_timeout"': 2 } },
      histograms: { duplex_bench_response_ttfp_seconds: { n: 3, p50: expect.closeTo(200, 0) as number, p99: expect.closeTo(800, 0) as number, max: expect.closeTo(800, 0) as number } },
    });
  });


  it('reads a count by label with no label yet as 0', async () => {
    const { r, families } = recorders();
    r.reasons = {};
    expect((await readRow(families, 0)).values.duplex_bench_sessions_incomplete_total).toBe(0);
  });
});

describe('LiveDashboard', () => {
  const get = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  it('serves its page at / and every row so far at /live.json, then the verdict once the run ends', async () => {
    const { r, families } = recorders();
    const clock = manual();
    const d = new LiveDashboard({ title: 'run', command: 'duplex-bench run', families, page: '<html>the page</html>', clock });
    const url = await d.listen(0);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(await get(url)).toMatchObject({ status: 200, type: 'text/html; charset=utf-8', text: '<html>the page</html>' });
      r.sent = 125;
      clock.t = 51;
      await d.look();
      const live = JSON.parse((await get(`${url}live.json`)).text) as DashboardState;
      expect(live).toMatchObject({ title: 'run', command: 'duplex-bench run', verdict: null });
      expect(live.rows.map((row) => [row.t_s, row.values.duplex_bench_packets_sent_total])).toEqual([
        [0, 0],
        [1, 125],
      ]);
      await d.finish('QUALIFIED: every packet within one packet interval of its schedule');
      const done = JSON.parse((await get(`${url}live.json`)).text) as DashboardState;
      expect(done.verdict).toBe('QUALIFIED: every packet within one packet interval of its schedule');
      expect(done.rows).toHaveLength(3);
      expect((await get(`${url}metrics`)).status).toBe(404);
      expect(done.cost.looks).toBe(3);
      expect(done.cost.look_ms).toBeGreaterThan(0);
    } finally {
      await d.close();
    }
    await expect(fetch(url)).rejects.toThrow();
  });

  it('keeps a long run small: past max_rows the older half is thinned, the newest rows kept whole', async () => {
    const { families } = recorders();
    const clock = manual();
    const d = new LiveDashboard({ title: 't', command: 'c', families, page: '', clock, max_rows: 10 });
    await d.listen(0);
    try {
      for (let i = 1; i <= 10; i++) {
        clock.t = 50 + i;
        await d.look();
      }
      const live = JSON.parse(await (await fetch(d.url + 'live.json')).text()) as DashboardState;
      expect(live.rows.map((row) => row.t_s)).toEqual([0, 2, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      await d.close();
    }
  });

  it('names the flag and the port when the port is taken', async () => {
    const { families } = recorders();
    const first = new LiveDashboard({ title: 't', command: 'c', families, page: '', clock: manual() });
    await first.listen(0);
    const port = Number(new URL(first.url).port);
    try {
      const second = new LiveDashboard({ title: 't', command: 'c', families, page: '', clock: manual() });
      const err = await second.listen(port).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TelemetryError);
      expect((err as Error).message).toBe(`--dashboard-port ${port}: 127.0.0.1:${port} is in use`);
    } finally {
      await first.close();
    }
  });
});
