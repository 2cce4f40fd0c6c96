import { readFile } from 'node:fs/promises';
import type { HttpSummary, RequestRecord } from '@duplex-bench/http-load';
import { escapeHtml, page } from './report-html';
import { runFile } from '@duplex-bench/results';

/** An http run's page data: the summary, and per request its times from the run's first intended start. */
export interface HttpReportData {
  kind: 'http';
  title: string;
  summary: HttpSummary;
  /** Columns, one entry per request (null where it never got that far): intended start s, TTFT ms, E2E ms, send lag ms. */
  requests: { intended_s: number[]; ttft_ms: Array<number | null>; e2e_ms: Array<number | null>; send_lag_ms: Array<number | null>; failed: boolean[] };
}

const round = (v: number, per = 1000) => Math.round(v * per) / per;

/** The http run in `dir` (summary.json of kind http, requests.jsonl when there), or null when it is not one. */
export async function loadHttpReport(dir: string): Promise<HttpReportData | null> {
  const summary = await readFile(runFile(dir, 'summary'), 'utf8').then((t) => JSON.parse(t) as HttpSummary, () => null);
  if (!summary || summary.kind !== 'http') return null;
  const text = await readFile(runFile(dir, 'requests'), 'utf8').catch(() => '');
  const records = text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as RequestRecord)
    .sort((a, b) => a.intended_s - b.intended_s);
  const origin = records[0]?.intended_s ?? 0;
  const ms = (r: RequestRecord, to: number | null) => (to === null || r.error !== null ? null : round((to - r.intended_s) * 1000));
  return {
    kind: 'http',
    title: `duplex-bench http: ${dir}`,
    summary,
    requests: {
      intended_s: records.map((r) => round(r.intended_s - origin, 1e4)),
      ttft_ms: records.map((r) => ms(r, r.first_token_s)),
      e2e_ms: records.map((r) => ms(r, r.end_s)),
      send_lag_ms: records.map((r) => (r.started_s === null ? null : round(Math.max(0, (r.started_s - r.intended_s) * 1000)))),
      failed: records.map((r) => r.error !== null),
    },
  };
}

const f = (v: number | null) => (v === null ? '-' : String(v));

/** The page: the verdict first, then the percentile table, TTFT and E2E per request, the client's send lag. */
export function renderHttpHtml(data: HttpReportData): string {
  const s = data.summary;
  const load = s.load.mode === 'open' ? `open loop, ${s.load.rate_rps} requests/s (${s.load.arrivals})` : `closed loop, ${s.load.concurrency} in flight`;
  const ended = s as { verdict?: string; failed_reason?: string };
  const failed = ended.verdict === 'failed';
  const verdict = failed
    ? `FAILED: ${ended.failed_reason ?? 'no request completed'}`
    : s.interrupted
      ? 'INTERRUPTED: partial run'
      : s.qualified
        ? `QUALIFIED: every request left within ${s.client.max_send_lag_ms} ms of its intended time`
        : `UNQUALIFIED: ${s.unqualified_reason ?? ''}`;
  const rows = (['ttft', 'itl', 'tpot', 'e2e', 'first_byte'] as const)
    .flatMap((k) =>
      (['steady', 'raw'] as const).map((w) => {
        const l = s.latency_ms[k][w];
        return `<tr><td>${k.toUpperCase()}</td><td>${w}</td><td>${l.count}</td><td>${f(l.p50)}</td><td>${f(l.p90)}</td><td>${f(l.p95)}</td><td>${f(l.p99)}</td><td>${f(l.p99_9)}</td><td>${f(l.max)}</td></tr>`;
      }),
    )
    .join('\n');
  const errors = Object.entries(s.requests.errors).map(([k, v]) => `${escapeHtml(k)} ${v}`).join(', ');
  const body = `<div class="verdict ${s.qualified && !s.interrupted && !failed ? 'ok' : 'bad'}" id="verdict">${escapeHtml(verdict)}</div>
<p class="meta">${escapeHtml(load)}, ${escapeHtml(s.load.endpoint)}${s.load.stream ? ', streamed' : ''}, max_tokens ${s.load.max_tokens}; ${escapeHtml(s.load.prompts)}.
${s.requests.sent} requests sent, ${s.requests.completed} completed, ${s.requests.failed} failed${errors ? ` (${errors})` : ''}; ${f(s.requests_per_s)} requests/s and ${f(s.output_tokens_per_s)} output tokens/s over ${s.window_s} s.
Client: ${s.client.cpu_cores.total} cores (user ${s.client.cpu_cores.user}, system ${s.client.cpu_cores.system}), loop lag max ${f(s.client.event_loop_lag_ms.max)} ms, peak RSS ${s.client.peak_rss_mib} MiB.</p>
<h2>Server latency, ms, from each request's intended start</h2>
<p class="origin">${escapeHtml(s.measurement_origin.ttft ?? '')}; steady: ${escapeHtml(s.measurement_origin.steady ?? '')}</p>
<table id="latency"><thead><tr><th>figure</th><th>requests</th><th>count</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th></tr></thead><tbody>
${rows}
</tbody></table>
<div id="charts"></div>`;
  return page(data.title, body, data, 'http-page.js');
}
