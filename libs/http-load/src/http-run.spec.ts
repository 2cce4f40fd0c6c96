import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exponential, seeded } from '@duplex-bench/pacer';
import { runHttpLoad, type HttpRunOptions, type TokenCounter } from './http-run';
import type { RequestRecord } from './request-record';

/** What the server does with the n-th request to the endpoint (from 0). */
type Answer = (n: number, res: ServerResponse, body: string) => void;

/** An OpenAI-compatible server on 127.0.0.1 whose answers a spec scripts; it counts what it saw. */
class TestServer {
  readonly seen: Array<{ method: string; url: string; authorization?: string; body: string }> = [];
  /** Requests to the endpoint open at once, and the most there were. */
  open = 0;
  peak = 0;
  private posts = 0;
  private readonly server: Server;

  constructor(private readonly answer: Answer) {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      this.seen.push({ method: req.method ?? '', url: req.url ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}), body });
      if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
      this.open++;
      this.peak = Math.max(this.peak, this.open);
      res.on('close', () => this.open--);
      this.answer(this.posts++, res, body);
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const sse = (payloads: Array<object | string>) => payloads.map((p) => `data: ${typeof p === 'string' ? p : JSON.stringify(p)}\n\n`).join('');
const delta = (content: string) => ({ choices: [{ delta: { content } }] });
const usage = (completion_tokens: number, prompt_tokens = 3) => ({ choices: [], usage: { prompt_tokens, completion_tokens } });

/** A streamed answer: each payload its own write, then the end. */
function stream(res: ServerResponse, payloads: Array<object | string>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const p of payloads) res.write(sse([p]));
  res.end();
}

describe('runHttpLoad', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  /** Runs a load against a server answering with `answer`; every request's record, in the order they ended. */
  async function run(answer: Answer, over: Partial<HttpRunOptions> = {}, path = '') {
    const server = new TestServer(answer);
    servers.push(server);
    const url = `${await server.listen()}${path}`;
    const records: RequestRecord[] = [];
    let prompts = 0;
    const result = await runHttpLoad({
      url,
      endpoint: 'chat',
      model: 'm1',
      stream: true,
      max_tokens: 8,
      ignore_eos: false,
      prompts: { next: () => ({ text: `prompt ${prompts++}`, tokens: 2 }), describe: 'test prompts' },
      load: { mode: 'closed', concurrency: 1 },
      requests: 2,
      warmup_s: 0,
      request_timeout_ms: 5000,
      max_connections: 4,
      max_send_lag_ms: 1000,
      seed: 1,
      gate_margin_ms: 0,
      onRecord: (r) => records.push({ ...r }),
      ...over,
    });
    return { ...result, records, server };
  }

  it('refuses a run with no bound, and an open loop with no rate', async () => {
    const base = { url: 'http://127.0.0.1:9', load: { mode: 'closed', concurrency: 1 } } as HttpRunOptions;
    await expect(runHttpLoad(base)).rejects.toThrow(new RangeError('a run needs --requests or --duration'));
    await expect(runHttpLoad({ ...base, requests: 1, load: { mode: 'open', rate_rps: 0, arrivals: 'constant' } })).rejects.toThrow(new RangeError('the rate must be above 0 requests/s'));
  });

  it("streams each request's tokens: first, second and last token times, chunks, and the server's usage", async () => {
    const { records, summary, server: s } = await run((_n, res) => stream(res, [{ choices: [{ delta: { role: 'assistant' } }] }, delta('Hel'), delta('lo'), delta('!'), usage(3, 7), '[DONE]']), { api_key: 'sk-9' });
    expect(records).toHaveLength(2);
    for (const r of records) {
      expect(r).toMatchObject({ status: 200, error: null, chunks: 3, tokens: 3, tokens_origin: 'usage', prompt_tokens: 7 });
      const t = [r.intended_s, r.dispatched_s, r.started_s, r.first_byte_s, r.first_token_s, r.second_token_s, r.last_token_s, r.end_s] as number[];
      expect(t.every((v) => typeof v === 'number')).toBe(true);
      // In order, from the intended start to the end.
      expect(t.every((v, i) => i === 0 || v >= t[i - 1])).toBe(true);
      expect(r.dispatched_s).toBe(r.intended_s);
    }
    // One lane: the second request goes when the first has ended.
    expect(records[1].intended_s).toBeGreaterThanOrEqual(records[0].end_s as number);
    expect(summary.requests).toMatchObject({ sent: 2, completed: 2, failed: 0, statuses: { '200': 2 } });
    expect(summary.tokens).toMatchObject({ output: 6, origin: 'usage' });
    expect(summary.client.sse_events).toBe(12);
    // A warm-up GET first, then the requests, with the key, the model and each prompt.
    expect(s.seen.map((x) => `${x.method} ${x.url}`)).toEqual(['GET /v1/models', 'POST /v1/chat/completions', 'POST /v1/chat/completions']);
    expect(s.seen.every((x) => x.authorization === 'Bearer sk-9')).toBe(true);
    expect(JSON.parse(s.seen[2].body)).toMatchObject({ model: 'm1', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'prompt 1' }] });
  });

  it("keeps the base URL's path in front of the endpoint's", async () => {
    const { server: s } = await run((_n, res) => stream(res, [delta('x'), '[DONE]']), { requests: 1, endpoint: 'completions' }, '/prefix/');
    expect(s.seen.map((x) => x.url)).toEqual(['/prefix/v1/models', '/prefix/v1/completions']);
  });

  it('without usage, counts output chunks as tokens; with --tokenizer, counts the output text', async () => {
    const answer: Answer = (_n, res) => stream(res, [delta('ab'), delta(''), delta('cde'), '[DONE]']);
    const chunks = await run(answer, { requests: 1 });
    expect(chunks.records[0]).toMatchObject({ chunks: 2, tokens: 2, tokens_origin: 'chunks' });
    const tokenizer: TokenCounter = { path: '/t/tokenizer.json', count: (text) => text.length };
    const counted = await run(answer, { requests: 1, tokenizer });
    expect(counted.records[0]).toMatchObject({ chunks: 2, tokens: 5, tokens_origin: 'tokenizer' });
    expect(counted.summary.tokens).toMatchObject({ origin: 'tokenizer', tokenizer: '/t/tokenizer.json' });
  });

  it('not streamed: the whole answer is the first and last token, counted by usage, the tokenizer or as one chunk', async () => {
    const bodies = [{ choices: [{ message: { content: 'hello there' } }], usage: { completion_tokens: 4, prompt_tokens: 9 } }, { choices: [{ text: 'abc' }] }];
    const answer: Answer = (n, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(bodies[n]));
    const { records, server: s } = await run(answer, { stream: false, tokenizer: { path: 't', count: (text) => text.length * 10 } });
    expect(records[0]).toMatchObject({ chunks: 1, tokens: 4, tokens_origin: 'usage', prompt_tokens: 9 });
    expect(records[1]).toMatchObject({ chunks: 1, tokens: 30, tokens_origin: 'tokenizer', prompt_tokens: null });
    for (const r of records) expect([r.first_token_s, r.last_token_s]).toEqual([r.end_s, r.end_s]);
    expect(JSON.parse(s.seen[1].body)).not.toHaveProperty('stream_options');
    const plain = await run(answer, { stream: false, requests: 2 });
    expect(plain.records[1]).toMatchObject({ tokens: 1, tokens_origin: 'chunks' });
  });

  it('classifies each failure: a status, an error event, a stream without [DONE], a body that is no answer, a broken connection', async () => {
    const streamed: Answer[] = [
      (_n, res) => res.writeHead(503).end(`overloaded ${'x'.repeat(300)}`),
      (_n, res) => res.writeHead(429, { 'content-type': 'application/json' }).end('{"error":"slow down"}'),
      (_n, res) => stream(res, [delta('a'), { error: { message: 'engine died' } }, '[DONE]']),
      (_n, res) => stream(res, [delta('a')]),
      (_n, res) => stream(res, ['{not json']),
    ];
    const whole: Answer[] = [
      (_n, res) => res.writeHead(200).end('not json'),
      (_n, res) => res.writeHead(200).end('{"id":"x"}'),
      (_n, res) => res.socket?.destroy(),
      (_n, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[{"text":"fine"}]}'),
    ];
    const s = await run((n, res, body) => streamed[n](n, res, body), { requests: streamed.length });
    const w = await run((n, res, body) => whole[n](n, res, body), { requests: whole.length, stream: false });
    const view = (r: RequestRecord) => [r.error, r.status, r.message];
    expect(s.records.map(view)).toEqual([
      ['http_status', 503, `overloaded ${'x'.repeat(189)}`],
      ['http_status', 429, '{"error":"slow down"}'],
      ['stream_error', 200, 'engine died'],
      ['truncated', 200, 'the stream ended without [DONE]'],
      ['stream_error', 200, 'not JSON: {not json'],
    ]);
    expect(w.records.map(view)).toEqual([
      ['truncated', 200, 'the body is not JSON'],
      ['truncated', 200, 'the body has no choices'],
      ['reset', null, expect.any(String)],
      [null, 200, undefined],
    ]);
    expect(s.summary.requests).toMatchObject({ sent: 5, completed: 0, failed: 5, errors: { http_status: 2, stream_error: 2, truncated: 1 }, statuses: { '200': 3, '429': 1, '503': 1 } });
  });

  it('ends a request that has no answer within its bound as a timeout, and one that finds no server as connect_failed', async () => {
    const { records, summary } = await run(() => undefined, { requests: 1, request_timeout_ms: 200 });
    expect(records[0]).toMatchObject({ error: 'timeout', message: 'no end within 200 ms of its intended start', first_byte_s: null });
    expect(summary.requests.errors).toEqual({ timeout: 1 });
    const gone = new TestServer(() => undefined);
    const url = await gone.listen();
    await gone.close();
    const records2: RequestRecord[] = [];
    await runHttpLoad({
      url,
      endpoint: 'chat',
      model: 'm',
      stream: true,
      max_tokens: 1,
      ignore_eos: false,
      prompts: { next: () => ({ text: 'p', tokens: 1 }), describe: 'p' },
      load: { mode: 'closed', concurrency: 1 },
      requests: 1,
      warmup_s: 0,
      request_timeout_ms: 2000,
      max_connections: 1,
      max_send_lag_ms: 1000,
      seed: 1,
      gate_margin_ms: 0,
      onRecord: (r) => records2.push(r),
    });
    // No connection, so never handed to one: not counted as sent.
    expect(records2.map((r) => [r.error, r.started_s])).toEqual([['connect_failed', null]]);
  });

  describe('open loop', () => {
    const quick: Answer = (_n, res) => stream(res, [delta('a'), '[DONE]']);

    it('constant arrivals: the first at the origin, each later one 1/rate after the intended time before it', async () => {
      const { records, origin_s, summary } = await run(quick, { load: { mode: 'open', rate_rps: 50, arrivals: 'constant' }, requests: 4 });
      const intended = records.map((r) => r.intended_s).sort((a, b) => a - b);
      expect(intended[0]).toBe(origin_s);
      intended.forEach((t, k) => expect(t - origin_s).toBeCloseTo(k * 0.02, 9));
      expect(summary.load).toMatchObject({ mode: 'open', rate_rps: 50, arrivals: 'constant', prompts: 'test prompts', seed: 1 });
      expect(summary.load).not.toHaveProperty('max_concurrency');
    });

    it('Poisson arrivals: the gaps are the exponential draws of the seed, in order', async () => {
      const { records, origin_s } = await run(quick, { load: { mode: 'open', rate_rps: 100, arrivals: 'poisson' }, requests: 4, seed: 42 });
      const random = seeded(42);
      const expected = [origin_s];
      for (let k = 1; k < 4; k++) expected.push(expected[k - 1] + exponential(random, 0.01));
      expect(records.map((r) => r.intended_s).sort((a, b) => a - b)).toEqual(expected);
    });

    it('--duration: no request is meant for the end of the window or after it', async () => {
      // A window that does not end on an arrival: 0, 25, 50, 75 and 100 ms, then 125 ms is past 110 ms.
      const { records, origin_s } = await run(quick, { load: { mode: 'open', rate_rps: 40, arrivals: 'constant' }, requests: undefined, duration_s: 0.11 });
      expect(records.map((r) => Math.round((r.intended_s - origin_s) * 1000)).sort((a, b) => a - b)).toEqual([0, 25, 50, 75, 100]);
      expect(records.every((r) => r.intended_s < origin_s + 0.11)).toBe(true);
    });

    it('--max-concurrency: at most that many at the server, the rest let go in order as places come free', async () => {
      const { records, summary, server: s } = await run((_n, res) => setTimeout(() => stream(res, [delta('a'), '[DONE]']), 30), {
        load: { mode: 'open', rate_rps: 200, arrivals: 'constant', max_concurrency: 1 },
        requests: 3,
      });
      expect(s.peak).toBe(1);
      const byIndex = [...records].sort((a, b) => a.index - b.index);
      expect(byIndex.map((r) => r.error)).toEqual([null, null, null]);
      for (let k = 1; k < 3; k++) expect(byIndex[k].dispatched_s as number).toBeGreaterThanOrEqual(byIndex[k - 1].end_s as number);
      // The queue is the client's, on purpose: its figure counts every request.
      expect(summary.latency_ms.client_queue.raw.count).toBe(3);
      expect(summary.load).toMatchObject({ max_concurrency: 1 });
    });

    it('--max-concurrency: a request still queued at its bound was never sent (queue_timeout); one let go late has its bound again from its send', async () => {
      // The first answer comes after 200 ms; the server never answers the others.
      const { records } = await run((n, res) => (n === 0 ? setTimeout(() => stream(res, [delta('a'), '[DONE]']), 200) : undefined), {
        load: { mode: 'open', rate_rps: 100, arrivals: 'constant', max_concurrency: 1 },
        requests: 3,
        request_timeout_ms: 600,
      });
      const byIndex = [...records].sort((a, b) => a.index - b.index);
      expect(byIndex.map((r) => r.error)).toEqual([null, 'timeout', 'queue_timeout']);
      expect(byIndex[1].message).toBe("no end within 600 ms of its send (after the client's queue)");
      // Its bound ran from its send, not its intended start (a timer may wake a millisecond early on the monotonic clock).
      expect(byIndex[1].end_s as number).toBeGreaterThan((byIndex[1].dispatched_s as number) + 0.59);
      expect(byIndex[1].dispatched_s as number).toBeGreaterThan(byIndex[1].intended_s + 0.1);
      expect(byIndex[2]).toMatchObject({ dispatched_s: null, started_s: null, message: "still in the client's queue 600 ms after its intended start: never sent" });
    });
  });

  it('a stop sends no more requests and ends those in flight as interrupted', async () => {
    let stop: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const { records, summary, server: s } = await run(
      () => {
        // The first request reached the server: stop the run.
        stop();
      },
      { load: { mode: 'closed', concurrency: 1 }, requests: 5, stop: stopped },
    );
    expect(records.map((r) => [r.error, r.message])).toEqual([['interrupted', 'interrupted before the response ended']]);
    expect(summary.interrupted).toBe(true);
    expect(s.seen.filter((x) => x.method === 'POST')).toHaveLength(1);
  });
});
