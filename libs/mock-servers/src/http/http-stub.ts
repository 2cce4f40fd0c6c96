import { PromHistogram, VLLM_E2E_BUCKETS_S, VLLM_TTFT_BUCKETS_S } from './server-histograms';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CpuMeter, LoopLagMonitor, type CpuFigures, type LoopLagFigures } from '@duplex-bench/metrics';
import { lognormal, nodeTimerHost, seeded, type TimerHost } from '@duplex-bench/pacer';
import { completeBody, DONE_EVENT, eventSizes, outputText, roleEvent, textEvent, usageEvent, type StubEndpoint } from './sse-frames';

export type HttpStubKind = 'max-throughput' | 'variable-response';

export interface HttpStubOptions {
  /** `max-throughput`: pre-built responses, no waiting (the client's roofline); `variable-response`: a model's timing. */
  kind: HttpStubKind;
  host?: string;
  port?: number;
  /** Characters per SSE event; one character is one token of the stub. */
  stream_interval: number;
  /** max-throughput: characters of every response. */
  output_length: number;
  /** variable-response: output length per request, lognormal (mean characters, coefficient of variation); capped by the request's max_tokens. */
  output_len_mean: number;
  output_len_spread: number;
  /** variable-response: time to the first output, lognormal (mean ms, coefficient of variation). */
  first_chunk_ms: number;
  first_chunk_spread: number;
  /** variable-response: ms per token after the first (an event of N characters comes N × this after the one before). */
  inter_token_ms: number;
  /** variable-response: responses start at most this many per second over the whole server (0: no limit); events then come without waits. */
  response_rate: number;
  /** Past this many requests in progress a request is refused with 429 (0: no limit). */
  max_concurrency: number;
  /** false: never send usage, as a server that ignores `stream_options.include_usage` (the client must count tokens itself). */
  usage: boolean;
  seed?: number;
  clock?: TimerHost;
}

export const HTTP_STUB_DEFAULTS: Omit<HttpStubOptions, 'kind'> = {
  stream_interval: 1,
  output_length: 4000,
  output_len_mean: 1000,
  output_len_spread: 0.3,
  first_chunk_ms: 0,
  first_chunk_spread: 0.2,
  inter_token_ms: 0,
  response_rate: 0,
  max_concurrency: 0,
  usage: true,
};

export interface HttpStubStats {
  kind: HttpStubKind;
  requests: number;
  completed: number;
  refused_429: number;
  /** Requests the client ended before their response did. */
  aborted: number;
  bad_requests: number;
  active_max: number;
  sse_events: number;
  event_loop_lag_ms: LoopLagFigures;
  cpu_cores: CpuFigures;
  /** Stub CPU seconds since start over requests answered, in µs. */
  cpu_us_per_request: number | null;
  measurement_origin: Record<string, string>;
}

export interface HttpStub {
  readonly url: string;
  readonly port: number;
  stats(): HttpStubStats;
  close(): Promise<void>;
}

const ENDPOINTS: Record<string, StubEndpoint> = { '/v1/chat/completions': 'chat', '/v1/completions': 'completions' };

/** Pre-built bodies of the max-throughput stub, one per endpoint and form, built on first use. */
function prebuilt(options: HttpStubOptions): (endpoint: StubEndpoint, stream: boolean, usage: boolean) => Buffer {
  const cache = new Map<string, Buffer>();
  return (endpoint, stream, usage) => {
    const key = `${endpoint}${stream}${usage}`;
    let body = cache.get(key);
    if (!body) {
      const id = 'stub-0';
      const text = outputText(options.output_length);
      if (!stream) body = Buffer.from(completeBody(endpoint, id, text, 0, options.output_length, options.usage));
      else {
        const parts = endpoint === 'chat' ? [roleEvent(id)] : [];
        const sizes = eventSizes(options.output_length, options.stream_interval);
        sizes.forEach((n, i) => parts.push(textEvent(endpoint, id, 'x'.repeat(n), i === sizes.length - 1 ? 'length' : null)));
        if (usage) parts.push(usageEvent(endpoint, id, 0, options.output_length));
        parts.push(DONE_EVENT);
        body = Buffer.from(parts.join(''));
      }
      cache.set(key, body);
    }
    return body;
  };
}

/**
 * An OpenAI-compatible HTTP server with no model, for `duplex-bench http`: `POST /v1/chat/completions`
 * and `/v1/completions`, streamed (SSE) when the request says `stream: true`, and `GET /v1/models`.
 * One character of output is one token (usage counts them); a prompt's tokens are its words.
 */
export async function startHttpStub(given: Partial<HttpStubOptions> & { kind: HttpStubKind }): Promise<HttpStub> {
  const options: HttpStubOptions = { ...HTTP_STUB_DEFAULTS, ...given };
  if (options.inter_token_ms > 0 && options.response_rate > 0) throw new RangeError('inter_token_ms and response_rate exclude each other');
  const clock = options.clock ?? nodeTimerHost;
  const random = seeded(options.seed ?? 1);
  const body = prebuilt(options);
  const counts = { requests: 0, completed: 0, refused_429: 0, aborted: 0, bad_requests: 0, active: 0, active_max: 0, sse_events: 0 };
  const loop = new LoopLagMonitor(10, clock).start();
  const cpu = new CpuMeter(clock);
  const cancels = new Set<() => void>();
  let nextId = 0;
  // response-rate mode: the time the next response may start, on the stub's clock.
  let nextSlot_s = 0;
  // What a vLLM server exports of its own latencies, observed from each request's arrival on the stub's clock.
  const ttft = new PromHistogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', VLLM_TTFT_BUCKETS_S);
  const e2e = new PromHistogram('vllm:e2e_request_latency_seconds', 'Histogram of end to end request latency in seconds.', VLLM_E2E_BUCKETS_S);

  function refuse(res: ServerResponse, status: number, message: string): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error', code: status } }));
  }

  /** Headers go at once, before any output, as a streaming server sends them: first byte and first token differ. */
  function streamHead(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
  }

  /** Waits until `due_s` on the stub's clock, unless the response is gone by then. */
  function at(due_s: number, res: ServerResponse, fn: () => void): void {
    const cancel = clock.arm(Math.max(0, (due_s - clock.now_s()) * 1000), () => {
      cancels.delete(cancel);
      if (!res.destroyed) fn();
    });
    cancels.add(cancel);
  }

  function variable(res: ServerResponse, endpoint: StubEndpoint, request: { stream?: boolean; max_tokens?: number; max_completion_tokens?: number; prompt_tokens: number; usage: boolean }, arrived_s: number, done: () => void): void {
    const cap = request.max_completion_tokens ?? request.max_tokens ?? Infinity;
    const length = Math.max(1, Math.min(cap, Math.round(lognormal(random, options.output_len_mean, options.output_len_spread))));
    const now_s = clock.now_s();
    let first_s = now_s + lognormal(random, options.first_chunk_ms, options.first_chunk_spread) / 1000;
    if (options.response_rate > 0) {
      nextSlot_s = Math.max(nextSlot_s + 1 / options.response_rate, first_s);
      first_s = nextSlot_s;
    }
    const id = `stub-${nextId++}`;
    const per_token_s = options.inter_token_ms / 1000;
    if (!request.stream) {
      at(first_s + (length - 1) * per_token_s, res, () => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(completeBody(endpoint, id, outputText(length), request.prompt_tokens, length, options.usage));
        ttft.observe(clock.now_s() - arrived_s);
        e2e.observe(clock.now_s() - arrived_s);
        done();
      });
      return;
    }
    streamHead(res);
    const sizes = eventSizes(length, options.stream_interval);
    // Event k carries tokens [sent, sent + n): it is due when its last token is produced.
    let k = 0;
    let produced = 0;
    const sendNext = () => {
      const n = sizes[k];
      produced += n;
      if (k === 0) ttft.observe(clock.now_s() - arrived_s);
      let out = k === 0 && endpoint === 'chat' ? roleEvent(id) : '';
      const last = k === sizes.length - 1;
      out += textEvent(endpoint, id, 'x'.repeat(n), last ? 'length' : null);
      counts.sse_events++;
      k++;
      if (last) {
        if (request.usage) out += usageEvent(endpoint, id, request.prompt_tokens, length);
        res.end(out + DONE_EVENT);
        e2e.observe(clock.now_s() - arrived_s);
        done();
        return;
      }
      res.write(out);
      at(first_s + (produced + sizes[k] - 1) * per_token_s, res, sendNext);
    };
    at(first_s + (sizes[0] - 1) * per_token_s, res, sendNext);
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === '/metrics') {
      // The max-throughput stub computes nothing to time: its histograms stay empty.
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(`${ttft.text('model_name="stub"')}\n${e2e.text('model_name="stub"')}\n`);
      return;
    }
    if (req.method === 'GET' && url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[{"id":"stub","object":"model","owned_by":"duplex-bench"}]}');
      return;
    }
    const endpoint = req.method === 'POST' ? ENDPOINTS[url] : undefined;
    if (!endpoint) {
      res.writeHead(404).end();
      return;
    }
    counts.requests++;
    if (options.max_concurrency > 0 && counts.active >= options.max_concurrency) {
      counts.refused_429++;
      req.resume();
      refuse(res, 429, `more than ${options.max_concurrency} requests in progress`);
      return;
    }
    counts.active++;
    counts.active_max = Math.max(counts.active_max, counts.active);
    let ended = false;
    const done = () => {
      if (ended) return;
      ended = true;
      counts.active--;
      counts.completed++;
    };
    res.on('close', () => {
      if (ended) return;
      ended = true;
      counts.active--;
      counts.aborted++;
    });
    const arrived_s = clock.now_s();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString();
      if (options.kind === 'max-throughput') {
        // No compute: the form is read off the body without parsing it.
        const stream = text.includes('"stream":true');
        const b = body(endpoint, stream, options.usage && text.includes('"include_usage":true'));
        if (stream) {
          streamHead(res);
          counts.sse_events += Math.ceil(options.output_length / options.stream_interval);
        } else res.writeHead(200, { 'content-type': 'application/json' });
        res.end(b);
        done();
        return;
      }
      let request: { stream?: boolean; max_tokens?: number; max_completion_tokens?: number; prompt?: unknown; messages?: Array<{ content?: unknown }>; stream_options?: { include_usage?: boolean } };
      try {
        request = JSON.parse(text) as typeof request;
      } catch {
        counts.bad_requests++;
        done();
        refuse(res, 400, 'body is not JSON');
        return;
      }
      const prompt = typeof request.prompt === 'string' ? request.prompt : (request.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : '')).join(' ');
      const prompt_tokens = prompt.split(/\s+/).filter(Boolean).length;
      variable(res, endpoint, { ...request, prompt_tokens, usage: options.usage && request.stream_options?.include_usage === true }, arrived_s, done);
    });
  }

  const server = createServer({ keepAliveTimeout: 60_000 }, onRequest);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    stats() {
      const cpu_cores = cpu.figures();
      const answered = counts.completed;
      return {
        kind: options.kind,
        requests: counts.requests,
        completed: counts.completed,
        refused_429: counts.refused_429,
        aborted: counts.aborted,
        bad_requests: counts.bad_requests,
        active_max: counts.active_max,
        sse_events: counts.sse_events,
        event_loop_lag_ms: loop.figures(),
        cpu_cores,
        cpu_us_per_request: cpu_cores.cpu_s !== undefined && answered > 0 ? Math.round((cpu_cores.cpu_s / answered) * 1e7) / 10 : null,
        measurement_origin: {
          event_loop_lag_ms: 'stub process: lateness of a 10 ms timer',
          cpu_cores: 'stub process CPU seconds per wall second since it started (idle time included)',
          cpu_us_per_request: 'stub process CPU seconds since it started over requests answered, µs',
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        loop.stop();
        for (const cancel of cancels) cancel();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
