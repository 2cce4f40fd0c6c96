import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { estimateClockOffset } from './clock-offset';
import { lineUpClocks, type RunClocks } from './clock-lineup';

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
