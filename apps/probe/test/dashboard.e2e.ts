import { existsSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { RunIo } from '@duplex-bench/cli';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { main } from '../src/main';

jest.setTimeout(60_000);

/** The page's document, as the functions run in the browser see it. */
type Doc = { getElementById(id: string): { textContent: string | null } | null };

/** Debian's chromium; `.ci/run` installs it. Elsewhere without it these tests are skipped, and say so. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && !process.env.CI) process.stderr.write(`dashboard browser tests skipped: no ${CHROMIUM} (apt-get install chromium)\n`);

(haveBrowser || process.env.CI ? describe : describe.skip)('run --dashboard-port, opened in Chromium during the run', () => {
  let mock: MockServer;
  let browser: Browser;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5 } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await mock?.close();
  });

  it('prints its address, draws charts, shows the packets sent growing and the TTFP so far, then the verdict', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dashboard-'));
    let stderr = '';
    let said: (url: string) => void = () => undefined;
    const address = new Promise<string>((resolve) => (said = resolve));
    const io: RunIo = {
      stdout: { write: () => true },
      stderr: {
        write: (s: string) => {
          stderr += s;
          const m = /^dashboard: (http:\/\/127\.0\.0\.1:\d+\/) \(live, once a second\)$/m.exec(stderr);
          if (m) said(m[1]);
          return true;
        },
      },
      signals: new EventEmitter(),
      exitNow: (code) => {
        throw new Error(`exitNow(${code}) in a test`);
      },
      argv: [],
    };
    const running = main(['run', '--url', mock.url, '--concurrency', '8', '--duration', '8', '--output', dir, '--quiet', '--allow-unqualified', '--dashboard-port', '0', '--dashboard-linger-s', '3'], io);
    const url = await Promise.race([address, running.then((code) => Promise.reject(new Error(`the run ended (${code}) before printing its dashboard: ${stderr}`)))]);
    const page = await browser.newPage({ viewport: { width: 1200, height: 1600 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    // Only the dashboard's own origin: nothing else is fetched.
    await page.route('**', (route) => (route.request().url().startsWith(url) ? route.continue() : route.abort()));
    await page.goto(url);
    await page.waitForSelector('#chart-packets canvas', { timeout: 10_000 });
    const sent = async () => Number((await page.textContent('#sent-count'))?.replace(/,/g, ''));
    const first = await sent();
    await page.waitForFunction((before) => Number((globalThis as unknown as { document: Doc }).document.getElementById('sent-count')?.textContent?.replace(/,/g, '')) > before, first, { timeout: 5_000 });
    expect(await sent()).toBeGreaterThan(first);
    // TTFP is counted as each first audio arrives (about 100 ms after each turn), before any response ends.
    await page.waitForFunction(() => /p50 \d+(\.\d+)? ms/.test((globalThis as unknown as { document: Doc }).document.getElementById('latency')?.textContent ?? ''), null, { timeout: 8_000 });
    // The charts drew something.
    const drawn = await page.$$eval('#charts canvas', (list) =>
      list.map((element) => {
        const c = element as unknown as { width: number; height: number; getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } };
        const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        let n = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
        return n;
      }),
    );
    expect(drawn.length).toBeGreaterThanOrEqual(4);
    expect(drawn.every((n) => n > 0)).toBe(true);
    // The run's last line takes the place of "running" while the page lingers.
    await page.waitForFunction(() => /^(QUALIFIED|UNQUALIFIED)/.test((globalThis as unknown as { document: Doc }).document.getElementById('verdict')?.textContent ?? ''), null, { timeout: 20_000 });
    await page.screenshot({ path: join(dir, 'dashboard.png'), fullPage: true });
    expect(await running).toBe(0);
    expect(errors).toEqual([]);
    expect(stderr).toMatch(/dashboard: .* stays up 3 s more/);
    // After the linger, nothing listens there.
    await expect(fetch(url)).rejects.toThrow();
  });
});
