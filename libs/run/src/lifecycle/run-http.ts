import { mkdir } from 'node:fs/promises';
import { EXIT, serverMetricsOptions, telemetryOptions, UsageError, type RunIo } from '@duplex-bench/cli';
import type { GoodputBounds, PromptSource, TokenCounter } from '@duplex-bench/http-load';
import { LauncherLink } from '@duplex-bench/launcher';
import { launchRequests, runRequests, type HttpRunOptions, type RenderHttp } from './run-requests';

/** `http`'s flags as parsed (HTTP_FLAGS). */
export interface HttpFlagValues {
  url: string;
  endpoint: string;
  model?: string;
  'api-key'?: string;
  rate?: number;
  arrivals: string;
  concurrency?: number;
  'max-concurrency'?: number;
  requests?: number;
  duration?: number;
  'warmup-s': number;
  'input-tokens': string;
  dataset?: string;
  'max-tokens': number;
  'ignore-eos': boolean;
  'no-stream': boolean;
  seed: number;
  output: string;
  goodput?: string;
  tokenizer?: string;
  'vllm-result'?: string;
  'request-timeout-s': number;
  'max-connections': number;
  'max-send-lag-ms': number;
  'allow-unqualified': boolean;
  processes: number;
  'start-timeout-s': number;
  'metrics-port'?: number;
  'metrics-linger-s': number;
  'otlp-endpoint'?: string;
  'otlp-interval-s': number;
  'dashboard-port'?: number;
  'dashboard-linger-s': number;
  'server-metrics'?: string[];
  'server-metrics-interval-s': number;
  'server-histogram'?: string[];
}

/**
 * An HTTP run (`http`) from its flags as parsed: checked against each other, prompts and model
 * resolved, then one process's run, a child's, or `--processes` children. Returns the exit status.
 */
export async function httpRun(f: HttpFlagValues, argv: string[], io: RunIo, render: RenderHttp, module: string): Promise<number> {
  // The HTTP client (undici) loads only in a command that makes requests: a realtime run never does.
  const { datasetPrompts, firstModel, loadTokenizer, parseGoodput, parseTokenCount, syntheticPrompts } = await import('@duplex-bench/http-load');
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
  if (f['dashboard-port'] !== undefined && f.processes > 1) throw new UsageError('--dashboard-port draws one process: run it without --processes (each child serves its own /metrics with --metrics-port)');
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
    module,
    ...telemetryOptions(f),
    ...serverMetricsOptions(f),
  };
  if (f.processes > 1) return launchRequests(options, io, render, goodput);
  const link = LauncherLink.inChild() ? new LauncherLink() : null;
  const code = await runRequests(options, prompts, io, render, link, goodput, tokenizer);
  link?.done(code);
  return code;
}
