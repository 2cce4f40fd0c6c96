import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer } from '@duplex-bench/mock-servers';
import type { SweepFile } from '@duplex-bench/experiments';
import { probe } from './in-process.spec-helpers';

// Four runs of 22 s of arrivals, each a fresh process (about 100 s on a 2-core host).
jest.setTimeout(200_000);

/** Erlang B(N, A) by its recurrence: B(0) = 1, B(n) = A·B(n−1) / (n + A·B(n−1)). */
function erlangB(servers: number, erlangs: number): number {
  let b = 1;
  for (let n = 1; n <= servers; n++) b = (erlangs * b) / (n + erlangs * b);
  return b;
}

/** The largest offered load A with ErlangB(servers, A) <= p (B grows with A), by bisection. */
function erlangsAtBlocking(servers: number, p: number): number {
  let [low, high] = [0, servers * 4];
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (erlangB(servers, mid) <= p) low = mid;
    else high = mid;
  }
  return low;
}

describe('sweep --arrival-rate against a mock with 16 slots', () => {
  it('finds the rate at which blocking passes 1% within one bisection step of the rate Erlang B predicts', async () => {
    const predicted_erlangs = erlangsAtBlocking(16, 0.01);
    expect(predicted_erlangs).toBeCloseTo(8.88, 2);
    // Sessions of exp:0.5 s: 8.88 Erlangs is 17.76 arrivals/s, twice the arrivals (and so half the
    // sampling error) of exp:1 in the same wall time. Shorter still biases the check: at exp:0.25 the
    // slot a session holds for its handshake and close is a visible part of its length (42/s measured
    // 0.042 against B(16, 10.5) = 0.030; 21/s of exp:0.5 measured 0.031).
    const predicted_rate = predicted_erlangs / 0.5;
    const mock = await startMockServer({ port: 0, max_sessions: 16 });
    const dir = await mkdtemp(join(tmpdir(), 'sweep-arrivals-'));
    try {
      // The statistics. At 1% a short run sees a handful of refusals, so the search is laid out to
      // test no rate where the verdict is a coin toss except one whose either verdict lands within a
      // step: 12/s (B = 0.0003), 24/s (B = 0.060), then 18/s (B = 0.011, either way), then 21/s
      // (B = 0.030) after a pass or 15/s (B = 0.0027) after a failure; 3/s resolution stops there.
      // The pass rule is the point estimate (pooled refused / arrivals after the warm-up <= 0.01): an
      // interval bound as the rule would move the flip toward one side. With 20 s after a 2 s warm-up
      // (four mean holding times, so the slots are in their steady state), 15/s offers about 300
      // arrivals: failing it takes 4 or more refusals where 0.8 are expected (Poisson, about 1%);
      // 21/s offers about 420: passing it takes 4 or fewer where 13 are expected (below 0.5%). The
      // seed fixes every schedule and duration, so the outcome repeats unless hold times shift a lot.
      // No underruns term: the echo mock answers at real time, so its player runs dry at any load.
      const { code, stdout, stderr } = await probe([
        'sweep', '--url', mock.url, '--arrival-rate', '12:48', '--rate-resolution', '3', '--runs', '1', '--seed', '1',
        '--slo', 'incomplete=0,ttfp_p99_ms<=1000', '--output', dir,
        '--run-args', '--session-duration exp:0.5 --run-for 22 --warmup-s 2',
      ]);
      expect(code).toBe(0);
      const file = JSON.parse(await readFile(join(dir, 'sweep.json'), 'utf8')) as SweepFile;
      const c = file.capacity;
      expect(c.limited_by).toBe('server');
      const found = c.rate_per_s ?? NaN;
      const [pass, fail] = c.range as [number, number];
      expect(found).toBe(pass);
      expect(fail - pass).toBeLessThanOrEqual(3);
      expect(Math.abs(found - predicted_rate)).toBeLessThanOrEqual(3);
      expect(c.offered_erlangs).toBeCloseTo(found * 0.5, 6);
      // Doubling first, then bisection; every point with its rate, Erlangs and blocking interval.
      expect(file.points.slice(0, 2).map((p) => [p.rate_per_s, p.verdict])).toEqual([[12, 'pass'], [24, 'fail']]);
      for (const p of file.points) {
        expect(p.offered_erlangs).toBeCloseTo((p.rate_per_s ?? 0) * 0.5, 6);
        expect(p.blocking_probability?.ci95).toHaveLength(2);
        expect(p.runs[0].arrivals).toMatchObject({ over: 'steady', client_skipped: 0 });
        expect(p.runs[0].qualified).toBe(true);
      }
      expect(stdout).toContain(`capacity: ${found} sessions/s, ${c.offered_erlangs} Erlangs offered (server: passes at ${pass}/s, fails at ${fail}/s)`);
      expect(stderr).toMatch(/sweep: 24\/s: fail \(12 Erlangs offered, blocking 0\.\d+, 95% /);
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
