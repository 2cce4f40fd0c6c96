/**
 * The picture of a run watched live in docs/telemetry.md: Debian's `prometheus` scrapes a probe run (64
 * sessions against the minicpmo mock with a model turn every 3 s, both in processes of their own) every second; then Debian's
 * `chromium` opens Prometheus's graph page on the run's packets, pacing and TTFP, and saves it.
 * The compiled kit (`npm run build` first).
 *
 *   node --import tsx tools/telemetry-screenshot.ts [--seconds 40] [--out docs/telemetry/prometheus-graph.png]
 *
 * Every process is bounded in time and stopped by its PID; traffic stays on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { exited, installInterrupts, killChild, openLog, ROOT, spawnTracked, startMock, stopMock } from './bench/processes';
import { freePort } from '@duplex-bench/mock-servers/testing';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '40' }, out: { type: 'string', default: join('docs', 'telemetry', 'prometheus-graph.png') } } });
installInterrupts(() => undefined);


async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'telemetry-shot-'));
  const [metricsPort, promPort] = [await freePort(), await freePort()];
  await writeFile(join(dir, 'prometheus.yml'), `global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: duplex-bench\n    static_configs:\n      - targets: ['127.0.0.1:${metricsPort}']\n`);
  const prometheus = spawn('/usr/bin/prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${promPort}`], { stdio: 'ignore' });
  const mock = await startMock(dir, ['--profile', 'minicpmo', '--turn-every-s', '3'], ROOT);
  try {
    const seconds = Number(values.seconds);
    const probe = spawnTracked(
      'client',
      process.execPath,
      [join(ROOT, 'dist', 'duplex-bench.js'), 'run', '--url', mock.url, '--concurrency', '64', '--duration', String(seconds), '--output', join(dir, 'run'), '--quiet', '--metrics-port', String(metricsPort), '--metrics-linger-s', '3'],
      openLog(join(dir, 'probe.stdout.log')),
      openLog(join(dir, 'probe.stderr.log')),
    );
    const code = await exited(probe, (seconds + 90) * 1000);
    if (code !== 0) throw new Error(`probe exited ${code}; see ${dir}/probe.stderr.log`);
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    try {
      // Tall enough for every graph: a full-page shot would paint the fixed navigation bar mid-page.
      const page = await browser.newPage({ viewport: { width: 1280, height: 3000 } });
      const exprs = [
        'sum(rate(duplex_bench_packets_sent_total[5s]))',
        'sum(duplex_bench_sessions_active)',
        'histogram_quantile(0.99, sum by (le) (rate(duplex_bench_pacing_deviation_seconds_bucket[5s])))',
        'histogram_quantile(0.5, sum by (le) (rate(duplex_bench_response_ttfp_seconds_bucket[10s])))',
      ];
      const q = exprs.map((e, i) => `g${i}.expr=${encodeURIComponent(e)}&g${i}.tab=0&g${i}.stacked=0&g${i}.range_input=${Math.ceil((seconds + 30) / 60)}m`).join('&');
      await page.goto(`http://127.0.0.1:${promPort}/graph?${q}`, { waitUntil: 'networkidle' });
      await page.waitForTimeout(3000); // the charts draw after their queries return
      await page.screenshot({ path: values.out as string, fullPage: false });
      process.stdout.write(`wrote ${values.out} (run in ${dir})\n`);
    } finally {
      await browser.close();
    }
  } finally {
    await stopMock(mock);
    if (prometheus.pid && prometheus.exitCode === null) process.kill(prometheus.pid, 'SIGTERM');
    await killChild(prometheus).catch(() => undefined);
  }
}

main().catch((err: Error) => {
  process.stderr.write(`telemetry-screenshot: ${err.message}\n`);
  process.exitCode = 1;
});
