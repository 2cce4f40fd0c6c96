import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunIo } from '@duplex-bench/cli';
import { startHttpStub, startMockServer } from '@duplex-bench/mock-servers';
import type { RunSummary } from '@duplex-bench/results';
import { httpCommand } from '../src/http/http-command';
import { runCommand } from '../src/run/run-command';
import { parseRunOptions } from '../src/run/run-options';
import { runBounded } from './spawn.spec-helpers';
import { freePort } from '@duplex-bench/mock-servers/testing';

jest.setTimeout(90_000);

const PROMETHEUS = '/usr/bin/prometheus';
/** The built kit (the e2e target builds it first): serve runs as users run it. */
const DIST = join(__dirname, '..', '..', '..', 'dist', 'duplex-bench.js');
const PROMTOOL = '/usr/bin/promtool';
const havePrometheus = existsSync(PROMETHEUS) && existsSync(PROMTOOL);
if (!havePrometheus && !process.env.CI) process.stderr.write(`Prometheus tests skipped: no ${PROMETHEUS} or ${PROMTOOL} (apt-get install prometheus)\n`);


/** A RunIo that keeps stderr and, once the command says it lingers, fetches its last exposition. */
function lingeringIo(metricsPort: number): { io: RunIo; stderr: () => string; exposition: () => Promise<string> | null } {
  let stderr = '';
  let exposition: Promise<string> | null = null;
  const io: RunIo = {
    stdout: { write: () => true },
    stderr: {
      write: (s: string) => {
        stderr += s;
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
  return { io, stderr: () => stderr, exposition: () => exposition };
}

/** `promtool check metrics` on `text`: its complaints, '' when none. */
async function promtoolProblems(text: string): Promise<{ code: number | null; problems: string }> {
  const file = join(await mkdtemp(join(tmpdir(), 'promtool-')), 'exposition.txt');
  await writeFile(file, text);
  const lint = await runBounded('/bin/sh', ['-c', `${PROMTOOL} check metrics < ${file}`], { bound_ms: 20_000 });
  return { code: lint.code, problems: lint.stdout + lint.stderr };
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

// These runs check expositions, not cadence (run-command.e2e holds pacing and exit 3): each takes
// --allow-unqualified, so one late packet on a busy shared host does not fail them (a clean-clone
// CI run at 80084b2 exited 3 here).
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
    const live = lingeringIo(metricsPort);
    let code: number;
    try {
      const flags = ['--url', mock.url, '--concurrency', '8', '--duration', '4', '--output', out, '--quiet', '--metrics-port', String(metricsPort), '--metrics-linger-s', '3', '--allow-unqualified'];
      code = await runCommand(parseRunOptions(flags), live.io);
    } finally {
      await mock.close();
    }
    expect({ code, stderr: live.stderr() }).toMatchObject({ code: 0 });
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
    // A histogram Prometheus can take quantiles of: the TTFP of the mock's answers (about 200 ms; up
    // to 0.47 s on a clean clone's CI, where the other e2e files and Prometheus share the two cores).
    const ttfp = await query('histogram_quantile(0.5, last_over_time(duplex_bench_response_ttfp_seconds_bucket[5m]))');
    expect(ttfp).toBeGreaterThan(0.1);
    expect(ttfp).toBeLessThan(1);

    // promtool's lint of the exposition, on the last one the run served.
    const text = await (live.exposition() ?? Promise.reject(new Error(`no linger line: ${live.stderr()}`)));
    expect(text).toContain(`duplex_bench_packets_sent_total{command="run",protocol="native",process="0"} ${summary.packets.sent}`);
    expect(await promtoolProblems(text)).toEqual({ code: 0, problems: '' });
  });

  it('http: the exposition counts the requests summary.json reports, with latency histograms, and passes promtool', async () => {
    const stub = await startHttpStub({ kind: 'variable-response', port: 0 });
    const metricsPort = await freePort();
    const out = await mkdtemp(join(tmpdir(), 'probe-prom-http-'));
    const live = lingeringIo(metricsPort);
    try {
      const code = await httpCommand(['--url', stub.url, '--rate', '20', '--duration', '2', '--max-tokens', '16', '--output', out, '--quiet', '--allow-unqualified', '--metrics-port', String(metricsPort), '--metrics-linger-s', '1'], live.io);
      expect({ code, stderr: live.stderr() }).toMatchObject({ code: 0 });
    } finally {
      await stub.close();
    }
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as { requests: { sent: number; completed: number } };
    const text = await (live.exposition() ?? Promise.reject(new Error(`no linger line: ${live.stderr()}`)));
    const labels = '{command="http",protocol="http",process="0"}';
    expect(text).toContain(`duplex_bench_requests_sent_total${labels} ${summary.requests.sent}`);
    expect(text).toContain(`duplex_bench_requests_completed_total${labels} ${summary.requests.completed}`);
    expect(text).toContain(`duplex_bench_request_ttft_seconds_count${labels} ${summary.requests.completed}`);
    expect(await promtoolProblems(text)).toEqual({ code: 0, problems: '' });
  });

  it('serve: the mock exposes the sessions it opened and completed, and passes promtool', async () => {
    const mockPort = await freePort();
    const metricsPort = await freePort();
    const serve = spawn(process.execPath, [DIST, 'serve', '--port', String(mockPort), '--metrics-port', String(metricsPort)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    serve.stdout.on('data', (d) => (said += d));
    serve.stderr.on('data', (d) => (said += d));
    try {
      await until(`serve listening (${said})`, 30_000, async () => (said.includes('listening on') && said.includes('metrics: http') ? true : null));
      const out = await mkdtemp(join(tmpdir(), 'probe-prom-serve-'));
      const run = lingeringIo(0);
      const code = await runCommand(parseRunOptions(['--url', `ws://127.0.0.1:${mockPort}/v1/realtime`, '--concurrency', '4', '--duration', '1', '--output', out, '--quiet', '--allow-unqualified']), run.io);
      expect({ code, stderr: run.stderr() }).toMatchObject({ code: 0 });
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const labels = '{command="serve",protocol="native",process="0"}';
      expect(text).toContain(`duplex_bench_mock_sessions_opened_total${labels} 4`);
      expect(text).toContain(`duplex_bench_mock_sessions_completed_total${labels} 4`);
      expect(text).toContain(`duplex_bench_mock_admissions_total{outcome="accepted",command="serve",protocol="native",process="0"} 4`);
      expect(await promtoolProblems(text)).toEqual({ code: 0, problems: '' });
    } finally {
      if (serve.pid && serve.exitCode === null) process.kill(serve.pid, 'SIGTERM');
      await new Promise((resolve) => (serve.exitCode === null ? serve.once('exit', resolve) : resolve(null)));
    }
  });

  it('a conversation: the behaviour figures are in the last exposition, counted as the summary counts them', async () => {
    const mock = await startMockServer({ port: 0, profile: 'nemotron', behaviour: { conversation: 'default', respond_after_ms: 400, stop_after_ms: 200, takeover_after_ms: 800 } });
    const metricsPort = await freePort();
    const out = await mkdtemp(join(tmpdir(), 'probe-prom-conv-'));
    const probe = spawn(process.execPath, [DIST, 'run', '--url', mock.url, '--conversation', 'default', '--concurrency', '2', '--duration', '25', '--output', out, '--quiet', '--metrics-port', String(metricsPort), '--metrics-linger-s', '5', '--allow-unqualified'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    let text: Promise<string> | null = null;
    probe.stderr.on('data', (d) => {
      said += d;
      if (!text && said.includes('serving the final counts')) text = fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
    });
    const code = await new Promise<number | null>((resolve) => probe.on('exit', resolve));
    await mock.close();
    expect({ code, said }).toMatchObject({ code: 0 });
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as RunSummary;
    const b = summary.behaviour;
    if (!b || !text) throw new Error(`no behaviour block or no linger line: ${said}`);
    const exposition = await (text as Promise<string>);
    const labels = '{command="run",protocol="native",process="0"}';
    expect(b.response_latency_ms.count).toBeGreaterThan(0);
    expect(exposition).toContain(`duplex_bench_behaviour_response_latency_seconds_count${labels} ${b.response_latency_ms.count}`);
    expect(exposition).toContain(`duplex_bench_behaviour_stop_latency_seconds_count${labels} ${b.stop_latency_ms.count}`);
    expect(exposition).toContain(`duplex_bench_behaviour_pauses_total${labels} ${b.pause_takeover_rate.count}`);
    expect(await promtoolProblems(exposition)).toEqual({ code: 0, problems: '' });
  });
});
