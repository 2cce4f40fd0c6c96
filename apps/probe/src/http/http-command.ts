import { mkdir } from 'node:fs/promises';
import { EXIT, parseFlags, serverMetricsOptions, telemetryOptions, UsageError, type RunIo } from '@duplex-bench/cli';
import { datasetPrompts, firstModel, goodputText, loadTokenizer, parseGoodput, parseTokenCount, syntheticPrompts, type GoodputBounds, type HttpSummary, type LatencyMs, type PromptSource, type TokenCounter } from '@duplex-bench/http-load';
import { entryModule, LauncherLink } from '@duplex-bench/launcher';
import { launchRequests, runRequests, verdictLine, type HttpRunOptions, type RunVerdict } from '@duplex-bench/run';
import { HTTP_FLAGS } from './http-flags';
import { renderServerMetrics, rssGrowthText } from '../render';

type HttpFlags = ReturnType<typeof parseFlags<typeof HTTP_FLAGS>>;

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
export async function httpCommand(argv: string[], io: RunIo): Promise<number> {
  const f: HttpFlags = parseFlags(argv, HTTP_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if ((f.rate === undefined) === (f.concurrency === undefined)) throw new UsageError('give one of --rate R (open loop) or --concurrency N (closed loop)');
  if (f.requests === undefined && f.duration === undefined) throw new UsageError('give --requests N and/or --duration S: a run must end by itself');
  if (f.processes > 1 && f.concurrency !== undefined && f.concurrency < f.processes) throw new UsageError(`--concurrency ${f.concurrency} cannot be split over ${f.processes} processes`);
  if (f.processes > 1 && f.requests !== undefined && f.requests < f.processes) throw new UsageError(`--requests ${f.requests} cannot be split over ${f.processes} processes`);
  let base: URL;
  try {
    base = new URL(f.url);
  } catch {
    throw new UsageError(`--url: not a URL: "${f.url}"`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError(`--url must be http:// or https://, got ${base.protocol}`);
  // Telemetry flags are checked with the rest, before anything starts.
  telemetryOptions(f);
  serverMetricsOptions(f);
  if (f['server-metrics'] !== undefined && f.processes > 1) throw new UsageError('--server-metrics scrapes from one process: run it without --processes');
  if (f['max-concurrency'] !== undefined && f.rate === undefined) throw new UsageError('--max-concurrency caps an open loop (--rate); a closed loop has --concurrency');
  if (f.processes > 1 && f['max-concurrency'] !== undefined && f['max-concurrency'] < f.processes) throw new UsageError(`--max-concurrency ${f['max-concurrency']} cannot be split over ${f.processes} processes`);
  let goodput: GoodputBounds | undefined;
  if (f.goodput !== undefined) {
    const g = parseGoodput(f.goodput);
    if ('error' in g) throw new UsageError(`--goodput: ${g.error}`);
    goodput = g.bounds;
  }
  let tokenizer: TokenCounter | undefined;
  if (f.tokenizer !== undefined) {
    try {
      tokenizer = await loadTokenizer(f.tokenizer);
    } catch (err) {
      throw new UsageError(`--tokenizer: ${(err as Error).message}`);
    }
  }
  const count = parseTokenCount(f['input-tokens']);
  if (!count) throw new UsageError(`--input-tokens must be N or lognormal:MEAN,COV, got "${f['input-tokens']}"`);
  if (f.dataset !== undefined && argv.some((a) => a.startsWith('--input-tokens'))) throw new UsageError('--dataset and --input-tokens exclude each other');
  let prompts: PromptSource;
  try {
    prompts = f.dataset !== undefined ? await datasetPrompts(f.dataset) : syntheticPrompts(count, f.seed);
  } catch (err) {
    throw new UsageError(`--dataset: ${(err as Error).message}`);
  }
  const api_key = f['api-key'] ?? process.env.OPENAI_API_KEY;
  const headers: Record<string, string> = api_key ? { authorization: `Bearer ${api_key}` } : {};
  let model = f.model;
  if (model === undefined) {
    const found = await firstModel(f.url, headers);
    if ('error' in found) {
      io.stderr.write(`error: ${found.error}\n`);
      return EXIT.failed;
    }
    model = found.model;
  }
  try {
    await mkdir(f.output, { recursive: true });
  } catch (err) {
    io.stderr.write(`error: cannot create output directory ${f.output}: ${(err as Error).message}\n`);
    return EXIT.failed;
  }
  const options: HttpRunOptions = {
    url: f.url,
    endpoint: f.endpoint as HttpRunOptions['endpoint'],
    model,
    api_key,
    rate: f.rate,
    arrivals: f.arrivals as HttpRunOptions['arrivals'],
    concurrency: f.concurrency,
    max_concurrency: f['max-concurrency'],
    requests: f.requests,
    duration_s: f.duration,
    warmup_s: f['warmup-s'],
    stream: !f['no-stream'],
    max_tokens: f['max-tokens'],
    ignore_eos: f['ignore-eos'],
    seed: f.seed,
    output: f.output,
    vllm_result: f['vllm-result'],
    tokenizer_id: f.tokenizer,
    request_timeout_s: f['request-timeout-s'],
    max_connections: f['max-connections'],
    max_send_lag_ms: f['max-send-lag-ms'],
    allow_unqualified: f['allow-unqualified'],
    processes: f.processes,
    start_timeout_s: f['start-timeout-s'],
    module: MAIN,
    ...telemetryOptions(f),
    ...serverMetricsOptions(f),
  };
  if (f.processes > 1) return launchRequests(options, io, renderHttpSummary, goodput);
  const link = LauncherLink.inChild() ? new LauncherLink() : null;
  const code = await runRequests(options, prompts, io, renderHttpSummary, link, goodput, tokenizer);
  link?.done(code);
  return code;
}
