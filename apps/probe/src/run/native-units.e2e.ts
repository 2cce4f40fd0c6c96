import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeSamples } from '@duplex-bench/metrics';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { buildMergedSummary, readRunForMerge } from '@duplex-bench/results';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { mergeCommand } from '../merge/merge-command';
import { probe } from './run-harness.spec-helpers';

jest.setTimeout(60_000);

/**
 * Unit figures of the native dialect, against the model mocks as they serve (nemotron: 80 ms units,
 * one unit produced per 40 ms after 200 ms; minicpmo: 1 s units): the realtime run's unit lag and
 * miss rate, and lockstep pacing, which must end (their newest client waits for the short last
 * unit's unit.done, which comes only after the end of input).
 */
describe('probe run (native): units', () => {
  let nemotron: MockServer;
  let minicpmo: MockServer;
  beforeAll(async () => {
    nemotron = await startMockServer({ port: 0, profile: 'nemotron' });
    minicpmo = await startMockServer({ port: 0, profile: 'minicpmo' });
  });
  afterAll(async () => {
    await nemotron.close();
    await minicpmo.close();
  });

  it('--pacing lockstep with a 3.3 s input ends, sends every packet, and reports units/s', async () => {
    const started = Date.now();
    const { code, stdout, summary, dir } = await probe(nemotron.url, ['--concurrency', '2', '--duration', '3.3', '--pacing', 'lockstep', '--unit-timeout-s', '5']);
    // 41 whole units at about 40 ms each; a hang would wait out the 5 s unit bound and fail the session.
    expect(Date.now() - started).toBeLessThan(4000);
    expect(code).toBe(0);
    expect(summary.sessions).toMatchObject({ started: 2, completed: 2 });
    expect(summary.packets.sent).toBe(2 * 42);
    expect(summary.pacing).toBe('lockstep');
    expect(summary.qualified).toBe(false);
    const l = summary.lockstep;
    expect(l).toBeDefined();
    expect(l?.unit_ms).toBe(80);
    expect(l?.units).toMatchObject({ expected: 84, done: 84 });
    expect(l?.ms_per_unit.count).toBe(84);
    expect(l?.units_per_s.count).toBe(2);
    // Faster than realtime (12.5 units/s): the mock makes a unit in 40 ms.
    expect(l?.units_per_s.min).toBeGreaterThan(12.5);
    expect(l?.units_per_s_total).toBeCloseTo((l?.units_per_s.per_session ?? []).reduce((a, b) => a + b, 0), 2);
    expect(summary.unit_lag_ms).toBeUndefined();
    expect(summary.measurement_origin.pacing).toMatch(/not a realtime capacity/);
    const last = stdout.trim().split('\n').pop() ?? '';
    expect(last).toMatch(/^LOCKSTEP: pacing not applicable/);
    expect(last).toMatch(/units\/s total over 2 session/);
    const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as { dialect: { pacing?: string } };
    expect(run.dialect.pacing).toBe('lockstep');
    // Merged, a lockstep run is still "not applicable", exit 0, not a missed cadence.
    let out = '';
    const merged = await mergeCommand([dir, '--output', await mkdtemp(join(tmpdir(), 'merged-'))], { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => undefined } });
    expect(merged).toBe(0);
    expect(out.trim().split('\n').pop()).toMatch(/^LOCKSTEP: pacing not applicable/);
  });

  it('a realtime native run holds unit lag p50/p95/p99 and the miss rate, and merge pools them', async () => {
    const { code, summary, dir } = await probe(nemotron.url, ['--concurrency', '2', '--duration', '1']);
    expect(code).toBe(0);
    // 1 s of input in 80 ms units: 12 whole units and one of 40 ms per session.
    expect(summary.units).toMatchObject({ unit_ms: 80, expected: 26, done: 26, miss_threshold_ms: 80 });
    const lag = summary.unit_lag_ms;
    expect(lag?.count).toBe(26);
    for (const p of [lag?.p50, lag?.p95, lag?.p99, lag?.max]) expect(typeof p).toBe('number');
    expect(typeof summary.unit_miss_rate).toBe('number');
    expect(summary.measurement_origin.unit_lag_ms).toMatch(/sglang\.unit\.done/);
    expect(summary.measurement_origin.unit_miss_rate).toMatch(/one unit/);
    expect(decodeSamples(await readFile(join(dir, 'samples.msgpack'))).histograms.unit_lag).toEqual(expect.any(String));
    // Two processes' worth: the same run twice pools to twice the units, at the same miss rate.
    const run = await readRunForMerge(dir);
    const merged = buildMergedSummary([dir, dir], [run, await readRunForMerge(dir)]);
    expect(merged.units).toMatchObject({ expected: 52, done: 52, missed: 2 * (summary.units?.missed ?? 0) });
    expect(merged.unit_lag_ms?.count).toBe(52);
    expect(merged.unit_lag_ms?.p95).toBe(lag?.p95);
    expect(merged.unit_miss_rate).toBe(summary.unit_miss_rate);
  });

  it('minicpmo (1 s units) serves lockstep unchanged: 80 ms packets, a wait per unit, the short last unit not waited for', async () => {
    const { code, summary } = await probe(minicpmo.url, ['--concurrency', '1', '--duration', '2.5', '--pacing', 'lockstep']);
    expect(code).toBe(0);
    expect(summary.packets.sent).toBe(32);
    expect(summary.lockstep?.unit_ms).toBe(1000);
    expect(summary.lockstep?.units).toMatchObject({ expected: 3, done: 3 });
  });
});
