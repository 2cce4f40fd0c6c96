/**
 * The pictures of the three report pages in docs/reports.md, each the first 900 px of the page as a user
 * opens it in Debian's `chromium` (1200 px wide): a run (64 sessions against the nemotron mock), a
 * sweep (a mock that holds 12 sessions) and an http run (the variable-response stub, with
 * --goodput and --vllm-result). The compiled kit (`npm run build` first).
 *
 *   node --import tsx tools/report-screenshots.ts [--out docs/report]
 *
 * Every process is bounded in time and stopped by its PID; traffic stays on 127.0.0.1.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { exited, HTTP_LISTENING, installInterrupts, openLog, ROOT, spawnTracked, startMock, stopMock } from './bench/processes';

const { values } = parseArgs({ options: { out: { type: 'string', default: join('docs', 'report') } } });
installInterrupts(() => undefined);
const BIN = join(ROOT, 'dist', 'duplex-bench.js');

/** `duplex-bench ARGS` in a process of its own, bounded; its exit status. */
async function kit(dir: string, name: string, args: string[], bound_s: number): Promise<number | null> {
  const child = spawnTracked('client', process.execPath, [BIN, ...args], openLog(join(dir, `${name}.stdout.log`)), openLog(join(dir, `${name}.stderr.log`)));
  return exited(child, bound_s * 1000);
}

async function shoot(html: string, png: string): Promise<void> {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.goto(`file://${html}`);
    await page.waitForFunction(() => (globalThis as unknown as { reportReady?: boolean }).reportReady === true, null, { timeout: 15_000 });
    await page.screenshot({ path: png, fullPage: false });
    process.stdout.write(`wrote ${png} (from ${html})\n`);
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'report-shots-'));
  const out = String(values.out);
  const mock = await startMock(dir, ['--profile', 'nemotron'], ROOT);
  try {
    const code = await kit(dir, 'run', ['run', '--url', mock.url, '--concurrency', '64', '--duration', '10', '--output', join(dir, 'run'), '--quiet', '--report'], 90);
    if (code !== 0 && code !== 3) throw new Error(`run exited ${code}; see ${dir}/run.stderr.log`);
  } finally {
    await stopMock(mock);
  }
  await shoot(join(dir, 'run', 'report.html'), join(out, 'run.png'));

  const capped = await startMock(dir, ['--profile', 'nemotron', '--capacity-sessions', '12'], ROOT);
  try {
    const code = await kit(dir, 'sweep', ['sweep', '--url', capped.url, '--sessions', '4:32', '--runs', '1', '--duration', '4', '--resolution', '2', '--output', join(dir, 'sweep'), '--report'], 600);
    if (code !== 0) throw new Error(`sweep exited ${code}; see ${dir}/sweep.stderr.log`);
  } finally {
    await stopMock(capped);
  }
  await shoot(join(dir, 'sweep', 'report.html'), join(out, 'sweep.png'));

  const stub = await startMock(dir, ['--protocol', 'http', '--first-chunk-ms', '200', '--inter-token-ms', '10', '--output-len-mean', '60', '--stream-interval', '2'], ROOT, HTTP_LISTENING);
  try {
    const code = await kit(dir, 'http', ['http', '--url', stub.url, '--rate', '30', '--duration', '15', '--goodput', 'ttft:300,tpot:50', '--vllm-result', join(dir, 'vllm.json'), '--output', join(dir, 'http'), '--quiet', '--report'], 120);
    if (code !== 0 && code !== 3) throw new Error(`http exited ${code}; see ${dir}/http.stderr.log`);
  } finally {
    await stopMock(stub);
  }
  await shoot(join(dir, 'http', 'report.html'), join(out, 'http.png'));
}

main().catch((err: Error) => {
  process.stderr.write(`report-screenshots: ${err.message}\n`);
  process.exitCode = 1;
});
