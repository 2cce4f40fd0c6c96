import type { ServerMetricsSummary } from '@duplex-bench/telemetry';
import { createUsHistogram, encodeHistogram, recordMs, type CpuFigures, type Histogram, type LoopLagFigures, type RssFigures } from '@duplex-bench/metrics';
import type { GoodputBounds } from './goodput';
import type { RequestErrorClass, RequestRecord, TokensOrigin } from './request-record';

export interface GoodputFigures {
  bounds: GoodputBounds;
  /** Completed requests that met every bound, of all and of the steady ones. */
  good: number;
  steady_good: number;
  /** good / completed requests. */
  share: number | null;
  /** good / the window (first intended start to last end), requests/s. */
  request_goodput: number | null;
  steady_request_goodput: number | null;
}

/** Counts per second since the first intended start, growing as the run goes (one number a second each). */
export interface PerSecondSeries {
  bin_s: 1;
  offered: number[];
  completed: number[];
  failed: number[];
  output_chunks: number[];
  output_tokens: number[];
}

/** The run's per-second counts. */
export class PerSecond {
  readonly series: PerSecondSeries = { bin_s: 1, offered: [], completed: [], failed: [], output_chunks: [], output_tokens: [] };

  constructor(private readonly origin_s: number) {}

  add(key: Exclude<keyof PerSecondSeries, 'bin_s'>, at_s: number, n = 1): void {
    const i = Math.max(0, Math.floor(at_s - this.origin_s));
    const a = this.series[key];
    while (a.length <= i) a.push(0);
    a[i] += n;
  }

  /** Every series as long as the longest. */
  done(): PerSecondSeries {
    const s = this.series;
    const n = Math.max(s.offered.length, s.completed.length, s.failed.length, s.output_chunks.length, s.output_tokens.length);
    for (const a of [s.offered, s.completed, s.failed, s.output_chunks, s.output_tokens]) while (a.length < n) a.push(0);
    return s;
  }
}

/** HDR percentiles of a latency, in ms. */
export interface LatencyMs {
  count: number;
  mean: number | null;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
  p99_9: number | null;
  max: number | null;
}

/** Raw: every request; steady: those meant to start at or after the warm-up. */
export interface RawSteady {
  raw: LatencyMs;
  steady: LatencyMs;
}

/**
 * The figures kept as HDR histograms, each raw and steady. Latencies in ms: TTFT, TTST (first to
 * second output chunk, aiperf's time_to_second_token), ITL (between output chunks, vLLM's itl),
 * TPOT (first to last output over tokens - 1: vLLM's tpot, aiperf's inter_token_latency,
 * guidellm's inter_token_latency_ms), guidellm's time_per_output_token (TTFT included), E2E, first
 * byte, and with `--max-concurrency` the client's queue and E2E with it. Then one rate:
 * output tokens/s per request (aiperf's output_token_throughput_per_user, 1 / TPOT).
 */
export const LATENCIES = ['ttft', 'ttst', 'itl', 'tpot', 'time_per_output_token', 'e2e', 'first_byte', 'client_queue', 'e2e_including_queue'] as const;
export type LatencyName = (typeof LATENCIES)[number];
export const RATES = ['output_tokens_per_s_per_user'] as const;
export type RateName = (typeof RATES)[number];
export const FIGURES = [...LATENCIES, ...RATES] as const;
export type FigureName = LatencyName | RateName;

/** Histograms a run fills as it goes (ITL per chunk, as chunks arrive) and at each request's end. */
export class LatencyHistograms {
  readonly raw: Record<FigureName, Histogram> = newSet();
  readonly steady: Record<FigureName, Histogram>;

  /**
   * `warmup`: false when every request is steady (no warm-up): the two sets are then one.
   * `queued`: the run holds requests in a client queue (`--max-concurrency`), so its time is a figure.
   */
  constructor(
    warmup = true,
    private readonly queued = false,
  ) {
    this.steady = warmup ? newSet() : this.raw;
  }

  record(name: FigureName, value_ms: number, steady: boolean): void {
    recordMs(this.raw[name], value_ms);
    if (steady && this.steady !== this.raw) recordMs(this.steady[name], value_ms);
  }

  /**
   * A finished request's figures. TTFT, E2E and first byte run from the time the client let it go
   * (its intended start; with `--max-concurrency`, the end of its wait in the client's queue, as
   * vLLM's do), the queue itself is its own figure.
   */
  recordRequest(r: RequestRecord, steady: boolean): void {
    if (r.error !== null || r.end_s === null) return;
    const from = r.dispatched_s ?? r.intended_s;
    const ms = (to: number) => Math.max(0, (to - from) * 1000);
    if (r.first_byte_s !== null) this.record('first_byte', ms(r.first_byte_s), steady);
    if (r.first_token_s !== null) this.record('ttft', ms(r.first_token_s), steady);
    if (r.first_token_s !== null && r.second_token_s !== null) this.record('ttst', (r.second_token_s - r.first_token_s) * 1000, steady);
    this.record('e2e', ms(r.end_s), steady);
    if (this.queued) {
      this.record('client_queue', Math.max(0, (from - r.intended_s) * 1000), steady);
      this.record('e2e_including_queue', Math.max(0, (r.end_s - r.intended_s) * 1000), steady);
    }
    if (r.last_token_s !== null && r.tokens >= 1) this.record('time_per_output_token', ms(r.last_token_s) / r.tokens, steady);
    if (r.first_token_s !== null && r.last_token_s !== null && r.tokens >= 2) {
      const tpot = ((r.last_token_s - r.first_token_s) * 1000) / (r.tokens - 1);
      this.record('tpot', tpot, steady);
      // Held under the histogram's top (3.6e6): a max-throughput stub's TPOT can be a few ns.
      if (tpot > 0) this.record('output_tokens_per_s_per_user', Math.min(1000 / tpot, 3.6e6), steady);
    }
  }

  figures(): Record<LatencyName, RawSteady> {
    const out = {} as Record<LatencyName, RawSteady>;
    for (const name of LATENCIES) out[name] = { raw: latencyMs(this.raw[name]), steady: latencyMs(this.steady[name]) };
    return out;
  }

  rates(): Record<RateName, RawSteady> {
    const out = {} as Record<RateName, RawSteady>;
    for (const name of RATES) out[name] = { raw: latencyMs(this.raw[name]), steady: latencyMs(this.steady[name]) };
    return out;
  }

  encoded(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of FIGURES) {
      out[`${name}_raw`] = encodeHistogram(this.raw[name]);
      out[`${name}_steady`] = encodeHistogram(this.steady[name]);
    }
    return out;
  }
}

function newSet(): Record<FigureName, Histogram> {
  return Object.fromEntries(FIGURES.map((name) => [name, createUsHistogram()])) as Record<FigureName, Histogram>;
}

const roundUs = (us: number): number => Math.round(us) / 1000;

export function latencyMs(h: Histogram): LatencyMs {
  const count = h.totalCount;
  if (count === 0) return { count, mean: null, p50: null, p90: null, p95: null, p99: null, p99_9: null, max: null };
  const max = h.maxValue;
  const at = (p: number) => roundUs(Math.min(h.getValueAtPercentile(p), max));
  return { count, mean: roundUs(h.mean), p50: at(50), p90: at(90), p95: at(95), p99: at(99), p99_9: at(99.9), max: roundUs(max) };
}

export interface HttpLoadShape {
  mode: 'open' | 'closed';
  /** Open loop: requests per second asked for, and how arrivals are spaced. */
  rate_rps?: number;
  arrivals?: 'poisson' | 'constant';
  /** Closed loop: requests in flight. */
  concurrency?: number;
  /** Open loop with `--max-concurrency`: requests past this many in flight wait in the client's queue. */
  max_concurrency?: number;
  endpoint: 'chat' | 'completions';
  stream: boolean;
  max_tokens: number;
  prompts: string;
  seed: number;
}

export interface HttpSummary {
  kind: 'http';
  qualified: boolean;
  /** Why not, when not. */
  unqualified_reason: string | null;
  interrupted: boolean;
  load: HttpLoadShape;
  warmup_s: number;
  requests: {
    sent: number;
    completed: number;
    failed: number;
    steady: number;
    errors: Partial<Record<RequestErrorClass, number>>;
    statuses: Record<string, number>;
  };
  /** From the first intended start to the last end, s. */
  window_s: number;
  requests_per_s: number | null;
  output_tokens_per_s: number | null;
  steady_requests_per_s: number | null;
  steady_output_tokens_per_s: number | null;
  tokens: {
    output: number;
    /** Which count was used: the server's usage, our `--tokenizer` over the output text, counted chunks; `mixed` when requests differed. */
    origin: TokensOrigin | 'mixed' | 'none';
    /** Requests by the count used. */
    by_origin: Partial<Record<TokensOrigin, number>>;
    /** `--tokenizer`: the tokenizer.json used when the server sent no usage. */
    tokenizer?: string;
    output_mean: number | null;
    prompt_mean: number | null;
  };
  /** Each latency, ms; `inter_token_latency` is `tpot` under aiperf's (and guidellm's) name. */
  latency_ms: Record<LatencyName | 'inter_token_latency', RawSteady>;
  /** Per request: output tokens/s after the first (1000 / TPOT ms), aiperf's output_token_throughput_per_user. */
  output_tokens_per_s_per_user: RawSteady;
  /** `--goodput`: requests that completed within every bound, their share and their rate (vLLM's request_goodput). */
  goodput?: GoodputFigures;
  /** Per second since the first intended start: offered (intended starts), completed, failed, output chunks received, output tokens of the requests that ended. */
  timeline: PerSecondSeries;
  client: {
    /** Actual start − intended start of every request sent. */
    send_lag_ms: LatencyMs;
    /** Bound on send lag for a qualified run, and the requests past it. */
    max_send_lag_ms: number;
    late_sends: number;
    event_loop_lag_ms: LoopLagFigures;
    cpu_cores: CpuFigures;
    cpu_us_per_request: number | null;
    peak_rss_mib: number;
    /** Resident memory each second and its growth after the warm-up (MiB per minute): flat for a run of hours. */
    rss?: RssFigures;
    sse_events: number;
  };
  measurement_origin: Record<string, string>;
  /** `--server-metrics`: the server's own latency histograms over the run, beside the client's figures. */
  server_metrics?: ServerMetricsSummary;
  histograms: Record<string, string>;
}

/**
 * What the summary keeps of the requests that ended: counts, sums and the last end, nothing per
 * request (each record goes to requests.jsonl as it ends), so a run of hours holds no more memory
 * than a run of seconds.
 */
export class RequestTally {
  /** Requests that ended, sent or not. */
  ended = 0;
  sent = 0;
  completed = 0;
  steady = 0;
  readonly errors: Partial<Record<RequestErrorClass, number>> = {};
  readonly statuses: Record<string, number> = {};
  last_end_s = -Infinity;
  tokens = 0;
  steady_tokens = 0;
  readonly origins = new Set<TokensOrigin>();
  readonly by_origin: Partial<Record<TokensOrigin, number>> = {};
  prompt_sum = 0;
  prompts = 0;

  /** A request that ended; `steady_from_s` splits the steady ones off. */
  add(r: RequestRecord, steady_from_s: number): void {
    this.ended++;
    if (r.started_s !== null) this.sent++;
    if (r.error) this.errors[r.error] = (this.errors[r.error] ?? 0) + 1;
    if (r.status !== null) this.statuses[r.status] = (this.statuses[r.status] ?? 0) + 1;
    if (r.error !== null || r.end_s === null) return;
    this.completed++;
    if (r.end_s > this.last_end_s) this.last_end_s = r.end_s;
    this.tokens += r.tokens;
    this.origins.add(r.tokens_origin);
    this.by_origin[r.tokens_origin] = (this.by_origin[r.tokens_origin] ?? 0) + 1;
    if (r.prompt_tokens !== null) {
      this.prompt_sum += r.prompt_tokens;
      this.prompts++;
    }
    if (r.intended_s >= steady_from_s) {
      this.steady++;
      this.steady_tokens += r.tokens;
    }
  }
}

export interface SummaryInputs {
  tally: RequestTally;
  histograms: LatencyHistograms;
  send_lag: Histogram;
  late_sends: number;
  max_send_lag_ms: number;
  origin_s: number;
  steady_from_s: number;
  warmup_s: number;
  load: HttpLoadShape;
  interrupted: boolean;
  sse_events: number;
  loop: LoopLagFigures;
  cpu: CpuFigures;
  peak_rss_bytes: number;
  rss: RssFigures;
  timeline: PerSecondSeries;
  goodput?: { bounds: GoodputBounds; good: number; steady_good: number };
  tokenizer?: string;
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

/** Where the server's latencies start. */
const FROM = "the time the client let the request go (its intended start in the schedule; with --max-concurrency, the end of its wait in the client's queue)";

/** The latencies, and tpot again under aiperf's name. */
export function withAliases(l: Record<LatencyName, RawSteady>): HttpSummary['latency_ms'] {
  return { ...l, inter_token_latency: l.tpot };
}

export function goodputFigures(g: { bounds: GoodputBounds; good: number; steady_good: number }, completed: number, window_s: number, steady_window_s: number): GoodputFigures {
  return {
    bounds: g.bounds,
    good: g.good,
    steady_good: g.steady_good,
    share: completed > 0 ? Math.round((g.good / completed) * 1e6) / 1e6 : null,
    request_goodput: window_s > 0 ? r3(g.good / window_s) : null,
    steady_request_goodput: steady_window_s > 0 ? r3(g.steady_good / steady_window_s) : null,
  };
}

export function httpSummary(i: SummaryInputs): HttpSummary {
  const t = i.tally;
  const lastEnd = Math.max(t.last_end_s, i.origin_s);
  const window_s = lastEnd - i.origin_s;
  const steadyWindow = lastEnd - i.steady_from_s;
  const { tokens, origins } = t;
  const cpu_s = i.cpu.cpu_s;
  let reason: string | null = null;
  if (i.late_sends > 0) reason = `${i.late_sends} request(s) started more than ${i.max_send_lag_ms} ms after their intended time (or, with --max-concurrency, after leaving the client's queue): the client fell behind its schedule`;
  else if (t.sent === 0) reason = 'no request was sent';
  return {
    kind: 'http',
    qualified: reason === null,
    unqualified_reason: reason,
    interrupted: i.interrupted,
    load: i.load,
    warmup_s: i.warmup_s,
    requests: { sent: t.sent, completed: t.completed, failed: t.ended - t.completed, steady: t.steady, errors: t.errors, statuses: t.statuses },
    window_s: r3(window_s),
    requests_per_s: window_s > 0 ? r3(t.completed / window_s) : null,
    output_tokens_per_s: window_s > 0 ? r3(tokens / window_s) : null,
    steady_requests_per_s: steadyWindow > 0 ? r3(t.steady / steadyWindow) : null,
    steady_output_tokens_per_s: steadyWindow > 0 ? r3(t.steady_tokens / steadyWindow) : null,
    tokens: {
      output: tokens,
      origin: origins.size === 0 ? 'none' : origins.size > 1 ? 'mixed' : [...origins][0],
      by_origin: t.by_origin,
      ...(i.tokenizer ? { tokenizer: i.tokenizer } : {}),
      output_mean: t.completed > 0 ? r3(tokens / t.completed) : null,
      prompt_mean: t.prompts > 0 ? r3(t.prompt_sum / t.prompts) : null,
    },
    latency_ms: withAliases(i.histograms.figures()),
    output_tokens_per_s_per_user: i.histograms.rates().output_tokens_per_s_per_user,
    ...(i.goodput ? { goodput: goodputFigures(i.goodput, t.completed, window_s, steadyWindow) } : {}),
    timeline: i.timeline,
    client: {
      send_lag_ms: latencyMs(i.send_lag),
      max_send_lag_ms: i.max_send_lag_ms,
      late_sends: i.late_sends,
      event_loop_lag_ms: i.loop,
      cpu_cores: i.cpu,
      cpu_us_per_request: cpu_s !== undefined && t.sent > 0 ? Math.round((cpu_s / t.sent) * 1e7) / 10 : null,
      peak_rss_mib: Math.round(i.peak_rss_bytes / 2 ** 20),
      rss: i.rss,
      sse_events: i.sse_events,
    },
    measurement_origin: {
      ttft: `server: ${FROM} to the first chunk that carried output, as received (aiperf time_to_first_token, guidellm time_to_first_token_ms; vLLM's ttft counts from its send and its first chunk with choices)`,
      ttst: "server: the first chunk that carried output to the second, per request (aiperf's time_to_second_token)",
      itl: "server: between successive chunks that carried output, within one request, as received: one value per chunk (vLLM's itl; aiperf's inter_chunk_latency is one request's mean of these)",
      tpot: "server: (last output chunk - first output chunk) / (output tokens - 1) per request (vLLM's tpot, aiperf's inter_token_latency, guidellm's inter_token_latency_ms); tokens as tokens.origin says",
      inter_token_latency: "the same per-request figure as tpot, under aiperf's name (a per-chunk interval is itl)",
      time_per_output_token: `server: ${FROM} to the last output chunk over output tokens, per request: guidellm's time_per_output_token_ms, which includes the TTFT`,
      e2e: `server: ${FROM} to the end of the response`,
      first_byte: `server: ${FROM} to the response headers`,
      client_queue: 'client, on purpose: --max-concurrency: intended start to the time a place came free (vLLM client_queue_time); recorded only with --max-concurrency',
      e2e_including_queue: "--max-concurrency: intended start to the end of the response, the client's queue included (vLLM e2el_including_client_queue)",
      output_tokens_per_s_per_user: "server: per request, 1000 / TPOT ms, output tokens/s after the first (aiperf's output_token_throughput_per_user); requests of two or more tokens",
      goodput: 'completed requests whose TTFT, TPOT (0 for one token) and E2E, as this summary defines them, are each at or under its --goodput bound (vLLM --goodput rule), over completed requests and per second of the window',
      timeline: 'per second since the first intended start: intended starts (offered), completions and failures by their end, output chunks by their arrival, output tokens of each request at its end',
      send_lag_ms: "client: undici's request start (the request handed to a connection) minus the time the client let it go (its intended start, or the end of its --max-concurrency queue); the client's own delay, never the server's",
      steady: `requests meant to start at or after ${i.warmup_s} s (--warmup-s) into the run`,
      requests_per_s: 'completed requests over the window from the first intended start to the last end',
      cpu_cores: 'client process CPU seconds (user, system) per wall second of the run',
      cpu_us_per_request: 'client process CPU seconds over requests sent, µs',
      rss: 'client process: resident set size (process.memoryUsage.rss) sampled each second; growth_mib_per_min is the least-squares slope of the samples from warmup_s after the first intended start to the last (--duration), the drain after it left out; late_growth_mib_per_min is the same slope over the second half of those samples (from late_from_s), which a rise that levels off leaves flat; in_flight_peak_at_from and in_flight_peak are the most requests in flight in a once-a-second sample up to from_s and up to the end (memory kept for the most in flight at once is reused, not given back, so RSS follows that high-water mark up: growth the traffic made, not a leak); held_growth_mib_per_min is the slope from held_from_s, the 10 s bin after the peak last rose, while it held',
    },
    histograms: { ...i.histograms.encoded(), send_lag: encodeHistogram(i.send_lag) },
  };
}
