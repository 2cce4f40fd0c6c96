import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exponential, lognormal, seeded } from '@duplex-bench/pacer';
import { blockingProbability } from '@duplex-bench/results';
import { fakeRuns, flag, memoryIo, percentile, sessionsOf, type ReadFigures, type RunModel } from './fake-runs.spec-helpers';
import type { PointRunner } from './point-runner';
import { DEFAULT_SLO, parseSlo } from './slo';
import { capacityOf, perGpu, pooledBlocking, runSweep, type SweepFile, type SweepPlan, type SweepPoint, type SweepRun, type SweepSettings } from './sweep';

const point = (sessions: number, verdict: SweepPoint['verdict']): SweepPoint => ({ sessions, runs: [], verdict });

describe('capacityOf', () => {
  it('is the largest pass below the first failure, with that range', () => {
    const c = capacityOf([point(8, 'pass'), point(16, 'pass'), point(32, 'fail'), point(24, 'pass'), point(28, 'fail')], 8, 64);
    expect(c).toMatchObject({ sessions: 24, range: [24, 28], limited_by: 'server' });
  });

  it('ignores a pass above the first failure (a noisy count does not raise the capacity)', () => {
    expect(capacityOf([point(8, 'pass'), point(16, 'fail'), point(24, 'pass')], 8, 64)).toMatchObject({ sessions: 8, range: [8, 16] });
  });

  it('never names the server when the client fell behind first', () => {
    const c = capacityOf([point(8, 'pass'), point(16, 'client-limited'), point(32, 'fail')], 8, 64);
    expect(c).toMatchObject({ sessions: 8, range: [8, null], limited_by: 'client' });
  });

  it('says the search range ran out when every count passed', () => {
    expect(capacityOf([point(8, 'pass'), point(16, 'pass')], 8, 16)).toMatchObject({ sessions: 16, limited_by: 'search range' });
  });

  it('has no capacity when the smallest count failed', () => {
    expect(capacityOf([point(8, 'fail')], 8, 64)).toMatchObject({ sessions: null, range: [null, 8] });
  });
});

describe('capacityOf, an arrival sweep', () => {
  const rate = (rate_per_s: number, verdict: SweepPoint['verdict']): SweepPoint => ({ rate_per_s, offered_erlangs: rate_per_s / 2, runs: [], verdict });

  it('names the largest passing rate and its offered Erlangs, the range in rates', () => {
    const c = capacityOf([rate(6, 'pass'), rate(12, 'pass'), rate(24, 'fail'), rate(18, 'pass'), rate(21, 'fail')], 6, 48);
    expect(c).toMatchObject({ sessions: null, rate_per_s: 18, offered_erlangs: 9, range: [18, 21], limited_by: 'server', note: 'passes at 18/s, fails at 21/s' });
  });

  it('never names the server when the client fell behind first', () => {
    expect(capacityOf([rate(6, 'pass'), rate(12, 'client-limited'), rate(24, 'fail')], 6, 48)).toMatchObject({ rate_per_s: 6, limited_by: 'client' });
  });
});

describe('perGpu (--gpus N)', () => {
  it('gives a count sweep its sessions per GPU and the range they lie in', () => {
    const c = capacityOf([point(8, 'pass'), point(16, 'pass'), point(24, 'pass'), point(32, 'fail'), point(28, 'fail')], 8, 64);
    expect(perGpu(c, [], 8)).toEqual({ gpus: 8, sessions: 3, sessions_range: [3, 3.5] });
  });

  it("gives an arrival sweep its offered Erlangs per GPU at the last passing rate, and at the first failing one", () => {
    const rate = (rate_per_s: number, verdict: SweepPoint['verdict']): SweepPoint => ({ rate_per_s, offered_erlangs: rate_per_s * 15, runs: [], verdict });
    const points = [rate(1, 'pass'), rate(2, 'pass'), rate(4, 'fail'), rate(3, 'pass')];
    const c = capacityOf(points, 1, 8);
    expect(perGpu(c, points, 2)).toEqual({ gpus: 2, erlangs: 22.5, erlangs_range: [22.5, 30] });
  });

  it('has no per-GPU figure where the sweep found no capacity', () => {
    expect(perGpu(capacityOf([point(8, 'fail')], 8, 64), [], 4)).toEqual({ gpus: 4, sessions: null, sessions_range: [null, 2] });
  });
});

describe('pooledBlocking', () => {
  const run = (count: number, blocked: number): SweepRun => ({
    dir: '',
    processes: 1,
    sessions_run: count - blocked,
    code: 0,
    qualified: true,
    slo: [],
    arrivals: { offered_erlangs: 9, count, blocked, client_skipped: 0, over: 'steady', blocking_probability: { rate: blocked / count, count, ci95: null } },
  });

  it('sums refusals and arrivals over the runs, with the Wilson interval of the sums', () => {
    const b = pooledBlocking([run(300, 3), run(100, 5)]);
    expect(b).toMatchObject({ rate: 0.02, count: 400 });
    const [low, high] = b?.ci95 ?? [1, 0];
    expect(low).toBeLessThan(0.02);
    expect(high).toBeGreaterThan(0.02);
  });

  it('is null for runs without an arrivals block', () => {
    expect(pooledBlocking([{ ...run(1, 0), arrivals: undefined }])).toBeNull();
  });
});

// runSweep against fake runs: each run writes the summary.json a real one would, from a model of the
// server (and client) stated here, so the search itself is proven without starting a process.

const SERVER = 'ws://127.0.0.1:9/v1/realtime';

const settingsOf = (over: Partial<SweepSettings> = {}): SweepSettings => ({
  url: SERVER,
  target: 'server',
  protocol: 'native',
  duration_s: 2,
  runs: 1,
  slo: DEFAULT_SLO,
  run_args: '',
  processes: 1,
  max_processes: 1,
  ...over,
});

async function sweep(runs: RunModel, plan: Partial<SweepPlan> & Pick<SweepPlan, 'min' | 'max' | 'resolution' | 'output'>, io = memoryIo()) {
  const fake = fakeRuns(runs);
  const file = await runSweep({ settings: settingsOf(), terms: parseSlo(plan.settings?.slo ?? DEFAULT_SLO), script: 'never started', run: fake.run, ...plan }, io);
  return { file, calls: fake.calls, stderr: io.written(), onDisk: JSON.parse(await readFile(join(plan.output, 'sweep.json'), 'utf8')) as SweepFile };
}

const sessionsRun = (sessions: number): NonNullable<ReadFigures['sessions']> => ({ started: sessions, completed: sessions, incomplete: 0, with_violation: 0, incomplete_reasons: {} });

/**
 * A server that holds `capacity` sessions: within it every session answers in about 100 ms; past it,
 * as the model mock's capacity_sessions, everything takes longer by sessions / capacity and the
 * sessions it cannot hold starve (one playback underrun each). Seeded noise on the TTFP.
 */
function heldServer(capacity: number, seed = 1): (args: string[]) => ReadFigures {
  const random = seeded(seed);
  return (args) => {
    const sessions = sessionsOf(args);
    const p99 = Math.round(lognormal(random, 100 * Math.max(1, sessions / capacity), 0.05) * 10) / 10;
    return { qualified: true, sessions: sessionsRun(sessions), duplex: { ttfp_ms: { p99 }, playback_underruns: Math.max(0, sessions - capacity) } };
  };
}

/** A probe that keeps its cadence for up to `holds` sessions a process, never with a stall injected. */
const keepsCadence = (holds: number) => (args: string[]) => Number(flag(args, '--concurrency')) <= holds && !args.includes('--inject-stall-ms');

const withClient = (server: (args: string[]) => ReadFigures, client: (args: string[]) => boolean): RunModel => (args) => ({ ...server(args), qualified: client(args) });

describe('runSweep over session counts, against fake runs', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sweep-spec-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('finds the capacity within one bisection step, and a second invocation measures nothing again', async () => {
    const plan = { min: 3, max: 48, resolution: 2, output: dir };
    const { file, calls, onDisk } = await sweep(heldServer(12), plan);
    expect(file.capacity).toEqual({ sessions: 12, range: [12, 14], limited_by: 'server', note: 'passes at 12, fails at 14' });
    const [pass, fail] = file.capacity.range as [number, number];
    expect(fail - pass).toBeLessThanOrEqual(plan.resolution);
    expect(pass).toBeLessThanOrEqual(12);
    expect(fail).toBeGreaterThan(12);
    // Doubling first (3, 6, 12, 24), then bisection between the last pass and the first failure.
    expect(file.points.map((p) => [p.sessions, p.verdict])).toEqual([[3, 'pass'], [6, 'pass'], [12, 'pass'], [24, 'fail'], [18, 'fail'], [15, 'fail'], [14, 'fail']]);
    // Each count is a run of the sweep's flags, its summary read back from where the run wrote it.
    expect(calls[0]).toEqual(['run', '--url', SERVER, '--protocol', 'native', '--concurrency', '3', '--duration', '2', '--output', join(dir, 's3-r1'), '--quiet']);
    expect(calls.map((c) => flag(c, '--output'))).toEqual(file.points.map((p) => p.runs[0].dir));
    expect(file.points[3].runs[0]).toMatchObject({ processes: 1, sessions_run: 24, code: 0, qualified: true });
    expect(file.points[3].runs[0].slo).toEqual([
      { term: 'underruns=0', value: 12, ok: false },
      { term: 'ttfp_p99_ms<=1000', value: expect.any(Number), ok: true },
      { term: 'incomplete=0', value: 0, ok: true },
    ]);
    expect(onDisk).toEqual(file);

    const again = await sweep(heldServer(12), plan);
    expect(again.calls).toEqual([]);
    expect(again.file.capacity).toEqual(file.capacity);
    expect(again.file.points).toEqual(file.points);
  });

  it('with abort_on_fail, hands each one-process run the SLO to end on, and a run that ended early fails its point', async () => {
    const server = heldServer(12);
    // A run past the capacity ends itself early on TTFP, as run --abort-on-fail does, and exits 4.
    const ending: RunModel = (args) => {
      const figures = server(args);
      const early = args.includes('--abort-on-fail') && sessionsOf(args) > 12;
      return early ? { ...figures, sessions: { ...sessionsRun(sessionsOf(args)), completed: 0, incomplete: sessionsOf(args) }, slo: { terms: [], passed: false, aborted: { term: 'ttfp_p99_ms<=1000', value: 2000, at_s: 4.5, how: 'over its bound for 3 s' } } } : figures;
    };
    const slo = 'ttfp_p99_ms<=1000';
    const { file, calls, stderr } = await sweep(ending, { min: 6, max: 24, resolution: 6, output: dir, settings: settingsOf({ slo, abort_on_fail: { grace_s: 3 } }) });
    expect(calls[0]).toEqual(['run', '--url', SERVER, '--protocol', 'native', '--concurrency', '6', '--duration', '2', '--output', join(dir, 's6-r1'), '--quiet', '--slo', slo, '--abort-on-fail', '--abort-grace-s', '3']);
    expect(file.points.map((p) => [p.sessions, p.verdict, p.runs[0].code, p.runs[0].ended_early])).toEqual([
      [6, 'pass', 0, undefined],
      [12, 'pass', 0, undefined],
      [24, 'fail', 4, { term: slo, at_s: 4.5 }],
      [18, 'fail', 4, { term: slo, at_s: 4.5 }],
    ]);
    expect(stderr).toContain('sweep: 24 sessions, run 1: ended early at 4.5 s on ttfp_p99_ms<=1000 (2000)\n');
    expect(file.capacity).toMatchObject({ sessions: 12, range: [12, 18] });
  });

  it('without abort_on_fail, or with no term judged live, runs every point to its end', async () => {
    const plain = await sweep(heldServer(12), { min: 6, max: 6, resolution: 6, output: dir });
    expect(plain.calls[0]).not.toContain('--abort-on-fail');
    const unjudged = await sweep(heldServer(12), { min: 6, max: 6, resolution: 6, output: join(dir, 'b'), settings: settingsOf({ slo: 'underruns=0', abort_on_fail: { grace_s: 3 } }) });
    expect(unjudged.calls[0]).not.toContain('--abort-on-fail');
  });

  it('keeps what an interrupted sweep measured, and resumes at the count it stopped in', async () => {
    const plan = { min: 3, max: 48, resolution: 2, output: dir };
    const io = memoryIo();
    const server = heldServer(12);
    // The operator interrupts during the fourth run (24 sessions): that count is not kept.
    const interruptedAt24: RunModel = (args) => {
      if (sessionsOf(args) === 24) io.interrupt();
      return server(args);
    };
    const first = await sweep(interruptedAt24, plan, io);
    expect(first.file.interrupted).toBe(true);
    expect(first.file.points.map((p) => p.sessions)).toEqual([3, 6, 12]);
    expect(first.onDisk.points).toEqual(first.file.points);

    const rest = await sweep(heldServer(12), plan);
    expect(rest.calls.map(sessionsOf)).toEqual([24, 18, 15, 14]);
    expect(rest.file.interrupted).toBe(false);
    expect(rest.file.capacity).toMatchObject({ sessions: 12, range: [12, 14], limited_by: 'server' });
  });

  it('measures again when the settings changed (another SLO is another sweep)', async () => {
    const plan = { min: 3, max: 12, resolution: 2, output: dir };
    await sweep(heldServer(12), plan);
    const slo = 'ttfp_p99_ms<=1000';
    const other = await sweep(heldServer(12), { ...plan, settings: settingsOf({ slo }) });
    expect(other.calls.map(sessionsOf)).toEqual([3, 6, 12]);
  });

  it('with --processes auto, runs a count the client fell behind on again over more processes', async () => {
    // The probe holds 4 sessions a process; the server 12.
    const { file, calls, stderr } = await sweep(withClient(heldServer(12), keepsCadence(4)), { min: 4, max: 16, resolution: 2, output: dir, settings: settingsOf({ processes: 'auto', max_processes: 4 }) });
    expect(file.points.map((p) => [p.sessions, p.verdict, p.client_limited_at_processes, p.runs.map((r) => [r.processes, r.sessions_run])])).toEqual([
      [4, 'pass', undefined, [[1, 4]]],
      [8, 'pass', [1], [[2, 8]]],
      [16, 'fail', [2], [[4, 16]]],
      // The process count only grows: a client behind at 8 sessions is behind at more.
      [12, 'pass', undefined, [[4, 12]]],
      [14, 'fail', undefined, [[4, 16]]],
    ]);
    expect(file.capacity).toMatchObject({ sessions: 12, range: [12, 14], limited_by: 'server' });
    expect(calls.map((c) => flag(c, '--output'))).toEqual(['s4-r1', 's8-r1', 's8-p2-r1', 's16-p2-r1', 's16-p4-r1', 's12-p4-r1', 's14-p4-r1'].map((d) => join(dir, d)));
    expect(calls[2]).toEqual(expect.arrayContaining(['--concurrency', '4', '--processes', '2']));
    expect(stderr).toContain('sweep: 8 sessions: the client fell behind; again with 2 processes\n');
    expect(stderr).toContain('sweep: 16 sessions over 4 processes, run 1 of 1\n');
  });

  it('with --processes auto, says so when more processes do not help: the client stays the limit', async () => {
    // Every process stalls its own loop: more processes cannot help, and the sweep stops at the first count.
    const run_args = '--inject-stall-ms 300 --start-spread-ms 0';
    const { file, calls } = await sweep(withClient(heldServer(12), keepsCadence(64)), { min: 4, max: 8, resolution: 4, output: dir, settings: settingsOf({ processes: 'auto', max_processes: 2, run_args }) });
    expect(file.points.map((p) => [p.sessions, p.verdict, p.client_limited_at_processes])).toEqual([[4, 'client-limited', [1]]]);
    expect(file.points[0].runs.map((r) => [r.processes, r.sessions_run, r.code])).toEqual([[2, 4, 3]]);
    expect(calls.map((c) => c.slice(5, 9))).toEqual([['--concurrency', '4', '--duration', '2'], ['--concurrency', '2', '--processes', '2']]);
    expect(calls.every((c) => c.join(' ').endsWith(`--quiet ${run_args}`))).toBe(true);
    expect(file.capacity).toMatchObject({ sessions: null, limited_by: 'client' });
    expect(file.capacity.note).toMatch(/^the client missed its cadence \(or a run failed\) at 4 sessions with 2 processes: /);
  });

  it('names why a count failed to run: the run\'s own error line, in sweep.json and on stderr', async () => {
    const error = `error: cannot connect to ${SERVER}: connect ECONNREFUSED 127.0.0.1:9`;
    const { file, stderr } = await sweep(() => ({ code: 1, error }), { min: 2, max: 4, resolution: 1, output: dir });
    expect(file.points.map((p) => p.verdict)).toEqual(['failed-to-run']);
    expect(file.points[0].runs[0]).toMatchObject({ code: 1, error, qualified: false, slo: [] });
    expect(stderr).toContain(`sweep: 2 sessions: failed-to-run (${error})\n`);
    expect(file.capacity).toMatchObject({ sessions: null, limited_by: 'client' });
  });
});

describe('runSweep --target client: how many sessions the probe itself holds, against fake runs', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sweep-client-spec-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  // The app gives a client sweep no SLO terms; a server that fails every term does not matter.
  const failingServer = (args: string[]): ReadFigures => ({ qualified: true, sessions: sessionsRun(sessionsOf(args)), duplex: { ttfp_ms: { p99: 5000 }, playback_underruns: 40 } });
  const client = (plan: Pick<SweepPlan, 'min' | 'max' | 'resolution' | 'output'>, holds: number, run_args = '') =>
    sweep(withClient(failingServer, keepsCadence(holds)), { ...plan, terms: [], settings: settingsOf({ target: 'client', duration_s: 1.5, run_args }) });

  it('a count passes on pacing alone; a count where the probe missed its cadence is where the client stops', async () => {
    const ok = await client({ min: 2, max: 8, resolution: 4, output: join(dir, 'held') }, 64);
    expect(ok.file.points.map((p) => [p.sessions, p.verdict])).toEqual([[2, 'pass'], [4, 'pass'], [8, 'pass']]);
    expect(ok.file.capacity).toMatchObject({ sessions: 8, limited_by: 'search range' });
    expect(ok.file.points[0].runs[0].slo).toEqual([]);

    const five = await client({ min: 2, max: 16, resolution: 1, output: join(dir, 'five') }, 5);
    expect(five.file.points.map((p) => [p.sessions, p.verdict])).toEqual([[2, 'pass'], [4, 'pass'], [8, 'fail'], [6, 'fail'], [5, 'pass']]);
    expect(five.file.capacity).toEqual({ sessions: 5, range: [5, 6], limited_by: 'client', note: 'the probe kept its cadence at 5, not at 6' });

    const late = await client({ min: 2, max: 8, resolution: 4, output: join(dir, 'late') }, 64, '--inject-stall-ms 300 --start-spread-ms 0');
    expect(late.file.points.map((p) => p.verdict)).toEqual(['fail']);
    // What the app prints as "capacity: below 2 sessions".
    expect(late.file.capacity).toEqual({ sessions: null, range: [null, 2], limited_by: 'client', note: 'the smallest count, 2, already failed' });
  });
});

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

/**
 * A server of `slots` sessions under Poisson arrivals: each run offers --arrival-rate for --run-for
 * seconds (seeded by the run's --seed), and refuses each arrival with the probability Erlang B gives
 * at the offered load (rate × the mean of --session-duration exp:M), as a loss system in its steady
 * state does.
 */
function lossServer(slots: number): RunModel {
  return (args) => {
    const rate = Number(flag(args, '--arrival-rate'));
    const random = seeded(Number(flag(args, '--seed')) * 100_003 + Math.round(rate * 100));
    const mean_s = Number(/^exp:(.+)$/.exec(flag(args, '--session-duration'))?.[1]);
    const [run_for_s, warmup_s] = [Number(flag(args, '--run-for')), Number(flag(args, '--warmup-s'))];
    const blocking = erlangB(slots, rate * mean_s);
    const all = { arrived: 0, client_skipped: 0, started: 0, blocked: 0, failed_to_open: 0 };
    const steady = { ...all };
    for (let t = exponential(random, 1 / rate); t < run_for_s; t += exponential(random, 1 / rate)) {
      const refused = random() < blocking;
      for (const c of t >= warmup_s ? [all, steady] : [all]) {
        c.arrived++;
        if (refused) c.blocked++;
        else c.started++;
      }
    }
    const refusals: Record<string, number> = all.blocked ? { admission_refused: all.blocked } : {};
    return {
      qualified: true,
      // A refused arrival is an incomplete session (admission_refused): blocking, not a broken session.
      sessions: { ...sessionsRun(all.arrived), completed: all.started, incomplete: all.blocked, incomplete_reasons: refusals },
      duplex: { ttfp_ms: { p99: 120 } },
      arrivals: {
        offered_erlangs: Math.round(rate * mean_s * 1e4) / 1e4,
        ...all,
        blocking_probability: blockingProbability(all),
        steady: { from_s: warmup_s, ...steady, blocking_probability: blockingProbability(steady) },
      },
    };
  };
}

describe('runSweep --arrival-rate, against a fake server with 16 slots', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sweep-arrivals-spec-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  // Sessions of exp:0.5 s, 20 s of arrivals after a 2 s warm-up; no underruns term (see arrival-sweep.e2e.ts).
  const arrivalSweep = (output: string, seed: number) =>
    sweep(lossServer(16), {
      min: 12,
      max: 48,
      resolution: 3,
      output,
      settings: settingsOf({ slo: 'incomplete=0,ttfp_p99_ms<=1000', run_args: '--session-duration exp:0.5 --run-for 22 --warmup-s 2', arrivals: { max_blocking: 0.01, seed } }),
    });

  it('finds the rate at which blocking passes 1% within one bisection step of the rate Erlang B predicts', async () => {
    const predicted_erlangs = erlangsAtBlocking(16, 0.01);
    expect(predicted_erlangs).toBeCloseTo(8.88, 2);
    const predicted_rate = predicted_erlangs / 0.5;
    const { file, calls, stderr } = await arrivalSweep(dir, 1);
    const c = file.capacity;
    expect(c.limited_by).toBe('server');
    const found = c.rate_per_s ?? NaN;
    const [pass, fail] = c.range as [number, number];
    expect(found).toBe(pass);
    expect(c.sessions).toBeNull();
    expect(fail - pass).toBeLessThanOrEqual(3);
    expect(Math.abs(found - predicted_rate)).toBeLessThanOrEqual(3);
    expect(c.offered_erlangs).toBeCloseTo(found * 0.5, 6);
    expect(c.note).toBe(`passes at ${pass}/s, fails at ${fail}/s`);
    // Doubling first, then bisection; every point with its rate, Erlangs and blocking interval.
    expect(file.points.slice(0, 2).map((p) => [p.rate_per_s, p.verdict])).toEqual([[12, 'pass'], [24, 'fail']]);
    for (const p of file.points) {
      expect(p.sessions).toBeUndefined();
      expect(p.offered_erlangs).toBeCloseTo((p.rate_per_s ?? 0) * 0.5, 6);
      expect(p.blocking_probability?.ci95).toHaveLength(2);
      expect(p.runs[0].arrivals).toMatchObject({ over: 'steady', client_skipped: 0 });
      expect(p.runs[0].qualified).toBe(true);
    }
    // The steady arrivals decide: the run's blocked over its arrivals after the warm-up.
    const at24 = file.points[1];
    expect(at24.blocking_probability).toEqual(at24.runs[0].arrivals?.blocking_probability);
    // One process a run, its rate and its own seed; the run's flags after.
    expect(calls[0]).toEqual(['run', '--url', SERVER, '--protocol', 'native', '--arrival-rate', '12', '--seed', '1', '--duration', '2', '--output', join(dir, 'a12-r1'), '--quiet', '--session-duration', 'exp:0.5', '--run-for', '22', '--warmup-s', '2']);
    expect(stderr).toMatch(/sweep: 24\/s: fail \(12 Erlangs offered, blocking 0\.\d+, 95% 0\.\d+\.\.0\.\d+\)\n/);
  });

  it('lands within one step of Erlang B whatever the seed of the schedules', async () => {
    const predicted_rate = erlangsAtBlocking(16, 0.01) / 0.5;
    for (const seed of [2, 3, 4, 5, 6, 7, 8, 9]) {
      const { file } = await arrivalSweep(join(dir, `seed${seed}`), seed);
      const [pass, fail] = file.capacity.range as [number, number];
      expect([seed, fail - pass <= 3, Math.abs(pass - predicted_rate) <= 3]).toEqual([seed, true, true]);
    }
  });
});

/**
 * A server whose stops slow down past `knee` sessions, as the native mock's capacity_sessions: each
 * session's barge-in stops after `stop_ms` x max(1, sessions / knee), plus up to 40 ms of the
 * client's own playout (seeded). `log` keeps every run's stop times, in the order the runs came.
 */
function slowingStops(knee: number, stop_ms: number) {
  const random = seeded(17);
  const log: Array<{ sessions: number; stop_ms: number[] }> = [];
  const model: RunModel = (args) => {
    const sessions = sessionsOf(args);
    const stops = Array.from({ length: sessions }, () => stop_ms * Math.max(1, sessions / knee) + 40 * random());
    log.push({ sessions, stop_ms: stops });
    const at = (q: number) => Math.round(percentile(stops, q) * 10) / 10;
    const stop_latency_ms = { count: sessions, p50: at(0.5), p90: at(0.9), p95: at(0.95), p99: at(0.99), max: at(1) };
    return { qualified: true, sessions: sessionsRun(sessions), behaviour: { stop_latency_ms } };
  };
  return { model, log };
}

describe('runSweep --slo stop_latency_p95_ms<=400, against a fake server whose stops slow down past 24 sessions', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sweep-knee-spec-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("finds the knee within one bisection step, where the server's own stop times put it", async () => {
    const { model, log } = slowingStops(24, 200);
    const slo = 'stop_latency_p95_ms<=400';
    const run_args = '--conversation barge-in.yaml';
    const { file, calls, stderr } = await sweep(model, { min: 12, max: 48, resolution: 4, output: dir, settings: settingsOf({ duration_s: 8, slo, run_args }) });
    expect(file.capacity.limited_by).toBe('server');
    const [pass, fail] = file.capacity.range as [number, number];
    expect(fail - pass).toBeLessThanOrEqual(4);
    // The runs went one after another, each a count of sessions, as the progress lines say.
    const order = [...stderr.matchAll(/^sweep: (\d+) sessions, run 1 of 1$/gm)].map((m) => Number(m[1]));
    expect(log.map((r) => r.sessions)).toEqual(order);
    expect(calls.every((c) => c.includes('--conversation') && flag(c, '--conversation') === 'barge-in.yaml')).toBe(true);
    // Both sides of the knee as the server's own stop times put it.
    const truthAt = new Map(log.map((r) => [r.sessions, percentile(r.stop_ms, 0.95)]));
    expect(truthAt.get(pass)).toBeLessThanOrEqual(400);
    expect(truthAt.get(fail)).toBeGreaterThan(400);
    expect(pass).toBeGreaterThan(24);
    expect(file.points.find((p) => p.sessions === fail)?.runs[0].slo).toEqual([{ term: slo, value: expect.any(Number), ok: false }]);
  });
});

describe('runSweep, given files it cannot read', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sweep-corrupt-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const plan = (run: PointRunner): SweepPlan => ({ settings: settingsOf(), terms: parseSlo(DEFAULT_SLO), min: 2, max: 4, resolution: 1, output: dir, script: 'never started', run });
  const neverRun: PointRunner = () => Promise.reject(new Error('no run was due'));
  const failure = (p: Promise<unknown>) => p.then(() => new Error('it resolved'), (err: unknown) => err as Error);

  it("names a sweep.json cut short, with the parser's place, and runs nothing", async () => {
    const path = join(dir, 'sweep.json');
    await writeFile(path, '{"format":"duplex-bench.sweep","settings":{"url":');
    const err = await failure(runSweep(plan(neverRun), memoryIo()));
    expect(err.message).toMatch(new RegExp(`^${path}: not valid JSON \\(.+\\); the file may be cut short$`));
  });

  it('names a sweep.json of these settings whose points are not points with runs, rather than failing on it', async () => {
    const path = join(dir, 'sweep.json');
    await writeFile(path, JSON.stringify({ settings: settingsOf(), points: [{ sessions: 2, verdict: 'pass' }] }));
    const err = await failure(runSweep(plan(neverRun), memoryIo()));
    expect(err.message).toBe(`${path}: not a sweep to resume: its settings are these, but "points" is not a list of points with their runs`);
  });

  it("names a run's summary.json cut short", async () => {
    const cut: PointRunner = async (args) => {
      const out = flag(args, '--output');
      await mkdir(out, { recursive: true });
      await writeFile(join(out, 'summary.json'), '{"qualified":tr');
      return { code: 0, error: null };
    };
    const err = await failure(runSweep(plan(cut), memoryIo()));
    expect(err.message).toMatch(new RegExp(`^${join(dir, 's2-r1', 'summary.json')}: not valid JSON \\(.+\\); the file may be cut short$`));
  });
});
