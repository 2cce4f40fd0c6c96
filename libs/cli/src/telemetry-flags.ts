import { UsageError } from './flags';

/** `--metrics-port` and `--metrics-linger-s`: the same on run, record, http and serve. */
export const TELEMETRY_FLAGS = {
  'metrics-port': { kind: 'int', min: 0, group: 'telemetry', help: 'serve Prometheus metrics at http://127.0.0.1:P/metrics while the command runs (0: a free port, printed)', value: 'P' },
  'metrics-linger-s': { kind: 'number', min: 0, default: 15, group: 'telemetry', help: 'with --metrics-port: keep serving this long after the run, so the last scrape sees the final counts, seconds (Ctrl-C ends it)', value: 'S' },
  'otlp-endpoint': { kind: 'string', group: 'telemetry', help: 'push the same metrics as OTLP/HTTP (JSON) to this collector (http://HOST:4318, or its /v1/metrics URL); GenAI semantic-convention names where they exist', value: 'URL' },
  'otlp-interval-s': { kind: 'number', min: 0, exclusive: true, default: 5, group: 'telemetry', help: 'with --otlp-endpoint: seconds between pushes (and one more at the end)', value: 'S' },
  'dashboard-port': { kind: 'int', min: 0, group: 'telemetry', help: 'serve a live dashboard at http://127.0.0.1:P/ while the command runs (0: a free port, printed): verdict boxes and charts, once a second, from the recorders /metrics reads', value: 'P' },
  'dashboard-linger-s': { kind: 'number', min: 0, default: 30, group: 'telemetry', help: 'with --dashboard-port: keep the page up this long after the run, with its final verdict, seconds (Ctrl-C ends it)', value: 'S' },
} as const;

/** `--server-metrics`: the server's own /metrics beside the client's figures (run, http). */
export const SERVER_METRICS_FLAGS = {
  'server-metrics': { kind: 'list', group: 'telemetry', help: "scrape the server's Prometheus endpoint during the run (samples on the client's clock in server_metrics.jsonl; the summary's server_metrics block gives its latency histograms' percentiles beside the client's); repeatable (a model server and a DCGM exporter), each on its own schedule", value: 'URL' },
  'server-metrics-interval-s': { kind: 'number', min: 0, exclusive: true, default: 1, group: 'telemetry', help: 'with --server-metrics: seconds between scrapes', value: 'S' },
  'server-histogram': { kind: 'list', group: 'telemetry', help: 'with --server-metrics: also report this histogram family (beside vLLM, vLLM-Omni and sglang TTFT/TTFP/RTF)', value: 'NAME' },
  'server-gauge': { kind: 'list', group: 'telemetry', help: 'with --server-metrics: also report this gauge or counter (mean, max and last over the run; a counter its increase): NAME sums its label sets, NAME{label="v"} takes those only (e.g. DCGM_FI_DEV_FB_USED, vllm:num_requests_running)', value: 'NAME' },
} as const;

export interface TelemetryOptions {
  metrics_port?: number;
  metrics_linger_s: number;
  /** `--otlp-endpoint`: null without one. */
  otlp: { endpoint: string; interval_s: number } | null;
  /** `--dashboard-port`: null without one. */
  dashboard: { port: number; linger_s: number } | null;
}

export interface ServerMetricsOptions {
  /** Null: no scrape. */
  server_metrics: { urls: string[]; interval_s: number; histograms: string[]; gauges: string[] } | null;
}

export function serverMetricsOptions(f: { 'server-metrics'?: string[]; 'server-metrics-interval-s': number; 'server-histogram'?: string[]; 'server-gauge'?: string[] }): ServerMetricsOptions {
  const urls = f['server-metrics'] ?? [];
  if (urls.length === 0) {
    if (f['server-histogram']?.length) throw new UsageError('--server-histogram goes with --server-metrics');
    if (f['server-gauge']?.length) throw new UsageError('--server-gauge goes with --server-metrics');
    return { server_metrics: null };
  }
  for (const g of f['server-gauge'] ?? []) if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{\s*[a-zA-Z_][a-zA-Z0-9_]*\s*=\s*"[^"]*"\s*(,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*=\s*"[^"]*"\s*)*\})?$/.test(g)) throw new UsageError(`--server-gauge "${g}" is not NAME or NAME{label="value",…}`);
  for (const url of urls) httpUrl('server-metrics', url);
  for (const name of f['server-histogram'] ?? []) if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new UsageError(`--server-histogram "${name}" is not a Prometheus metric name`);
  return { server_metrics: { urls, interval_s: f['server-metrics-interval-s'], histograms: f['server-histogram'] ?? [], gauges: f['server-gauge'] ?? [] } };
}

export function telemetryOptions(f: { 'metrics-port'?: number; 'metrics-linger-s': number; 'otlp-endpoint'?: string; 'otlp-interval-s': number; 'dashboard-port'?: number; 'dashboard-linger-s': number }): TelemetryOptions {
  const port = f['metrics-port'];
  if (port !== undefined && port > 65535) throw new UsageError(`--metrics-port must be a TCP port (0 to 65535), got ${port}`);
  const dashboard = f['dashboard-port'];
  if (dashboard !== undefined && dashboard > 65535) throw new UsageError(`--dashboard-port must be a TCP port (0 to 65535), got ${dashboard}`);
  if (dashboard !== undefined && dashboard !== 0 && dashboard === port) throw new UsageError(`--dashboard-port and --metrics-port are both ${port}: give two ports`);
  const endpoint = f['otlp-endpoint'];
  if (endpoint !== undefined) httpUrl('otlp-endpoint', endpoint);
  return {
    metrics_port: port,
    metrics_linger_s: f['metrics-linger-s'],
    otlp: endpoint === undefined ? null : { endpoint, interval_s: f['otlp-interval-s'] },
    dashboard: dashboard === undefined ? null : { port: dashboard, linger_s: f['dashboard-linger-s'] },
  };
}

/** `--flag value` must be an http:// or https:// URL. */
function httpUrl(flag: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--${flag} is not a URL: "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--${flag} must be http:// or https://, got "${value}"`);
}
