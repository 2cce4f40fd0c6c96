import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { counter, type Family, type Labels } from './families';

/** A telemetry fault a user can act on: the port is taken, the address is not local. */
export class TelemetryError extends Error {
  constructor(
    readonly code: 'TELEMETRY_PORT_IN_USE' | 'TELEMETRY_LISTEN_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'TelemetryError';
  }
}

/**
 * `/metrics` in Prometheus text format on 127.0.0.1, for as long as the command runs and
 * `linger_s` after. Every scrape reads the families' recorders at that moment.
 */
export class MetricsEndpoint {
  /** prom-client's registry, made by `listen` (prom-client loads only when a command serves metrics). */
  registry!: Registry;
  private server: Server | null = null;
  /** Scrapes answered, and the time spent building their text (on the loop the sessions share). */
  scrapes = 0;
  exposition_ms = 0;

  constructor(
    private readonly families: Family[],
    private readonly labels: Labels,
  ) {}

  /** Listens on 127.0.0.1:`port` (0: a free one) and resolves with the URL it serves. */
  async listen(port: number): Promise<string> {
    const { Registry } = await import('prom-client');
    this.registry = new Registry();
    this.registry.setDefaultLabels(this.labels);
    const own = [
      counter('duplex_bench_scrapes_total', 'Scrapes of this endpoint answered', () => this.scrapes),
      counter('duplex_bench_exposition_seconds_total', "Time this process spent building the scrapes' text, on the loop its sessions share (what the exporter costs)", () => this.exposition_ms / 1000),
    ];
    for (const f of [...this.families, ...own]) this.registry.registerMetric(f as never);
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
        return;
      }
      const t0 = performance.now();
      this.registry.metrics().then(
        (text) => {
          this.scrapes++;
          this.exposition_ms += performance.now() - t0;
          res.writeHead(200, { 'content-type': this.registry.contentType }).end(text);
        },
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
      );
    });
    // A scrape holds no connection open past the run: keep-alive sockets are dropped at close.
    server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          err.code === 'EADDRINUSE'
            ? new TelemetryError('TELEMETRY_PORT_IN_USE', `--metrics-port ${port}: 127.0.0.1:${port} is in use`)
            : new TelemetryError('TELEMETRY_LISTEN_FAILED', `--metrics-port ${port}: ${err.message}`),
        ),
      );
      server.listen(port, '127.0.0.1', () => resolve());
    });
    server.unref(); // the endpoint never keeps a finished command alive; `linger` does that on purpose
    this.server = server;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  }

  /** Keeps serving `seconds` more (the last scrape sees the final counts), or until `cut` settles. */
  async linger(seconds: number, cut?: Promise<unknown>): Promise<void> {
    if (!this.server || seconds <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, seconds * 1000))), ...(cut ? [cut] : [])]);
    clearTimeout(timer);
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
