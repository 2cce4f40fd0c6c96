import { UsageError } from './flags';

/** `--metrics-port` and `--metrics-linger-s`: the same on run, record, http and serve. */
export const TELEMETRY_FLAGS = {
  'metrics-port': { kind: 'int', min: 0, group: 'telemetry', help: 'serve Prometheus metrics at http://127.0.0.1:P/metrics while the command runs (0: a free port, printed)', value: 'P' },
  'metrics-linger-s': { kind: 'number', min: 0, default: 15, group: 'telemetry', help: 'with --metrics-port: keep serving this long after the run, so the last scrape sees the final counts, seconds (Ctrl-C ends it)', value: 'S' },
} as const;

export interface TelemetryOptions {
  metrics_port?: number;
  metrics_linger_s: number;
}

export function telemetryOptions(f: { 'metrics-port'?: number; 'metrics-linger-s': number }): TelemetryOptions {
  const port = f['metrics-port'];
  if (port !== undefined && port > 65535) throw new UsageError(`--metrics-port must be a TCP port (0 to 65535), got ${port}`);
  return { metrics_port: port, metrics_linger_s: f['metrics-linger-s'] };
}
