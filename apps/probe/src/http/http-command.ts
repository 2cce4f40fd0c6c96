import { mkdir, writeFile } from 'node:fs/promises';
import { EXIT, Interrupts, parseFlags, serverMetricsOptions, telemetryOptions, UsageError, type RunIo } from '@duplex-bench/cli';
import {
  datasetPrompts,
  firstModel,
  goodputText,
  launchHttpProcesses,
  loadTokenizer,
  parseGoodput,
  parseTokenCount,
  runHttpLoad,
  syntheticPrompts,
  vllmResult,
  type GoodputBounds,
  type HttpLiveView,
  type HttpLoad,
  type HttpSummary,
  type LatencyMs,
  type PromptSource,
  type TokenCounter,
} from '@duplex-bench/http-load';
import { join } from 'node:path';
import { CHILD_ENV, describeHost, entryModule, LauncherLink, projectRevision } from '@duplex-bench/launcher';
import { createUsHistogram } from '@duplex-bench/metrics';
import { besideClient, clientFamilies, exposeMetrics, httpFamilies, OtlpPush, ServerMetricsScraper, type ClientFigure, type Family, type MetricsEndpoint, type ServerFigureKind } from '@duplex-bench/telemetry';
import { nodeTimerHost } from '@duplex-bench/pacer';
import { redactArgv } from '@duplex-bench/run';
import { exitOf } from '@duplex-bench/run';
import { verdictLine, verdictOf, withVerdict, type RunVerdict } from '@duplex-bench/run';
import { RUN_FILES, runFile, TRACE_LAYOUT } from '@duplex-bench/results';
import { TraceWriter } from '@duplex-bench/tracer';
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
  if (f.processes > 1) return launchHttp(f, model, api_key, io, goodput);
  const link = LauncherLink.inChild() ? new LauncherLink() : null;
  const code = await runOne(f, model, api_key, prompts, io, link, goodput, tokenizer);
  link?.done(code);
  return code;
}

/** One process's run (alone, or one of a launched run's children: then it starts at the launcher's gate). */
async function runOne(f: HttpFlags, model: string, api_key: string | undefined, prompts: PromptSource, io: RunIo, link: LauncherLink | null, goodput?: GoodputBounds, tokenizer?: TokenCounter): Promise<number> {
  const load: HttpLoad =
    f.rate !== undefined
      ? { mode: 'open', rate_rps: f.rate, arrivals: f.arrivals as 'poisson' | 'constant', ...(f['max-concurrency'] !== undefined ? { max_concurrency: f['max-concurrency'] } : {}) }
      : { mode: 'closed', concurrency: f.concurrency as number };
  const epoch_ms = Date.now(); // only to map the monotonic clock to wall time in run.json
  let interrupt: () => void = () => undefined;
  const stop = new Promise<void>((resolve) => (interrupt = resolve));
  const signals = new Interrupts(io, 'no new requests; those in flight end as interrupted; writing the summary', interrupt);
  // Each request's record goes to requests.jsonl in the writer thread as it ends: the run keeps only counters and histograms.
  const writer = new TraceWriter({ root: f.output, layout: TRACE_LAYOUT, mode: 'off' });
  const telemetry = telemetryOptions(f);
  const serverMetrics = serverMetricsOptions(f).server_metrics;
  const say = (line: string) => io.stderr.write(`${line}\n`);
  let live: HttpLiveView | null = null;
  let endpoint: MetricsEndpoint | null = null;
  let stopScraper: () => Promise<void> | undefined = () => undefined;
  let push: OtlpPush | null = null;
  const closePush = async () => {
    const p = push;
    push = null;
    const r = await p?.close();
    if (r && r.failures > 0) say(`otlp: ${r.failures} push(es) failed, ${r.exports} delivered (first: ${r.first_failure})`);
  };
  try {
    try {
      await writeFile(runFile(f.output, 'requests'), '');
      await writer.started();
    } catch (err) {
      io.stderr.write(`error: ${(err as Error).message}\n`);
      return EXIT.failed;
    }
    const families = liveHttpFamilies(() => live);
    const labels = { command: 'http', protocol: 'http', process: process.env[CHILD_ENV] ?? '0' };
    if (telemetry.metrics_port !== undefined) {
      try {
        endpoint = await exposeMetrics({ port: telemetry.metrics_port, labels, say, families });
      } catch (err) {
        io.stderr.write(`error: ${(err as Error).message}\n`);
        return EXIT.failed;
      }
    }
    if (telemetry.otlp) {
      // The GenAI conventions' attributes of a client's chat or completion calls to an OpenAI-compatible API.
      const server = new URL(f.url);
      const genai = {
        'gen_ai.operation.name': f.endpoint === 'chat' ? 'chat' : 'text_completion',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': model,
        'server.address': server.hostname,
        'server.port': Number(server.port || (server.protocol === 'https:' ? 443 : 80)),
      };
      push = await OtlpPush.start({ endpoint: telemetry.otlp.endpoint, interval_s: telemetry.otlp.interval_s, families, labels: { ...labels, ...genai }, resource: { 'service.name': 'duplex-bench' }, say });
    }
    const scraper = serverMetrics
      ? new ServerMetricsScraper({ ...serverMetrics, extra_histograms: serverMetrics.histograms, timers: nodeTimerHost, onRow: (line) => writer.append(RUN_FILES.server_metrics, line), say })
      : null;
    scraper?.start();
    stopScraper = () => scraper?.stop();
    io.stderr.write(`http: ${load.mode === 'open' ? `${load.rate_rps} requests/s` : `${load.concurrency} in flight`} to ${f.url} (model ${model})\n`);
    const { summary, origin_s } = await runHttpLoad({
      url: f.url,
      endpoint: f.endpoint as 'chat' | 'completions',
      model,
      api_key,
      stream: !f['no-stream'],
      max_tokens: f['max-tokens'],
      ignore_eos: f['ignore-eos'],
      prompts,
      load,
      requests: f.requests,
      duration_s: f.duration,
      warmup_s: f['warmup-s'],
      request_timeout_ms: f['request-timeout-s'] * 1000,
      max_connections: f['max-connections'],
      max_send_lag_ms: f['max-send-lag-ms'],
      seed: f.seed,
      goodput,
      tokenizer,
      stop,
      startGate: link ? () => link.ready(0, 0) : undefined,
      onRecord: (r) => writer.append(RUN_FILES.requests, `${JSON.stringify(r)}\n`),
      onLive: (view) => (live = view),
    });
    await stopScraper();
    if (scraper) summary.server_metrics = besideClient(scraper.summary(), httpClientFigures(summary));
    const written_all = await writer.close().then(
      () => writer.failure,
      (err: Error) => err,
    );
    const run = {
      command: ['duplex-bench', 'http', ...redactArgv(io.typed ?? io.argv)],
      url: f.url,
      model,
      load: summary.load,
      host: await describeHost(),
      project: await projectRevision(process.cwd()),
      clock: { monotonic_s: origin_s, epoch_ms, source: 'process.hrtime.bigint (CLOCK_MONOTONIC)' },
    };
    // A record that could not be written fails the run: requests.jsonl must hold every request.
    const failure = written_all ? `${written_all.message}: requests.jsonl is incomplete` : null;
    const v = verdictOf({ ...summary, interrupted: signals.interrupted, unit: 'request', completed: summary.requests.completed, reasons: summary.requests.errors, failure });
    const written = withVerdict(summary, v);
    await Promise.all([
      writeFile(runFile(f.output, 'summary'), JSON.stringify(written, null, 1)),
      writeFile(runFile(f.output, 'run'), JSON.stringify(run, null, 1)),
    ]);
    // Its failure fails the run (exit 1); the run's own files are whole.
    const vllm = f['vllm-result'] ? await writeVllmResult(f, summary, model, [runFile(f.output, 'requests')], goodput) : null;
    const more = vllm ? [vllm.line] : [];
    // The error line first: the verdict is the last human line.
    if (failure) io.stderr.write(`error: ${failure}\n`);
    else if (v.verdict === 'failed') io.stderr.write(`error: no request completed (${Object.entries(summary.requests.errors).map(([k, v]) => `${k} ${v}`).join(', ')})\n`);
    io.stdout.write(`${renderHttpSummary(summary, f.output, v, more)}\n`);
    io.emit?.(written);
    await closePush();
    if (endpoint) {
      if (telemetry.metrics_linger_s > 0) say(`metrics: serving the final counts ${telemetry.metrics_linger_s} s more (--metrics-linger-s; Ctrl-C ends it)`);
      await endpoint.linger(telemetry.metrics_linger_s, stop);
    }
    return vllm && !vllm.ok ? EXIT.failed : exitOf(v, f['allow-unqualified']);
  } finally {
    signals.dispose();
    await stopScraper();
    await closePush();
    await endpoint?.close();
    await writer.close().catch(() => undefined);
  }
}

/** `http --processes N`: the children's run through the launcher; the pooled summary and run.json at the top. */
async function launchHttp(f: HttpFlags, model: string, api_key: string | undefined, io: RunIo, goodput?: GoodputBounds): Promise<number> {
  io.stderr.write(`launching ${f.processes} processes to ${f.url} (model ${model})\n`);
  let signals: Interrupts | null = null;
  const options = { module: MAIN, processes: f.processes, argv: io.argv, output: f.output, model, api_key, seed: f.seed, rate: f.rate, concurrency: f.concurrency, max_concurrency: f['max-concurrency'], requests: f.requests, duration_s: f.duration };
  const { result, summary, died } = await launchHttpProcesses(
    {
      ...options,
      request_timeout_s: f['request-timeout-s'],
      start_timeout_s: f['start-timeout-s'],
      metrics_port: f['metrics-port'],
      metrics_linger_s: f['metrics-linger-s'],
      onStderr: (i, line) => /^(error|warning|metrics:)/.test(line) && io.stderr.write(`[p${i}] ${line}\n`),
    },
    (stop) => (signals = new Interrupts(io, 'stopping every process; each writes its summary', stop)),
  ).finally(() => signals?.dispose());
  if (result.start_failure) {
    io.stderr.write(`error: process ${result.start_failure.index} ${result.start_failure.reason}\n`);
    return EXIT.failed;
  }
  for (const d of died) io.stderr.write(`error: ${d}\n`);
  if (!summary) return EXIT.failed;
  summary.interrupted ||= (signals as Interrupts | null)?.interrupted ?? false;
  const v = verdictOf({ ...summary, unit: 'request', completed: summary.requests.completed, reasons: summary.requests.errors, failure: died.length > 0 ? died.join('; ') : null });
  const written = withVerdict(summary, v);
  const run = { command: ['duplex-bench', 'http', ...redactArgv(io.typed ?? io.argv)], url: f.url, model, processes: f.processes, gate_s: result.gate_s, host: await describeHost(), project: await projectRevision(process.cwd()), children: result.children };
  await writeFile(runFile(f.output, 'summary'), JSON.stringify(written, null, 1));
  await writeFile(runFile(f.output, 'run'), JSON.stringify(run, null, 1));
  const files = result.children.map((c) => runFile(join(f.output, `p${c.index}`), 'requests'));
  const vllm = f['vllm-result'] ? await writeVllmResult(f, summary, model, files, goodput) : null;
  const more = vllm ? [vllm.line] : [];
  io.stdout.write(`${renderHttpSummary(summary, f.output, v, [`processes: ${f.processes}, CPU ${summary.cpu_cores_per_process.map((c) => c.total.toFixed(2)).join(' + ')} cores`, ...more])}\n`);
  io.emit?.(written);
  return vllm && !vllm.ok ? EXIT.failed : exitOf(v, f['allow-unqualified']);
}

/** `--vllm-result FILE`: vLLM's result file from the run's requests; the line that says where (or why not). */
async function writeVllmResult(f: HttpFlags, summary: HttpSummary, model: string, files: string[], goodput?: GoodputBounds): Promise<{ line: string; ok: boolean }> {
  const path = f['vllm-result'] as string;
  try {
    // vLLM's num_prompts is the requests asked for: --requests, else every request the run made.
    const made = summary.requests.completed + summary.requests.failed;
    const result = await vllmResult({ summary, request_files: files, model, tokenizer_id: f.tokenizer ?? model, num_prompts: f.requests ?? made, goodput });
    await writeFile(path, JSON.stringify(result));
    return { line: `vllm bench serve --save-result keys written to ${path}`, ok: true };
  } catch (err) {
    return { line: `error: --vllm-result ${path} not written: ${(err as Error).message}`, ok: false };
  }
}

/** The live exposition of an HTTP run: its counters and histograms once the run made them (zeros before). */
function liveHttpFamilies(view: () => HttpLiveView | null): Family[] {
  const empty = createUsHistogram();
  return [
    ...httpFamilies({
      requests: () => {
        const v = view();
        // Sent so far: those that ended sent, and those in flight now.
        return { sent: (v?.tally.sent ?? 0) + (v?.in_flight() ?? 0), completed: v?.tally.completed ?? 0, in_flight: v?.in_flight() ?? 0, late_sends: v?.late_sends() ?? 0 };
      },
      errors: () => ({ ...(view()?.tally.errors ?? {}) }) as Record<string, number>,
      latency: () => view()?.latency ?? { ttft: empty, itl: empty, e2e: empty },
    }),
    ...clientFamilies({ loopLag: () => view()?.loopLag ?? empty }),
  ];
}

/** An HTTP run's client figures of the kinds a server exports (TTFT and E2E from each request's intended start, TPOT): every request. */
function httpClientFigures(s: HttpSummary): Partial<Record<ServerFigureKind, ClientFigure>> {
  const of = (name: 'ttft' | 'e2e' | 'tpot'): ClientFigure => {
    const l = s.latency_ms[name].raw;
    return { figure: `latency_ms.${name}.raw`, unit: 'ms', count: l.count, p50: l.p50, p90: l.p90, p99: l.p99, measurement_origin: s.measurement_origin[name] ?? `client: latency_ms.${name}` };
  };
  return { ttft: of('ttft'), e2e: of('e2e'), tpot: of('tpot') };
}
