import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { percentilesMs } from '@duplex-bench/metrics';
import { every, timersOn, type Clock } from '@duplex-bench/pacer';
import type { Subscription } from 'rxjs';
import type { Family } from './families';
import { TelemetryError } from './metrics-endpoint';

/** A histogram's figures so far, in ms (the family's values, seconds × scale, read back). */
export interface DashboardHistogram {
  n: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

/** One look a second: every family's value then, read from the recorders `/metrics` reads. */
export interface DashboardRow {
  /** Seconds since the dashboard started (the client's monotonic clock). */
  t_s: number;
  /** Counters and gauges, their samples pooled as the exposition's aggregator pools them (sum or max). */
  values: Record<string, number>;
  /** A family whose samples carry labels, each label set apart: `{reason="server_closed"}` → 2. */
  labelled: Record<string, Record<string, number>>;
  /** Histograms: count, p50, p99 and max so far, ms. */
  histograms: Record<string, DashboardHistogram>;
}

/** What `/live.json` answers: the rows so far, and the verdict once the run has one. */
export interface DashboardState {
  title: string;
  /** The command as typed, for the page's header. */
  command: string;
  started_epoch_ms: number;
  interval_s: number;
  rows: DashboardRow[];
  /** The run's last line once it has ended (null while it runs). */
  verdict: string | null;
  /** What the dashboard costs the loop its sessions share: looks taken, and their time in all, ms. */
  cost: { looks: number; look_ms: number };
}

export interface LiveDashboardOptions {
  title: string;
  command: string;
  families: Family[];
  /** The page (HTML) that polls `/live.json`: the report's look, rendered once by the command. */
  page: string;
  clock: Clock;
  /** Rows kept: past it every other older row is dropped, so an hour-long run stays small. */
  max_rows?: number;
}

const labelKey = (labels: Record<string, string | number>) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');

/** Every family's value now, as one row. */
export async function readRow(families: Family[], t_s: number): Promise<DashboardRow> {
  const row: DashboardRow = { t_s: Math.round(t_s * 1000) / 1000, values: {}, labelled: {}, histograms: {} };
  for (const f of families) {
    if (f.type === 'histogram') {
      const h = f.hdr?.read() ?? null;
      if (!h || !f.hdr) continue;
      // percentilesMs reads values as µs; they are seconds × scale.
      const toMs = 1e6 / f.hdr.scale;
      const p = percentilesMs(h);
      const ms = (v: number | null) => (v === null ? null : Math.round(v * toMs * 1000) / 1000);
      row.histograms[f.name] = { n: p.count, p50: ms(p.p50), p99: ms(p.p99), max: ms(p.max) };
      continue;
    }
    const { values } = await f.get();
    // A count by label with no label yet (no session incomplete so far) is 0, not unknown.
    if (values.length === 0) {
      row.values[f.name] = 0;
      continue;
    }
    row.values[f.name] = f.aggregator === 'max' ? Math.max(...values.map((v) => v.value)) : values.reduce((a, v) => a + v.value, 0);
    if (values.some((v) => Object.keys(v.labels).length > 0)) row.labelled[f.name] = Object.fromEntries(values.map((v) => [labelKey(v.labels), v.value]));
  }
  return row;
}

/**
 * `--dashboard-port`: one page on 127.0.0.1 that draws the run live. Once a second it reads the
 * same families `/metrics` serves (so nothing is recorded twice and nothing is added to the packet
 * path) into a row; `/live.json` answers every row so far, and `/` the page that polls it.
 */
export class LiveDashboard {
  private server: Server | null = null;
  private ticks: Subscription | null = null;
  private readonly state: DashboardState;
  private readonly start_s: number;
  url = '';

  constructor(private readonly o: LiveDashboardOptions) {
    this.start_s = o.clock.now_s();
    this.state = { title: o.title, command: o.command, started_epoch_ms: Date.now(), interval_s: 1, rows: [], verdict: null, cost: { looks: 0, look_ms: 0 } };
  }

  /** Listens on 127.0.0.1:`port` (0: a free one), takes the first look, and looks once a second from then on. */
  async listen(port: number): Promise<string> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET') return void res.writeHead(405, { 'content-type': 'text/plain' }).end('GET only\n');
      if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(this.o.page);
      if (path === '/live.json') {
        // Answering counts too: the rows are stringified on the loop the sessions share.
        const t0 = performance.now();
        const body = JSON.stringify(this.state);
        this.state.cost.look_ms = Math.round((this.state.cost.look_ms + performance.now() - t0) * 1000) / 1000;
        return void res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body);
      }
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the dashboard is at / and its figures at /live.json\n');
    });
    server.keepAliveTimeout = 2000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(new TelemetryError(err.code === 'EADDRINUSE' ? 'TELEMETRY_PORT_IN_USE' : 'TELEMETRY_LISTEN_FAILED', err.code === 'EADDRINUSE' ? `--dashboard-port ${port}: 127.0.0.1:${port} is in use` : `--dashboard-port ${port}: ${err.message}`)),
      );
      server.listen(port, '127.0.0.1', () => resolve());
    });
    server.unref();
    this.server = server;
    await this.look();
    this.ticks = every(timersOn(this.o.clock), 1000, { background: true }).subscribe(() => void this.look());
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    return this.url;
  }

  /** One row now; public so the run's end can take its last one. */
  async look(): Promise<void> {
    const t0 = performance.now();
    const row = await readRow(this.o.families, this.o.clock.now_s() - this.start_s);
    const rows = this.state.rows;
    rows.push(row);
    const max = this.o.max_rows ?? 3600;
    if (rows.length > max) {
      // Halve the older half's resolution: the start of a long run stays drawn, the last minutes in full.
      const half = Math.floor(rows.length / 2);
      this.state.rows = [...rows.slice(0, half).filter((_, i) => i % 2 === 0), ...rows.slice(half)];
    }
    this.state.cost.looks++;
    this.state.cost.look_ms = Math.round((this.state.cost.look_ms + performance.now() - t0) * 1000) / 1000;
  }

  /** The run ended: its last row and its verdict line, which the page shows in place of "so far". */
  async finish(verdict: string): Promise<void> {
    this.ticks?.unsubscribe();
    this.ticks = null;
    await this.look();
    this.state.verdict = verdict;
  }

  /** Keeps the page up `seconds` more, or until `cut` settles (Ctrl-C); then closes. */
  async lingerThenClose(seconds: number, cut: Promise<unknown>, say: (line: string) => void): Promise<void> {
    if (this.server && seconds > 0) {
      say(`dashboard: ${this.url} stays up ${seconds} s more (--dashboard-linger-s; Ctrl-C ends it)`);
      const server = this.server;
      server.ref();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, seconds * 1000))), cut]);
      clearTimeout(timer);
    }
    await this.close();
  }

  async close(): Promise<void> {
    this.ticks?.unsubscribe();
    this.ticks = null;
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
