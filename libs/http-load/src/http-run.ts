import { Pool, type Dispatcher } from 'undici';
import { createUsHistogram, CpuMeter, LoopLagMonitor, peakRssBytes, recordMs, RssMonitor, type Histogram } from '@duplex-bench/metrics';
import { DeadlineScheduler, exponential, nodeTimerHost, seeded, type TimerHost } from '@duplex-bench/pacer';
import { GoodputTally, type GoodputBounds } from './goodput';
import { httpSummary, LatencyHistograms, PerSecond, RequestTally, type FigureName, type HttpLoadShape, type HttpSummary } from './http-summary';
import { ENDPOINT_PATHS, parseStreamChunk, readStreamChunk, requestBodyTemplate, type HttpEndpoint } from './openai-stream';
import { newRecord, type RequestErrorClass, type RequestRecord } from './request-record';
import { SseParser } from './sse';
import type { PromptSource } from './workload';

/**
 * Open loop: requests at the times of a schedule, and with `max_concurrency` at most that many in
 * flight, the rest waiting in the client's queue in order (vLLM's `--max-concurrency` with a
 * `--request-rate`). Closed loop: `concurrency` lanes.
 */
export type HttpLoad = { mode: 'open'; rate_rps: number; arrivals: 'poisson' | 'constant'; max_concurrency?: number } | { mode: 'closed'; concurrency: number };

/** Counts output tokens in text as a model's tokenizer does (`--tokenizer`). */
export interface TokenCounter {
  /** The tokenizer.json it was read from. */
  path: string;
  count(text: string): number;
}

export interface HttpRunOptions {
  /** Base URL of the server (`http://HOST:PORT`); the endpoint's path is added. */
  url: string;
  endpoint: HttpEndpoint;
  model: string;
  api_key?: string;
  stream: boolean;
  max_tokens: number;
  ignore_eos: boolean;
  prompts: PromptSource;
  load: HttpLoad;
  /** At least one of the two bounds the run: requests in all, and/or seconds of intended starts. */
  requests?: number;
  duration_s?: number;
  warmup_s: number;
  /** Bound on one request, from its intended start to its end. */
  request_timeout_ms: number;
  /** Connections the client may open (each carries one request at a time). */
  max_connections: number;
  /** A request handed to a connection later than this after its intended start makes the run unqualified. */
  max_send_lag_ms: number;
  seed: number;
  /** From the start decision to the first intended start. */
  gate_margin_ms?: number;
  timers?: TimerHost;
  /** Stops new requests and ends those in flight as `interrupted`. */
  stop?: Promise<void>;
  /** A launched process's common start: resolves with the origin (monotonic seconds) every process uses. */
  startGate?(): Promise<number>;
  /** `--goodput`: bounds in ms a request must meet to count as good. */
  goodput?: GoodputBounds;
  /** `--tokenizer`: counts the output of a request whose server sent no usage. */
  tokenizer?: TokenCounter;
  /** Each request's record as it ends (to requests.jsonl): the run keeps none of them. */
  onRecord?(record: RequestRecord): void;
  /** Given once the run's counters exist, before the first request: what live telemetry reads. */
  onLive?(view: HttpLiveView): void;
}

/** A running load's counters and histograms, read (never written) by live telemetry. */
export interface HttpLiveView {
  tally: RequestTally;
  /** Every request's figures, warm-up included, µs. */
  latency: Record<FigureName, Histogram>;
  late_sends(): number;
  in_flight(): number;
  loopLag: Histogram;
}

export interface HttpRunResult {
  summary: HttpSummary;
  origin_s: number;
}

class InterruptedError extends Error {}
class TimeoutError extends Error {}
class QueueTimeoutError extends Error {}

/** Error class of a failure undici reports. */
function classify(err: Error): RequestErrorClass {
  if (err instanceof InterruptedError) return 'interrupted';
  if (err instanceof TimeoutError) return 'timeout';
  if (err instanceof QueueTimeoutError) return 'queue_timeout';
  const code = (err as { code?: string }).code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'EAI_AGAIN') return 'connect_failed';
  return 'reset';
}

/** What every request of a run shares: the clock, the histograms, and how a request's end is told. */
interface RunState {
  timers: TimerHost;
  histograms: LatencyHistograms;
  send_lag: Histogram;
  max_send_lag_ms: number;
  late_sends: number;
  sse_events: number;
  steady_from_s: number;
  stream: boolean;
  per_second: PerSecond;
  tokenizer?: TokenCounter;
  ended(request: OneRequest): void;
}

const ERROR_BODY_CHARS = 200;

/** One request's handler: undici calls it as the request goes out and the response comes in. */
class OneRequest implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private parser: SseParser | null = null;
  private body: Buffer[] = [];
  private bodyBytes = 0;
  private sawDone = false;
  private aborted: Error | null = null;
  private cancelTimeout: () => void;
  private now_s = 0;
  /** `--tokenizer`: the output so far, to count when the server sends no usage. */
  private text = '';
  finished = false;
  /** Handed to the pool (past any --max-concurrency wait). */
  dispatched = false;
  /** The request body, until it goes. */
  payload: string | null = null;

  /**
   * The bound runs from the intended start. With --max-concurrency a request waiting for a place is
   * bounded the same way (`queue_timeout`: the server never saw it), and once it goes it has the
   * whole bound again from its send, so the server is never charged for the client's queue.
   */
  constructor(
    readonly record: RequestRecord,
    private readonly run: RunState,
    private readonly steady: boolean,
    private readonly timeout_ms: number,
  ) {
    const left_ms = Math.max(0, timeout_ms - (run.timers.now_s() - record.intended_s) * 1000);
    this.cancelTimeout = run.timers.arm(left_ms, () =>
      this.abort(this.dispatched ? new TimeoutError(`no end within ${timeout_ms} ms of its intended start`) : new QueueTimeoutError(`still in the client's queue ${timeout_ms} ms after its intended start: never sent`)),
    );
  }

  /** Let go from the client's queue at `at_s`, after its intended start: its bound starts again there. */
  sentLate(at_s: number): void {
    if (at_s <= this.record.intended_s) return;
    this.cancelTimeout();
    const left_ms = Math.max(0, this.timeout_ms - (this.run.timers.now_s() - at_s) * 1000);
    this.cancelTimeout = this.run.timers.arm(left_ms, () => this.abort(new TimeoutError(`no end within ${this.timeout_ms} ms of its send (after the client's queue)`)));
  }

  abort(reason: Error): void {
    if (this.finished) return;
    this.aborted = reason;
    if (this.controller) this.controller.abort(reason);
    else this.finish(classify(reason), reason.message); // still queued for a connection
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.aborted) {
      controller.abort(this.aborted);
      return;
    }
    const r = this.record;
    r.started_s = this.run.timers.now_s();
    const lag_ms = Math.max(0, (r.started_s - (r.dispatched_s ?? r.intended_s)) * 1000);
    recordMs(this.run.send_lag, lag_ms);
    if (lag_ms > this.run.max_send_lag_ms) this.run.late_sends++;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.record.first_byte_s = this.run.timers.now_s();
    this.record.status = statusCode;
    if (statusCode === 200 && this.run.stream) this.parser = new SseParser((data) => this.onEvent(data));
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.now_s = this.run.timers.now_s();
    if (this.parser) this.parser.push(chunk);
    else if (this.bodyBytes < 1 << 24) {
      this.body.push(chunk);
      this.bodyBytes += chunk.length;
    }
  }

  /** One SSE payload; every event of one read carries that read's arrival time. */
  private onEvent(data: string): void {
    const r = this.record;
    if (r.error) return;
    this.run.sse_events++;
    // Counting tokens needs the output's characters: the whole parse, only with --tokenizer.
    const chunk = this.run.tokenizer ? parseStreamChunk(data) : readStreamChunk(data);
    if (chunk.kind === 'done') {
      this.sawDone = true;
      return;
    }
    if (chunk.kind === 'error') {
      r.error = 'stream_error';
      r.message = chunk.message;
      return;
    }
    if (chunk.text.length > 0) {
      if (r.last_token_s === null) r.first_token_s = this.now_s;
      else {
        if (r.second_token_s === null) r.second_token_s = this.now_s;
        this.run.histograms.record('itl', (this.now_s - r.last_token_s) * 1000, this.steady);
      }
      r.last_token_s = this.now_s;
      r.chunks++;
      this.run.per_second.add('output_chunks', this.now_s);
      if (this.run.tokenizer) this.text += chunk.text;
    }
    if (chunk.usage?.completion_tokens !== undefined) {
      r.tokens = chunk.usage.completion_tokens;
      r.tokens_origin = 'usage';
    }
    if (chunk.usage?.prompt_tokens !== undefined) r.prompt_tokens = chunk.usage.prompt_tokens;
  }

  onResponseEnd(): void {
    const r = this.record;
    r.end_s = this.run.timers.now_s();
    if (r.status !== 200) return this.finish('http_status', Buffer.concat(this.body).toString('utf8', 0, ERROR_BODY_CHARS));
    if (this.parser) {
      if (r.tokens_origin === 'chunks') this.countTokens(r.chunks);
      if (r.error) return this.finish(r.error, r.message);
      if (!this.sawDone) return this.finish('truncated', 'the stream ended without [DONE]');
      return this.finish(null);
    }
    // Not streamed: the whole answer is the first and last token.
    try {
      const body = JSON.parse(Buffer.concat(this.body).toString()) as { usage?: { completion_tokens?: number; prompt_tokens?: number }; choices?: unknown[] };
      if (!Array.isArray(body.choices)) return this.finish('truncated', 'the body has no choices');
      r.first_token_s = r.end_s;
      r.last_token_s = r.end_s;
      r.chunks = 1;
      if (body.usage?.completion_tokens !== undefined) {
        r.tokens = body.usage.completion_tokens;
        r.tokens_origin = 'usage';
      } else {
        if (this.run.tokenizer) this.text = wholeText(body.choices);
        this.countTokens(1);
      }
      r.prompt_tokens = body.usage?.prompt_tokens ?? null;
      this.finish(null);
    } catch {
      this.finish('truncated', 'the body is not JSON');
    }
  }

  /** No usage from the server: our tokenizer over the output, else `chunks`. */
  private countTokens(chunks: number): void {
    const r = this.record;
    if (this.run.tokenizer) {
      r.tokens = this.run.tokenizer.count(this.text);
      r.tokens_origin = 'tokenizer';
    } else {
      r.tokens = chunks;
      r.tokens_origin = 'chunks';
    }
    this.text = '';
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.finish(classify(this.aborted ?? err), (this.aborted ?? err).message);
  }

  private finish(error: RequestErrorClass | null, message?: string): void {
    if (this.finished) return;
    this.finished = true;
    this.payload = null;
    this.cancelTimeout();
    const r = this.record;
    if (error) {
      r.error = error;
      if (message) r.message = message.slice(0, ERROR_BODY_CHARS);
    }
    r.end_s ??= this.run.timers.now_s();
    this.run.histograms.recordRequest(r, this.steady);
    if (r.error === null) {
      this.run.per_second.add('completed', r.end_s);
      this.run.per_second.add('output_tokens', r.end_s, r.tokens);
    } else this.run.per_second.add('failed', r.end_s);
    this.run.ended(this);
  }
}

/** The output of a whole (not streamed) response: its first choice's text or message content. */
function wholeText(choices: unknown[]): string {
  const c = choices[0] as { text?: unknown; message?: { content?: unknown } } | undefined;
  const t = c?.text ?? c?.message?.content;
  return typeof t === 'string' ? t : '';
}

/**
 * One `GET /v1/models` through the pool before the start, its answer read and dropped, any failure
 * ignored: a client's first request otherwise pays for compiling undici's code and left 8-12 ms
 * after its intended time, which the run then counted as its own lag.
 */
async function warmUp(pool: Pool, path: string, headers: Record<string, string>, timeout_ms: number): Promise<void> {
  try {
    const res = await pool.request({ path, method: 'GET', headers: headers.authorization ? { authorization: headers.authorization } : {}, headersTimeout: timeout_ms, bodyTimeout: timeout_ms });
    await res.body.dump();
  } catch {
    // An unreachable server shows in the requests that follow.
  }
}

/**
 * Drives an OpenAI-compatible streaming endpoint. Open loop: requests go at the times of an
 * absolute schedule (Poisson or evenly spaced, from one origin, as the pacer does for packets) and
 * every latency runs from that intended time, so a stalled client shows as its own send lag and
 * never hides the server's queue. Closed loop: `concurrency` lanes, each sending its next request
 * as its last one ends. Resolves when every request has ended; each is bounded.
 */
export async function runHttpLoad(o: HttpRunOptions): Promise<HttpRunResult> {
  if (o.requests === undefined && o.duration_s === undefined) throw new RangeError('a run needs --requests or --duration');
  if (o.load.mode === 'open' && !(o.load.rate_rps > 0)) throw new RangeError('the rate must be above 0 requests/s');
  const timers = o.timers ?? nodeTimerHost;
  const base = new URL(o.url);
  // Each request's bound is its own timer (it says which bound ran out); undici's are a backstop a
  // second later, so they never win the race with it and leave a request without its reason.
  const pool = new Pool(base.origin, {
    connections: o.max_connections,
    pipelining: 1,
    headersTimeout: o.request_timeout_ms + 1000,
    bodyTimeout: o.request_timeout_ms + 1000,
    connectTimeout: Math.min(o.request_timeout_ms, 10_000),
  });
  const path = `${base.pathname.replace(/\/$/, '')}${ENDPOINT_PATHS[o.endpoint]}`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: o.stream ? 'text/event-stream' : 'application/json' };
  if (o.api_key) headers.authorization = `Bearer ${o.api_key}`;
  const body = requestBodyTemplate({ endpoint: o.endpoint, model: o.model, max_tokens: o.max_tokens, stream: o.stream, ignore_eos: o.ignore_eos });

  await warmUp(pool, `${base.pathname.replace(/\/$/, '')}/v1/models`, headers, Math.min(o.request_timeout_ms, 5000));
  const loop = new LoopLagMonitor(10, timers).start();
  const cpu = new CpuMeter(timers);
  const origin_s = o.startGate ? await o.startGate() : timers.now_s() + (o.gate_margin_ms ?? 100) / 1000;
  const steady_from_s = origin_s + o.warmup_s;
  const end_s = o.duration_s === undefined ? Infinity : origin_s + o.duration_s;
  const limit = o.requests ?? Infinity;
  const rss = new RssMonitor(0, 1000, timers).start();
  rss.countFrom(steady_from_s);
  if (Number.isFinite(end_s)) rss.countUntil(end_s);
  const tally = new RequestTally();
  let made = 0;
  // Every request made and not yet ended (queued or sent); with --max-concurrency, the ones sent are
  // counted apart and the rest wait in order.
  const inFlight = new Set<OneRequest>();
  rss.watchLoad(() => inFlight.size);
  const cap = o.load.mode === 'open' ? (o.load.max_concurrency ?? Infinity) : Infinity;
  const queue: OneRequest[] = [];
  let queueHead = 0;
  let dispatched = 0;
  let stopped = false;
  let scheduledAll = false;
  let settle: () => void = () => undefined;
  const allEnded = new Promise<void>((resolve) => (settle = resolve));
  const checkEnd = () => {
    if ((scheduledAll || stopped) && inFlight.size === 0) settle();
  };

  const per_second = new PerSecond(origin_s);
  const goodput = o.goodput ? new GoodputTally(o.goodput) : null;
  const state: RunState = {
    timers,
    histograms: new LatencyHistograms(o.warmup_s > 0, Number.isFinite(cap)),
    send_lag: createUsHistogram(),
    max_send_lag_ms: o.max_send_lag_ms,
    late_sends: 0,
    sse_events: 0,
    steady_from_s,
    stream: o.stream,
    per_second,
    tokenizer: o.tokenizer,
    ended: (request) => {
      inFlight.delete(request);
      if (request.dispatched) {
        dispatched--;
        dispatchNext();
      }
      tally.add(request.record, steady_from_s);
      goodput?.add(request.record, request.record.intended_s >= steady_from_s);
      o.onRecord?.(request.record);
      if (o.load.mode === 'closed' && !stopped && !scheduledAll) queueMicrotask(() => next(timers.now_s()));
      checkEnd();
    },
  };

  o.onLive?.({ tally, latency: state.histograms.raw, late_sends: () => state.late_sends, in_flight: () => dispatched, loopLag: loop.histogram });

  /** Hands a request to the pool at `at_s` (its intended time, or when a place came free): from here its server latencies run. */
  function dispatch(request: OneRequest, at_s: number): void {
    dispatched++;
    request.dispatched = true;
    request.record.dispatched_s = at_s;
    request.sentLate(at_s);
    const text = request.payload as string;
    request.payload = null;
    pool.dispatch({ origin: base.origin, path, method: 'POST', headers, body: text }, request);
  }

  /** A place came free: the longest-waiting request still waiting goes (none once the run is stopped). */
  function dispatchNext(): void {
    while (!stopped && dispatched < cap && queueHead < queue.length) {
      const next = queue[queueHead++];
      if (queueHead > 1024 && queueHead * 2 > queue.length) {
        queue.splice(0, queueHead);
        queueHead = 0;
      }
      if (!next.finished) dispatch(next, timers.now_s());
    }
  }

  /** Sends the next request, meant for `intended_s`, or queues it behind --max-concurrency. */
  function send(intended_s: number): void {
    const record = newRecord(made++, intended_s);
    const prompt = o.prompts.next();
    record.prompt_tokens = prompt.tokens;
    per_second.add('offered', intended_s);
    const request = new OneRequest(record, state, intended_s >= steady_from_s, o.request_timeout_ms);
    inFlight.add(request);
    request.payload = body(prompt.text);
    if (dispatched < cap) dispatch(request, intended_s);
    else queue.push(request);
  }

  /** Whether one more request is due (count and time bounds). */
  const more = (intended_s: number) => made < limit && intended_s < end_s;

  function next(intended_s: number): void {
    if (stopped || scheduledAll) return;
    if (!more(intended_s)) {
      scheduledAll = true;
      checkEnd();
      return;
    }
    send(intended_s);
  }

  if (o.load.mode === 'open') {
    const scheduler = new DeadlineScheduler({ host: timers });
    const random = seeded(o.seed);
    const mean_s = 1 / o.load.rate_rps;
    const gap = o.load.arrivals === 'constant' ? () => mean_s : () => exponential(random, mean_s);
    // The first request goes at the origin; each later one at the previous intended time plus a gap.
    let cancelNext = (): void => undefined;
    const arm = (due_s: number) => {
      if (!more(due_s)) {
        scheduledAll = true;
        checkEnd();
        return;
      }
      cancelNext = scheduler.schedule(due_s, () => {
        send(due_s);
        arm(due_s + gap());
      });
    };
    arm(origin_s);
    void o.stop?.then(() => cancelNext());
  } else {
    const lanes = o.load.concurrency;
    timers.arm((origin_s - timers.now_s()) * 1000, () => {
      for (let i = 0; i < lanes; i++) next(origin_s);
    });
  }

  void o.stop?.then(() => {
    stopped = true;
    for (const request of inFlight) request.abort(new InterruptedError('interrupted before the response ended'));
    checkEnd();
  });

  await allEnded;
  loop.stop();
  rss.stop();
  const cpuFigures = cpu.figures();
  await pool.close().catch(() => undefined);
  const load: HttpLoadShape =
    o.load.mode === 'open'
      ? { mode: 'open', rate_rps: o.load.rate_rps, arrivals: o.load.arrivals, ...(Number.isFinite(cap) ? { max_concurrency: cap } : {}), endpoint: o.endpoint, stream: o.stream, max_tokens: o.max_tokens, prompts: o.prompts.describe, seed: o.seed }
      : { mode: 'closed', concurrency: o.load.concurrency, endpoint: o.endpoint, stream: o.stream, max_tokens: o.max_tokens, prompts: o.prompts.describe, seed: o.seed };
  const summary = httpSummary({
    tally,
    histograms: state.histograms,
    send_lag: state.send_lag,
    late_sends: state.late_sends,
    max_send_lag_ms: o.max_send_lag_ms,
    origin_s,
    steady_from_s,
    warmup_s: o.warmup_s,
    load,
    interrupted: stopped,
    sse_events: state.sse_events,
    loop: loop.figures(),
    cpu: cpuFigures,
    peak_rss_bytes: peakRssBytes(),
    rss: rss.figures(),
    timeline: per_second.done(),
    goodput: goodput ? { bounds: goodput.bounds, good: goodput.good, steady_good: goodput.steady_good } : undefined,
    tokenizer: o.tokenizer?.path,
  });
  return { summary, origin_s };
}
