/**
 * The picture of the live dashboard in docs/telemetry.md: `run --dashboard-port 0` against the
 * built-in mock (the nemotron profile with a model turn, so TTFP has figures), opened in Debian's
 * `chromium` while the run goes on, saved after `--at` seconds. The compiled kit (`npm run build`
 * first). Also a check: it fails unless the page draws a chart and the packets sent grow between
 * two looks a few seconds apart.
 *
 *   node --import tsx tools/dashboard-screenshot.ts [--seconds 30] [--at 20] [--out docs/telemetry/dashboard.png]
 *
 * The run is bounded in time and stopped by its PID; traffic stays on 127.0.0.1.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { exited, installInterrupts, killChild, openLog, ROOT, spawnTracked } from './bench/processes';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '30' }, at: { type: 'string', default: '20' }, out: { type: 'string', default: join('docs', 'telemetry', 'dashboard.png') } } });
installInterrupts(() => undefined);

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'dashboard-shot-'));
  const seconds = Number(values.seconds);
  const probe = spawnTracked('client', process.execPath, [join(ROOT, 'dist', 'duplex-bench.js'), 'run', '--mock-profile', 'nemotron', '--concurrency', '64', '--duration', String(seconds), '--output', join(dir, 'run'), '--dashboard-port', '0', '--dashboard-linger-s', '5'], openLog(join(dir, 'probe.stdout.log')), openLog(join(dir, 'probe.stderr.log')));
  let stderr = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no dashboard line within 20 s:\n${stderr}`)), 20_000);
      const look = setInterval(() => {
        stderr = readFileSync(join(dir, 'probe.stderr.log'), 'utf8');
        const m = /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          clearInterval(look);
          resolve(m[1]);
        }
      }, 100);
    });
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 1700 } });
      await page.goto(url);
      await page.waitForSelector('#charts canvas', { timeout: 10_000 });
      const sent = async () => Number((await page.textContent('#sent-count'))?.replace(/,/g, ''));
      const first = await sent();
      await page.waitForTimeout(3000);
      const second = await sent();
      if (!(second > first)) throw new Error(`the packets sent did not grow: ${first} then ${second}`);
      await page.waitForTimeout(Math.max(0, Number(values.at) * 1000 - 3000));
      await page.screenshot({ path: values.out, fullPage: true });
      process.stdout.write(`${url}: packets sent ${first} then ${second} 3 s later; ${await page.locator('#charts canvas').count()} charts; written to ${values.out}\n`);
    } finally {
      await browser.close();
    }
    const code = await exited(probe, (seconds + 60) * 1000);
    // 3: a late packet (a browser starting on the same two cores) is the run's to say, not this picture's.
    if (code !== 0 && code !== 3) throw new Error(`the run exited ${code}:\n${readFileSync(join(dir, 'probe.stderr.log'), 'utf8')}`);
  } catch (err) {
    await killChild(probe);
    throw err;
  }
}

void main();
