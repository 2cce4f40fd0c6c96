import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { estimateClockOffset } from './clock-offset';
import { lineUpClocks, type RunClocks } from './clock-lineup';
import { shiftRun } from '@duplex-bench/results';

/** A run whose host's wall clock reads `skew_ms` ahead, started at reference instant `at_ms`. */
function run(dir: string, boot: string, mono_s: number, skew_ms: number, offset: number | null, uncertainty = 0.3): RunClocks {
  const at_ms = 1_000_000;
  return {
    dir,
    boot_id: boot,
    gate_s: mono_s,
    gate_clock: { monotonic_s: mono_s, epoch_ms: at_ms + skew_ms },
    clock_offset: offset === null ? null : { offset_ms: offset, uncertainty_ms: uncertainty, reference: 'http://srv/duplex-bench/time' },
  };
}

describe('lineUpClocks', () => {
  it('on one host, the monotonic clock is the timeline', () => {
    const l = lineUpClocks([run('a', 'b1', 100, 0, null), run('b', 'b1', 100.25, 0, null)], 5);
    expect(l).toMatchObject({ timeline: 'one host', uncertainty_ms: 0 });
    expect(l.runs.map((r) => r.gate_ms)).toEqual([0, 250]);
  });

  it('across hosts, each through its offset: a host 250 ms ahead that measured -250 lands where the others do', () => {
    const l = lineUpClocks([run('a', 'b1', 100, 0, 0.1), run('b', 'b2', 5000, 250, -249.8), run('c', 'b3', 7, -40, 40.2, 0.6)], 5);
    expect(l.timeline).toBe('reference');
    expect(l.uncertainty_ms).toBe(0.6);
    for (const r of l.runs) expect(r.gate_ms as number).toBeLessThanOrEqual(0.5);
    expect(l.same_clock_disagreement_ms).toBeUndefined();
    // Each run's gate, shifted onto the first run's clock, falls at the first run's gate (within the offsets' rounding).
    expect(l.runs.map((r, i) => [100, 5000, 7][i] + r.shift_s)).toEqual([100, expect.closeTo(100 + 0.0001, 3), expect.closeTo(100 + 0.0001, 3)]);
  });

  it('refuses a run of another host with no offset, or one known less well than the bound, naming it', () => {
    expect(() => lineUpClocks([run('a', 'b1', 1, 0, 0), run('b', 'b2', 1, 0, null)], 5)).toThrow('b: ran on another host with no clock offset');
    expect(() => lineUpClocks([run('a', 'b1', 1, 0, 0), run('b', 'b2', 1, 0, 0, 7.5)], 5)).toThrow('b: its clock offset is known only to ±7.5 ms, past the bound of 5 ms');
  });

  it('mapped through the offsets on one host, says how far the mappings disagree', () => {
    const l = lineUpClocks([run('a', 'b1', 100, 0, 0), run('b', 'b1', 100, 250, -249.5)], 5, 'reference');
    expect(l.same_clock_disagreement_ms).toBeCloseTo(0.5, 6);
  });
});

describe('estimateClockOffset', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it('measures a reference 250 ms ahead to within its stated uncertainty', async () => {
    const wall = () => performance.timeOrigin + performance.now();
    server = createServer((_req, res) => res.end(JSON.stringify({ epoch_ms: wall() + 250 })));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const o = await estimateClockOffset(`http://127.0.0.1:${(server.address() as AddressInfo).port}/duplex-bench/time`, wall, 8);
    expect(o.samples).toBe(8);
    expect(Math.abs(o.offset_ms - 250)).toBeLessThanOrEqual(o.uncertainty_ms);
    expect(o.uncertainty_ms).toBeCloseTo(o.rtt_ms / 2, 2);
  });

  it('fails with the reason when the reference does not answer with a time', async () => {
    server = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    await expect(estimateClockOffset(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, Date.now, 2)).rejects.toThrow('answered 404 without epoch_ms');
  });
});

describe('shiftRun', () => {
  it("moves every packet time and the warm-up end by the run's shift, and leaves deviations as they are", () => {
    const columns = { id: 's0', seq: Int32Array.from([0, 1]), scheduled_s: Float64Array.from([10, 10.08]), start_s: Float64Array.from([10.001, 10.081]), completed_s: Float64Array.from([10.002, 10.082]), send_ms: Float64Array.from([1, 1]), deviation_ms: Float64Array.from([0.5, 0.7]) };
    const run = { samples: { format: 'duplex-bench.samples' as const, version: 1 as const, packet_ms: 80, histograms: { deviation: '', send: '', append_span: '' }, sessions: [columns] }, summary: null, steady_from_s: 11 };
    const moved = shiftRun(run, -4.5);
    expect([...moved.samples.sessions[0].scheduled_s]).toEqual([5.5, expect.closeTo(5.58, 9)]);
    expect([...moved.samples.sessions[0].start_s].map((v) => Math.round(v * 1000) / 1000)).toEqual([5.501, 5.581]);
    expect(moved.steady_from_s).toBe(6.5);
    expect([...moved.samples.sessions[0].deviation_ms]).toEqual([0.5, 0.7]);
  });
});
