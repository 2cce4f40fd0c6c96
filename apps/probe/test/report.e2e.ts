import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startHttpStub, startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { probe } from './in-process.spec-helpers';
import { runBounded } from './spawn.spec-helpers';

/** The executable a user runs: the compiled kit (a conversation's VAD thread runs from dist/). */
const BIN = join(__dirname, '..', '..', '..', 'bin', 'duplex-bench.js');

jest.setTimeout(90_000);

/** Debian's chromium; `.ci/run` installs it. Elsewhere without it these tests are skipped, and say so. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && !process.env.CI) process.stderr.write(`report browser tests skipped: no ${CHROMIUM} (apt-get install chromium)\n`);

(haveBrowser || process.env.CI ? describe : describe.skip)('report, opened in Chromium', () => {
  let mock: MockServer;
  let browser: Browser;
  beforeAll(async () => {
    // It stamps each frame it sends: the report states the client's receive delay.
    mock = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5 }, stamp_sends: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await mock?.close();
  });

  /** Opens a report; returns console errors, how many canvases drew no pixel, the table's rows, a screenshot's path, and what `inspect` found on the page. */
  async function open<T = null>(html: string, inspect?: (page: Page) => Promise<T>) {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    // No network: any request other than the file itself fails the test.
    await page.route('**', (route) => (route.request().url().startsWith('file://') ? route.continue() : route.abort()));
    await page.goto(`file://${html}`);
    await page.waitForFunction(() => (globalThis as unknown as { reportReady?: boolean }).reportReady === true, null, { timeout: 15_000 });
    type Canvas = { width: number; height: number; getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } };
    const canvases = await page.$$eval('canvas', (list) =>
      list.map((element) => {
        const c = element as unknown as Canvas;
        const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        let drawn = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i] > 0) drawn++;
        return drawn;
      }),
    );
    const rows = await page.$$eval('#sessions tbody tr', (r) => r.length);
    const verdict = await page.textContent('#verdict');
    const shot = html.replace(/\.html$/, '.png');
    await page.screenshot({ path: shot, fullPage: true });
    const found = inspect ? await inspect(page) : null;
    // Sorting by late packets, descending, puts the row with the most first (run pages; a sweep's table does not sort).
    let firstLate: number | null = null;
    if (await page.$('#sessions th[data-key="late"]')) {
      await page.click('#sessions th[data-key="late"]');
      await page.click('#sessions th[data-key="late"]');
      firstLate = await page.$eval('#sessions tbody tr td:nth-child(4)', (td) => Number(td.textContent));
    }
    await page.close();
    return { errors, canvases, rows, verdict, shot, firstLate, found };
  }

  /** Pixels drawn in the first canvas under `selector`. */
  const drawn = (page: Page, selector: string) =>
    page.$eval(`${selector} canvas`, (element) => {
      const c = element as unknown as { width: number; height: number; getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } };
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
      return n;
    });

  it('run --conversation --report: one session’s timeline, each latency’s distribution and the rates, each with its unit and origin', async () => {
    const behaviourMock = await startMockServer({ port: 0, profile: 'nemotron', behaviour: { conversation: 'default', respond_after_ms: 400, stop_after_ms: 200 } });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'report-conversation-'));
      // The page is the subject here, not the pacing: a late packet on a busy host (exit 3) still writes it.
      const args = [BIN, 'run', '--url', behaviourMock.url, '--conversation', 'default', '--concurrency', '2', '--duration', '25', '--output', dir, '--quiet', '--report', '--allow-unqualified'];
      const { code, stderr } = await runBounded(process.execPath, args, { bound_ms: 75_000, label: 'duplex-bench run' });
      expect(stderr).not.toMatch(/error/);
      expect(code).toBe(0);
      const page = await open(join(dir, 'report.html'), async (p) => {
        const text = (selector: string) => p.$eval(selector, (e) => e.textContent ?? '');
        const before = { why: await text('#timeline-why'), drawn: await drawn(p, '#timeline-chart') };
        const options = await p.$$eval('#timeline-session option', (list) => list.map((o) => o.textContent ?? ''));
        const kinds = await p.$$eval('#timeline-events tr td:nth-child(2)', (list) => list.map((td) => td.textContent ?? ''));
        // The other session, chosen: drawn again, and said so.
        await p.selectOption('#timeline-session', { index: 1 - Number(await p.$eval('#timeline-session', (e) => (e as unknown as { value: string }).value)) });
        return {
          before,
          after: { why: await text('#timeline-why'), drawn: await drawn(p, '#timeline-chart') },
          options,
          kinds,
          headings: await p.$$eval('#behaviour h2', (list) => list.map((h) => h.textContent ?? '')),
          responseOrigin: await text('#dist-response_latency_ms .origin'),
          responseDrawn: await drawn(p, '#dist-response_latency_ms'),
          stopDrawn: await drawn(p, '#dist-stop_latency_ms'),
          rates: await text('#rates'),
          intervals: await p.$$eval('#rates svg rect', (list) => list.length),
        };
      });
      expect(page.errors).toEqual([]);
      expect(page.canvases.filter((n) => n === 0)).toEqual([]);
      expect(page.rows).toBe(2);
      const f = page.found as NonNullable<typeof page.found>;
      expect(f.options).toHaveLength(2);
      expect(f.before.why).toMatch(/median response latency \(\d+(\.\d)? ms\)/);
      expect(f.before.why).toMatch(/from the VAD/);
      expect(f.before.drawn).toBeGreaterThan(1000);
      expect(f.after.why).toMatch(/chosen here/);
      expect(f.after.drawn).toBeGreaterThan(1000);
      expect(f.kinds).toEqual(expect.arrayContaining(['response', 'stop', 'pause', 'backchannel']));
      expect(f.headings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^One session's timeline \(s since/),
          expect.stringMatching(/^Response latency per event \(ms\), n \d+/),
          expect.stringMatching(/^Stop latency per event \(ms\), n \d+/),
          expect.stringMatching(/^Cancel latency per event \(ms\), n 0/),
          expect.stringMatching(/^Pause takeover and backchannel yield rates \(fraction of events, 95% Wilson interval\)/),
        ]),
      );
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as { behaviour: { measurement_origin: Record<string, string> } };
      expect(f.responseOrigin).toBe(`origin: ${summary.behaviour.measurement_origin.response_latency_ms}`);
      expect(f.responseDrawn).toBeGreaterThan(0);
      expect(f.stopDrawn).toBeGreaterThan(0);
      expect(f.rates).toMatch(/Pause takeover rate: [\d.]+ \[[\d.]+–[\d.]+\], n 2 pauses/);
      expect(f.intervals).toBe(2);
      process.stderr.write(`conversation report screenshot: ${page.shot}\n`);
      await stat(page.shot);
    } finally {
      await behaviourMock.close();
    }
  });

  it('run --report: the first screen holds both verdicts and the Server table; legends are keys at rest; time charts share a cursor; sessions worst first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'report-run-'));
    const { code, stderr } = await probe(['run', '--url', mock.url, '--concurrency', '6', '--duration', '2', '--output', dir, '--quiet', '--report', '--allow-unqualified']);
    expect(code).toBe(0);
    expect(stderr).toContain(`report written to ${join(dir, 'report.html')}`);
    const html = join(dir, 'report.html');
    expect((await stat(html)).size).toBeLessThan(3_000_000);
    type Box = { top: number; bottom: number };
    const page = await open(html, async (p) => {
      const box = async (selector: string): Promise<Box> => {
        const b = await p.$eval(selector, (e) => (e as unknown as { getBoundingClientRect(): { top: number; bottom: number } }).getBoundingClientRect());
        return { top: b.top, bottom: b.bottom };
      };
      const ttfp = await p.$$eval('#server-table tbody tr', (rows) =>
        rows.map((r) => Array.from(r.children).map((c) => (c as unknown as { textContent: string }).textContent)).find((cells) => cells[1] === 'TTFP' && cells[8].startsWith('client')),
      );
      // Every legend at rest: keys and labels only, nothing of uPlot's own legend, no "--".
      const legends = await p.$$eval('.key', (list) => list.map((k) => k.textContent ?? ''));
      const uplotLegends = await p.$$eval('.u-legend', (list) => list.length);
      const timeCharts = await p.$$eval('.uplot[data-time="true"]', (list) => list.length);
      const synced = await p.evaluate(() => (globalThis as unknown as { uPlot: { sync(key: string): { plots: unknown[] } } }).uPlot.sync('time').plots.length);
      // The cursor on the pacing chart moves the cursor of every other time chart to the same time.
      const over = await p.$$('#client-charts .uplot[data-time="true"] .u-over');
      await over[0].scrollIntoViewIfNeeded();
      const first = await over[0].boundingBox();
      if (!first) throw new Error('no time chart box');
      await p.mouse.move(first.x + first.width * 0.5, first.y + first.height * 0.5);
      type Plot = { root: { dataset: { time: string }; closest(s: string): unknown }; cursor: { idx: number | null }; data: number[][] };
      const cursors = await p.evaluate(() =>
        (globalThis as unknown as { DB: { plots: Plot[] } }).DB.plots
          .filter((u) => u.root.dataset.time === 'true')
          .map((u) => ({ client: u.root.closest('#client-charts') !== null, at: u.cursor.idx === null || u.cursor.idx === undefined ? null : u.data[0][u.cursor.idx] })),
      );
      const hovered = await p.$$eval('#client-charts .uplot[data-time="true"]', (list) => list.map((u) => u.parentElement?.parentElement?.querySelector('.key-value')?.textContent ?? ''));
      const order = await p.$$eval('#sessions tbody tr', (rows) => rows.map((r) => (r.children[0] as unknown as { textContent: string }).textContent));
      return { verdict: await box('#verdict'), server: await box('#server-verdict'), table: await box('#server-table'), ttfp, legends, uplotLegends, timeCharts, synced, cursors, hovered, order, text: await p.textContent('#server-verdict'), command: await p.textContent('#command'), receive: await p.textContent('#receive-delay') };
    });
    expect(page.errors).toEqual([]);
    expect(page.canvases.length).toBeGreaterThanOrEqual(8);
    expect(page.canvases.filter((drawn) => drawn === 0)).toEqual([]);
    expect(page.rows).toBe(6);
    expect(page.verdict).toMatch(/^Client pacing: (UN)?QUALIFIED/);
    const f = page.found as NonNullable<typeof page.found>;
    // Both verdicts and the whole Server table, TTFP's p50 and p99 in it, inside the first 900 px.
    for (const b of [f.verdict, f.server, f.table]) expect(b.bottom).toBeLessThanOrEqual(900);
    expect(f.verdict.top).toBe(f.server.top);
    expect(f.text).toMatch(/^Server: PASS/);
    // The command as typed, --report included, to paste back.
    expect(f.command).toBe(`duplex-bench run --url ${mock.url} --concurrency 6 --duration 2 --output ${dir} --quiet --report --allow-unqualified`);
    expect(f.text).toMatch(/ttfp_p99_ms<=1000: [\d.]+/);
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as { duplex: { ttfp_ms: { p50: number; p99: number } } };
    expect(f.ttfp?.slice(2, 6)).toEqual(['6', String(summary.duplex.ttfp_ms.p50), expect.any(String), String(summary.duplex.ttfp_ms.p99)]);
    expect(f.legends.length).toBeGreaterThanOrEqual(8);
    expect(f.legends.filter((l) => l.includes('--') || l.trim() === '')).toEqual([]);
    expect(f.uplotLegends).toBe(0);
    expect(f.timeCharts).toBeGreaterThanOrEqual(4);
    expect(f.synced).toBe(f.timeCharts);
    // Every time chart's cursor moved with it; the client's binned charts sit at one time (to their 0.5 s bins).
    expect(f.cursors.every((c) => c.at !== null)).toBe(true);
    const times = f.cursors.filter((c) => c.client).map((c) => c.at as number);
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...times) - Math.min(...times)).toBeLessThanOrEqual(0.6);
    expect(f.hovered.every((v) => v.trim() !== '')).toBe(true);
    expect(f.order).toHaveLength(6);
    expect(f.receive).toMatch(/^p50 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms over \d+ frames$/);
    expect(page.firstLate).toBe(0);
    process.stderr.write(`report screenshot: ${page.shot}\n`);
    await stat(page.shot);
  });

  it("run --server-metrics --report: the server's histogram over the run beside the client's, and per scrape interval on the run's axis", async () => {
    // A server whose vLLM-Omni TTFP histogram takes 10 answers in (0.1, 0.2] s and 10 in (0.2, 0.5] s at every scrape.
    let n = 0;
    const server = createServer((_req, res) => {
      n += 10;
      const b = (le: string, v: number) => `vllm:omni_audio_ttfp_s_bucket{stage="1",le="${le}"} ${v}`;
      res.end(['# TYPE vllm:omni_audio_ttfp_s histogram', b('0.1', 0), b('0.2', n), b('0.5', 2 * n), b('+Inf', 2 * n), `vllm:omni_audio_ttfp_s_count{stage="1"} ${2 * n}`, `vllm:omni_audio_ttfp_s_sum{stage="1"} ${n * 0.45}`, ''].join('\n'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const metricsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    const dir = await mkdtemp(join(tmpdir(), 'report-server-'));
    try {
      const { code } = await probe(['run', '--url', mock.url, '--concurrency', '4', '--duration', '4', '--output', dir, '--quiet', '--report', '--allow-unqualified', '--server-metrics', metricsUrl, '--server-metrics-interval-s', '0.5']);
      expect(code).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
    const page = await open(join(dir, 'report.html'), async (p) => ({
      table: await p.$$eval('table.server-figures tr', (rows) => rows.map((r) => Array.from(r.children).map((cell) => (cell as unknown as { textContent: string }).textContent))),
      pixels: await p.$eval('table.server-figures', (t) => {
        const c = t.parentElement?.querySelector('canvas') as unknown as { width: number; height: number; getContext(k: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } } | null;
        if (!c) return 0;
        const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        let drawn = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i] > 0) drawn++;
        return drawn;
      }),
    }));
    expect(page.errors).toEqual([]);
    const found = page.found;
    if (!found) throw new Error('nothing inspected');
    expect(found.table[0]).toEqual(['histogram', 'unit', 'n', 'p50', 'p90', 'p99', 'client, same kind']);
    // p50 at the top of (0.1, 0.2], p90 32/40 into (0.2, 0.5]: what moved during the run, in ms.
    expect(found.table[1].slice(0, 2)).toEqual(['vllm:omni_audio_ttfp_s', 'ms']);
    expect(found.table[1].slice(3, 5)).toEqual(['200', '440']);
    expect(found.table[1][6]).toMatch(/^duplex\.ttfp_ms: p50 \d/);
    expect(found.pixels).toBeGreaterThan(0);
    process.stderr.write(`report screenshot: ${page.shot}\n`);
  });

  it('run --sampler --report: each client stall in a table with its cause and evidence', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'report-stalls-'));
    const { code } = await probe(['run', '--url', mock.url, '--concurrency', '4', '--duration', '3', '--output', dir, '--quiet', '--report', '--sampler', '--inject-stall-ms', '300', '--allow-unqualified']);
    expect(code).toBe(0);
    const page = await open(join(dir, 'report.html'), (p) => p.$$eval('table.stalls tr', (rows) => rows.map((r) => Array.from(r.children).map((cell) => (cell as unknown as { textContent: string }).textContent))));
    expect(page.errors).toEqual([]);
    const rows = page.found ?? [];
    expect(rows[0]).toEqual(['s after the gate', 'ms', 'cause', 'GC ms', 'looks (states)', 'ran / waited ms', 'kernel function (D)']);
    // The page shows the summary's stalls, each with its time, length and cause, the injected one among them.
    // Which cause a stall gets is judged where nothing shares the cores (sampler.alone.e2e.ts): here
    // three files run at once and a stall that was busy may be read as cpu_wait.
    const { stalls } = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as { stalls: { list: Array<{ t_s: number; ms: number; cause: string }> } };
    expect(rows.slice(1).map((r) => r.slice(0, 3))).toEqual(stalls.list.slice(0, 100).map((x) => [String(x.t_s), String(Math.round(x.ms)), x.cause]));
    expect(rows.slice(1).some((r) => Number(r[1]) >= 250 && r[2] !== '')).toBe(true);
    process.stderr.write(`report screenshot: ${page.shot}\n`);
  });

  it('a recording and an unqualified run: the verdict says why, the late packets sort first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'report-unq-'));
    const { code } = await probe(['run', '--url', mock.url, '--concurrency', '4', '--duration', '2', '--output', dir, '--quiet', '--inject-stall-ms', '300', '--start-spread-ms', '0', '--report']);
    expect(code).toBe(3);
    const page = await open(join(dir, 'report.html'));
    expect(page.errors).toEqual([]);
    expect(page.verdict).toMatch(/^Client pacing: UNQUALIFIED: \d+ late packet/);
    expect(page.firstLate).toBeGreaterThan(0);

    const rec = await mkdtemp(join(tmpdir(), 'report-rec-'));
    const recorded = await probe(['record', '--url', mock.url, '--output', rec, '--concurrency', '4', '--per-subset', '1', '--min-input-s', '1', '--max-input-s', '1.5', '--postprocess', 'off', '--report']);
    expect(recorded.code).toBe(0);
    const recPage = await open(join(rec, 'report.html'));
    expect(recPage.errors).toEqual([]);
    expect(recPage.rows).toBe(8);
    expect(await readFile(join(rec, 'report.html'), 'utf8')).toContain('duplex-bench recording');
  });

  it('http --report: one row per figure without a warm-up, with the peers\' names; TTFT and E2E in panels of their own, ITL and TPOT, requests and tokens per second offered against achieved', async () => {
    const stub = await startHttpStub({ kind: 'variable-response', first_chunk_ms: 50, inter_token_ms: 5, output_len_mean: 10 });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'report-http-'));
      const { code } = await probe(['http', '--url', stub.url, '--rate', '40', '--requests', '60', '--output', dir, '--quiet', '--report', '--allow-unqualified', '--goodput', 'ttft:300']);
      expect(code).toBe(0);
      const page = await open(join(dir, 'report.html'), async (p) => ({
        rows: await p.$$eval('#latency tbody tr', (list) => list.map((tr) => Array.from(tr.children).map((c) => (c as unknown as { textContent: string }).textContent))),
        headings: await p.$$eval('#charts h2', (list) => list.map((h) => h.textContent ?? '')),
        synced: await p.evaluate(() => (globalThis as unknown as { uPlot: { sync(key: string): { plots: unknown[] } } }).uPlot.sync('time').plots.length),
        goodput: await p.textContent('#goodput'),
      }));
      expect(page.errors).toEqual([]);
      expect(page.canvases.filter((drawn) => drawn === 0)).toEqual([]);
      expect(page.verdict).toMatch(/QUALIFIED/);
      const f = page.found as NonNullable<typeof page.found>;
      // No warm-up: one row per figure, never a steady row beside a raw one that repeats it.
      const names = f.rows.map((r) => r[0]);
      expect(new Set(names).size).toBe(names.length);
      expect(f.rows.every((r) => r[1] === 'every request')).toBe(true);
      expect(f.rows.find((r) => r[0] === 'TTFT')?.slice(2, 3)).toEqual(['60']);
      expect(f.rows.find((r) => r[0] === 'TPOT (per request)')?.[10]).toMatch(/aiperf inter_token_latency/);
      expect(f.headings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^Requests per second over the run: offered/),
          expect.stringMatching(/^Output per second over the run/),
          'TTFT of each request, ms',
          'E2E of each request, ms',
          'TPOT of each request, ms',
          'TTFT, cumulative (ms)',
          'E2E, cumulative (ms)',
          expect.stringMatching(/^ITL \(between output chunks\), cumulative/),
        ]),
      );
      // The per-second, per-request and send-lag charts share one cursor.
      expect(f.synced).toBeGreaterThanOrEqual(6);
      expect(f.goodput).toMatch(/^Goodput \(ttft:300 ms, vLLM's rule\): \d+ of 60 completed requests good/);
      process.stderr.write(`http report screenshot: ${page.shot}\n`);
    } finally {
      await stub.close();
    }
  });

  it('a real sweep: the knee a labelled band, the deciding term in the banner, every tested count linked to its run page, which opens', async () => {
    const capped = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5 }, capacity_sessions: 6 });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'report-real-sweep-'));
      const { code } = await probe(['sweep', '--url', capped.url, '--sessions', '2:16', '--runs', '1', '--duration', '2', '--resolution', '2', '--output', dir, '--report']);
      expect(code).toBe(0);
      const page = await open(join(dir, 'report.html'), async (p) => ({
        links: await p.$$eval('#sessions a.run-link', (list) => list.map((a) => (a as unknown as { href: string }).href)),
        tested: await p.$$eval('#sessions tbody tr td:first-child', (list) => list.map((td) => Number(td.textContent))),
        badCells: await p.$$eval('#sessions td.cell-bad', (list) => list.length),
        deciding: await p.textContent('#deciding'),
      }));
      expect(page.errors).toEqual([]);
      const sweep = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as { points: unknown[]; capacity: { range: [number, number] } };
      const f = page.found as NonNullable<typeof page.found>;
      expect(f.links).toHaveLength(sweep.points.length);
      expect([...f.tested].sort((a, b) => a - b)).toEqual(sweep.points.map((_, i) => i + 1));
      expect(f.badCells).toBeGreaterThan(0);
      expect(f.deciding).toMatch(new RegExp(`^decided by: .+ at ${sweep.capacity.range[1]} sessions$`));
      // Each link opens its run's own page, drawn, with no error.
      for (const href of f.links) {
        const run = await open(href.replace(/^file:\/\//, ''));
        expect(run.errors).toEqual([]);
        expect(run.verdict).toMatch(/^Client pacing: /);
        expect(run.canvases.filter((n) => n === 0)).toEqual([]);
      }
      process.stderr.write(`real sweep report screenshot: ${page.shot}\n`);
    } finally {
      await capped.close();
    }
  });

  it('a sweep directory: its capacity first, one chart per SLO term with the capacity marked, one row per count', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'report-sweep-'));
    const run = (qualified: boolean, underruns: number, ttfp: number) => ({
      dir: '',
      code: 0,
      qualified,
      slo: [
        { term: 'underruns=0', value: underruns, ok: underruns === 0 },
        { term: 'ttfp_p99_ms<=1000', value: ttfp, ok: ttfp <= 1000 },
      ],
    });
    const sweep = {
      format: 'duplex-bench.sweep',
      version: 1,
      settings: { url: 'ws://127.0.0.1:1/v1/realtime', protocol: 'native', duration_s: 4, runs: 2, slo: 'underruns=0,ttfp_p99_ms<=1000', run_args: '' },
      points: [
        { sessions: 8, runs: [run(true, 0, 200), run(true, 0, 201)], verdict: 'pass' },
        { sessions: 16, runs: [run(true, 0, 210), run(true, 0, 205)], verdict: 'pass' },
        { sessions: 32, runs: [run(true, 900, 260), run(true, 850, 270)], verdict: 'fail' },
      ],
      capacity: { sessions: 16, range: [16, 32], limited_by: 'server', note: 'passes at 16, fails at 32' },
      interrupted: false,
      measurement_origin: { verdict: 'pass: …' },
    };
    await writeFile(join(dir, 'sweep.json'), JSON.stringify(sweep));
    const { code } = await probe(['report', dir]);
    expect(code).toBe(0);
    const page = await open(join(dir, 'report.html'));
    expect(page.errors).toEqual([]);
    expect(page.verdict).toBe('capacity: 16 sessions (server: passes at 16, fails at 32)decided by: playback underruns = 0 (900 / 850) at 32 sessions');
    expect(page.canvases).toHaveLength(2);
    expect(page.canvases.filter((drawn) => drawn === 0)).toEqual([]);
    expect(page.rows).toBe(3);
  });
  it('an arrival sweep: blocking probability with its interval, then each SLO figure, against the offered Erlangs; one row per rate', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'report-sweep-arrivals-'));
    // Figures as the e2e sweep measured them (arrival-sweep.e2e.ts: 16 slots, exp:0.5 sessions).
    const measured: Array<[number, number, number, [number, number], number]> = [
      [12, 0, 245, [0, 0.0154], 60],
      [15, 0.0033, 306, [0.0006, 0.0183], 64],
      [18, 0.0134, 373, [0.0057, 0.031], 70],
      [24, 0.0668, 494, [0.048, 0.0923], 75],
    ];
    const points = measured.map(([rate_per_s, rate, count, ci95, ttfp]) => ({
      rate_per_s,
      offered_erlangs: rate_per_s / 2,
      blocking_probability: { rate, count, ci95 },
      runs: [{ dir: '', code: 0, qualified: true, slo: [{ term: 'incomplete=0', value: 0, ok: true }, { term: 'ttfp_p99_ms<=1000', value: ttfp, ok: true }] }],
      verdict: rate <= 0.01 ? 'pass' : 'fail',
    }));
    const sweep = {
      format: 'duplex-bench.sweep',
      version: 1,
      settings: { url: 'ws://127.0.0.1:1/v1/realtime', protocol: 'native', duration_s: 30, runs: 1, slo: 'incomplete=0,ttfp_p99_ms<=1000', run_args: '--session-duration exp:0.5 --run-for 22 --warmup-s 2', arrivals: { max_blocking: 0.01, seed: 1 } },
      points,
      capacity: { sessions: null, range: [15, 18], limited_by: 'server', note: 'passes at 15/s, fails at 18/s', rate_per_s: 15, offered_erlangs: 7.5 },
      interrupted: false,
      measurement_origin: { verdict: 'pass: …', blocking_probability: 'blocked / arrivals, pooled over the runs; 95% Wilson interval' },
    };
    await writeFile(join(dir, 'sweep.json'), JSON.stringify(sweep));
    expect((await probe(['report', dir])).code).toBe(0);
    const page = await open(join(dir, 'report.html'), async (p) => ({
      headings: await p.$$eval('#charts h2', (list) => list.map((h) => h.textContent ?? '')),
      head: await p.$$eval('#sessions th', (list) => list.map((h) => h.textContent ?? '')),
      first: await p.$$eval('#sessions tbody tr:nth-child(2) td', (list) => list.map((td) => td.textContent ?? '')),
    }));
    process.stderr.write(`arrival sweep report screenshot: ${page.shot}\n`);
    expect(page.errors).toEqual([]);
    expect(page.verdict).toBe('capacity: 15/s, 7.5 Erlangs offered (server: passes at 15/s, fails at 18/s)decided by: blocking probability ≤ 0.01 (0.0134) at 18/s');
    expect(page.found?.headings).toEqual([
      'Blocking probability against the offered Erlangs (pooled over runs; the bound dashed)',
      'incomplete sessions = 0: the figure against the offered Erlangs (median over runs; the bound dashed)',
      'TTFP p99 ≤ 1000 ms: the figure against the offered Erlangs (median over runs; the bound dashed)',
    ]);
    expect(page.found?.head).toEqual(['tested', 'rate', 'offered Erlangs', 'blocking (95% interval)', 'verdict', 'qualified runs', 'incomplete sessions = 0', 'TTFP p99 ≤ 1000 ms', 'ended early', 'run pages']);
    expect(page.found?.first.slice(0, 8)).toEqual(['2', '15/s', '7.5', '0.0033 (0.0006..0.0183)', 'pass', '1 of 1', '✓ 0', '✓ 64']);
    expect(page.canvases).toHaveLength(3);
    expect(page.canvases.filter((n) => n === 0)).toEqual([]);
    expect(page.rows).toBe(4);
  });
  it('a conversation sweep: each behaviour figure against the session count, rates with their intervals, a term naming one drawn with it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'report-sweep-behaviour-'));
    const latency = (v: number) => ({ count: 20, p50: v - 40, p90: v - 10, p95: v, p99: v + 5, max: v + 9 });
    const rate = (k: number, n: number) => ({ rate: k / n, count: n, ci95: [Math.max(0, k / n - 0.2), Math.min(1, k / n + 0.2)] });
    const origin = { response_latency_ms: 'client: an utterance end → the next model speech span', stop_latency_ms: 'client: barge-in → end of span', pause_takeover_rate: 'pauses taken', backchannel_yield_rate: 'backchannels yielded to' };
    const points = [];
    for (const [sessions, p95] of [[4, 450], [8, 520], [16, 900]]) {
      const runDir = join(dir, `s${sessions}-r1`);
      await mkdir(runDir);
      const behaviour = { response_latency_ms: latency(p95), stop_latency_ms: latency(p95 / 2), cancel_latency_ms: latency(0), pause_takeover_rate: rate(sessions / 16, 10), backchannel_yield_rate: rate(0, 10), overlap_ms: latency(0), outcomes: {}, measurement_origin: origin };
      await writeFile(join(runDir, 'summary.json'), JSON.stringify({ qualified: true, behaviour }));
      points.push({ sessions, runs: [{ dir: runDir, code: 0, qualified: true, slo: [{ term: 'response_latency_p95_ms<=600', value: p95, ok: p95 <= 600 }, { term: 'underruns=0', value: 0, ok: true }] }], verdict: p95 <= 600 ? 'pass' : 'fail' });
    }
    const sweep = {
      format: 'duplex-bench.sweep',
      version: 1,
      settings: { url: 'ws://127.0.0.1:1/v1/realtime', protocol: 'native', duration_s: 25, runs: 1, slo: 'response_latency_p95_ms<=600,underruns=0', run_args: '--conversation default' },
      points,
      capacity: { sessions: 8, range: [8, 16], limited_by: 'server', note: 'passes at 8, fails at 16' },
      interrupted: false,
      measurement_origin: { verdict: 'pass: …' },
    };
    await writeFile(join(dir, 'sweep.json'), JSON.stringify(sweep));
    expect((await probe(['report', dir])).code).toBe(0);
    const page = await open(join(dir, 'report.html'), (p) => p.$$eval('#charts h2', (list) => list.map((h) => h.textContent ?? '')));
    expect(page.errors).toEqual([]);
    // underruns=0, then the four behaviour figures (response latency with its bound): five charts, each drawn.
    expect(page.found).toEqual([
      'playback underruns = 0: the figure against the session count (median over runs; the bound dashed)',
      'Behaviour: response_latency_p95_ms against the session count (ms, median over runs; the bound dashed)',
      'Behaviour: stop_latency_p95_ms against the session count (ms, median over runs)',
      'Behaviour: pause_takeover_rate against the session count (fraction, median over runs)',
      'Behaviour: backchannel_yield_rate against the session count (fraction, median over runs)',
    ]);
    expect(page.canvases).toHaveLength(5);
    expect(page.canvases.filter((n) => n === 0)).toEqual([]);
    expect(page.rows).toBe(3);
  });
});
