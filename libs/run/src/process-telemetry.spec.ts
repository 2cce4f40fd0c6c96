import { get } from 'node:http';
import { createUsHistogram, encodeHistogram, recordMs, type BehaviourParts, type ResponseRecord } from '@duplex-bench/metrics';
import { VirtualTime } from '@duplex-bench/pacer/testing';
import type { SessionResult } from '@duplex-bench/session';
import { ProcessMeasures } from './process-measures';
import { ProcessTelemetry } from './process-telemetry';

/** The text a GET of `url` answers, and its status. */
function fetchText(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
}

/** The value of the sample named `name` whose labels include `labels`, from Prometheus text. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const has = Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`));
    if (has) return Number(m[3]);
  }
  return undefined;
}

const ended = (completed: boolean, reason?: SessionResult['reason']): SessionResult => ({ id: 's', completed, ...(reason ? { reason } : {}), violation: false, packets_sent: 1, late: 0, server_errors: 0 });

const response = (ttft_ms: number | null, ttfp_ms: number | null, rtf: number | null): ResponseRecord =>
  ({ response_id: 'r', origin_s: 0, ttft_ms, ttfp_ms, ttft_origin: 'response.created received', ttfp_origin: 'response.created received', rtf }) as ResponseRecord;

const LABELS = { command: 'run', protocol: 'native', process: '0' };

describe('ProcessTelemetry', () => {
  let measures: ProcessMeasures;
  let telemetry: ProcessTelemetry;
  let backlog = 0;
  const said: string[] = [];
  const say = (line: string) => said.push(line);

  beforeEach(() => {
    said.length = 0;
    measures = new ProcessMeasures(80, new VirtualTime());
    telemetry = new ProcessTelemetry(measures, () => backlog);
  });
  afterEach(async () => {
    await telemetry.close();
    measures.stop();
  });

  /** Starts /metrics on a free port and gives its URL, as the line it says names it. */
  async function serve(): Promise<string> {
    await telemetry.listen(0, LABELS, say);
    const m = /^metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics) \(Prometheus text format\)$/.exec(said[0] ?? '');
    if (!m) throw new Error(`no URL said: ${said.join(' | ')}`);
    return m[1];
  }

  it("serves the process's own recorders on 127.0.0.1, read at each scrape, with the run's labels", async () => {
    const url = await serve();
    const first = (await fetchText(url)).text;
    expect(sample(first, 'duplex_bench_packets_sent_total', LABELS)).toBe(0);
    measures.pacing.record({ seq: 0, scheduled_s: 1, start_s: 1, completed_s: 1, send_ms: 0, buffered_bytes: 0 }, 1);
    measures.pacing.record({ seq: 1, scheduled_s: 1.08, start_s: 1.2, completed_s: 1.2, send_ms: 0, buffered_bytes: 0 }, 1);
    measures.overlap.open();
    measures.overlap.open();
    measures.overlap.close();
    measures.overlap.open();
    measures.overlap.close();
    backlog = 4096;
    // The GC monitor stopped, so no real collection moves its counts between the scrape and the check.
    measures.gc.stop();
    Object.assign(measures.gc, { count: 7, total_ms: 1500 });
    const text = (await fetchText(url)).text;
    expect(sample(text, 'duplex_bench_packets_sent_total')).toBe(2);
    expect(sample(text, 'duplex_bench_packets_late_total')).toBe(1);
    expect(sample(text, 'duplex_bench_pacing_deviation_seconds_count')).toBe(2);
    expect(sample(text, 'duplex_bench_sessions_started_total')).toBe(3);
    expect(sample(text, 'duplex_bench_sessions_active')).toBe(1);
    expect(sample(text, 'duplex_bench_trace_backlog_bytes')).toBe(4096);
    expect(sample(text, 'duplex_bench_gc_pauses_total')).toBe(7);
    expect(sample(text, 'duplex_bench_gc_pause_seconds_total')).toBe(1.5);
  });

  it('counts each session as it ends, by reason, and each response, through the hooks it gives the sessions', async () => {
    const hooks = telemetry.hooks();
    hooks.onSessionEnd?.(ended(true));
    hooks.onSessionEnd?.(ended(false, 'server_closed'));
    hooks.onSessionEnd?.(ended(false, 'server_closed'));
    hooks.onSessionEnd?.(ended(false));
    // TTFT and TTFP as each arrives, long before the response ends; RTF at its end.
    hooks.onFirstOutput?.('ttfp', 400);
    hooks.onFirstOutput?.('ttft', 250);
    hooks.onFirstOutput?.('ttfp', 300);
    hooks.onResponse?.(response(250, 400, 0.5));
    hooks.onResponse?.(response(null, 300, null));
    expect(telemetry.sessions.completed).toBe(1);
    expect([...telemetry.sessions.incomplete]).toEqual([
      ['server_closed', 2],
      ['unknown', 1],
    ]);
    expect([telemetry.responses.ttft.totalCount, telemetry.responses.ttfp.totalCount, telemetry.responses.rtf.totalCount]).toEqual([1, 2, 1]);
    const text = (await fetchText(await serve())).text;
    expect(sample(text, 'duplex_bench_sessions_completed_total')).toBe(1);
    expect(sample(text, 'duplex_bench_sessions_incomplete_total', { reason: 'server_closed' })).toBe(2);
    expect(sample(text, 'duplex_bench_response_ttfp_seconds_count')).toBe(2);
  });

  it("serves a conversation's behaviour figures once the run gives them", async () => {
    const url = await serve();
    expect(sample((await fetchText(url)).text, 'duplex_bench_behaviour_pauses_total')).toBe(0);
    const latencies = createUsHistogram();
    recordMs(latencies, 700);
    recordMs(latencies, 900);
    const empty = encodeHistogram(createUsHistogram());
    const parts: BehaviourParts = { response: encodeHistogram(latencies), stop: empty, cancel: empty, overlap: empty, pauses: 3, takeovers: 1, backchannels: 4, yields: 2, outcomes: {} };
    telemetry.behaviour(parts);
    const text = (await fetchText(url)).text;
    expect(sample(text, 'duplex_bench_behaviour_pauses_total')).toBe(3);
    expect(sample(text, 'duplex_bench_behaviour_takeovers_total')).toBe(1);
    expect(sample(text, 'duplex_bench_behaviour_backchannels_total')).toBe(4);
    expect(sample(text, 'duplex_bench_behaviour_yields_total')).toBe(2);
    expect(sample(text, 'duplex_bench_behaviour_response_latency_seconds_count')).toBe(2);
  });

  it('lingers until the cut, saying so, then stops serving', async () => {
    const url = await serve();
    await telemetry.lingerThenClose(600, Promise.resolve(), say);
    expect(said[1]).toBe('metrics: serving the final counts 600 s more (--metrics-linger-s; Ctrl-C ends it)');
    await expect(fetchText(url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('says nothing of a linger of 0 s, and closing twice, or without serving, is harmless', async () => {
    await serve();
    await telemetry.lingerThenClose(0, new Promise(() => undefined), say);
    expect(said).toHaveLength(1);
    await telemetry.close();
    const unused = new ProcessTelemetry(measures, () => 0);
    await unused.lingerThenClose(5, new Promise(() => undefined), say);
    await unused.close();
    expect(said).toHaveLength(1);
  });
});
