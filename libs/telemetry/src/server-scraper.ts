import type { TimerHost } from '@duplex-bench/pacer';
import { bucketDelta, bucketQuantile, bucketsOf, type Buckets } from './histogram-deltas';
import { parsePromText, type PromSample, type PromScrape } from './prom-text';

/**
 * Latency histograms servers export, scraped by default (DESIGN.md, "Live telemetry"): vLLM's
 * TTFT, vLLM-Omni's audio TTFP (both names its docs have used) and RTF, sglang's TTFT, with the
 * client figure of the same kind beside each.
 */
export const KNOWN_SERVER_HISTOGRAMS: Record<string, { kind: ServerFigureKind; meaning: string }> = {
  'vllm:time_to_first_token_seconds': { kind: 'ttft', meaning: 'vLLM: request arrival to the first token' },
  'vllm:omni_audio_ttfp_s': { kind: 'ttfp', meaning: 'vLLM-Omni: request arrival to the first audio packet' },
  'vllm:omni_audio_ttfp_seconds': { kind: 'ttfp', meaning: 'vLLM-Omni: request arrival to the first audio packet' },
  'vllm:omni_audio_rtf': { kind: 'rtf', meaning: 'vLLM-Omni: stage generation time over audio duration' },
  'vllm:e2e_request_latency_seconds': { kind: 'e2e', meaning: 'vLLM: request arrival to its end' },
  'vllm:inter_token_latency_seconds': { kind: 'tpot', meaning: 'vLLM: the wait between output tokens' },
  'sglang:time_to_first_token_seconds': { kind: 'ttft', meaning: 'sglang: request arrival to the first token' },
};

export type ServerFigureKind = 'ttft' | 'ttfp' | 'rtf' | 'e2e' | 'tpot' | 'other';

export interface ServerScraperOptions {
  url: string;
  interval_s: number;
  /** Histograms named by `--server-histogram`, beside the known ones. */
  extra_histograms: string[];
  /** Gauges and counters named by `--server-gauge`: `NAME` (label sets summed) or `NAME{label="v",…}` (those sets only). */
  gauges?: string[];
  timers: TimerHost;
  /** One line of server_metrics.jsonl per scrape, on the client's clock. */
  onRow(line: string): void;
  /** Told once when scrapes start failing, and once when they come back. */
  say(line: string): void;
  /** Bound on one scrape (default: the interval, at most 5 s). */
  timeout_ms?: number;
}

/** The run's figure of one server histogram: bucket deltas from the first to the last good scrape. */
export interface ServerHistogramFigures {
  kind: ServerFigureKind;
  /** `ms` for a histogram in seconds (converted), else the server's own unit. */
  unit: 'ms' | 'ratio' | 'server unit';
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  measurement_origin: string;
  /** The client's figure of the same kind, from the same run, with its own origin. */
  client?: ClientFigure;
}

/** A client figure set beside a server histogram's. */
export interface ClientFigure {
  /** Where it is in the summary (`duplex.ttfp_ms`, `latency_ms.ttft`). */
  figure: string;
  unit: 'ms' | 'ratio';
  count: number;
  p50: number | null;
  p90?: number | null;
  p99: number | null;
  measurement_origin: string;
}

/** Sets each client figure beside the server histograms of its kind. */
export function besideClient(s: ServerMetricsSummary, client: Partial<Record<ServerFigureKind, ClientFigure | null>>): ServerMetricsSummary {
  for (const h of Object.values(s.histograms)) {
    const c = client[h.kind];
    if (c) h.client = c;
  }
  return s;
}

/** One `--server-gauge` over the run: its value in each good scrape that carried it, on the client's clock. */
export interface ServerGaugeFigures {
  /** The family's `# TYPE` (`gauge`, `counter`, …), or `untyped`. */
  kind: string;
  /** Good scrapes that carried it. */
  n: number;
  mean: number;
  max: number;
  last: number;
  /** Counters: last minus first (what the run added, a restart aside). */
  increase?: number;
  measurement_origin: string;
}

/** A `--server-gauge` selector read: the family, and the labels a sample must carry. */
export function parseGaugeSelector(text: string): { name: string; labels: Record<string, string> } {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?$/.exec(text.trim());
  if (!m) throw new Error(`--server-gauge: cannot read "${text}" (NAME or NAME{label="value",…})`);
  const labels: Record<string, string> = {};
  for (const part of (m[2] ?? '').split(',').filter((p) => p.trim() !== '')) {
    const l = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"([^"]*)"\s*$/.exec(part);
    if (!l) throw new Error(`--server-gauge: cannot read the label "${part}" in "${text}" (label="value")`);
    labels[l[1]] = l[2];
  }
  return { name: m[1], labels };
}

export interface ServerMetricsSummary {
  /** The URL scraped (several: joined by spaces, and listed in `urls`). */
  url: string;
  urls?: string[];
  /** Several URLs: names two of them export, kept from the first. */
  shadowed?: string[];
  interval_s: number;
  scrapes: { ok: number; failed: number; skipped_busy: number; first_failure: string | null };
  /** Client clock seconds of the first and last good scrape: the window the figures cover. */
  window_s: [number, number] | null;
  histograms: Record<string, ServerHistogramFigures>;
  /** `--server-gauge`: each selector's figures over the run, keyed by the selector as given. */
  gauges?: Record<string, ServerGaugeFigures>;
  /** Histograms and gauges asked for that no good scrape carried. */
  absent: string[];
  measurement_origin: string;
}

const isSeconds = (name: string) => /(_seconds|_s)$/.test(name);

/** Scrapes a server's Prometheus endpoint every `interval_s` on an absolute schedule, from `start()` to `stop()`. */
export class ServerMetricsScraper {
  private readonly watched: string[];
  private first: { t_s: number; scrape: PromScrape } | null = null;
  private last: { t_s: number; scrape: PromScrape } | null = null;
  private ok = 0;
  private failed = 0;
  private skipped = 0;
  private firstFailure: string | null = null;
  private failing = false;
  private inFlight: Promise<void> | null = null;
  private cancel: () => void = () => undefined;
  private stopped = false;
  private started = false;
  /** Per histogram: the sum of every interval's delta, so a server restart mid-run loses nothing (as PromQL's increase). */
  private readonly run = new Map<string, Buckets>();
  /** Per `--server-gauge` selector: its readings so far. */
  private readonly gauges = new Map<string, { selector: { name: string; labels: Record<string, string> }; kind: string; n: number; sum: number; max: number; first: number; last: number }>();

  constructor(private readonly o: ServerScraperOptions) {
    this.watched = [...new Set([...Object.keys(KNOWN_SERVER_HISTOGRAMS), ...o.extra_histograms])];
    for (const text of o.gauges ?? []) this.gauges.set(text, { selector: parseGaugeSelector(text), kind: 'untyped', n: 0, sum: 0, max: -Infinity, first: 0, last: 0 });
  }

  /** First scrape now (the baseline), then every interval. */
  start(): void {
    this.started = true;
    const origin_s = this.o.timers.now_s();
    let k = 0;
    const tick = () => {
      if (this.stopped) return;
      this.scrapeOnce();
      k++;
      this.cancel = this.o.timers.arm(Math.max(0, (origin_s + k * this.o.interval_s - this.o.timers.now_s()) * 1000), tick, { background: true });
    };
    tick();
  }

  /** Stops the schedule after one last scrape (the run's end), bounded by the scrape timeout. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.cancel();
    if (!this.started) return;
    await this.inFlight;
    this.scrapeOnce();
    await this.inFlight;
  }

  private scrapeOnce(): void {
    if (this.inFlight) {
      this.skipped++;
      return;
    }
    const t_s = this.o.timers.now_s();
    const timeout = this.o.timeout_ms ?? Math.min(5000, this.o.interval_s * 1000);
    this.inFlight = fetch(this.o.url, { signal: AbortSignal.timeout(timeout), headers: { accept: 'text/plain' } })
      .then(async (r) => {
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        return r.text();
      })
      .then(
        (text) => this.took(t_s, parsePromText(text)),
        (err: Error) => this.missed(t_s, err.name === 'TimeoutError' ? `no answer within ${timeout} ms` : err.message),
      )
      .finally(() => (this.inFlight = null));
  }

  private took(t_s: number, scrape: PromScrape): void {
    this.ok++;
    if (this.failing) this.o.say(`server metrics: ${this.o.url} answers again (${this.failed} scrape(s) failed so far)`);
    this.failing = false;
    const previous = this.last;
    if (!this.first) this.first = { t_s, scrape };
    this.last = { t_s, scrape };
    // What the row keeps: the watched histograms' series, and every series that is not a histogram's.
    const histogramFamilies = new Set([...scrape.types].filter(([, kind]) => kind === 'histogram').map(([name]) => name));
    const keep = (s: PromSample) => {
      const family = s.name.replace(/_(bucket|sum|count)$/, '');
      return this.watched.includes(family) || !histogramFamilies.has(family);
    };
    const interval: Record<string, { count: number; p50: number | null; p99: number | null }> = {};
    for (const name of this.watched) {
      const now = bucketsOf(scrape, name);
      if (!now || !previous) continue;
      const d = bucketDelta(bucketsOf(previous.scrape, name), now);
      interval[name] = { count: d.count, p50: bucketQuantile(d, 0.5), p99: bucketQuantile(d, 0.99) };
      this.run.set(name, addBuckets(this.run.get(name), d));
    }
    for (const g of this.gauges.values()) {
      const { name, labels } = g.selector;
      const matching = scrape.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Number.isFinite(s.value));
      if (matching.length === 0) continue;
      const value = matching.reduce((a, s) => a + s.value, 0);
      g.kind = scrape.types.get(name) ?? 'untyped';
      if (g.n === 0) g.first = value;
      g.n++;
      g.sum += value;
      g.max = Math.max(g.max, value);
      g.last = value;
    }
    this.o.onRow(`${JSON.stringify({ t_s, ok: true, samples: scrape.samples.filter(keep).map((s) => [s.name, s.labels, s.value]), since_previous: interval })}\n`);
  }

  private missed(t_s: number, message: string): void {
    this.failed++;
    this.firstFailure ??= message;
    if (!this.failing) this.o.say(`server metrics: scrape of ${this.o.url} failed (${message}); counted, the run goes on`);
    this.failing = true;
    this.o.onRow(`${JSON.stringify({ t_s, ok: false, error: message })}\n`);
  }

  private figures(name: string, d: Buckets): ServerHistogramFigures {
    const seconds = isSeconds(name);
    const scale = (v: number | null) => (v === null ? null : seconds ? Math.round(v * 1e6) / 1000 : Math.round(v * 1e6) / 1e6);
    const known = KNOWN_SERVER_HISTOGRAMS[name];
    const q = (p: number) => (d.le.length === 0 ? null : bucketQuantile(d, p));
    return {
      kind: known?.kind ?? 'other',
      unit: seconds ? 'ms' : name.endsWith('rtf') ? 'ratio' : 'server unit',
      count: d.count,
      p50: scale(q(0.5)),
      p90: scale(q(0.9)),
      p99: scale(q(0.99)),
      measurement_origin: `server (${known?.meaning ?? 'named by --server-histogram'}): its histogram's bucket deltas from the first to the last good scrape (each interval's, summed, so a restart loses nothing), pooled over label sets, linear within a bucket as PromQL's histogram_quantile`,
    };
  }

  summary(): ServerMetricsSummary {
    const histograms: Record<string, ServerHistogramFigures> = {};
    const absent: string[] = [];
    for (const name of this.watched) {
      const d = this.run.get(name);
      const exported = this.last !== null && bucketsOf(this.last.scrape, name) !== null;
      // Exported but seen in one good scrape only: nothing moved that the run can count.
      if (d || exported) histograms[name] = this.figures(name, d ?? { le: [], cumulative: [], count: 0, sum: 0 });
      else if (this.o.extra_histograms.includes(name)) absent.push(name);
    }
    const gauges: Record<string, ServerGaugeFigures> = {};
    const round = (v: number) => Math.round(v * 1000) / 1000;
    for (const [text, g] of this.gauges) {
      if (g.n === 0) {
        absent.push(text);
        continue;
      }
      gauges[text] = {
        kind: g.kind,
        n: g.n,
        mean: round(g.sum / g.n),
        max: round(g.max),
        last: round(g.last),
        ...(g.kind === 'counter' ? { increase: round(g.last - g.first) } : {}),
        measurement_origin: `server (${Object.keys(g.selector.labels).length > 0 ? 'the label sets named' : 'every label set, summed'}): its value in each good scrape, on the client's clock; mean and max over those scrapes, last the run's end`,
      };
    }
    return {
      url: this.o.url,
      interval_s: this.o.interval_s,
      scrapes: { ok: this.ok, failed: this.failed, skipped_busy: this.skipped, first_failure: this.firstFailure },
      window_s: this.first && this.last ? [this.first.t_s, this.last.t_s] : null,
      histograms,
      ...(this.gauges.size > 0 ? { gauges } : {}),
      absent,
      measurement_origin: "server's own /metrics, scraped by the client every interval_s on an absolute schedule; each scrape's client send time is its t_s in server_metrics.jsonl",
    };
  }
}

/** Two sets of bucket deltas added, bound by bound. */
function addBuckets(a: Buckets | undefined, b: Buckets): Buckets {
  if (!a) return b;
  const sum = new Map<number, number>();
  a.le.forEach((le, i) => sum.set(le, a.cumulative[i]));
  b.le.forEach((le, i) => sum.set(le, (sum.get(le) ?? 0) + b.cumulative[i]));
  const le = [...sum.keys()].sort((x, y) => x - y);
  return { le, cumulative: le.map((x) => sum.get(x) ?? 0), count: a.count + b.count, sum: a.sum + b.sum };
}

/**
 * `--server-metrics URL` given more than once (a model server and a DCGM exporter): one scraper a
 * URL, on one schedule each; each row of server_metrics.jsonl names its `url` when there are several.
 * Their summaries merge into one block: one URL's block is as it always was; several give `urls`
 * and every URL's histograms and gauges (a name two URLs export keeps the first URL's, and is named
 * in `shadowed`).
 */
export class ServerScrapers {
  private readonly scrapers: ServerMetricsScraper[];

  constructor(urls: string[], o: Omit<ServerScraperOptions, 'url'>) {
    const many = urls.length > 1;
    this.scrapers = urls.map(
      (url) =>
        new ServerMetricsScraper({
          ...o,
          url,
          // Several endpoints: each row says which one it is from.
          onRow: many ? (line) => o.onRow(`{"url":${JSON.stringify(url)},${line.slice(1)}`) : o.onRow,
        }),
    );
  }

  start(): void {
    for (const s of this.scrapers) s.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.scrapers.map((s) => s.stop()));
  }

  summary(): ServerMetricsSummary {
    const all = this.scrapers.map((s) => s.summary());
    if (all.length === 1) return all[0];
    const histograms: Record<string, ServerHistogramFigures> = {};
    const gauges: Record<string, ServerGaugeFigures> = {};
    const shadowed: string[] = [];
    const keep = <T>(into: Record<string, T>, from: Record<string, T>, url: string) => {
      for (const [k, v] of Object.entries(from)) {
        if (k in into) shadowed.push(`${k} (${url})`);
        else into[k] = v;
      }
    };
    for (const s of all) {
      keep(histograms, s.histograms, s.url);
      keep(gauges, s.gauges ?? {}, s.url);
    }
    // A name asked for is absent only when no URL carried it.
    const absent = [...new Set(all.flatMap((s) => s.absent))].filter((n) => !(n in histograms) && !(n in gauges));
    const windows = all.map((s) => s.window_s).filter((w): w is [number, number] => w !== null);
    return {
      url: all.map((s) => s.url).join(' '),
      urls: all.map((s) => s.url),
      interval_s: all[0].interval_s,
      scrapes: {
        ok: all.reduce((n, s) => n + s.scrapes.ok, 0),
        failed: all.reduce((n, s) => n + s.scrapes.failed, 0),
        skipped_busy: all.reduce((n, s) => n + s.scrapes.skipped_busy, 0),
        first_failure: all.map((s) => (s.scrapes.first_failure ? `${s.url}: ${s.scrapes.first_failure}` : null)).find((f) => f !== null) ?? null,
      },
      window_s: windows.length > 0 ? [Math.min(...windows.map((w) => w[0])), Math.max(...windows.map((w) => w[1]))] : null,
      histograms,
      ...(Object.keys(gauges).length > 0 || all.some((s) => s.gauges) ? { gauges } : {}),
      absent,
      ...(shadowed.length > 0 ? { shadowed } : {}),
      measurement_origin: `${all[0].measurement_origin}; each of ${all.length} URLs on its own schedule, its rows naming it`,
    };
  }
}
