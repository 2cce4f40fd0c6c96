/**
 * How long a report takes to render in Debian's Chromium: opens the page `--runs` times and prints,
 * per run, the time from navigation start to the page's script having drawn every chart and the
 * table (window.reportReady), read from the page's own clock. Prints min, median and max.
 *
 *   node --import tsx tools/bench/report-render.ts out/run512/report.html [--runs 5]
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const { positionals, values } = parseArgs({ allowPositionals: true, options: { runs: { type: 'string', default: '5' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: report-render.ts REPORT.html [--runs 5]\n');
  process.exit(2);
}
const file = resolve(positionals[0]);
const runs = Number(values.runs);

async function main(): Promise<void> {
  const size = (await stat(file)).size;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  const times: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(`file://${file}`);
      await page.waitForFunction(() => (globalThis as unknown as { reportReady?: boolean }).reportReady === true, null, { timeout: 60_000 });
      times.push(await page.evaluate(() => (globalThis as unknown as { reportReadyMs: number }).reportReadyMs));
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const sorted = [...times].sort((a, b) => a - b);
  process.stdout.write(
    `${file}: ${(size / 1e6).toFixed(2)} MB; navigation start to every chart and the table drawn, ms: ` +
      `min ${sorted[0].toFixed(0)}, median ${sorted[Math.floor((sorted.length - 1) / 2)].toFixed(0)}, max ${sorted[sorted.length - 1].toFixed(0)} (${runs} runs)\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`error: ${(err as Error).message}\n`);
  process.exit(1);
});
