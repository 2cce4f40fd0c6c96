import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReportData } from './report-data';

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
${(Array.isArray(script) ? script : [script]).map((s) => `<script>${read(join(__dirname, s))}</script>`).join('\n')}
</body>
</html>
`;
}

const PAGE_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 20px; color: #222; }
h1 { font-size: 20px; margin: 0 0 8px; }
h2 { font-size: 16px; margin: 24px 0 4px; }
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

/** The report as one self-contained page: data, chart library and script inlined; it needs no network. */
export function renderReportHtml(data: ReportData): string {
  const s = data.sessions;
  const reasons = Object.entries(s.incomplete_reasons)
    .map(([k, n]) => `${escapeHtml(k)} ${n}`)
    .join(', ');
  const body = `<div class="verdict ${data.verdict.qualified ? 'ok' : 'bad'}" id="verdict">${escapeHtml(data.verdict.line)}</div>
<p class="meta">Sessions: ${s.started} started, ${s.completed} complete, ${s.incomplete} incomplete${reasons ? ` (${reasons})` : ''}. Packets: ${data.packets.sent} sent, ${data.packets.late} late (${data.packet_ms} ms packets).</p>
<p class="meta">Command: <code>${escapeHtml(data.command)}</code></p>
<p class="meta">Host: ${escapeHtml(data.host)}${data.project ? `; project: ${escapeHtml(data.project)}` : ''}</p>
${data.behaviour ? '<div id="behaviour"></div>\n' : ''}<div id="charts"></div>
<h2>Sessions (${data.rows.length}; click a column to sort)</h2>
<p class="origin">client: each session's packets, late packets and largest |deviation|; its stream-window figures; an incomplete session's recorded reason and cause</p>
<div class="scroll"><table id="sessions"><thead></thead><tbody></tbody></table></div>`;
  // A conversation's behaviour comes first: its script draws before report-page.js says the page is ready.
  return page(data.title, body, data, data.behaviour ? ['behaviour-page.js', 'report-page.js'] : 'report-page.js');
}
