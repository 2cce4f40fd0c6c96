import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer } from '@duplex-bench/mock-servers';
import type { SweepFile } from '@duplex-bench/experiments';
import type { RunSummary } from '@duplex-bench/results';
import { probe } from './in-process.spec-helpers';

// The search over rates (within one step of Erlang B, the pooled blocking rule) is proven against a
// fake loss server in libs/experiments/src/sweep.spec.ts; here, one real arrival run read back.
jest.setTimeout(120_000);

describe('sweep --arrival-rate against a mock with 16 slots', () => {
  it("runs a rate as a real arrival run, with its seed, and reads the run's arrivals back", async () => {
    const mock = await startMockServer({ port: 0, max_sessions: 16 });
    const dir = await mkdtemp(join(tmpdir(), 'sweep-arrivals-'));
    try {
      // 4/s of exp:0.5 s sessions is 2 Erlangs on 16 slots: Erlang B refuses about 1 in 10^9.
      const { code, stdout } = await probe([
        'sweep', '--url', mock.url, '--arrival-rate', '4:4', '--runs', '1', '--seed', '7', '--slo', 'incomplete=0', '--output', dir,
        '--run-args', '--session-duration exp:0.5 --run-for 2 --warmup-s 0.5',
      ]);
      expect(code).toBe(0);
      const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
      const [point] = file.points;
      expect(file.points).toHaveLength(1);
      expect(point).toMatchObject({ rate_per_s: 4, offered_erlangs: 2, verdict: 'pass', blocking_probability: { rate: 0 } });
      expect(point.blocking_probability?.ci95).toHaveLength(2);
      expect(point.runs[0]).toMatchObject({ dir: join(dir, 'a4-r1'), code: 0, qualified: true, arrivals: { over: 'steady', client_skipped: 0, blocked: 0 } });
      expect(point.runs[0].arrivals?.count).toBeGreaterThan(0);
      // The rate, the seed and --run-args reached the run: its own summary says so.
      const summary = JSON.parse(await readFile(join(point.runs[0].dir, 'summary.json'), 'utf8')) as RunSummary;
      expect(summary.arrivals).toMatchObject({ rate_per_s: 4, seed: 7, session_duration: 'exp:0.5', run_for_s: 2, steady: { from_s: 0.5 } });
      expect(file.capacity).toMatchObject({ sessions: null, rate_per_s: 4, offered_erlangs: 2, limited_by: 'search range' });
      expect(stdout).toContain('capacity: 4 sessions/s, 2 Erlangs offered (search range: ');
    } finally {
      await mock.close();
    }
  });

  it('refuses --arrival-rate with --sessions, with --processes, or a --run-args that sets the seed', async () => {
    const base = ['sweep', '--url', 'ws://127.0.0.1:1/v1/realtime', '--output', await mkdtemp(join(tmpdir(), 'sweep-arrivals-bad-'))];
    expect((await probe([...base, '--arrival-rate', '4:8', '--sessions', '4:8'])).code).toBe(2);
    expect((await probe([...base, '--arrival-rate', '4:8', '--processes', '2'])).code).toBe(2);
    expect((await probe([...base, '--arrival-rate', '4:8', '--run-args', '--seed 3'])).code).toBe(2);
    expect((await probe([...base, '--arrival-rate', '8:4'])).code).toBe(2);
    expect((await probe([...base, '--sessions', '4:8', '--rate-resolution', '1'])).code).toBe(2);
  });
});
