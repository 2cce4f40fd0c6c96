import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHttpStub, type HttpStub } from '@duplex-bench/mock-servers';
import { join } from 'node:path';
import { loadTokenizer, runHttpLoad, syntheticPrompts, type HttpRunOptions, type RequestRecord } from '@duplex-bench/http-load';

// Real sockets on 127.0.0.1 and the wall clock; every run is bounded by its request count.
jest.setTimeout(30_000);

function options(url: string, extra: Partial<HttpRunOptions>): HttpRunOptions {
  return {
    url,
    endpoint: 'chat',
    model: 'stub',
    stream: true,
    max_tokens: 64,
    ignore_eos: false,
    prompts: syntheticPrompts({ kind: 'fixed', tokens: 16 }, 1),
    load: { mode: 'open', rate_rps: 100, arrivals: 'constant' },
    requests: 20,
    warmup_s: 0,
    request_timeout_ms: 5000,
    max_connections: 64,
    max_send_lag_ms: 10,
    seed: 1,
    ...extra,
  };
}

/** A run, and the records it handed over as each request ended (the run itself keeps none), in request order. */
async function runCollecting(o: HttpRunOptions): Promise<{ summary: Awaited<ReturnType<typeof runHttpLoad>>['summary']; records: RequestRecord[] }> {
  const records: RequestRecord[] = [];
  const { summary } = await runHttpLoad({ ...o, onRecord: (r) => records.push(r) });
  return { summary, records: records.sort((a, b) => a.index - b.index) };
}

describe('runHttpLoad against the stubs', () => {
  let stub: HttpStub | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  it('open loop: every request completes, streamed, with the tokens the server reports and one ITL per chunk after the first', async () => {
    stub = await startHttpStub({ kind: 'max-throughput', output_length: 40, stream_interval: 4 });
    const { summary, records } = await runCollecting(options(stub.url, {}));
    expect(summary.requests).toMatchObject({ sent: 20, completed: 20, failed: 0, errors: {}, statuses: { 200: 20 } });
    expect(records.every((r) => r.tokens === 40 && r.tokens_origin === 'usage' && r.chunks === 10)).toBe(true);
    expect(summary.tokens).toMatchObject({ output: 800, origin: 'usage', output_mean: 40 });
    expect(summary.latency_ms.itl.raw.count).toBe(20 * 9);
    expect(summary.latency_ms.ttft.raw.count).toBe(20);
    // 100 requests/s evenly spaced: the intended starts are 10 ms apart from one origin.
    const gaps = records.slice(1).map((r, i) => Math.round((r.intended_s - records[i].intended_s) * 1e6) / 1e3);
    expect(new Set(gaps)).toEqual(new Set([10]));
    expect(stub.stats().completed).toBe(20);
  });

  it('reads the completions endpoint and whole (not streamed) responses', async () => {
    stub = await startHttpStub({ kind: 'max-throughput', output_length: 30 });
    const { summary, records } = await runCollecting(options(stub.url, { endpoint: 'completions', stream: false, requests: 5 }));
    expect(summary.requests.completed).toBe(5);
    expect(records[0]).toMatchObject({ tokens: 30, tokens_origin: 'usage', chunks: 1 });
    expect(records[0].first_token_s).toBe(records[0].end_s);
  });

  it('a server that sends no usage: --tokenizer counts the output text as the model would, else the chunks are counted; tokens.origin says which', async () => {
    // 4 characters per event: 10 chunks of "xxxx"; the fixture's BPE makes each "xxxx" one token and a request of 38 characters 9 + 1 + 0 tokens.
    stub = await startHttpStub({ kind: 'max-throughput', output_length: 38, stream_interval: 4, usage: false });
    const tokenizer = await loadTokenizer(join(__dirname, '../../../../libs/http-load/fixtures/tiny-tokenizer.json'));
    const counted = await runCollecting(options(stub.url, { tokenizer, requests: 6 }));
    expect(counted.records.every((r) => r.tokens_origin === 'tokenizer' && r.tokens === 10 && r.chunks === 10)).toBe(true);
    expect(counted.summary.tokens).toMatchObject({ output: 60, origin: 'tokenizer', by_origin: { tokenizer: 6 }, tokenizer: tokenizer.path });
    const longer = await startHttpStub({ kind: 'max-throughput', output_length: 38, stream_interval: 2, usage: false });
    try {
      // 19 chunks of "xx": the tokenizer still reads 10 tokens in the 38 characters; chunks would say 19.
      const again = await runCollecting(options(longer.url, { tokenizer, requests: 3 }));
      expect(again.records.map((r) => [r.tokens, r.chunks])).toEqual([[10, 19], [10, 19], [10, 19]]);
      const chunks = await runCollecting(options(longer.url, { requests: 3 }));
      expect(chunks.records.every((r) => r.tokens_origin === 'chunks' && r.tokens === 19)).toBe(true);
      expect(chunks.summary.tokens).toMatchObject({ origin: 'chunks', by_origin: { chunks: 3 } });
      // Whole responses too.
      const whole = await runCollecting(options(longer.url, { tokenizer, requests: 2, stream: false }));
      expect(whole.records.map((r) => [r.tokens, r.tokens_origin])).toEqual([[10, 'tokenizer'], [10, 'tokenizer']]);
    } finally {
      await longer.close();
    }
  });

  it('time to second token: the first output chunk to the second', async () => {
    stub = await startHttpStub({ kind: 'variable-response', output_len_mean: 6, output_len_spread: 0, first_chunk_ms: 20, first_chunk_spread: 0, inter_token_ms: 15 });
    const { summary, records } = await runCollecting(options(stub.url, { requests: 5, load: { mode: 'open', rate_rps: 20, arrivals: 'constant' } }));
    expect(records.every((r) => r.second_token_s !== null && r.second_token_s > (r.first_token_s as number))).toBe(true);
    expect(Math.abs((summary.latency_ms.ttst.raw.p50 as number) - 15)).toBeLessThan(5);
    expect(summary.latency_ms.inter_token_latency).toEqual(summary.latency_ms.tpot);
    expect(Math.abs((summary.output_tokens_per_s_per_user.raw.p50 as number) - 1000 / 15) / (1000 / 15)).toBeLessThan(0.25);
    expect(summary.timeline.offered.reduce((a, b) => a + b, 0)).toBe(5);
    expect(summary.timeline.output_chunks.reduce((a, b) => a + b, 0)).toBe(30);
  });

  it('--max-concurrency: a request still in the client queue at its bound ends as queue_timeout, never sent; one sent has the whole bound again from its send', async () => {
    // Each answer takes about 300 ms; one place; a 450 ms bound. Request 0 goes at once and ends
    // at 300 ms; request 1 goes then (300 ms late) and, with the bound again from its send, ends
    // at 600 ms; requests 2 and 3 are still queued at 470 and 480 ms: queue_timeout, never sent.
    stub = await startHttpStub({ kind: 'variable-response', output_len_mean: 3, output_len_spread: 0, first_chunk_ms: 300, first_chunk_spread: 0, inter_token_ms: 1 });
    const { summary, records } = await runCollecting(options(stub.url, { requests: 4, request_timeout_ms: 450, load: { mode: 'open', rate_rps: 100, arrivals: 'constant', max_concurrency: 1 } }));
    expect(records.map((r) => r.error)).toEqual([null, null, 'queue_timeout', 'queue_timeout']);
    expect(records.slice(2).every((r) => r.dispatched_s === null && r.started_s === null)).toBe(true);
    expect(summary.requests.errors).toEqual({ queue_timeout: 2 });
    // TTFT of request 1 runs from its send, not its intended start: the server's 300 ms, not the queue's.
    expect(summary.latency_ms.ttft.raw.max as number).toBeLessThan(400);
    expect(summary.latency_ms.client_queue.raw.max as number).toBeGreaterThan(250);
    expect(stub.stats().requests).toBe(2);
  });

  it('closed loop: never more requests in flight than the concurrency', async () => {
    stub = await startHttpStub({ kind: 'variable-response', output_len_mean: 5, output_len_spread: 0, first_chunk_ms: 20, inter_token_ms: 2 });
    const { summary } = await runCollecting(options(stub.url, { load: { mode: 'closed', concurrency: 3 }, requests: 12 }));
    expect(summary.requests.completed).toBe(12);
    expect(stub.stats().active_max).toBe(3);
  });

  it('counts refusals by status and class: 429 past the stub\'s max concurrency', async () => {
    stub = await startHttpStub({ kind: 'variable-response', output_len_mean: 5, output_len_spread: 0, first_chunk_ms: 200, first_chunk_spread: 0, max_concurrency: 1 });
    const { summary, records } = await runCollecting(options(stub.url, { load: { mode: 'closed', concurrency: 3 }, requests: 3 }));
    expect(summary.requests).toMatchObject({ completed: 1, failed: 2, errors: { http_status: 2 }, statuses: { 200: 1, 429: 2 } });
    expect(records.find((r) => r.status === 429)?.message).toContain('more than 1 requests in progress');
  });

  it('ends a request that takes too long as timeout, from its intended start', async () => {
    stub = await startHttpStub({ kind: 'variable-response', first_chunk_ms: 5000, first_chunk_spread: 0 });
    const { summary, records } = await runCollecting(options(stub.url, { requests: 2, request_timeout_ms: 300 }));
    expect(summary.requests.errors).toEqual({ timeout: 2 });
    // Node's timers may fire a millisecond or two before the monotonic clock says they are due.
    for (const r of records) expect(((r.end_s as number) - r.intended_s) * 1000).toBeGreaterThanOrEqual(297);
  });

  it('says the client fell behind when its loop stalls: a request sent late makes the run unqualified', async () => {
    stub = await startHttpStub({ kind: 'max-throughput', output_length: 10 });
    // The loop is blocked for 60 ms a quarter into a 200 ms schedule of 20 requests.
    const stall = setTimeout(() => {
      const until = performance.now() + 60;
      while (performance.now() < until) {
        // Deliberately blocks the loop.
      }
    }, 150);
    const { summary } = await runCollecting(options(stub.url, {}));
    clearTimeout(stall);
    expect(summary.client.late_sends).toBeGreaterThan(0);
    expect(summary.client.send_lag_ms.max as number).toBeGreaterThan(40);
    expect(summary.qualified).toBe(false);
    expect(summary.unqualified_reason).toMatch(/fell behind its schedule/);
    // Every latency runs from the intended start, so the stall shows in TTFT too, not only as lag.
    expect(summary.latency_ms.ttft.raw.max as number).toBeGreaterThan(40);
  });

  it('stops on interrupt: no new requests, those in flight end as interrupted', async () => {
    stub = await startHttpStub({ kind: 'variable-response', first_chunk_ms: 10_000, first_chunk_spread: 0 });
    let interrupt: () => void = () => undefined;
    const stop = new Promise<void>((resolve) => (interrupt = resolve));
    setTimeout(interrupt, 250);
    const { summary } = await runCollecting(options(stub.url, { requests: 1000, stop }));
    expect(summary.interrupted).toBe(true);
    expect(summary.requests.sent).toBeLessThan(40);
    // Every request that ended, ended interrupted: those sent, and any due but not yet handed to a
    // connection when the interrupt came (a loaded host has one or two; counted, never sent).
    expect(Object.keys(summary.requests.errors)).toEqual(['interrupted']);
    expect(summary.requests.errors.interrupted).toBeGreaterThanOrEqual(summary.requests.sent);
    expect(summary.requests.errors.interrupted).toBeLessThanOrEqual(summary.requests.sent + 5);
  });
});

describe('runHttpLoad against a misbehaving server', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(handler);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('a stream that ends without [DONE] is truncated; an error event is a stream error; no usage means counted chunks', async () => {
    let n = 0;
    const url = await serve((req, res) => {
      req.resume();
      if (req.method !== 'POST') return void res.writeHead(404).end(); // the client's warm-up GET /v1/models
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const k = n++;
      res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
      res.write('data: {"choices":[{"delta":{"content":"b"}}]}\n\n');
      if (k === 0) res.end();
      else if (k === 1) res.end('data: {"error":{"message":"engine died"}}\n\ndata: [DONE]\n\n');
      else res.end('data: [DONE]\n\n');
    });
    const { summary, records } = await runCollecting(options(url, { requests: 3, load: { mode: 'closed', concurrency: 1 } }));
    expect(records.map((r) => r.error)).toEqual(['truncated', 'stream_error', null]);
    expect(records[1].message).toBe('engine died');
    expect(records[2]).toMatchObject({ tokens: 2, tokens_origin: 'chunks' });
    expect(summary.tokens.origin).toBe('chunks');
  });

  it('an unreachable server fails every request as connect_failed, within the bound', async () => {
    const url = await serve(() => undefined);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    const { summary } = await runCollecting(options(url, { requests: 3 }));
    expect(summary.requests.errors).toEqual({ connect_failed: 3 });
  });
});
