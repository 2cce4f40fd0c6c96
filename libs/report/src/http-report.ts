import { access } from 'node:fs/promises';
import { forEachRecord, goodputText, type HttpSummary, type LatencyMs, type RawSteady, type RequestRecord } from '@duplex-bench/http-load';
import { decodeHistogram } from '@duplex-bench/metrics';
import { escapeHtml, page } from './report-html';
import { readJsonFile, runFile } from '@duplex-bench/results';

/** An http run's page data: the summary, per request its times from the run's first intended start, and the ITL distribution. */
export interface HttpReportData {
  kind: 'http';
  title: string;
  summary: HttpSummary;
  /**
   * Columns, one entry per request (null where it never got that far): intended start s; TTFT,
   * E2E and TPOT ms from the time the client let it go (as the summary's); send lag ms.
   */
  requests: { intended_s: number[]; ttft_ms: Array<number | null>; e2e_ms: Array<number | null>; tpot_ms: Array<number | null>; send_lag_ms: Array<number | null>; failed: boolean[] };
  /** The requests drawn: every `every`-th of `of` in start order (all of them up to MAX_DRAWN). */
  drawn: { requests: number; of: number; every: number };
  /** ITL (one value per output chunk) as [ms, fraction at or below], from the run's HDR histogram. */
  itl_cdf: Array<[number, number]>;
}

const round = (v: number, per = 1000) => Math.round(v * per) / per;

/** The most requests the page draws one by one. */
export const MAX_DRAWN = 20_000;

/** An HDR histogram's CDF at up to `points` ranks, denser in the tail: [ms, fraction at or below]. */
export function histogramCdf(encoded: string | undefined, points = 400): Array<[number, number]> {
  if (!encoded) return [];
  const h = decodeHistogram(encoded);
  if (h.totalCount === 0) return [];
  const out: Array<[number, number]> = [];
  for (let k = 0; k < points; k++) {
    // Fractions 0 … 1 - 1e-4, closer together towards the tail.
    const f = 1 - Math.pow(10, -4 * (k / (points - 1)));
    out.push([round(h.getValueAtPercentile(Math.max(0.0001, f * 100)) / 1000), round(f, 1e6)]);
  }
  out.push([round(h.maxValue / 1000), 1]);
  return out;
}

/** The http run in `dir` (summary.json of kind http, requests.jsonl when there), or null when it is not one. */
export async function loadHttpReport(dir: string): Promise<HttpReportData | null> {
  const summary = await readJsonFile<HttpSummary>(runFile(dir, 'summary'));
  if (!summary || summary.kind !== 'http') return null;
  // Line by line, each request kept as its six figures only (a run of hours has millions). Without
  // requests.jsonl (a launched run keeps them per process) the page draws the summary alone.
  type Row = [intended_s: number, ttft: number | null, e2e: number | null, tpot: number | null, lag: number | null, failed: boolean];
  const rows: Row[] = [];
  const path = runFile(dir, 'requests');
  const have = await access(path).then(
    () => true,
    () => false,
  );
  if (have) {
    await forEachRecord(path, (r: RequestRecord) => {
      const from = r.dispatched_s ?? r.intended_s;
      const ms = (to: number | null) => (to === null || r.error !== null ? null : round((to - from) * 1000));
      const tpot = r.error === null && r.first_token_s !== null && r.last_token_s !== null && r.tokens >= 2 ? round(((r.last_token_s - r.first_token_s) * 1000) / (r.tokens - 1)) : null;
      rows.push([r.intended_s, ms(r.first_token_s), ms(r.end_s), tpot, r.started_s === null ? null : round(Math.max(0, (r.started_s - from) * 1000)), r.error !== null]);
    });
  }
  rows.sort((a, b) => a[0] - b[0]);
  const origin = rows[0]?.[0] ?? 0;
  // The page draws at most MAX_DRAWN requests, every k-th in start order: its size stays bounded; the table's percentiles are every request's.
  const stride = Math.max(1, Math.ceil(rows.length / MAX_DRAWN));
  const total = rows.length;
  if (stride > 1) rows.splice(0, rows.length, ...rows.filter((_, i) => i % stride === 0));
  return {
    kind: 'http',
    title: `duplex-bench http: ${dir}`,
    summary,
    requests: {
      intended_s: rows.map((r) => round(r[0] - origin, 1e4)),
      ttft_ms: rows.map((r) => r[1]),
      e2e_ms: rows.map((r) => r[2]),
      tpot_ms: rows.map((r) => r[3]),
      send_lag_ms: rows.map((r) => r[4]),
      failed: rows.map((r) => r[5]),
    },
    drawn: { requests: rows.length, of: total, every: stride },
    itl_cdf: histogramCdf(summary.histograms.itl_raw),
  };
}

const f = (v: number | null) => (v === null ? '-' : String(v));

/** Each figure, our name, unit, and the same figure's name in vLLM, aiperf and guidellm (- where they have none). */
const FIGURE_ROWS: Array<{ key: keyof HttpSummary['latency_ms'] | 'output_tokens_per_s_per_user'; name: string; unit: string; peers: string }> = [
  { key: 'ttft', name: 'TTFT', unit: 'ms', peers: 'vLLM ttft · aiperf time_to_first_token · guidellm time_to_first_token_ms' },
  { key: 'ttst', name: 'TTST', unit: 'ms', peers: 'aiperf time_to_second_token' },
  { key: 'itl', name: 'ITL (per chunk)', unit: 'ms', peers: 'vLLM itl · (aiperf inter_chunk_latency is its mean per request)' },
  { key: 'tpot', name: 'TPOT (per request)', unit: 'ms', peers: 'vLLM tpot · aiperf inter_token_latency · guidellm inter_token_latency_ms' },
  { key: 'time_per_output_token', name: 'TPOT with TTFT', unit: 'ms', peers: 'guidellm time_per_output_token_ms' },
  { key: 'output_tokens_per_s_per_user', name: 'output tokens/s per user', unit: 'tokens/s', peers: 'aiperf output_token_throughput_per_user' },
  { key: 'e2e', name: 'E2E', unit: 'ms', peers: 'vLLM e2el (to its last chunk) · aiperf request_latency · guidellm request_latency (s)' },
  { key: 'first_byte', name: 'first byte', unit: 'ms', peers: '-' },
  { key: 'client_queue', name: 'client queue', unit: 'ms', peers: 'vLLM client_queue_time' },
  { key: 'e2e_including_queue', name: 'E2E with the client queue', unit: 'ms', peers: 'vLLM e2el_including_client_queue' },
];

function figureRows(s: HttpSummary): string {
  const warm = s.warmup_s > 0;
  const row = (name: string, which: string, l: LatencyMs, unit: string, peers: string) =>
    `<tr><td>${escapeHtml(name)}</td><td>${which}</td><td class="num">${l.count}</td><td class="num">${f(l.p50)}</td><td class="num">${f(l.p90)}</td><td class="num">${f(l.p95)}</td><td class="num">${f(l.p99)}</td><td class="num">${f(l.p99_9)}</td><td class="num">${f(l.max)}</td><td>${escapeHtml(unit)}</td><td class="origin">${escapeHtml(peers)}</td></tr>`;
  return FIGURE_ROWS.flatMap((r) => {
    const v: RawSteady | undefined = r.key === 'output_tokens_per_s_per_user' ? s.output_tokens_per_s_per_user : s.latency_ms[r.key];
    if (!v || v.raw.count === 0) return [];
    // Without a warm-up every request is steady: one row, not the same one twice.
    return warm ? [row(r.name, 'steady', v.steady, r.unit, r.peers), row(r.name, 'every request', v.raw, r.unit, r.peers)] : [row(r.name, 'every request', v.raw, r.unit, r.peers)];
  }).join('\n');
}

/** The page: the verdict first, the figure table with each peer's name, then the charts. */
export function renderHttpHtml(data: HttpReportData): string {
  const s = data.summary;
  const load =
    s.load.mode === 'open'
      ? `open loop, ${s.load.rate_rps} requests/s (${s.load.arrivals})${s.load.max_concurrency ? `, at most ${s.load.max_concurrency} in flight (the rest wait in the client's queue)` : ''}`
      : `closed loop, ${s.load.concurrency} in flight`;
  const ended = s as { verdict?: string; failed_reason?: string };
  const failed = ended.verdict === 'failed';
  const verdict = failed
    ? `FAILED: ${ended.failed_reason ?? 'no request completed'}`
    : s.interrupted
      ? 'INTERRUPTED: partial run'
      : s.qualified
        ? `QUALIFIED: every request left within ${s.client.max_send_lag_ms} ms of its intended time`
        : `UNQUALIFIED: ${s.unqualified_reason ?? ''}`;
  const errors = Object.entries(s.requests.errors).map(([k, v]) => `${escapeHtml(k)} ${v}`).join(', ');
  const g = s.goodput;
  const goodput = g
    ? `<p class="meta" id="goodput">Goodput (<code>${escapeHtml(goodputText(g.bounds))}</code> ms, vLLM's rule): ${g.good} of ${s.requests.completed} completed requests good (${g.share === null ? '-' : (g.share * 100).toFixed(1)}%), ${f(g.request_goodput)} requests/s.</p>`
    : '';
  const tokens = s.tokens.origin === 'usage' ? "the server's usage" : s.tokens.origin === 'tokenizer' ? `counted by ${escapeHtml(s.tokens.tokenizer ?? '--tokenizer')}` : s.tokens.origin === 'chunks' ? 'counted chunks (no usage, no --tokenizer)' : escapeHtml(s.tokens.origin);
  const from = s.load.max_concurrency ? "the end of each request's wait in the client's queue" : "each request's intended start";
  const body = `<div class="verdict ${s.qualified && !s.interrupted && !failed ? 'ok' : 'bad'}" id="verdict">${escapeHtml(verdict)}</div>
<p class="meta">${escapeHtml(load)}, ${escapeHtml(s.load.endpoint)}${s.load.stream ? ', streamed' : ''}, max_tokens ${s.load.max_tokens}; ${escapeHtml(s.load.prompts)}.
${s.requests.sent} requests sent, ${s.requests.completed} completed, ${s.requests.failed} failed${errors ? ` (${errors})` : ''}; ${f(s.requests_per_s)} requests/s and ${f(s.output_tokens_per_s)} output tokens/s over ${s.window_s} s; output tokens from ${tokens}.
Client: ${s.client.cpu_cores.total} cores (user ${s.client.cpu_cores.user}, system ${s.client.cpu_cores.system}), loop lag max ${f(s.client.event_loop_lag_ms.max)} ms, peak RSS ${s.client.peak_rss_mib} MiB.</p>
${goodput}<h2>Server figures, from ${from}${s.warmup_s > 0 ? `; steady: ${escapeHtml(s.measurement_origin.steady ?? '')}` : ' (no warm-up: every request is steady)'}</h2>
<table id="latency" class="server"><thead><tr><th>figure</th><th>requests</th><th>count</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th><th>unit</th><th>the same figure in vLLM, aiperf, guidellm</th></tr></thead><tbody>
${figureRows(s)}
</tbody></table>
<div id="charts"></div>`;
  return page(data.title, body, data, 'http-page.js');
}
