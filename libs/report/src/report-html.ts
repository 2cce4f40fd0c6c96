import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReportData, ServerRow } from './report-data';

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** Inlined JSON that cannot end its script element early. */
const inlineJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * One self-contained page: `body` (HTML), then the data, uPlot (chosen for a 50 KB canvas library
 * that draws 10^6 points fast) and the page's own scripts in order, all inlined; it needs no network.
 */
export function page(title: string, body: string, data: unknown, script: string | string[]): string {
  const dist = join(require.resolve('uplot'), '..');
  const read = (path: string) => readFileSync(path, 'utf8');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>${read(join(dist, 'uPlot.min.css'))}${PAGE_CSS}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
<script type="application/json" id="report-data">${inlineJson(data)}</script>
<script>${read(join(dist, 'uPlot.iife.min.js'))}</script>
${['charts.js', ...(Array.isArray(script) ? script : [script])].map((s) => `<script>${read(join(__dirname, s))}</script>`).join('\n')}
</body>
</html>
`;
}

const PAGE_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 16px 20px; color: #222; }
h1 { font-size: 17px; margin: 0 0 6px; font-weight: 600; }
h2 { font-size: 16px; margin: 24px 0 4px; }
h3 { font-size: 14px; margin: 18px 0 2px; }
h2.part-title { font-size: 18px; border-bottom: 2px solid #444; padding-bottom: 2px; margin-top: 28px; }
.verdicts { display: flex; gap: 12px; margin: 6px 0 10px; align-items: stretch; }
.verdicts .verdict { flex: 1 1 0; margin: 0; }
.verdict .head { font-size: 15px; }
.verdict .sub { font-weight: 400; font-size: 12px; color: #333; margin-top: 3px; }
.verdict ul { margin: 4px 0 0; padding-left: 0; list-style: none; font-weight: 400; font-size: 13px; }
.verdict li.ok::before { content: '✓ '; color: #2ca02c; font-weight: 700; }
.verdict li.bad::before { content: '✗ '; color: #d62728; font-weight: 700; }
.verdict.na { background: #f4f4f4; border: 1px solid #999; }
table.server { font-size: 12.5px; }
table.server td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.server td.group { color: #666; }
table.server td.origin { color: #666; font-size: 11.5px; max-width: 420px; }
.key { font-size: 12px; color: #333; margin: 2px 0; min-height: 18px; }
.key-item { margin-right: 14px; white-space: nowrap; }
.key .swatch { display: inline-block; width: 14px; height: 4px; margin: 0 5px 2px 0; vertical-align: middle; }
.key .swatch.dashed { background-image: linear-gradient(90deg, transparent 50%, #fff 50%) !important; background-size: 6px 4px; }
.key-value { font-variant-numeric: tabular-nums; color: #000; font-weight: 600; }
.key-at { color: #666; font-variant-numeric: tabular-nums; }
.caption { font-size: 12px; color: #333; margin: 6px 0 0; }
td.cell-ok { color: #1a6e1a; }
td.cell-bad { color: #b00000; background: #fdecea; font-weight: 600; }
td.verdict-cell.pass { color: #1a6e1a; font-weight: 600; }
td.verdict-cell.fail { color: #b00000; font-weight: 600; }
td.verdict-cell.client-limited, td.verdict-cell.failed-to-run { color: #555; font-weight: 600; }
a.run-link { margin-right: 6px; }
.verdict { padding: 10px 14px; border-radius: 6px; font-weight: 600; margin: 8px 0; }
.verdict.ok { background: #e6f4ea; border: 1px solid #2ca02c; }
.verdict.bad { background: #fdecea; border: 1px solid #d62728; }
.meta { color: #555; font-size: 13px; }
.meta code { background: #f4f4f4; padding: 1px 4px; word-break: break-all; }
.origin { color: #666; font-size: 12px; margin: 2px 0 6px; }
.empty { color: #999; font-style: italic; }
table { border-collapse: collapse; font-size: 12px; margin-top: 6px; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: left; }
th { background: #f4f4f4; cursor: pointer; position: sticky; top: 0; }
tr.incomplete td { background: #fff4e5; }
.scroll { max-height: 520px; overflow: auto; display: inline-block; }
.legend { font-size: 12px; color: #444; margin: 4px 0; }
.legend .swatch { display: inline-block; width: 12px; height: 10px; margin: 0 4px 0 10px; vertical-align: middle; border: 1px solid #999; }
.legend .swatch:first-child { margin-left: 0; }
.why { color: #555; }
`;

const cell = (v: number | string | null) => (v === null ? '-' : escapeHtml(String(v)));

/** The Server table: every server figure, n, p50, p90, p99, max, unit and origin. */
export function serverTableHtml(rows: ServerRow[]): string {
  if (rows.length === 0) return '<p class="empty" id="server-table">No server figure: the server answered no session.</p>';
  const body = rows
    .map(
      (r) =>
        `<tr><td class="group">${escapeHtml(r.group)}</td><td>${escapeHtml(r.figure)}</td><td class="num">${r.n}</td><td class="num">${cell(r.p50)}</td><td class="num">${cell(r.p90)}</td><td class="num">${cell(r.p99)}</td><td class="num">${cell(r.max)}</td><td>${escapeHtml(r.unit)}</td><td class="origin">${escapeHtml(r.origin)}</td></tr>`,
    )
    .join('\n');
  return `<table class="server" id="server-table"><thead><tr><th>of</th><th>figure</th><th>n</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>unit</th><th>origin</th></tr></thead><tbody>
${body}
</tbody></table>`;
}

/** The two verdicts side by side: the client's pacing (is this a server measurement?) and the server against the SLO. */
export function verdictsHtml(data: Pick<ReportData, 'verdict' | 'server_verdict' | 'packets' | 'packet_ms'>): string {
  const v = data.verdict;
  const sv = data.server_verdict;
  const measured = v.qualified && !v.interrupted;
  const serverClass = !measured ? 'na' : sv.pass ? 'ok' : 'bad';
  const serverHead = !measured ? `Server: ${sv.pass ? 'met' : 'missed'} the SLO, but this run is no server measurement` : sv.pass ? 'Server: PASS, every SLO term met' : 'Server: FAIL, an SLO term missed';
  const terms = sv.terms.map((t) => `<li class="${t.ok ? 'ok' : 'bad'}" title="${escapeHtml(t.what)}"><code>${escapeHtml(t.term)}</code>: ${t.value === null ? 'no such figure in this run' : escapeHtml(String(t.value))}</li>`).join('');
  return `<div class="verdicts">
<div class="verdict ${v.qualified ? 'ok' : 'bad'}" id="verdict"><div class="head">Client pacing: ${escapeHtml(v.line)}</div><div class="sub">${data.packets.sent} packets sent, ${data.packets.late} late (over ${data.packet_ms} ms from schedule)</div></div>
<div class="verdict ${serverClass}" id="server-verdict"><div class="head">${escapeHtml(serverHead)}</div><div class="sub">SLO <code>${escapeHtml(sv.slo)}</code> (${escapeHtml(sv.source)})</div><ul>${terms}</ul></div>
</div>`;
}

/** The report as one self-contained page: data, chart library and script inlined; it needs no network. */
export function renderReportHtml(data: ReportData): string {
  const s = data.sessions;
  const reasons = Object.entries(s.incomplete_reasons)
    .map(([k, n]) => `${escapeHtml(k)} ${n}`)
    .join(', ');
  const body = `${verdictsHtml(data)}
<p class="meta">Sessions: ${s.started} started, ${s.completed} complete, ${s.incomplete} incomplete${reasons ? ` (${reasons})` : ''}. Command: <code id="command">${escapeHtml(data.command)}</code></p>
${serverTableHtml(data.server_table)}
<p class="meta">Host: ${escapeHtml(data.host)}${data.project ? `; project: ${escapeHtml(data.project)}` : ''}</p>
${data.behaviour ? '<div id="behaviour"></div>\n' : ''}<div id="charts"></div>
<h2>Sessions (${data.rows.length}; worst first; click a column to sort)</h2>
<p class="origin">worst first: incomplete, then late packets, underruns, the longest output gap, stream TTFP. client: each session's packets and largest |deviation|; its stream-window figures; an incomplete session's recorded reason and cause</p>
<div class="scroll"><table id="sessions"><thead></thead><tbody></tbody></table></div>`;
  // A conversation's behaviour comes first: its script draws before report-page.js says the page is ready.
  return page(data.title, body, data, data.behaviour ? ['behaviour-page.js', 'report-page.js'] : 'report-page.js');
}
