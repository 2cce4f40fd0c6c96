import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { freePort } from '@duplex-bench/mock-servers/testing';
import { probe } from './in-process.spec-helpers';
import type { SweepFile } from '@duplex-bench/experiments';

// The search itself (doubling, bisection, resume, --processes auto, the client sweep) is proven against
// fake runs in libs/experiments/src/sweep.spec.ts; here, what only real `run` processes show.
jest.setTimeout(180_000);

describe('sweep against a model mock that holds 12 sessions', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5 }, capacity_sessions: 12 });
  });
  afterAll(() => mock.close());

  it('calls a point where the client fell behind client-limited, never the server\'s limit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-client-'));
    const { code, stdout } = await probe([
      'sweep', '--url', mock.url, '--sessions', '4:8', '--runs', '1', '--duration', '1', '--output', dir,
      '--run-args', '--inject-stall-ms 300 --start-spread-ms 0',
    ]);
    expect(code).toBe(0);
    const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
    expect(file.points.map((p) => p.verdict)).toEqual(['client-limited']);
    // The sweep's flags reached a real run (its --run-args among them), and its summary was read back.
    const [run] = file.points[0].runs;
    expect(run).toMatchObject({ dir: join(dir, 's4-r1'), sessions_run: 4, code: 3, qualified: false });
    expect(run.slo.find((c) => c.term.startsWith('ttfp_p99_ms'))?.value).toEqual(expect.any(Number));
    expect(file.capacity).toMatchObject({ sessions: null, limited_by: 'client' });
    expect(stdout).toMatch(/client: the client missed its cadence/);
  });

  it('names why a count failed to run: the run\'s own error line, in sweep.json and on stderr', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-unreachable-'));
    // Port 9 (discard), where nothing listens here. (A port freed a moment ago was taken again by a
    // mock of an e2e file running beside this one, and the sweep passed against it.)
    const url = 'ws://127.0.0.1:9/v1/realtime';
    const { stderr } = await probe(['sweep', '--url', url, '--sessions', '2:4', '--runs', '1', '--duration', '1', '--output', dir]);
    const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
    expect(file.points.map((p) => p.verdict)).toEqual(['failed-to-run']);
    expect(file.points[0].runs[0].error).toMatch(/^error: cannot connect to .*ECONNREFUSED/);
    expect(stderr).toMatch(/sweep: 2 sessions: failed-to-run \(error: cannot connect to /);
  });

  it('ends a failing point early (run --abort-on-fail): a 30 s point costs seconds, and the sweep says it ended early', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-early-'));
    const t0 = performance.now();
    // 24 sessions on a server that holds 12: every TTFP about 200 ms, against a bound of 150 ms.
    const { code, stdout, stderr } = await probe(['sweep', '--url', mock.url, '--sessions', '24:24', '--runs', '1', '--duration', '30', '--slo', 'ttfp_p99_ms<=150', '--abort-grace-s', '1', '--output', dir, '--run-args', '--allow-unqualified']);
    expect(code).toBe(0);
    expect((performance.now() - t0) / 1000).toBeLessThan(20);
    const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
    expect(file.settings.abort_on_fail).toEqual({ grace_s: 1 });
    expect(file.points.map((p) => [p.runs[0].code, p.runs[0].ended_early?.term])).toEqual([[4, 'ttfp_p99_ms<=150']]);
    // A late packet (these files share the cores) makes the point client-limited; else the SLO failed it.
    const [point] = file.points;
    expect(point.verdict).toBe(point.runs[0].qualified ? 'fail' : 'client-limited');
    expect(stderr).toMatch(/sweep: 24 sessions, run 1: ended early at \d+(\.\d+)? s on ttfp_p99_ms<=150/);
    expect(stdout).toMatch(new RegExp(`^24 +1 +${point.verdict} \\(ended early\\)`, 'm'));
  });

  it('refuses --processes auto for the client sweep, and a --run-args that sets the layout', async () => {
    const base = ['sweep', '--url', mock.url, '--output', await mkdtemp(join(tmpdir(), 'sweep-bad-'))];
    expect((await probe([...base, '--target', 'client', '--processes', 'auto'])).code).toBe(2);
    expect((await probe([...base, '--run-args', '--processes 2'])).code).toBe(2);
    expect((await probe([...base, '--processes', '0'])).code).toBe(2);
  });
});

describe('sweep without --url', () => {
  it('serves one built-in mock for every run, names it in sweep.json by its flags, and leaves none behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-builtin-'));
    const { code, stderr } = await probe(['sweep', '--sessions', '2:4', '--runs', '1', '--duration', '1', '--output', dir, '--mock-profile', 'nemotron', '--run-args', '--allow-unqualified']);
    expect(code).toBe(0);
    const said = /^no --url: serving the built-in mock \(duplex-bench serve --profile nemotron --stamp-sends\) at (ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime), pid (\d+), for this sweep; its stats go to (\S+)$/m.exec(stderr);
    expect(said?.[3]).toBe(join(dir, 'mock.json'));
    const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
    expect(file.settings.url).toBe('built-in mock: duplex-bench serve --profile nemotron --stamp-sends');
    expect(file.points.map((p) => p.sessions)).toEqual([2, 4]);
    // Every run went to that one mock: its stats count their sessions.
    const stats = JSON.parse(await readFile(join(dir, 'mock.json'), 'utf8')) as { sessions: { opened: number } };
    expect(stats.sessions.opened).toBe(2 + 4);
    expect(() => process.kill(Number(said?.[2]), 0)).toThrow(/ESRCH/);
  });
});

describe('sweep --server-metrics --server-gauge (capacity planning)', () => {
  it("keeps the server's GPU memory at the capacity it finds: 2,000 MiB + 1,000 per session at 12 sessions, in sweep.json and on the page", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-gauge-'));
    const port = await freePort();
    const { code, stdout } = await probe([
      'sweep', '--mock-profile', 'nemotron', '--mock-args', `--capacity-sessions 12 --metrics-port ${port} --gpu-base-mib 2000 --gpu-mib-per-session 1000`,
      '--server-metrics', `http://127.0.0.1:${port}/metrics`, '--server-gauge', 'DCGM_FI_DEV_FB_USED',
      '--sessions', '4:24', '--runs', '1', '--duration', '2', '--gpus', '2', '--output', dir, '--run-args', '--allow-unqualified',
    ]);
    expect(code).toBe(0);
    const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
    const capacity = file.capacity.sessions as number;
    // On 2 GPUs: half the sessions per GPU, and the range halved.
    expect(file.capacity.per_gpu).toEqual({ gpus: 2, sessions: capacity / 2, sessions_range: [capacity / 2, (file.capacity.range[1] as number) / 2] });
    expect(capacity).toBeGreaterThanOrEqual(8);
    const max = file.capacity.server_gauges?.DCGM_FI_DEV_FB_USED.max as number;
    expect(Math.abs(max - (2000 + 1000 * capacity))).toBeLessThanOrEqual(0.1 * (2000 + 1000 * capacity));
    // Each run kept its own: more sessions, more memory.
    const byLoad = [...file.points].sort((a, b) => (a.sessions ?? 0) - (b.sessions ?? 0)).map((p) => p.runs[0].server_gauges?.DCGM_FI_DEV_FB_USED.max ?? 0);
    expect(byLoad).toEqual([...byLoad].sort((a, b) => a - b));
    expect(stdout).toMatch(new RegExp(`^capacity: ${capacity} sessions .*; there: per GPU \\(2\\): ${capacity / 2} sessions \\(in [\\d.]+\\.\\.[\\d.]+\\); DCGM_FI_DEV_FB_USED max ${max}, mean [\\d.]+$`, 'm'));
    expect((await probe(['report', dir])).code).toBe(0);
    const html = await readFile(join(dir, 'report.html'), 'utf8');
    // The page draws the gauge against the load (its data carries each point's max).
    expect(html).toContain('"gauges":[{"name":"DCGM_FI_DEV_FB_USED","max":[');
    expect(html).toMatch(new RegExp(`<div class="sub" id="server-gauges">at the capacity, the server's own gauges: per GPU \\(2\\): ${capacity / 2} sessions; DCGM_FI_DEV_FB_USED max ${max}, mean [\\d.]+</div>`));
  });
});

