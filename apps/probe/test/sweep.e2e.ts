import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { probe } from './in-process.spec-helpers';
import type { SweepFile } from '@duplex-bench/experiments';

jest.setTimeout(180_000);

describe('sweep against a model mock that holds 12 sessions', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5 }, capacity_sessions: 12 });
  });
  afterAll(() => mock.close());

  it('finds the capacity within one bisection step, and a second invocation measures nothing again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-'));
    const argv = ['sweep', '--url', mock.url, '--sessions', '3:48', '--runs', '1', '--duration', '2', '--resolution', '2', '--output', dir];
    const { code, stdout } = await probe(argv);
    expect(code).toBe(0);
    const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
    expect(file.capacity.limited_by).toBe('server');
    const [pass, fail] = file.capacity.range as [number, number];
    expect(fail - pass).toBeLessThanOrEqual(2);
    expect(pass).toBeGreaterThanOrEqual(12 - 2);
    expect(pass).toBeLessThanOrEqual(12 + 2);
    expect(stdout).toMatch(new RegExp(`capacity: ${pass} sessions \\(server: passes at ${pass}, fails at ${fail}\\)`));
    // Doubling first (3, 6, 12, …), then bisection between the last pass and the first failure.
    expect(file.points.slice(0, 3).map((p) => p.sessions)).toEqual([3, 6, 12]);
    const runs = (await readdir(dir)).filter((n) => /^s\d+-r1$/.test(n)).length;
    await probe(argv);
    expect((await readdir(dir)).filter((n) => /^s\d+-r1$/.test(n)).length).toBe(runs);
    expect((JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile).capacity).toEqual(file.capacity);
  });

  it('calls a point where the client fell behind client-limited, never the server\'s limit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-client-'));
    const { code, stdout } = await probe([
      'sweep', '--url', mock.url, '--sessions', '4:8', '--runs', '1', '--duration', '2', '--output', dir,
      '--run-args', '--inject-stall-ms 300 --start-spread-ms 0',
    ]);
    expect(code).toBe(0);
    const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
    expect(file.points.map((p) => p.verdict)).toEqual(['client-limited']);
    expect(file.capacity).toMatchObject({ sessions: null, limited_by: 'client' });
    expect(stdout).toMatch(/client: the client missed its cadence/);
  });

  it('with --processes auto, runs a count the client fell behind on again over more processes, and says so when that does not help', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-auto-'));
    const { code, stdout } = await probe([
      'sweep', '--url', mock.url, '--sessions', '4:8', '--runs', '1', '--duration', '2', '--output', dir,
      '--processes', 'auto', '--max-processes', '2', '--run-args', '--inject-stall-ms 300 --start-spread-ms 0',
    ]);
    expect(code).toBe(0);
    const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
    // Every process stalls its own loop: more processes cannot help, and the sweep stops at the first count.
    expect(file.points.map((p) => [p.sessions, p.verdict, p.client_limited_at_processes])).toEqual([[4, 'client-limited', [1]]]);
    expect(file.points[0].runs.map((r) => [r.processes, r.sessions_run])).toEqual([[2, 4]]);
    const merged = JSON.parse(await readFile(join(file.points[0].runs[0].dir, 'summary.json'), 'utf8')) as { processes: number; sessions: { started: number } };
    expect([merged.processes, merged.sessions.started]).toEqual([2, 4]);
    expect(file.capacity).toMatchObject({ sessions: null, limited_by: 'client' });
    expect(stdout).toMatch(/the client missed its cadence \(or a run failed\) at 4 sessions with 2 processes/);
    expect(stdout).toMatch(/4\s+1 \(behind\), 2\s+client-limited/);
  });

  it('names why a count failed to run: the run\'s own error line, in sweep.json and on stderr', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-unreachable-'));
    // A port that was free a moment ago: nothing listens there.
    const closed = await startMockServer({ port: 0 });
    const url = closed.url;
    await closed.close();
    const { stderr } = await probe(['sweep', '--url', url, '--sessions', '2:4', '--runs', '1', '--duration', '1', '--output', dir]);
    const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
    expect(file.points.map((p) => p.verdict)).toEqual(['failed-to-run']);
    expect(file.points[0].runs[0].error).toMatch(/^error: cannot connect to .*ECONNREFUSED/);
    expect(stderr).toMatch(/sweep: 2 sessions: failed-to-run \(error: cannot connect to /);
  });

  it('refuses --processes auto for the client sweep, and a --run-args that sets the layout', async () => {
    const base = ['sweep', '--url', mock.url, '--output', await mkdtemp(join(tmpdir(), 'sweep-bad-'))];
    expect((await probe([...base, '--target', 'client', '--processes', 'auto'])).code).toBe(2);
    expect((await probe([...base, '--run-args', '--processes 2'])).code).toBe(2);
    expect((await probe([...base, '--processes', '0'])).code).toBe(2);
  });
});

describe('sweep --target client: how many sessions the probe itself holds', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0 });
  });
  afterAll(() => mock.close());

  it('a count passes on pacing alone; a count where the probe missed its cadence is where the client stops', async () => {
    const held = await mkdtemp(join(tmpdir(), 'sweep-client-ok-'));
    await probe(['sweep', '--target', 'client', '--url', mock.url, '--sessions', '2:8', '--runs', '1', '--duration', '1.5', '--output', held]);
    const ok = JSON.parse(await readFile(join(held, 'sweep.json'), 'utf8')) as SweepFile;
    expect(ok.points.map((p) => [p.sessions, p.verdict])).toEqual([[2, 'pass'], [4, 'pass'], [8, 'pass']]);
    expect(ok.capacity).toMatchObject({ sessions: 8, limited_by: 'search range' });
    expect(ok.points[0].runs[0].slo).toEqual([]);

    const stalled = await mkdtemp(join(tmpdir(), 'sweep-client-late-'));
    const { stdout } = await probe([
      'sweep', '--target', 'client', '--url', mock.url, '--sessions', '2:8', '--runs', '1', '--duration', '1.5', '--output', stalled,
      '--run-args', '--inject-stall-ms 300 --start-spread-ms 0',
    ]);
    const late = JSON.parse(await readFile(join(stalled, 'sweep.json'), 'utf8')) as SweepFile;
    expect(late.points.map((p) => p.verdict)).toEqual(['fail']);
    expect(late.capacity).toMatchObject({ sessions: null, limited_by: 'client' });
    expect(stdout).toMatch(/capacity: below 2 sessions/);
  });
});
