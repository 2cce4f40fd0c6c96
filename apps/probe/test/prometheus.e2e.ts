import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunIo } from '@duplex-bench/cli';
import { startMockServer } from '@duplex-bench/mock-servers';
import type { RunSummary } from '@duplex-bench/results';
import { runCommand } from '../src/run/run-command';
import { parseRunOptions } from '../src/run/run-options';
import { runBounded } from './spawn.spec-helpers';

jest.setTimeout(90_000);

const PROMETHEUS = '/usr/bin/prometheus';
const PROMTOOL = '/usr/bin/promtool';
const havePrometheus = existsSync(PROMETHEUS) && existsSync(PROMTOOL);
if (!havePrometheus && !process.env.CI) process.stderr.write(`Prometheus tests skipped: no ${PROMETHEUS} or ${PROMTOOL} (apt-get install prometheus)\n`);

/** A port free on 127.0.0.1 now (the kernel's pick, released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function until<T>(what: string, bound_ms: number, probe: () => Promise<T | null>): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const got = await probe().catch(() => null);
    if (got !== null) return got;
    if (Date.now() - t0 > bound_ms) throw new Error(`${what}: not within ${bound_ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

(havePrometheus || process.env.CI ? describe : describe.skip)('run --metrics-port, scraped by a real Prometheus', () => {
  let prometheus: ChildProcess | null = null;
  afterAll(() => {
    if (prometheus?.pid && prometheus.exitCode === null) process.kill(prometheus.pid, 'SIGKILL');
  });

  it('gives PromQL the packets sent and sessions completed that summary.json reports, and its exposition passes promtool', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'probe-prom-'));
    const [metricsPort, promPort] = [await freePort(), await freePort()];
    await writeFile(
      join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: duplex-bench\n    static_configs:\n      - targets: ['127.0.0.1:${metricsPort}']\n`,
    );
    let promLog = '';
    prometheus = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${promPort}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    prometheus.stderr?.on('data', (d) => (promLog = (promLog + d).slice(-4000)));
    const api = `http://127.0.0.1:${promPort}`;
    await until(`Prometheus ready\n${promLog}`, 30_000, async () => ((await fetch(`${api}/-/ready`)).ok ? true : null));

    const mock = await startMockServer({ port: 0, profile: 'nemotron' });
    const out = join(dir, 'run');
    let stderr = '';
    let exposition: Promise<string> | null = null;
    const io: RunIo = {
      stdout: { write: () => true },
      stderr: {
        write: (s: string) => {
          stderr += s;
          // Once the run is summarised, while the endpoint lingers: the final exposition.
          if (s.includes('serving the final counts')) exposition = fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
          return true;
        },
        isTTY: false,
      },
      signals: new EventEmitter(),
      exitNow: (code) => {
        throw new Error(`exitNow(${code}) in a test`);
      },
      argv: [],
    };
    let code: number;
    try {
      const flags = ['--url', mock.url, '--concurrency', '8', '--duration', '4', '--output', out, '--quiet', '--metrics-port', String(metricsPort), '--metrics-linger-s', '3'];
      code = await runCommand(parseRunOptions(flags), io);
    } finally {
      await mock.close();
    }
    expect({ code, stderr }).toMatchObject({ code: 0 });
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as RunSummary;
    expect(summary.packets.sent).toBeGreaterThan(0);

    // The endpoint is gone after its linger: the run held nothing open.
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();

    // The target is down now, so its series are stale at "now": ask for the last sample in a window.
    const query = async (expr: string): Promise<number | null> => {
      const r = (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as { data: { result: Array<{ value: [number, string] }> } };
      return r.data.result.length === 1 ? Number(r.data.result[0].value[1]) : null;
    };
    const sent = await until('packets sent in Prometheus', 10_000, () => query('last_over_time(duplex_bench_packets_sent_total{job="duplex-bench",command="run"}[5m])'));
    const completed = await query('last_over_time(duplex_bench_sessions_completed_total[5m])');
    const started = await query('last_over_time(duplex_bench_sessions_started_total[5m])');
    expect({ sent, completed, started }).toEqual({ sent: summary.packets.sent, completed: summary.sessions.completed, started: 8 });
    expect(summary.sessions.completed).toBe(8);
    // A histogram Prometheus can take quantiles of: the TTFP of the mock's answers (about 200 ms).
    const ttfp = await query('histogram_quantile(0.5, last_over_time(duplex_bench_response_ttfp_seconds_bucket[5m]))');
    expect(ttfp).toBeGreaterThan(0.1);
    expect(ttfp).toBeLessThanOrEqual(0.3);

    // promtool's lint of the exposition, on the last one the run served.
    expect(exposition).not.toBeNull();
    const text = await (exposition as unknown as Promise<string>);
    expect(text).toContain(`duplex_bench_packets_sent_total{command="run",protocol="native",process="0"} ${summary.packets.sent}`);
    await writeFile(join(dir, 'exposition.txt'), text);
    const lint = await runBounded('/bin/sh', ['-c', `${PROMTOOL} check metrics < ${join(dir, 'exposition.txt')}`], { bound_ms: 20_000 });
    expect({ code: lint.code, problems: lint.stdout + lint.stderr }).toEqual({ code: 0, problems: '' });
  });
});
