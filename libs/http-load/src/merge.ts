import { createUsHistogram, decodeHistogram, encodeHistogram, mergeHistograms, type CpuFigures } from '@duplex-bench/metrics';
import { FIGURES, goodputFigures, LATENCIES, latencyMs, RATES, withAliases, type HttpSummary, type LatencyName, type PerSecondSeries, type RateName, type RawSteady } from './http-summary';

/** Per-second series of processes on one gate, added second by second. */
function sumSeries(parts: Array<PerSecondSeries | undefined>): PerSecondSeries {
  const out: PerSecondSeries = { bin_s: 1, offered: [], completed: [], failed: [], output_chunks: [], output_tokens: [] };
  // A summary written before the per-second counts existed adds none.
  for (const p of parts) {
    if (!p) continue;
    for (const key of ['offered', 'completed', 'failed', 'output_chunks', 'output_tokens'] as const) {
      p[key].forEach((v, i) => (out[key][i] = (out[key][i] ?? 0) + v));
    }
  }
  const n = Math.max(...(['offered', 'completed', 'failed', 'output_chunks', 'output_tokens'] as const).map((k) => out[k].length));
  for (const key of ['offered', 'completed', 'failed', 'output_chunks', 'output_tokens'] as const) while (out[key].length < n) out[key].push(0);
  return out;
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

function sumCounts<K extends string>(parts: Array<Partial<Record<K, number>>>): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const part of parts) for (const [k, v] of Object.entries(part) as Array<[K, number]>) out[k] = (out[k] ?? 0) + v;
  return out;
}

/**
 * One summary of the processes of one launched run, all started at one gate: counts add up,
 * percentiles come from the merged histograms (never averaged), requests/s is the sum over the
 * longest window, and the run is qualified only when every process was.
 */
export function mergeHttpSummaries(parts: HttpSummary[]): HttpSummary & { processes: number; cpu_cores_per_process: CpuFigures[] } {
  if (parts.length === 0) throw new RangeError('nothing to merge');
  const keys = [...FIGURES.flatMap((n) => [`${n}_raw`, `${n}_steady`]), 'send_lag'];
  // A summary written before a figure existed has no histogram of it: it adds nothing.
  const merged = Object.fromEntries(keys.map((key) => [key, mergeHistograms(parts.map((p) => (p.histograms[key] ? decodeHistogram(p.histograms[key]) : createUsHistogram())))]));
  const latency = {} as Record<LatencyName, RawSteady>;
  for (const name of LATENCIES) latency[name] = { raw: latencyMs(merged[`${name}_raw`]), steady: latencyMs(merged[`${name}_steady`]) };
  const rates = {} as Record<RateName, RawSteady>;
  for (const name of RATES) rates[name] = { raw: latencyMs(merged[`${name}_raw`]), steady: latencyMs(merged[`${name}_steady`]) };
  const byOrigin: HttpSummary['tokens']['by_origin'] = sumCounts(parts.map((p) => p.tokens.by_origin ?? {}));
  // Goodput pools only when every process counted it: a share over all completed requests needs every part's good ones.
  const goodParts = parts.every((p) => p.goodput !== undefined) ? parts.map((p) => p.goodput as NonNullable<HttpSummary['goodput']>) : [];
  const sendLag = merged.send_lag;
  const window_s = Math.max(...parts.map((p) => p.window_s));
  const steadyWindow = window_s - parts[0].warmup_s;
  const completed = parts.reduce((a, p) => a + p.requests.completed, 0);
  const steady = parts.reduce((a, p) => a + p.requests.steady, 0);
  const tokens = parts.reduce((a, p) => a + p.tokens.output, 0);
  // Steady tokens are not kept per process; they are the steady share of each process's tokens/s times its window.
  const steadyTokens = parts.reduce((a, p) => a + (p.steady_output_tokens_per_s ?? 0) * Math.max(0, p.window_s - p.warmup_s), 0);
  const origins = new Set(parts.map((p) => p.tokens.origin).filter((o) => o !== 'none'));
  const cpu = parts.map((p) => p.client.cpu_cores);
  const cpu_s = cpu.reduce((a, c) => a + (c.cpu_s ?? 0), 0);
  const sent = parts.reduce((a, p) => a + p.requests.sent, 0);
  const late = parts.reduce((a, p) => a + p.client.late_sends, 0);
  const unqualified = parts.map((p, i) => (p.unqualified_reason ? `process ${i}: ${p.unqualified_reason}` : null)).filter((r): r is string => r !== null);
  const withPrompt = parts.filter((p) => p.tokens.prompt_mean !== null);
  const load = { ...parts[0].load };
  if (load.mode === 'open') {
    load.rate_rps = r3(parts.reduce((a, p) => a + (p.load.rate_rps ?? 0), 0));
    if (load.max_concurrency !== undefined) load.max_concurrency = parts.reduce((a, p) => a + (p.load.max_concurrency ?? 0), 0);
  } else load.concurrency = parts.reduce((a, p) => a + (p.load.concurrency ?? 0), 0);
  const maxOf = (f: (p: HttpSummary) => number | null) => parts.reduce<number | null>((m, p) => (f(p) === null ? m : Math.max(m ?? 0, f(p) as number)), null);
  return {
    kind: 'http',
    processes: parts.length,
    qualified: unqualified.length === 0,
    unqualified_reason: unqualified.length > 0 ? unqualified.join('; ') : null,
    interrupted: parts.some((p) => p.interrupted),
    load,
    warmup_s: parts[0].warmup_s,
    requests: {
      sent,
      completed,
      failed: parts.reduce((a, p) => a + p.requests.failed, 0),
      steady,
      errors: sumCounts(parts.map((p) => p.requests.errors)),
      statuses: sumCounts(parts.map((p) => p.requests.statuses)) as Record<string, number>,
    },
    window_s: r3(window_s),
    requests_per_s: window_s > 0 ? r3(completed / window_s) : null,
    output_tokens_per_s: window_s > 0 ? r3(tokens / window_s) : null,
    steady_requests_per_s: steadyWindow > 0 ? r3(steady / steadyWindow) : null,
    steady_output_tokens_per_s: steadyWindow > 0 ? r3(steadyTokens / steadyWindow) : null,
    tokens: {
      output: tokens,
      origin: origins.size === 0 ? 'none' : origins.size === 1 ? [...origins][0] : 'mixed',
      by_origin: byOrigin,
      ...(parts[0].tokens.tokenizer ? { tokenizer: parts[0].tokens.tokenizer } : {}),
      output_mean: completed > 0 ? r3(tokens / completed) : null,
      prompt_mean: withPrompt.length > 0 ? r3(withPrompt.reduce((a, p) => a + (p.tokens.prompt_mean as number) * p.requests.completed, 0) / Math.max(1, withPrompt.reduce((a, p) => a + p.requests.completed, 0))) : null,
    },
    latency_ms: withAliases(latency),
    output_tokens_per_s_per_user: rates.output_tokens_per_s_per_user,
    ...(goodParts.length > 0
      ? {
          goodput: goodputFigures(
            { bounds: goodParts[0].bounds, good: goodParts.reduce((a, g) => a + g.good, 0), steady_good: goodParts.reduce((a, g) => a + g.steady_good, 0) },
            completed,
            window_s,
            steadyWindow,
          ),
        }
      : {}),
    timeline: sumSeries(parts.map((p) => p.timeline)),
    client: {
      send_lag_ms: latencyMs(sendLag),
      max_send_lag_ms: parts[0].client.max_send_lag_ms,
      late_sends: late,
      event_loop_lag_ms: { ...parts[0].client.event_loop_lag_ms, max: maxOf((p) => p.client.event_loop_lag_ms.max), over_80ms: parts.reduce((a, p) => a + p.client.event_loop_lag_ms.over_80ms, 0) },
      cpu_cores: {
        user: r3(cpu.reduce((a, c) => a + c.user, 0)),
        system: r3(cpu.reduce((a, c) => a + c.system, 0)),
        total: r3(cpu.reduce((a, c) => a + c.total, 0)),
        cpu_s: Math.round(cpu_s * 1e6) / 1e6,
        wall_s: Math.max(...cpu.map((c) => c.wall_s ?? 0)),
      },
      cpu_us_per_request: sent > 0 ? Math.round((cpu_s / sent) * 1e7) / 10 : null,
      peak_rss_mib: Math.max(...parts.map((p) => p.client.peak_rss_mib)),
      sse_events: parts.reduce((a, p) => a + p.client.sse_events, 0),
    },
    cpu_cores_per_process: cpu,
    measurement_origin: {
      ...parts[0].measurement_origin,
      merge: `${parts.length} processes started at one gate on the host's monotonic clock: counts summed, percentiles from merged HDR histograms, requests/s over the longest window, CPU summed over processes`,
    },
    histograms: Object.fromEntries(keys.map((key) => [key, encodeHistogram(merged[key])])),
  };
}
