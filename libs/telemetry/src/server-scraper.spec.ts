import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualTimers, settle } from '@duplex-bench/pacer/testing';
import { besideClient, ServerMetricsScraper, ServerScrapers, type ClientFigure, type ServerScraperOptions } from './server-scraper';

const TTFT = 'vllm:time_to_first_token_seconds';

/** One histogram family in the text format: `cumulative` under the bounds 0.1, 0.2, 0.5, 5 and +Inf. */
function histogram(name: string, cumulative: [number, number, number, number, number], labels = 'model_name="m"'): string {
  const le = ['0.1', '0.2', '0.5', '5.0', '+Inf'];
  return [`# TYPE ${name} histogram`, ...le.map((b, i) => `${name}_bucket{${labels},le="${b}"} ${cumulative[i]}`), `${name}_count{${labels}} ${cumulative[4]}`, `${name}_sum{${labels}} 0`, ''].join('\n');
}

interface Row {
  t_s: number;
  ok: boolean;
  error?: string;
  samples?: Array<[string, Record<string, string>, number]>;
  since_previous?: Record<string, { count: number; p50: number | null; p99: number | null }>;
}

/**
 * A server's /metrics on 127.0.0.1 (port 0) whose answer a spec sets: a text, a status, or held
 * until the spec lets it go. The scraper's timers are ManualTimers: a spec fires each interval.
 */
async function setup(options: Partial<ServerScraperOptions> = {}) {
  let answer: { status: number; text: string } | 'hold' = { status: 200, text: '' };
  const held: ServerResponse[] = [];
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    if (answer === 'hold') held.push(res);
    else res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  const timers = new ManualTimers();
  timers.now = 10_000;
  const rows: Row[] = [];
  const lines: string[] = [];
  const said: string[] = [];
  let wake: (() => void) | null = null;
  const scraper = new ServerMetricsScraper({
    url,
    interval_s: 5,
    extra_histograms: [],
    timers,
    onRow: (line) => {
      lines.push(line);
      rows.push(JSON.parse(line) as Row);
      wake?.();
    },
    say: (line) => said.push(line),
    ...options,
  });
  return {
    url,
    timers,
    scraper,
    rows,
    lines,
    said,
    requests: () => requests,
    serve: (text: string, status = 200) => (answer = { status, text }),
    hold: () => (answer = 'hold'),
    release: (text: string) => {
      answer = { status: 200, text };
      for (const res of held.splice(0)) res.writeHead(200).end(text);
    },
    /** Resolves once `n` rows are written and the scrape that wrote the last has settled. */
    rowsReach: async (n: number) => {
      await new Promise<void>((resolve) => {
        const check = () => (rows.length >= n ? resolve() : (wake = check));
        check();
      });
      await settle();
    },
    close: async () => {
      await scraper.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

describe('ServerMetricsScraper', () => {
  let s: Setup | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('scrapes at start (the baseline), then every interval from the origin, not from the last scrape, on a background timer', async () => {
    s = await setup();
    s.scraper.start();
    await s.rowsReach(1);
    expect(s.rows[0]).toMatchObject({ t_s: 10, ok: true });
    expect(s.timers.pending.map((p) => [p.delay_ms, p.background])).toEqual([[5000, true]]);
    s.timers.fire(1200); // the loop was late by 1.2 s
    await s.rowsReach(2);
    expect(s.rows[1].t_s).toBeCloseTo(16.2, 9);
    // Due at the origin + 2 intervals (20 s), not 5 s after the late scrape.
    expect(s.timers.pending.map((p) => p.delay_ms)).toEqual([expect.closeTo(3800, 6)]);
    expect(s.requests()).toBe(2);
    // One line of server_metrics.jsonl a scrape.
    expect(s.lines.every((line) => line.endsWith('}\n') && !line.slice(0, -1).includes('\n'))).toBe(true);
  });

  it("sums each interval's bucket deltas into the run's figures, so what the server held before the run does not count", async () => {
    s = await setup();
    // Before the run the server held 1,000 slow answers; the run adds 40 in (0.1, 0.2] s, then 40 in (0.2, 0.5] s.
    s.serve(histogram(TTFT, [0, 0, 0, 1000, 1000]));
    s.scraper.start();
    await s.rowsReach(1);
    s.serve(histogram(TTFT, [0, 40, 40, 1040, 1040]));
    s.timers.fire();
    await s.rowsReach(2);
    s.serve(histogram(TTFT, [0, 40, 80, 1080, 1080]));
    await s.scraper.stop(); // one last scrape: the run's end
    expect(s.rows).toHaveLength(3);
    expect(s.rows[0].since_previous).toEqual({});
    expect(s.rows[2].since_previous?.[TTFT]).toEqual({ count: 40, p50: expect.closeTo(0.35, 9), p99: expect.closeTo(0.497, 9) });
    const summary = s.scraper.summary();
    expect(summary.scrapes).toEqual({ ok: 3, failed: 0, skipped_busy: 0, first_failure: null });
    expect(summary.window_s).toEqual([10, 15]);
    // rank 40 ends (0.1, 0.2]; rank 72 is 32/40 into (0.2, 0.5]; rank 79.2 is 39.2/40 in. Seconds become ms.
    expect(summary.histograms[TTFT]).toMatchObject({ kind: 'ttft', unit: 'ms', count: 80, p50: 200, p90: 440, p99: 494 });
    expect(summary.absent).toEqual([]);
  });

  it('reads --server-gauge selectors each scrape: label sets summed or chosen, a counter its increase, one never seen named absent', async () => {
    s = await setup({ gauges: ['DCGM_FI_DEV_FB_USED', 'DCGM_FI_DEV_FB_USED{gpu="1"}', 'vllm:num_requests_running', 'sglang:token_usage', 'vllm:prompt_tokens_total'] });
    const exposition = (fb0: number, fb1: number, running: number, tokens: number) =>
      ['# TYPE DCGM_FI_DEV_FB_USED gauge', `DCGM_FI_DEV_FB_USED{gpu="0"} ${fb0}`, `DCGM_FI_DEV_FB_USED{gpu="1"} ${fb1}`, '# TYPE vllm:num_requests_running gauge', `vllm:num_requests_running{model_name="m"} ${running}`, '# TYPE vllm:prompt_tokens_total counter', `vllm:prompt_tokens_total ${tokens}`, ''].join('\n');
    s.serve(exposition(1000, 500, 2, 100));
    s.scraper.start();
    await s.rowsReach(1);
    s.serve(exposition(3000, 700, 6, 160));
    s.timers.fire();
    await s.rowsReach(2);
    s.serve(exposition(2000, 600, 4, 200));
    await s.scraper.stop();
    const g = s.scraper.summary().gauges ?? {};
    expect(g.DCGM_FI_DEV_FB_USED).toMatchObject({ kind: 'gauge', n: 3, mean: 2600, max: 3700, last: 2600 });
    expect(g['DCGM_FI_DEV_FB_USED{gpu="1"}']).toMatchObject({ n: 3, mean: 600, max: 700, last: 600 });
    expect(g['vllm:num_requests_running']).toMatchObject({ mean: 4, max: 6, last: 4 });
    expect(g['vllm:prompt_tokens_total']).toMatchObject({ kind: 'counter', increase: 100 });
    expect(g['sglang:token_usage']).toBeUndefined();
    expect(s.scraper.summary().absent).toEqual(['sglang:token_usage']);
  });

  it('loses nothing to a server restart mid-run: the counts after it are a fresh start', async () => {
    s = await setup();
    s.serve(histogram(TTFT, [0, 0, 0, 1000, 1000]));
    s.scraper.start();
    await s.rowsReach(1);
    s.serve(histogram(TTFT, [0, 40, 40, 1040, 1040]));
    s.timers.fire();
    await s.rowsReach(2);
    s.serve(histogram(TTFT, [0, 5, 5, 5, 5])); // restarted, then 5 answers
    await s.scraper.stop();
    expect(s.scraper.summary().histograms[TTFT].count).toBe(45);
  });

  it('keeps in each row the watched histograms and every series that is no histogram, and drops the other histograms', async () => {
    s = await setup();
    s.serve(`${histogram(TTFT, [1, 1, 1, 1, 1])}${histogram('vllm:request_queue_time_seconds', [1, 1, 1, 1, 1])}# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 3\nunnamed_kind 7\n`);
    s.scraper.start();
    await s.rowsReach(1);
    const names = new Set(s.rows[0].samples?.map(([name]) => name));
    expect(names).toEqual(new Set([`${TTFT}_bucket`, `${TTFT}_count`, `${TTFT}_sum`, 'vllm:num_requests_running', 'unnamed_kind']));
    expect(s.rows[0].samples).toContainEqual(['vllm:num_requests_running', { model_name: 'm' }, 3]);
  });

  it('says once when scrapes start failing and once when they answer again, and counts every failure', async () => {
    s = await setup();
    s.serve('', 503);
    s.scraper.start();
    await s.rowsReach(1);
    s.timers.fire();
    await s.rowsReach(2);
    s.serve(histogram(TTFT, [0, 0, 0, 0, 0]));
    s.timers.fire();
    await s.rowsReach(3);
    expect(s.rows.map((r) => [r.ok, r.error])).toEqual([
      [false, 'HTTP 503'],
      [false, 'HTTP 503'],
      [true, undefined],
    ]);
    expect(s.said).toEqual([`server metrics: scrape of ${s.url} failed (HTTP 503); counted, the run goes on`, `server metrics: ${s.url} answers again (2 scrape(s) failed so far)`]);
    expect(s.scraper.summary().scrapes).toMatchObject({ ok: 1, failed: 2, first_failure: 'HTTP 503' });
    // The one good scrape is the whole window.
    expect(s.scraper.summary().window_s).toEqual([20, 20]);
  });

  it('bounds a scrape by its timeout and says so', async () => {
    s = await setup({ timeout_ms: 30 });
    s.hold();
    s.scraper.start();
    await s.rowsReach(1);
    expect(s.rows[0]).toEqual({ t_s: 10, ok: false, error: 'no answer within 30 ms' });
    expect(s.scraper.summary().scrapes.first_failure).toBe('no answer within 30 ms');
  });

  it('skips a scrape that falls due while the last one is still out, and counts it', async () => {
    s = await setup();
    s.hold();
    s.scraper.start();
    await settle();
    s.timers.fire();
    expect(s.scraper.summary().scrapes.skipped_busy).toBe(1);
    s.release(histogram(TTFT, [0, 0, 0, 0, 0]));
    await s.rowsReach(1);
    expect(s.requests()).toBe(1);
    expect(s.timers.pending).toHaveLength(1);
  });

  it('stops its schedule at stop() after one last scrape, and scrapes nothing when it never started', async () => {
    s = await setup();
    await s.scraper.stop();
    expect([s.requests(), s.rows.length, s.scraper.summary().window_s]).toEqual([0, 0, null]);

    const t = await setup();
    try {
      t.scraper.start();
      await t.rowsReach(1);
      await t.scraper.stop();
      expect(t.rows).toHaveLength(2);
      expect(t.timers.pending).toEqual([]);
      await t.scraper.stop();
      expect(t.requests()).toBe(2);
    } finally {
      await t.close();
    }
  });

  it('names histograms asked for and never exported, and keeps a server unit or a ratio as it is', async () => {
    const ratio = 'vllm:omni_audio_rtf';
    s = await setup({ extra_histograms: ['engine_queue_depth', 'not_exported_seconds'] });
    s.serve(histogram('engine_queue_depth', [0, 0, 0, 0, 0]) + histogram(ratio, [0, 0, 0, 0, 0]));
    s.scraper.start();
    await s.rowsReach(1);
    s.serve(histogram('engine_queue_depth', [10, 10, 10, 10, 10]) + histogram(ratio, [0, 10, 10, 10, 10]));
    await s.scraper.stop();
    const summary = s.scraper.summary();
    // Known names the server does not export are neither figures nor absent: only the asked-for ones are.
    expect(summary.absent).toEqual(['not_exported_seconds']);
    expect(Object.keys(summary.histograms).sort()).toEqual(['engine_queue_depth', ratio].sort());
    expect(summary.histograms.engine_queue_depth).toMatchObject({ kind: 'other', unit: 'server unit', count: 10, p50: 0.05 });
    expect(summary.histograms.engine_queue_depth.measurement_origin).toContain('named by --server-histogram');
    expect(summary.histograms[ratio]).toMatchObject({ kind: 'rtf', unit: 'ratio', count: 10, p50: 0.15 });
    expect(summary.histograms[ratio].measurement_origin).toContain('vLLM-Omni: stage generation time over audio duration');
  });

  it('gives a histogram exported in one good scrape only as empty: nothing moved that the run can count', async () => {
    s = await setup();
    s.serve(histogram(TTFT, [0, 3, 3, 3, 3]));
    s.scraper.start();
    await s.rowsReach(1);
    s.serve('', 500);
    await s.scraper.stop();
    const summary = s.scraper.summary();
    expect(summary.scrapes).toMatchObject({ ok: 1, failed: 1 });
    expect(summary.histograms[TTFT]).toMatchObject({ kind: 'ttft', count: 0, p50: null, p90: null, p99: null });
  });
});

describe('besideClient', () => {
  it("sets each client figure beside every server histogram of its kind, and leaves the others as they are", () => {
    const figure = (name: string): ClientFigure => ({ figure: name, unit: 'ms', count: 3, p50: 1, p99: 2, measurement_origin: 'client' });
    const base = { kind: 'ttft' as const, unit: 'ms' as const, count: 1, p50: null, p90: null, p99: null, measurement_origin: 'server' };
    const summary = besideClient(
      {
        url: 'u',
        interval_s: 5,
        scrapes: { ok: 2, failed: 0, skipped_busy: 0, first_failure: null },
        window_s: [0, 5],
        histograms: { a: { ...base }, b: { ...base }, c: { ...base, kind: 'ttfp' }, d: { ...base, kind: 'e2e' } },
        absent: [],
        measurement_origin: 'm',
      },
      { ttft: figure('latency_ms.ttft'), ttfp: null },
    );
    expect([summary.histograms.a.client?.figure, summary.histograms.b.client?.figure]).toEqual(['latency_ms.ttft', 'latency_ms.ttft']);
    expect(summary.histograms.c).not.toHaveProperty('client');
    expect(summary.histograms.d).not.toHaveProperty('client');
  });

  it('scrapes several URLs (a model server and a DCGM exporter), each row naming its URL, into one block', async () => {
    const exporter = await setup();
    const model = await setup();
    exporter.serve('# TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{gpu="0"} 5000\n');
    model.serve(histogram(TTFT, [0, 0, 0, 0, 0]));
    const rows: string[] = [];
    let baseline: () => void = () => undefined;
    const bothAnswered = new Promise<void>((resolve) => (baseline = resolve));
    const onRow = (l: string) => {
      rows.push(l);
      if (rows.length === 2) baseline();
    };
    const both = new ServerScrapers([exporter.url, model.url], { interval_s: 5, extra_histograms: [], gauges: ['DCGM_FI_DEV_FB_USED'], timers: exporter.timers, onRow, say: () => undefined });
    both.start();
    // Both baselines taken before the model's histogram moves.
    await bothAnswered;
    await settle();
    model.serve(histogram(TTFT, [0, 10, 10, 10, 10]));
    await both.stop();
    const summary = both.summary();
    expect(summary.urls).toEqual([exporter.url, model.url]);
    expect(summary.gauges?.DCGM_FI_DEV_FB_USED).toMatchObject({ max: 5000 });
    expect(summary.histograms[TTFT]).toMatchObject({ count: 10 });
    expect(summary.scrapes.ok).toBe(4);
    expect(rows.map((l) => (JSON.parse(l) as { url: string }).url).sort()).toEqual([exporter.url, exporter.url, model.url, model.url].sort());
    await exporter.close();
    await model.close();
  });
});

