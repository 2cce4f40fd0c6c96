import { parseFlags, UsageError, type RunIo } from '@duplex-bench/cli';
import { goodputText, type HttpSummary, type LatencyMs } from '@duplex-bench/http-load';
import { entryModule } from '@duplex-bench/launcher';
import { httpRun, verdictLine, type RunVerdict, renderServerMetrics, rssGrowthText } from '@duplex-bench/run';
import { HTTP_FLAGS } from './http-flags';

/** What each child runs: the probe's `main` (dist/probe.js when built). */
const MAIN = entryModule(__dirname, '../main', 'probe');

const ms = (v: number | null): string => (v === null ? '-' : `${v.toFixed(1)}`);
const line = (name: string, l: LatencyMs): string =>
  `${name.padEnd(10)} p50 ${ms(l.p50)}  p90 ${ms(l.p90)}  p95 ${ms(l.p95)}  p99 ${ms(l.p99)}  p99.9 ${ms(l.p99_9)}  max ${ms(l.max)}  (n ${l.count})`;

const TOKEN_ORIGINS: Record<string, string> = {
  usage: "the server's usage",
  tokenizer: 'counted by --tokenizer: the server sent no usage',
  chunks: 'counted chunks: the server sent no usage',
  mixed: 'mixed: see tokens.by_origin',
};

/** The human summary; `more` go before the last line, which is the verdict (`verdictOf`). */
export function renderHttpSummary(s: HttpSummary, output: string, v: RunVerdict, more: string[] = []): string {
  const load = s.load.mode === 'open' ? `open loop, ${s.load.rate_rps} requests/s (${s.load.arrivals})` : `closed loop, ${s.load.concurrency} in flight`;
  const errors = Object.entries(s.requests.errors).map(([k, v]) => `${k} ${v}`).join(', ');
  const steadyNote = s.warmup_s > 0 ? `steady state (intended start >= ${s.warmup_s} s), ms:` : 'ms (no warm-up: steady = raw):';
  const c = s.client;
  return [
    `load: ${load}, ${s.load.endpoint}${s.load.stream ? ', streamed' : ''}, max_tokens ${s.load.max_tokens}; ${s.load.prompts}`,
    `requests: ${s.requests.sent} sent, ${s.requests.completed} completed, ${s.requests.failed} failed${errors ? ` (${errors})` : ''}; ${s.requests_per_s ?? '-'} requests/s, ${s.output_tokens_per_s ?? '-'} output tokens/s over ${s.window_s} s`,
    `output tokens: ${s.tokens.output} (${TOKEN_ORIGINS[s.tokens.origin] ?? s.tokens.origin}), mean ${s.tokens.output_mean ?? '-'} per request`,
    `server latency from ${s.load.max_concurrency ? "the end of each request's wait in the client's queue" : "each request's intended start"}, ${steadyNote}`,
    ...(['ttft', 'ttst', 'itl', 'tpot', 'e2e'] as const).map((k) => `  ${line(k.toUpperCase(), s.latency_ms[k].steady)}`),
    s.load.max_concurrency ? `  ${line('QUEUE', s.latency_ms.client_queue.steady)}  (client, on purpose: --max-concurrency ${s.load.max_concurrency})` : '',
    s.goodput
      ? `goodput (${goodputText(s.goodput.bounds)} ms): ${s.goodput.good} of ${s.requests.completed} completed requests good (${s.goodput.share === null ? '-' : (s.goodput.share * 100).toFixed(1)}%), ${s.goodput.request_goodput ?? '-'} requests/s`
      : '',
    s.warmup_s > 0 ? `  raw TTFT p99 ${ms(s.latency_ms.ttft.raw.p99)}, E2E p99 ${ms(s.latency_ms.e2e.raw.p99)} (every request)` : '',
    `client send lag (undici start - the time the client let it go): p50 ${ms(c.send_lag_ms.p50)} ms  p99 ${ms(c.send_lag_ms.p99)} ms  max ${ms(c.send_lag_ms.max)} ms; over ${c.max_send_lag_ms} ms: ${c.late_sends}`,
    `client: loop lag max ${c.event_loop_lag_ms.max ?? '-'} ms; CPU ${c.cpu_cores.total.toFixed(2)} cores (user ${c.cpu_cores.user.toFixed(2)}, system ${c.cpu_cores.system.toFixed(2)})${c.cpu_us_per_request ? `, ${c.cpu_us_per_request.toFixed(1)} µs per request` : ''}; peak RSS ${c.peak_rss_mib} MiB${rssGrowthText(c.rss)}; ${c.sse_events} SSE events`,
    ...(s.server_metrics ? renderServerMetrics(s.server_metrics) : []),
    `written to ${output}`,
    ...more,
    verdictLine(v, {
      interrupted: 'partial run',
      qualified: `every request left within ${c.max_send_lag_ms} ms of its intended time`,
      unqualified: `${s.unqualified_reason}; the run measured the client, not only the server`,
    }),
  ]
    .filter((l) => l !== '')
    .join('\n');
}

/** `http`: one process or a launcher of `--processes`; its summary and exit status. */

/** `probe http`: its flags parsed, the run composed, its summary rendered. Returns the exit status. */
export function httpCommand(argv: string[], io: RunIo): Promise<number> {
  const f = parseFlags(argv, HTTP_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  return httpRun(f, argv, io, renderHttpSummary, MAIN);
}
