import { MetricsEndpoint } from './metrics-endpoint';
import type { Family, Labels } from './families';

export interface ExposeOptions {
  /** `--metrics-port`; undefined: no endpoint. */
  port: number | undefined;
  /** Labels on every sample: command, protocol, process. */
  labels: Labels;
  families: Family[];
  /** Where the endpoint's one line goes (stderr). */
  say(line: string): void;
}

/** Starts `/metrics` when a port is given; a port in use is the user's to fix, so it throws a TelemetryError (from `listen`). */
export async function exposeMetrics(o: ExposeOptions): Promise<MetricsEndpoint | null> {
  if (o.port === undefined) return null;
  const endpoint = new MetricsEndpoint(o.families, o.labels);
  const url = await endpoint.listen(o.port);
  o.say(`metrics: ${url} (Prometheus text format)`);
  return endpoint;
}

