import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpSummary, LatencyMs, RawSteady, RequestRecord } from '@duplex-bench/http-load';
import { createUsHistogram, encodeHistogram, recordMs } from '@duplex-bench/metrics';
import { histogramCdf, loadHttpReport, MAX_DRAWN, renderHttpHtml, type HttpReportData } from './http-report';

const latency = (count: number, p50: number | null = count ? 10 : null): LatencyMs => ({ count, mean: p50, p50, p90: p50, p95: p50, p99: p50, p99_9: p50, max: p50 });
const rawSteady = (raw: number, steady = raw): RawSteady => ({ raw: latency(raw), steady: latency(steady) });

/** An open-loop streamed run of 3 requests with TTFT and E2E only; `over` replaces any part. */
function summary(over: Partial<HttpSummary> = {}): HttpSummary {
  const none = rawSteady(0);
  return {
    kind: 'http',
    qualified: true,
    unqualified_reason: null,
    interrupted: false,
    load: { mode: 'open', rate_rps: 5, arrivals: 'poisson', endpoint: 'chat', stream: true, max_tokens: 64, prompts: 'synthetic 128 tokens', seed: 1 },
    warmup_s: 0,
    requests: { sent: 3, completed: 2, failed: 1, steady: 3, errors: { timeout: 1 }, statuses: { '200': 2 } },
    window_s: 1.5,
    requests_per_s: 1.333,
    output_tokens_per_s: 85.3,
    steady_requests_per_s: 1.333,
    steady_output_tokens_per_s: 85.3,
    tokens: { output: 128, origin: 'usage', by_origin: { usage: 2 }, output_mean: 64, prompt_mean: 128 },
    latency_ms: { ttft: { raw: latency(2, 120), steady: latency(1, 130) }, ttst: none, itl: none, tpot: none, time_per_output_token: none, e2e: rawSteady(2), first_byte: none, client_queue: none, e2e_including_queue: none, inter_token_latency: none },
    output_tokens_per_s_per_user: none,
    timeline: { bin_s: 1, offered: [3], completed: [2], failed: [1], output_chunks: [128], output_tokens: [128] },
    client: {
      send_lag_ms: latency(3),
      max_send_lag_ms: 10,
      late_sends: 0,
      event_loop_lag_ms: { p50: 1, p99: 2, max: 3.5, over_80ms: 0, samples: 10 },
      cpu_cores: { user: 0.1, system: 0.05, total: 0.15 },
      cpu_us_per_request: 100,
      peak_rss_mib: 80,
      sse_events: 130,
    },
    measurement_origin: { steady: 'requests meant to start after 2 s' },
    histograms: {},
    ...over,
  };
}

/** A request that completed: sent `dispatched` after its intended time, started `lag` after that, tokens every 10 ms. */
function request(index: number, intended_s: number, over: Partial<RequestRecord> = {}): RequestRecord {
  const dispatched_s = intended_s + 0.5;
  return {
    index,
    intended_s,
    dispatched_s,
    started_s: dispatched_s + 0.002,
    first_byte_s: dispatched_s + 0.05,
    first_token_s: dispatched_s + 0.1,
    second_token_s: dispatched_s + 0.11,
    last_token_s: dispatched_s + 0.14,
    end_s: dispatched_s + 0.15,
    chunks: 5,
    tokens: 5,
    tokens_origin: 'usage',
    prompt_tokens: 128,
    status: 200,
    error: null,
    ...over,
  };
}

const ms = (values_ms: number[]) => {
  const h = createUsHistogram();
  for (const v of values_ms) recordMs(h, v);
  return encodeHistogram(h);
};

describe("an HDR histogram's CDF", () => {
  it('is empty without a histogram, or with one that holds nothing', () => {
    expect(histogramCdf(undefined)).toEqual([]);
    expect(histogramCdf('')).toEqual([]);
    expect(histogramCdf(ms([]))).toEqual([]);
  });

  it('reads ranks from 0 to 1 - 1e-4 closer together towards the tail, then the max at 1, in ms', () => {
    const cdf = histogramCdf(
      ms(Array.from({ length: 1000 }, (_, i) => i + 1)),
      5,
    );
    expect(cdf.map(([, f]) => f)).toEqual([0, 0.9, 0.99, 0.999, 0.9999, 1]);
    // Values within the histogram's 3 significant digits of the exact ranks.
    const exact = [1, 900, 990, 999, 1000, 1000];
    cdf.forEach(([v], i) => expect(Math.abs(v - exact[i]) / exact[i]).toBeLessThan(1e-3));
  });

  it('rises with the rank at its default 400 points', () => {
    const cdf = histogramCdf(ms(Array.from({ length: 5000 }, (_, i) => 1 + ((i * 7919) % 3000) / 10)));
    expect(cdf).toHaveLength(401);
    expect(cdf.slice(1).filter(([v, f], k) => v < cdf[k][0] || f <= cdf[k][1])).toEqual([]);
  });
});

describe('an http run read for its page', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'http-report-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const writeSummary = (s: unknown) => writeFile(join(dir, 'summary.json'), JSON.stringify(s));
  const writeRequests = (rs: RequestRecord[]) => writeFile(join(dir, 'requests.jsonl'), rs.map((r) => `${JSON.stringify(r)}\n`).join(''));

  it('is null without a summary, and for a summary of another kind of run', async () => {
    expect(await loadHttpReport(dir)).toBeNull();
    await writeSummary({ qualified: true, packet_ms: 80 });
    expect(await loadHttpReport(dir)).toBeNull();
  });

  it("names a summary.json cut short, and a line of requests.jsonl that does not parse, by its number", async () => {
    const failure = () => loadHttpReport(dir).then(() => new Error('it resolved'), (e: Error) => e);
    await writeFile(join(dir, 'summary.json'), JSON.stringify(summary()).slice(0, 60));
    expect((await failure()).message).toMatch(new RegExp(`^${join(dir, 'summary.json')}: not valid JSON \\(.+\\); the file may be cut short$`));
    await writeSummary(summary());
    const path = join(dir, 'requests.jsonl');
    const line = JSON.stringify(request(0, 100));
    await writeFile(path, `${line}\n${line.slice(0, 30)}`);
    expect((await failure()).message).toMatch(new RegExp(`^${path}: line 2: not valid JSON \\(.+\\); the file may be cut short$`));
    await writeFile(path, `${line}\n\n{oops\n${line}\n`);
    expect((await failure()).message).toMatch(new RegExp(`^${path}: line 3: not valid JSON \\(.+\\)$`));
  });

  it('draws the summary alone when the run kept no requests.jsonl, with its ITL distribution', async () => {
    await writeSummary(summary({ histograms: { itl_raw: ms([10, 20, 30]) } }));
    const d = (await loadHttpReport(dir)) as HttpReportData;
    expect(d).toMatchObject({ kind: 'http', title: `duplex-bench http: ${dir}`, drawn: { requests: 0, of: 0, every: 1 } });
    expect(d.requests.intended_s).toEqual([]);
    expect(d.summary.requests.sent).toBe(3);
    expect(d.itl_cdf.at(-1)?.[1]).toBe(1);
    expect(d.itl_cdf.at(-1)?.[0]).toBeCloseTo(30, 1);
  });

  it('times each request from the moment the client let it go, in start order from the first intended start', async () => {
    await writeSummary(summary());
    await writeRequests([
      request(1, 101.25),
      request(0, 100),
      request(2, 102, { dispatched_s: null, started_s: 102.001, first_token_s: 102.2, last_token_s: 102.2, end_s: 102.3, tokens: 1 }),
    ]);
    const r = ((await loadHttpReport(dir)) as HttpReportData).requests;
    expect(r.intended_s).toEqual([0, 1.25, 2]);
    expect(r.ttft_ms).toEqual([100, 100, 200]);
    expect(r.e2e_ms).toEqual([150, 150, 300]);
    // 40 ms from the first to the last of 5 tokens: 10 ms each; one token has no TPOT.
    expect(r.tpot_ms).toEqual([10, 10, null]);
    expect(r.send_lag_ms).toEqual([2, 2, 1]);
    expect(r.failed).toEqual([false, false, false]);
  });

  it('keeps a failed request in the columns, flagged, with no latency; one never started has no send lag', async () => {
    await writeSummary(summary());
    await writeRequests([request(0, 10, { error: 'timeout', end_s: 12 }), request(1, 11, { error: 'connect_failed', started_s: null, first_token_s: null, last_token_s: null, end_s: 11.6, tokens: 0 })]);
    const r = ((await loadHttpReport(dir)) as HttpReportData).requests;
    expect(r.failed).toEqual([true, true]);
    expect([...r.ttft_ms, ...r.e2e_ms, ...r.tpot_ms]).toEqual([null, null, null, null, null, null]);
    expect(r.send_lag_ms).toEqual([2, null]);
  });

  it('never reads a send lag below zero', async () => {
    await writeSummary(summary());
    await writeRequests([request(0, 10, { started_s: 10.499 })]);
    expect(((await loadHttpReport(dir)) as HttpReportData).requests.send_lag_ms).toEqual([0]);
  });

  it(`draws every k-th request in start order past ${MAX_DRAWN}, and says how many of how many`, async () => {
    await writeSummary(summary());
    const n = MAX_DRAWN + 1;
    await writeRequests(Array.from({ length: n }, (_, i) => request(i, 100 + (n - 1 - i) / 1000)));
    const d = (await loadHttpReport(dir)) as HttpReportData;
    expect(d.drawn).toEqual({ requests: Math.ceil(n / 2), of: n, every: 2 });
    expect(d.requests.intended_s.slice(0, 3)).toEqual([0, 0.002, 0.004]);
    expect(d.requests.ttft_ms).toHaveLength(d.drawn.requests);
  });
});

describe("an http run's page", () => {
  const page = (over: Partial<HttpSummary> = {}) =>
    renderHttpHtml({ kind: 'http', title: 'duplex-bench http: /r', summary: summary(over), requests: { intended_s: [], ttft_ms: [], e2e_ms: [], tpot_ms: [], send_lag_ms: [], failed: [] }, drawn: { requests: 0, of: 0, every: 1 }, itl_cdf: [] });
  const verdict = (html: string) => /<div class="verdict (\w+)" id="verdict">(.*?)<\/div>/.exec(html)?.slice(1);
  /** The figure table's rows: figure, which requests, count. */
  const figureRows = (html: string) => [...html.matchAll(/<tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td class="num">(\d+)<\/td>/g)].map((m) => m.slice(1, 4));

  it('heads the page with its verdict: failed, interrupted, qualified, or unqualified and why', () => {
    expect(verdict(page())).toEqual(['ok', 'QUALIFIED: every request left within 10 ms of its intended time']);
    expect(verdict(page({ qualified: false, unqualified_reason: '3 requests sent > 10 ms late' }))).toEqual(['bad', 'UNQUALIFIED: 3 requests sent &gt; 10 ms late']);
    expect(verdict(page({ interrupted: true }))).toEqual(['bad', 'INTERRUPTED: partial run']);
    expect(verdict(page({ verdict: 'failed', failed_reason: 'the server refused every connection' } as Partial<HttpSummary>))).toEqual(['bad', 'FAILED: the server refused every connection']);
    expect(verdict(page({ verdict: 'failed' } as Partial<HttpSummary>))).toEqual(['bad', 'FAILED: no request completed']);
  });

  it('describes the load: open loop with its cap on requests in flight, or closed loop', () => {
    expect(page()).toContain('open loop, 5 requests/s (poisson), chat, streamed, max_tokens 64; synthetic 128 tokens.');
    expect(page({ load: { ...summary().load, max_concurrency: 4 } })).toContain("open loop, 5 requests/s (poisson), at most 4 in flight (the rest wait in the client&#39;s queue), chat");
    expect(page({ load: { mode: 'closed', concurrency: 8, endpoint: 'completions', stream: false, max_tokens: 16, prompts: 'p', seed: 1 } })).toContain('closed loop, 8 in flight, completions, max_tokens 16; p.');
  });

  it('counts the requests with each error class and says where the output tokens came from', () => {
    const html = page();
    expect(html).toContain('3 requests sent, 2 completed, 1 failed (timeout 1); 1.333 requests/s and 85.3 output tokens/s over 1.5 s; output tokens from the server\'s usage.');
    expect(page({ requests: { ...summary().requests, failed: 0, errors: {} } })).toContain('2 completed, 0 failed; ');
    expect(page({ tokens: { ...summary().tokens, origin: 'tokenizer', tokenizer: 'qwen/tokenizer.json' } })).toContain('output tokens from counted by qwen/tokenizer.json.');
    expect(page({ tokens: { ...summary().tokens, origin: 'chunks' } })).toContain('output tokens from counted chunks (no usage, no --tokenizer).');
  });

  it('times the server figures from the intended start, or from the end of the client queue when there is one', () => {
    expect(page()).toContain("<h2>Server figures, from each request's intended start (no warm-up: every request is steady)</h2>");
    expect(page({ warmup_s: 2, load: { ...summary().load, max_concurrency: 4 } })).toContain("<h2>Server figures, from the end of each request's wait in the client's queue; steady: requests meant to start after 2 s</h2>");
  });

  it('gives each figure the run has one row without a warm-up, and a steady row before the every-request row with one', () => {
    expect(figureRows(page())).toEqual([
      ['TTFT', 'every request', '2'],
      ['E2E', 'every request', '2'],
    ]);
    expect(figureRows(page({ warmup_s: 2 }))).toEqual([
      ['TTFT', 'steady', '1'],
      ['TTFT', 'every request', '2'],
      ['E2E', 'steady', '2'],
      ['E2E', 'every request', '2'],
    ]);
    expect(page()).toContain('<td class="origin">vLLM ttft · aiperf time_to_first_token · guidellm time_to_first_token_ms</td>');
  });

  it('states goodput by its bounds only when the run measured it', () => {
    expect(page()).not.toContain('id="goodput"');
    const html = page({ goodput: { bounds: { ttft: 300, e2el: 1000 }, good: 1, steady_good: 1, share: 0.5, request_goodput: 0.667, steady_request_goodput: 0.667 } });
    expect(html).toContain('Goodput (<code>ttft:300,e2el:1000</code> ms, vLLM\'s rule): 1 of 2 completed requests good (50.0%), 0.667 requests/s.');
    expect(page({ goodput: { bounds: { ttft: 300 }, good: 0, steady_good: 0, share: null, request_goodput: null, steady_request_goodput: null } })).toContain('0 of 2 completed requests good (-%), - requests/s.');
  });
});
