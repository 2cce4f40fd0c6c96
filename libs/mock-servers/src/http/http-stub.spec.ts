import { request, type IncomingMessage } from 'node:http';
import type { TimerHost } from '@duplex-bench/pacer';
import { startHttpStub, type HttpStub, type HttpStubKind, type HttpStubOptions } from './http-stub';

/**
 * The stub's clock in a spec: time moves only when the spec fires a timer, so every figure is
 * exact. Background timers (the loop-lag monitor's) never fire. It starts far from 0, as the
 * monotonic clock it stands for does.
 */
class StepClock implements TimerHost {
  now_ms = 5_000_000;
  private timers: Array<{ due_ms: number; fn: () => void }> = [];
  private waiters: Array<() => void> = [];
  now_s = (): number => this.now_ms / 1000;

  arm(delay_ms: number, fn: () => void, options?: { background?: boolean }): () => void {
    if (options?.background) return () => undefined;
    const timer = { due_ms: this.now_ms + delay_ms, fn };
    this.timers.push(timer);
    for (const wake of this.waiters.splice(0)) wake();
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  afterIo(fn: () => void): () => void {
    return this.arm(0, fn);
  }

  get pending(): number {
    return this.timers.length;
  }

  /** Resolves once `n` timers are pending: the stub has taken its requests and waits for their time. */
  async armed(n = 1): Promise<void> {
    while (this.timers.length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Fires the earliest timer at its due time. */
  fireNext(): void {
    this.timers.sort((a, b) => a.due_ms - b.due_ms);
    const next = this.timers.shift();
    if (!next) throw new Error('no timer armed');
    this.now_ms = next.due_ms;
    next.fn();
  }
}

/** Waits on whatever arrives at any call: each runs on every chunk received. */
const checks = new Set<() => void>();

/** Resolves once `holds()` is true, checked as each chunk of any call arrives. */
function arrived(holds: () => boolean): Promise<void> {
  if (holds()) return Promise.resolve();
  return new Promise((resolve) => {
    const check = () => {
      if (!holds()) return;
      checks.delete(check);
      resolve();
    };
    checks.add(check);
  });
}

/** One request to the stub, its body read as it comes; SSE `data:` events are stamped with the stub's clock on receipt. */
class Call {
  status = 0;
  headers: IncomingMessage['headers'] = {};
  body = '';
  readonly events: Array<{ at_ms: number; data: string }> = [];
  readonly ended: Promise<void>;
  /** Resolves with the status line and headers, before any of the body. */
  readonly responded: Promise<void>;
  private readonly req: ReturnType<typeof request>;

  constructor(url: string, method: string, path: string, body: string | null, clock?: StepClock) {
    let resolveEnd: () => void = () => undefined;
    let resolveResponded: () => void = () => undefined;
    this.responded = new Promise((resolve) => (resolveResponded = resolve));
    let rejectEnd: (err: Error) => void = () => undefined;
    this.ended = new Promise((resolve, reject) => {
      resolveEnd = resolve;
      rejectEnd = reject;
    });
    this.ended.catch(() => undefined);
    this.req = request(`${url}${path}`, { method, agent: false, headers: body === null ? {} : { 'content-type': 'application/json' } }, (res) => {
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      resolveResponded();
      res.setEncoding('utf8');
      let buffered = '';
      res.on('data', (chunk: string) => {
        this.body += chunk;
        buffered += chunk;
        for (let at = buffered.indexOf('\n\n'); at >= 0; at = buffered.indexOf('\n\n')) {
          const line = buffered.slice(0, at);
          buffered = buffered.slice(at + 2);
          if (line.startsWith('data: ')) this.events.push({ at_ms: clock?.now_ms ?? 0, data: line.slice(6) });
        }
        for (const check of [...checks]) check();
      });
      res.on('end', () => resolveEnd());
      res.on('error', rejectEnd);
    });
    this.req.on('error', rejectEnd);
    this.req.end(body ?? undefined);
  }

  /** Resolves once the response holds `n` data events. */
  until(n: number): Promise<void> {
    return arrived(() => this.events.length >= n);
  }

  /** The text of each chunk that carries some, with when it arrived. */
  texts(): Array<{ at_ms: number; text: string; finish: string | null }> {
    return this.events.flatMap((e) => {
      if (e.data === '[DONE]') return [];
      const c = (JSON.parse(e.data) as { choices: Array<{ delta?: { content?: string }; text?: string; finish_reason: string | null }> }).choices[0];
      const text = c?.delta?.content ?? c?.text;
      return c && text ? [{ at_ms: e.at_ms, text, finish: c.finish_reason }] : [];
    });
  }

  json(): Record<string, unknown> {
    return JSON.parse(this.body) as Record<string, unknown>;
  }

  abort(): void {
    this.req.destroy();
  }
}

/** Resolves once `holds()` is true, looking after each turn of the event loop; rejects after `rounds` looks. */
async function eventually(holds: () => boolean, rounds = 10_000): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    if (holds()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`not so after ${rounds} turns of the event loop`);
}

/** To the µs: the stub's due times are sums of seconds in floating point. */
const ms = (v: number) => Math.round(v * 1000) / 1000;

describe('startHttpStub', () => {
  const stubs: HttpStub[] = [];
  const start = async (kind: HttpStubKind, o: Partial<HttpStubOptions> = {}) => {
    const stub = await startHttpStub({ kind, port: 0, ...o });
    stubs.push(stub);
    return stub;
  };
  afterEach(async () => {
    await Promise.all(stubs.splice(0).map((s) => s.close()));
  });

  const chat = (o: Record<string, unknown> = {}) => JSON.stringify({ model: 'stub', messages: [{ role: 'user', content: 'say three words' }], ...o });

  it('listens on 127.0.0.1 and names its one model at GET /v1/models; anything else is 404', async () => {
    const stub = await start('max-throughput');
    expect(stub.url).toBe(`http://127.0.0.1:${stub.port}`);
    const models = new Call(stub.url, 'GET', '/v1/models', null);
    await models.ended;
    expect(models.json()).toEqual({ object: 'list', data: [{ id: 'stub', object: 'model', owned_by: 'duplex-bench' }] });
    for (const [method, path] of [
      ['GET', '/v1/chat/completions'],
      ['POST', '/v1/embeddings'],
    ]) {
      const c = new Call(stub.url, method, path, method === 'POST' ? '{}' : null);
      await c.ended;
      expect(c.status).toBe(404);
    }
    expect(stub.stats().requests).toBe(0);
  });

  describe('max-throughput', () => {
    it('answers a whole chat completion of output_length characters, counted as tokens, with usage', async () => {
      const stub = await start('max-throughput', { output_length: 12 });
      const c = new Call(stub.url, 'POST', '/v1/chat/completions', chat());
      await c.ended;
      expect(c.headers['content-type']).toBe('application/json');
      expect(c.json()).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'x'.repeat(12) }, finish_reason: 'length' }], usage: { completion_tokens: 12 } });
      expect(stub.stats()).toMatchObject({ kind: 'max-throughput', requests: 1, completed: 1 });
    });

    it('streams events of stream_interval characters after the role, the last one finishing with length, then [DONE]', async () => {
      const stub = await start('max-throughput', { output_length: 10, stream_interval: 4 });
      const c = new Call(stub.url, 'POST', '/v1/chat/completions', chat({ stream: true }));
      await c.ended;
      expect(c.headers['content-type']).toBe('text/event-stream');
      expect(JSON.parse(c.events[0].data)).toMatchObject({ choices: [{ delta: { role: 'assistant', content: '' } }] });
      expect(c.texts().map((t) => [t.text.length, t.finish])).toEqual([
        [4, null],
        [4, null],
        [2, 'length'],
      ]);
      expect(c.events.at(-1)?.data).toBe('[DONE]');
      // No usage unless the client asks for it.
      expect(c.body).not.toContain('"usage"');
      expect(stub.stats().sse_events).toBe(3);
    });

    it('ends a stream with usage only when the request asks for it and the stub sends usage, and the completions form has no role event', async () => {
      const stub = await start('max-throughput', { output_length: 3 });
      const asked = new Call(stub.url, 'POST', '/v1/completions', JSON.stringify({ prompt: 'hi', stream: true, stream_options: { include_usage: true } }));
      await asked.ended;
      expect(JSON.parse(asked.events[0].data)).toMatchObject({ object: 'text_completion', choices: [{ text: 'x' }] });
      expect(JSON.parse(asked.events.at(-2)?.data as string)).toMatchObject({ choices: [], usage: { completion_tokens: 3 } });

      const never = await start('max-throughput', { output_length: 3, usage: false });
      const refused = new Call(never.url, 'POST', '/v1/completions', JSON.stringify({ prompt: 'hi', stream: true, stream_options: { include_usage: true } }));
      const whole = new Call(never.url, 'POST', '/v1/completions', JSON.stringify({ prompt: 'hi' }));
      await Promise.all([refused.ended, whole.ended]);
      expect(refused.body).not.toContain('"usage"');
      expect(whole.json().usage).toBeUndefined();
    });
  });

  describe('variable-response', () => {
    const timed = { first_chunk_ms: 100, first_chunk_spread: 0, output_len_mean: 5, output_len_spread: 0, stream_interval: 2, inter_token_ms: 10 };

    it("streams the first event first_chunk_ms after arrival, each later one when its last token is produced, on the stub's clock", async () => {
      const clock = new StepClock();
      const t0 = clock.now_ms;
      const stub = await start('variable-response', { ...timed, clock });
      const c = new Call(stub.url, 'POST', '/v1/chat/completions', chat({ stream: true }), clock);
      // Events of 2, 2 and 1 tokens: due when tokens 2, 4 and 5 are out.
      for (let k = 0; k < 3; k++) {
        await clock.armed();
        clock.fireNext();
        await c.until(k + 2);
      }
      await c.ended;
      expect(c.texts().map((t) => [ms(t.at_ms - t0), t.text, t.finish])).toEqual([
        [110, 'xx', null],
        [130, 'xx', null],
        [140, 'x', 'length'],
      ]);
      expect(c.events.at(-1)?.data).toBe('[DONE]');
      expect(stub.stats()).toMatchObject({ requests: 1, completed: 1, sse_events: 3, active_max: 1 });
    });

    it('sends the headers at once, before any output', async () => {
      const clock = new StepClock();
      const stub = await start('variable-response', { ...timed, clock });
      const c = new Call(stub.url, 'POST', '/v1/chat/completions', chat({ stream: true }), clock);
      await clock.armed();
      await c.responded;
      expect(c.status).toBe(200);
      expect(c.body).toBe('');
      clock.fireNext();
      clock.fireNext();
      clock.fireNext();
      await c.ended;
    });

    it('answers a whole response when its last token is produced, caps the length at max_completion_tokens, and counts prompt words as tokens', async () => {
      const clock = new StepClock();
      const t0 = clock.now_ms;
      const stub = await start('variable-response', { ...timed, output_len_mean: 50, clock });
      const c = new Call(stub.url, 'POST', '/v1/chat/completions', chat({ max_tokens: 9, max_completion_tokens: 4 }), clock);
      await clock.armed();
      clock.fireNext();
      await c.ended;
      expect(ms(clock.now_ms - t0)).toBe(100 + 3 * 10);
      expect(c.json()).toMatchObject({ choices: [{ message: { content: 'xxxx' } }], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    });

    it('starts responses at most response_rate per second over the whole server, their events then without waits', async () => {
      const clock = new StepClock();
      const t0 = clock.now_ms;
      const stub = await start('variable-response', { first_chunk_ms: 0, output_len_mean: 4, output_len_spread: 0, stream_interval: 2, response_rate: 10, clock });
      const calls = [0, 1, 2].map(() => new Call(stub.url, 'POST', '/v1/chat/completions', chat({ stream: true }), clock));
      await clock.armed(3);
      // Each firing sends one write of two data events (role and text, or text and [DONE]); each is received before the next firing.
      const received = () => calls.reduce((n, c) => n + c.events.length, 0);
      for (let k = 1; k <= 6; k++) {
        clock.fireNext();
        await arrived(() => received() >= 2 * k);
      }
      await Promise.all(calls.map((c) => c.ended));
      const firsts = calls.map((c) => ms(c.texts()[0].at_ms - t0)).sort((a, b) => a - b);
      expect(firsts).toEqual([0, 100, 200]);
      for (const c of calls) expect(c.texts().map((t) => t.at_ms)).toEqual([c.texts()[0].at_ms, c.texts()[0].at_ms]);
    });

    it('refuses inter_token_ms with response_rate', async () => {
      await expect(startHttpStub({ kind: 'variable-response', port: 0, inter_token_ms: 1, response_rate: 1 })).rejects.toThrow(RangeError);
    });

    it('refuses a request past max_concurrency in progress with 429, and a body that is not JSON with 400', async () => {
      const clock = new StepClock();
      const stub = await start('variable-response', { ...timed, max_concurrency: 1, clock });
      const first = new Call(stub.url, 'POST', '/v1/chat/completions', chat(), clock);
      await clock.armed();
      const second = new Call(stub.url, 'POST', '/v1/chat/completions', chat(), clock);
      await second.ended;
      expect(second.status).toBe(429);
      expect(second.json()).toEqual({ error: { message: 'more than 1 requests in progress', type: 'rate_limit_exceeded', code: 429 } });
      clock.fireNext();
      await first.ended;
      const bad = new Call(stub.url, 'POST', '/v1/completions', '{"prompt":', clock);
      await bad.ended;
      expect([bad.status, (bad.json().error as { type: string }).type]).toEqual([400, 'invalid_request_error']);
      expect(stub.stats()).toMatchObject({ requests: 3, refused_429: 1, bad_requests: 1, active_max: 1 });
    });

    it('counts a request the client ends first as aborted, and sends nothing for it after', async () => {
      const clock = new StepClock();
      const stub = await start('variable-response', { ...timed, clock });
      const c = new Call(stub.url, 'POST', '/v1/chat/completions', chat({ stream: true }), clock);
      await clock.armed();
      await c.responded;
      c.abort();
      // Nothing tells a client when the stub saw the close: look after each turn of the loop, a bounded number of times.
      await eventually(() => stub.stats().aborted === 1);
      clock.fireNext();
      expect(stub.stats()).toMatchObject({ aborted: 1, completed: 0, sse_events: 0 });
    });

    it("exports vLLM's TTFT and request latency histograms at /metrics, observed from each request's arrival", async () => {
      const clock = new StepClock();
      const stub = await start('variable-response', { ...timed, clock });
      const c = new Call(stub.url, 'POST', '/v1/chat/completions', chat({ stream: true }), clock);
      for (let k = 0; k < 3; k++) {
        await clock.armed();
        clock.fireNext();
        await c.until(k + 2);
      }
      await c.ended;
      const metrics = new Call(stub.url, 'GET', '/metrics', null);
      await metrics.ended;
      const value = (sample: string) => metrics.body.split('\n').find((l) => l.startsWith(`${sample} `))?.split(' ')[1];
      expect(value('vllm:time_to_first_token_seconds_bucket{model_name="stub",le="0.1"}')).toBe('0.0');
      expect(value('vllm:time_to_first_token_seconds_bucket{model_name="stub",le="0.25"}')).toBe('1.0');
      expect(Number(value('vllm:time_to_first_token_seconds_sum{model_name="stub"}'))).toBeCloseTo(0.11, 9);
      expect(Number(value('vllm:e2e_request_latency_seconds_sum{model_name="stub"}'))).toBeCloseTo(0.14, 9);
      expect(value('vllm:e2e_request_latency_seconds_count{model_name="stub"}')).toBe('1.0');
    });
  });
});
