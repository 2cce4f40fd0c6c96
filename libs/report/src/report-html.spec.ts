import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReportData, ServerRow } from './report-data';
import { escapeHtml, page, renderReportHtml, serverTableHtml, verdictsHtml } from './report-html';

/** The JSON a page inlines, parsed back. */
const inlined = (html: string): unknown => JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)?.[1] ?? 'null');
const script = (name: string) => readFileSync(join(__dirname, name), 'utf8');

const row = (over: Partial<ServerRow> = {}): ServerRow => ({ group: 'responses', figure: 'TTFP', n: 12, p50: 210.5, p90: 380, p99: 512.25, max: 530, unit: 'ms', origin: 'client: response.created received', ...over });

type VerdictInput = Parameters<typeof verdictsHtml>[0];
function verdicts(over: { qualified?: boolean; interrupted?: boolean; pass?: boolean; terms?: VerdictInput['server_verdict']['terms'] } = {}): VerdictInput {
  return {
    verdict: { qualified: over.qualified ?? true, interrupted: over.interrupted ?? false, line: 'QUALIFIED: no packet late' },
    server_verdict: { slo: 'ttfp_p99_ms<=1000', source: '--slo', pass: over.pass ?? true, terms: over.terms ?? [{ term: 'ttfp_p99_ms<=1000', value: 512, ok: true, what: 'TTFP p99' }] },
    packets: { sent: 250, late: 3 },
    packet_ms: 80,
  };
}

/** A run's page data, every figure empty but the ones the first screen prints. */
function reportData(over: Partial<ReportData> = {}): ReportData {
  return {
    kind: 'run',
    title: 'duplex-bench run: /runs/a',
    dir: '/runs/a',
    ...verdicts(),
    sessions: { started: 4, completed: 1, incomplete: 3, incomplete_reasons: { admission_refused: 2, timeout: 1 } },
    command: "duplex-bench run --url 'ws://h/x?a=1&b=2'",
    host: 'linux x64, 2 cores',
    project: 'duplex-bench 0.1.0',
    bin_s: 0.5,
    pacing: { t_s: [], p50_ms: [], p99_ms: [], max_ms: [], late: [], packets: [] },
    cdf: [],
    timelines: [],
    server_view: null,
    responses: { ttft_ms: {}, ttfp_ms: {}, rtf: {}, tpot_ms: {} },
    stream: { ttfp_ms: [], rtf: [], output_gap_max_ms: [], playback_underruns: [] },
    rows: [],
    units: null,
    video: null,
    summary_origin: {},
    behaviour: null,
    server_metrics: null,
    stalls: null,
    receive_delay: null,
    server_table: [row()],
    ...over,
  };
}

describe('escapeHtml', () => {
  it('escapes the five characters that can open markup or end an attribute, and nothing else', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a> ok`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt; ok');
  });

  it('escapes an ampersand that already starts an entity, so the text reads back as written', () => {
    expect(escapeHtml('&lt;')).toBe('&amp;lt;');
  });
});

describe('a self-contained page', () => {
  it('escapes its title in the head and the heading', () => {
    const html = page('run <b>&</b>', '<p id="body">x</p>', {}, 'report-page.js');
    expect(html).toContain('<title>run &lt;b&gt;&amp;&lt;/b&gt;</title>');
    expect(html).toContain('<h1>run &lt;b&gt;&amp;&lt;/b&gt;</h1>');
    expect(html).toContain('<p id="body">x</p>');
  });

  it('inlines its data as JSON that reads back whole, even when a string in it closes a script element', () => {
    const data = { note: '</script><script>alert(1)</script>', n: [1, 2.5, null] };
    const html = page('t', '', data, 'report-page.js');
    expect(inlined(html)).toEqual(data);
    expect(html).not.toContain('</script><script>alert(1)');
  });

  it('inlines uPlot, the shared charts and then the page scripts in the order given, and loads nothing from elsewhere', () => {
    const html = page('t', '', {}, ['behaviour-page.js', 'report-page.js']);
    const at = ['charts.js', 'behaviour-page.js', 'report-page.js'].map((name) => html.indexOf(`<script>${script(name)}</script>`));
    expect(at.every((i) => i > 0)).toBe(true);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(html.indexOf(readFileSync(join(require.resolve('uplot'), '..', 'uPlot.iife.min.js'), 'utf8'))).toBeLessThan(at[0]);
    expect(html).not.toMatch(/<script[^>]* src=|<link[^>]* href=/);
  });
});

describe('the Server table', () => {
  it('says the server answered no session when there is no figure', () => {
    expect(serverTableHtml([])).toBe('<p class="empty" id="server-table">No server figure: the server answered no session.</p>');
  });

  it('puts each figure in a row of group, name, n, p50, p90, p99, max, unit and origin; a missing value reads "-"', () => {
    const html = serverTableHtml([row(), row({ group: 'streams', figure: 'stream RTF <p99>', n: 0, p50: null, p90: null, p99: null, max: null, unit: '', origin: 'a & b' })]);
    const rows = html.match(/<tr><td.*?<\/tr>/g) ?? [];
    const cells = rows.map((r) => [...r.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((m) => m[1]));
    expect(cells).toEqual([
      ['responses', 'TTFP', '12', '210.5', '380', '512.25', '530', 'ms', 'client: response.created received'],
      ['streams', 'stream RTF &lt;p99&gt;', '0', '-', '-', '-', '-', '', 'a &amp; b'],
    ]);
    expect(html).toMatch(/^<table class="server" id="server-table">/);
  });
});

describe('the two verdicts', () => {
  const serverBox = (html: string) => /<div class="verdict (\w+)" id="server-verdict"><div class="head">(.*?)<\/div>/.exec(html)?.slice(1);

  it('a measured run that meets every term: client ok, server PASS', () => {
    const html = verdictsHtml(verdicts());
    expect(html).toContain('<div class="verdict ok" id="verdict"><div class="head">Client pacing: QUALIFIED: no packet late</div>');
    expect(html).toContain('250 packets sent, 3 late (over 80 ms from schedule)');
    expect(serverBox(html)).toEqual(['ok', 'Server: PASS, every SLO term met']);
  });

  it('a measured run that misses a term: server FAIL, the missed term marked bad and a missing figure said', () => {
    const html = verdictsHtml(
      verdicts({
        pass: false,
        terms: [
          { term: 'ttfp_p99_ms<=1000', value: 1500, ok: false, what: 'TTFP "p99"' },
          { term: 'underruns=0', value: null, ok: false, what: 'underruns' },
        ],
      }),
    );
    expect(serverBox(html)).toEqual(['bad', 'Server: FAIL, an SLO term missed']);
    expect(html).toContain('<li class="bad" title="TTFP &quot;p99&quot;"><code>ttfp_p99_ms&lt;=1000</code>: 1500</li>');
    expect(html).toContain('<li class="bad" title="underruns"><code>underruns=0</code>: no such figure in this run</li>');
  });

  it('an unqualified or interrupted run is no server measurement, whatever the SLO says', () => {
    const unqualified = verdictsHtml(verdicts({ qualified: false }));
    expect(unqualified).toContain('<div class="verdict bad" id="verdict">');
    expect(serverBox(unqualified)).toEqual(['na', 'Server: met the SLO, but this run is no server measurement']);
    expect(serverBox(verdictsHtml(verdicts({ interrupted: true, pass: false })))).toEqual(['na', 'Server: missed the SLO, but this run is no server measurement']);
  });
});

describe("a run's page", () => {
  it('counts the sessions with each incomplete reason, and prints the command, host and project escaped', () => {
    const html = renderReportHtml(reportData());
    expect(html).toContain('Sessions: 4 started, 1 complete, 3 incomplete (admission_refused 2, timeout 1).');
    expect(html).toContain('<code id="command">duplex-bench run --url &#39;ws://h/x?a=1&amp;b=2&#39;</code>');
    expect(html).toContain('Host: linux x64, 2 cores; project: duplex-bench 0.1.0</p>');
    expect(html).toContain('id="server-table"');
    expect(inlined(html)).toMatchObject({ kind: 'run', dir: '/runs/a', sessions: { started: 4 } });
  });

  it('leaves out the reasons when every session completed, and the project when there is none', () => {
    const html = renderReportHtml(reportData({ sessions: { started: 2, completed: 2, incomplete: 0, incomplete_reasons: {} }, project: '' }));
    expect(html).toContain('Sessions: 2 started, 2 complete, 0 incomplete. Command:');
    expect(html).toContain('Host: linux x64, 2 cores</p>');
  });

  it('heads the sessions table with the number of rows', () => {
    const rows = [{ id: 's0' }, { id: 's1' }, { id: 's2' }] as ReportData['rows'];
    expect(renderReportHtml(reportData({ rows }))).toContain('<h2>Sessions (3; worst first; click a column to sort)</h2>');
  });
});
