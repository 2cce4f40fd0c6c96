import type { ServerMetricsSummary } from '@duplex-bench/telemetry';
import { createUsHistogram, encodeHistogram, recordMs, type CpuFigures, type Histogram, type LoopLagFigures, type RssFigures } from '@duplex-bench/metrics';
import type { RequestErrorClass, RequestRecord } from './request-record';

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

export const LATENCIES = ['ttft', 'itl', 'tpot', 'e2e', 'first_byte'] as const;
export type LatencyName = (typeof LATENCIES)[number];

/** Histograms a run fills as it goes (ITL per chunk, as chunks arrive) and at each request's end. */
export class LatencyHistograms {
  readonly raw: Record<LatencyName, Histogram> = newSet();
  readonly steady: Record<LatencyName, Histogram>;

  /** `warmup`: false when every request is steady (no warm-up): the two sets are then one. */
  constructor(warmup = true) {
    this.steady = warmup ? newSet() : this.raw;
  }

  record(name: LatencyName, value_ms: number, steady: boolean): void {
    recordMs(this.raw[name], value_ms);
    if (steady && this.steady !== this.raw) recordMs(this.steady[name], value_ms);
  }

  /** A finished request's TTFT, TPOT, E2E and first byte, from its intended start. */
  recordRequest(r: RequestRecord, steady: boolean): void {
    if (r.error !== null || r.end_s === null) return;
    const ms = (to: number) => Math.max(0, (to - r.intended_s) * 1000);
    if (r.first_byte_s !== null) this.record('first_byte', ms(r.first_byte_s), steady);
    if (r.first_token_s !== null) this.record('ttft', ms(r.first_token_s), steady);
    this.record('e2e', ms(r.end_s), steady);
    if (r.first_token_s !== null && r.last_token_s !== null && r.tokens >= 2) {
      this.record('tpot', ((r.last_token_s - r.first_token_s) * 1000) / (r.tokens - 1), steady);
    }
  }

  figures(): Record<LatencyName, RawSteady> {
    const out = {} as Record<LatencyName, RawSteady>;
    for (const name of LATENCIES) out[name] = { raw: latencyMs(this.raw[name]), steady: latencyMs(this.steady[name]) };
    return out;
  }

  encoded(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of LATENCIES) {
      out[`${name}_raw`] = encodeHistogram(this.raw[name]);
      out[`${name}_steady`] = encodeHistogram(this.steady[name]);
    }
    return out;
  }
}

function newSet(): Record<LatencyName, Histogram> {
  return { ttft: createUsHistogram(), itl: createUsHistogram(), tpot: createUsHistogram(), e2e: createUsHistogram(), first_byte: createUsHistogram() };
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
  tokens: { output: number; origin: 'usage' | 'chunks' | 'mixed' | 'none'; output_mean: number | null; prompt_mean: number | null };
  latency_ms: Record<LatencyName, RawSteady>;
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
  readonly origins = new Set<RequestRecord['tokens_origin']>();
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
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

export function httpSummary(i: SummaryInputs): HttpSummary {
  const t = i.tally;
  const lastEnd = Math.max(t.last_end_s, i.origin_s);
  const window_s = lastEnd - i.origin_s;
  const steadyWindow = lastEnd - i.steady_from_s;
  const { tokens, origins } = t;
  const cpu_s = i.cpu.cpu_s;
  let reason: string | null = null;
  if (i.late_sends > 0) reason = `${i.late_sends} request(s) started more than ${i.max_send_lag_ms} ms after their intended time: the client fell behind its schedule`;
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
      origin: origins.size === 0 ? 'none' : origins.size === 2 ? 'mixed' : [...origins][0],
      output_mean: t.completed > 0 ? r3(tokens / t.completed) : null,
      prompt_mean: t.prompts > 0 ? r3(t.prompt_sum / t.prompts) : null,
    },
    latency_ms: i.histograms.figures(),
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
      ttft: 'server: intended start of the request (its slot in the schedule) to the first chunk that carried output, as received',
      itl: 'server: between successive chunks that carried output, within one request, as received',
      tpot: "server: (last output chunk - first output chunk) / (output tokens - 1) per request; tokens from the server's usage where it sent one, else chunks",
      e2e: 'server: intended start to the end of the response',
      first_byte: 'server: intended start to the response headers',
      send_lag_ms: "client: undici's request start (the request handed to a connection) minus its intended start; the client's own delay, never the server's",
      steady: `requests meant to start at or after ${i.warmup_s} s (--warmup-s) into the run`,
      requests_per_s: 'completed requests over the window from the first intended start to the last end',
      cpu_cores: 'client process CPU seconds (user, system) per wall second of the run',
      cpu_us_per_request: 'client process CPU seconds over requests sent, µs',
      rss: 'client process: resident set size (process.memoryUsage.rss) sampled each second; growth_mib_per_min is the least-squares slope of the samples from warmup_s after the first intended start to the last (--duration), the drain after it left out',
    },
    histograms: { ...i.histograms.encoded(), send_lag: encodeHistogram(i.send_lag) },
  };
}
