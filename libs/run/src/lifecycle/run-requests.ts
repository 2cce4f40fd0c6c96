import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EXIT, Interrupts, type RunIo, type ServerMetricsOptions, type TelemetryOptions } from '@duplex-bench/cli';
import type { GoodputBounds, HttpLiveView, HttpLoad, HttpSummary, PromptSource, TokenCounter } from '@duplex-bench/http-load';
import { CHILD_ENV, describeHost, projectRevision, withoutFlags, type LauncherLink } from '@duplex-bench/launcher';
import { createUsHistogram } from '@duplex-bench/metrics';
import { nodeTimerHost } from '@duplex-bench/pacer';
import { RUN_FILES, runFile, TRACE_LAYOUT, unwrittenLine, writeEvery, writeRunFile, writeRunRecord, type RunRecord } from '@duplex-bench/results';
import { besideClient, clientFamilies, exposeMetrics, httpFamilies, OtlpPush, ServerScrapers, type ClientFigure, type Family, type LiveDashboard, type MetricsEndpoint, type ServerFigureKind } from '@duplex-bench/telemetry';
import { startDashboard } from './dashboard';
import { TraceWriter } from '@duplex-bench/tracer';
import { redactArgv } from '../dialect-options';
import { verdictOf, withVerdict, type RunVerdict } from '../verdict';
import { exitOf } from './exit-status';
import { serverScraper, SERVER_SCRAPE_FLAGS } from './server-scraper';

// The HTTP engine (and its client, undici) is imported where a request is made, so that the
// realtime commands, which load this lib too, never load it.

/** An HTTP run's settings, as the command's flags give them (validated there). */
export interface HttpRunOptions extends TelemetryOptions, ServerMetricsOptions {
  /** Base URL of an OpenAI-compatible server. */
  url: string;
  endpoint: 'chat' | 'completions';
  model: string;
  api_key?: string;
  /** Open loop: requests per second; or closed loop: `concurrency` in flight. */
  rate?: number;
  arrivals: 'poisson' | 'constant';
  concurrency?: number;
  max_concurrency?: number;
  requests?: number;
  duration_s?: number;
  warmup_s: number;
  stream: boolean;
  max_tokens: number;
  ignore_eos: boolean;
  seed: number;
  output: string;
  /** `--vllm-result FILE`. */
  vllm_result?: string;
  /** `--tokenizer`: named in vLLM's result as the tokenizer. */
  tokenizer_id?: string;
  request_timeout_s: number;
  max_connections: number;
  max_send_lag_ms: number;
  allow_unqualified: boolean;
  processes: number;
  start_timeout_s: number;
  /** With `processes` > 1: the module each child runs. */
  module: string;
}

/** The human summary of an HTTP run; `more` go before the last line, the verdict: the command's to render. */
export type RenderHttp = (summary: HttpSummary, output: string, v: RunVerdict, more?: string[]) => string;

/** One process's run (alone, or one of a launched run's children: then it starts at the launcher's gate). */
export async function runRequests(o: HttpRunOptions, prompts: PromptSource, io: RunIo, render: RenderHttp, link: LauncherLink | null, goodput?: GoodputBounds, tokenizer?: TokenCounter): Promise<number> {
  const load: HttpLoad =
    o.rate !== undefined
      ? { mode: 'open', rate_rps: o.rate, arrivals: o.arrivals, ...(o.max_concurrency !== undefined ? { max_concurrency: o.max_concurrency } : {}) }
      : { mode: 'closed', concurrency: o.concurrency as number };
  const epoch_ms = Date.now(); // only to map the monotonic clock to wall time in run.json
  let interrupt: () => void = () => undefined;
  const stop = new Promise<void>((resolve) => (interrupt = resolve));
  const signals = new Interrupts(io, 'no new requests; those in flight end as interrupted; writing the summary', interrupt);
  // Each request's record goes to requests.jsonl in the writer thread as it ends: the run keeps only counters and histograms.
  const writer = new TraceWriter({ root: o.output, layout: TRACE_LAYOUT, mode: 'off' });
  const telemetry = o;
  const serverMetrics = o.server_metrics;
  const say = (line: string) => io.stderr.write(`${line}\n`);
  let live: HttpLiveView | null = null;
  let endpoint: MetricsEndpoint | null = null;
  let dashboard: LiveDashboard | null = null;
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
      await writeFile(runFile(o.output, 'requests'), '');
      await writer.started();
    } catch (err) {
      io.stderr.write(`error: ${(err as Error).message}\n`);
      return EXIT.failed;
    }
    const families = liveHttpFamilies(() => live);
    const labels = { command: 'http', protocol: 'http', process: process.env[CHILD_ENV] ?? '0' };
    if (telemetry.metrics_port !== undefined || telemetry.dashboard) {
      try {
        if (telemetry.metrics_port !== undefined) endpoint = await exposeMetrics({ port: telemetry.metrics_port, labels, say, families });
        if (telemetry.dashboard) dashboard = await startDashboard(telemetry.dashboard.port, `duplex-bench http: ${o.output}`, ['duplex-bench', 'http', ...redactArgv(io.typed ?? io.argv)], families, nodeTimerHost, io);
      } catch (err) {
        io.stderr.write(`error: ${(err as Error).message}\n`);
        return EXIT.failed;
      }
    }
    if (telemetry.otlp) {
      // The GenAI conventions' attributes of a client's chat or completion calls to an OpenAI-compatible API.
      const server = new URL(o.url);
      const genai = {
        'gen_ai.operation.name': o.endpoint === 'chat' ? 'chat' : 'text_completion',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': o.model,
        'server.address': server.hostname,
        'server.port': Number(server.port || (server.protocol === 'https:' ? 443 : 80)),
      };
      push = await OtlpPush.start({ endpoint: telemetry.otlp.endpoint, interval_s: telemetry.otlp.interval_s, families, labels: { ...labels, ...genai }, resource: { 'service.name': 'duplex-bench' }, say });
    }
    const scraper = serverMetrics
      ? new ServerScrapers(serverMetrics.urls, { interval_s: serverMetrics.interval_s, extra_histograms: serverMetrics.histograms, gauges: serverMetrics.gauges, timers: nodeTimerHost, onRow: (line) => writer.append(RUN_FILES.server_metrics, line), say })
      : null;
    scraper?.start();
    stopScraper = () => scraper?.stop();
    io.stderr.write(`http: ${load.mode === 'open' ? `${load.rate_rps} requests/s` : `${load.concurrency} in flight`} to ${o.url} (model ${o.model})\n`);
    const { summary, origin_s } = await (await import('@duplex-bench/http-load')).runHttpLoad({
      url: o.url,
      endpoint: o.endpoint,
      model: o.model,
      api_key: o.api_key,
      stream: o.stream,
      max_tokens: o.max_tokens,
      ignore_eos: o.ignore_eos,
      prompts,
      load,
      requests: o.requests,
      duration_s: o.duration_s,
      warmup_s: o.warmup_s,
      request_timeout_ms: o.request_timeout_s * 1000,
      max_connections: o.max_connections,
      max_send_lag_ms: o.max_send_lag_ms,
      seed: o.seed,
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
      () => writer.failure ?? writer.recordFailure,
      (err: Error) => err,
    );
    const run = {
      command: ['duplex-bench', 'http', ...redactArgv(io.typed ?? io.argv)],
      url: o.url,
      model: o.model,
      load: summary.load,
      host: await describeHost(),
      project: await projectRevision(process.cwd()),
      clock: { monotonic_s: origin_s, epoch_ms, source: 'process.hrtime.bigint (CLOCK_MONOTONIC)' },
    } satisfies RunRecord;
    // A record that could not be written fails the run: requests.jsonl must hold every request.
    const failure = written_all ? `${written_all.message}: requests.jsonl is incomplete` : null;
    const v = verdictOf({ ...summary, interrupted: signals.interrupted, unit: 'request', completed: summary.requests.completed, reasons: summary.requests.errors, failure });
    const written = withVerdict(summary, v);
    const files = await writeEvery([
      { path: runFile(o.output, 'summary'), write: () => writeRunFile(o.output, 'summary', JSON.stringify(written, null, 1)) },
      { path: runFile(o.output, 'run'), write: () => writeRunRecord(o.output, run) },
    ]);
    const unwritten = unwrittenLine(files);
    // Its failure fails the run (exit 1); the run's own files are whole.
    const vllm = o.vllm_result ? await writeVllmResult(o, summary, [runFile(o.output, 'requests')], goodput) : null;
    const more = vllm ? [vllm.line] : [];
    // The error line first: the verdict is the last human line.
    if (failure) io.stderr.write(`error: ${failure}\n`);
    if (unwritten) io.stderr.write(`error: ${unwritten}\n`);
    else if (v.verdict === 'failed') io.stderr.write(`error: no request completed (${Object.entries(summary.requests.errors).map(([k, v]) => `${k} ${v}`).join(', ')})\n`);
    const lines = render(summary, o.output, v, more);
    io.stdout.write(`${lines}\n`);
    io.emit?.(written);
    await closePush();
    await dashboard?.finish(lines.split('\n').at(-1) ?? '');
    const lingerMetrics = async () => {
      if (!endpoint) return;
      if (telemetry.metrics_linger_s > 0) say(`metrics: serving the final counts ${telemetry.metrics_linger_s} s more (--metrics-linger-s; Ctrl-C ends it)`);
      await endpoint.linger(telemetry.metrics_linger_s, stop);
    };
    await Promise.all([lingerMetrics(), dashboard?.lingerThenClose(telemetry.dashboard?.linger_s ?? 0, stop, say)]);
    return unwritten || (vllm && !vllm.ok) ? EXIT.failed : exitOf(v, o.allow_unqualified);
  } finally {
    signals.dispose();
    await stopScraper();
    await closePush();
    await endpoint?.close();
    await dashboard?.close();
    await writer.close().catch(() => undefined);
  }
}

/** `http --processes N`: the children's run through the launcher; the pooled summary and run.json at the top. */
export async function launchRequests(o: HttpRunOptions, io: RunIo, render: RenderHttp, goodput?: GoodputBounds): Promise<number> {
  io.stderr.write(`launching ${o.processes} processes to ${o.url} (model ${o.model})\n`);
  let signals: Interrupts | null = null;
  // --server-metrics: one scraper for the run, here, from before the children start to after they end; the children go without.
  const scrape = o.server_metrics ? await serverScraper(o.server_metrics, o.output, (line) => io.stderr.write(`${line}\n`)) : null;
  const options = { module: o.module, processes: o.processes, argv: withoutFlags(io.argv, SERVER_SCRAPE_FLAGS), output: o.output, model: o.model, api_key: o.api_key, seed: o.seed, rate: o.rate, concurrency: o.concurrency, max_concurrency: o.max_concurrency, requests: o.requests, duration_s: o.duration_s };
  const { launchHttpProcesses } = await import('@duplex-bench/http-load');
  scrape?.scraper.start();
  let launched;
  let scrapeFailure: string | null = null;
  try {
    launched = await launchHttpProcesses(
      {
        ...options,
        request_timeout_s: o.request_timeout_s,
        start_timeout_s: o.start_timeout_s,
        metrics_port: o.metrics_port,
        metrics_linger_s: o.metrics_linger_s,
        onStderr: (i, line) => /^(error|warning|metrics:)/.test(line) && io.stderr.write(`[p${i}] ${line}\n`),
      },
      (stop) => (signals = new Interrupts(io, 'stopping every process; each writes its summary', stop)),
    );
  } finally {
    (signals as Interrupts | null)?.dispose();
    scrapeFailure = (await scrape?.stop()) ?? null;
  }
  if (scrapeFailure) io.stderr.write(`error: ${scrapeFailure}\n`);
  const { result, summary, died } = launched;
  if (result.start_failure) {
    io.stderr.write(`error: process ${result.start_failure.index} ${result.start_failure.reason}\n`);
    return EXIT.failed;
  }
  for (const d of died) io.stderr.write(`error: ${d}\n`);
  if (!summary) return EXIT.failed;
  summary.interrupted ||= (signals as Interrupts | null)?.interrupted ?? false;
  if (scrape) summary.server_metrics = besideClient(scrape.scraper.summary(), httpClientFigures(summary));
  const v = verdictOf({ ...summary, unit: 'request', completed: summary.requests.completed, reasons: summary.requests.errors, failure: [...died, ...(scrapeFailure ? [scrapeFailure] : [])].join('; ') || null });
  const written = withVerdict(summary, v);
  const run = { command: ['duplex-bench', 'http', ...redactArgv(io.typed ?? io.argv)], url: o.url, model: o.model, processes: o.processes, gate_s: result.gate_s, host: await describeHost(), project: await projectRevision(process.cwd()), children: result.children } satisfies RunRecord;
  const unwritten = unwrittenLine(
    await writeEvery([
      { path: runFile(o.output, 'summary'), write: () => writeRunFile(o.output, 'summary', JSON.stringify(written, null, 1)) },
      { path: runFile(o.output, 'run'), write: () => writeRunRecord(o.output, run) },
    ]),
  );
  if (unwritten) io.stderr.write(`error: ${unwritten}\n`);
  const files = result.children.map((c) => runFile(join(o.output, `p${c.index}`), 'requests'));
  const vllm = o.vllm_result ? await writeVllmResult(o, summary, files, goodput) : null;
  const more = vllm ? [vllm.line] : [];
  io.stdout.write(`${render(summary, o.output, v, [`processes: ${o.processes}, CPU ${summary.cpu_cores_per_process.map((c) => c.total.toFixed(2)).join(' + ')} cores`, ...more])}\n`);
  io.emit?.(written);
  return unwritten || (vllm && !vllm.ok) ? EXIT.failed : exitOf(v, o.allow_unqualified);
}

/** `--vllm-result FILE`: vLLM's result file from the run's requests; the line that says where (or why not). */
async function writeVllmResult(o: HttpRunOptions, summary: HttpSummary, files: string[], goodput?: GoodputBounds): Promise<{ line: string; ok: boolean }> {
  const path = o.vllm_result as string;
  try {
    // vLLM's num_prompts is the requests asked for: --requests, else every request the run made.
    const made = summary.requests.completed + summary.requests.failed;
    const { vllmResult } = await import('@duplex-bench/http-load');
    const result = await vllmResult({ summary, request_files: files, model: o.model, tokenizer_id: o.tokenizer_id ?? o.model, num_prompts: o.requests ?? made, goodput });
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
