import { mergeSamples } from './merge';
import { PacingRecorder, type PacketTimes } from './pacing-recorder';
import { decodeSamples, encodeSamples, SampleStore } from './samples';

/** A deterministic pseudo-random stream of deviations, some late. */
function* deviations(seed: number): Generator<number> {
  let x = seed;
  for (;;) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const u = x / 2 ** 31;
    yield u < 0.002 ? 80 + u * 20_000 : u * 12; // ~0.2% late, the rest 0-12 ms
  }
}

/** Records `sessions` sessions of `packets` packets into a process's recorder and store, and into `pooled` too. */
function process(start_s: number, sessions: number, packets: number, seed: number, pooled: PacingRecorder) {
  const pacing = new PacingRecorder(80);
  const store = new SampleStore(80);
  const dev = deviations(seed);
  for (let s = 0; s < sessions; s++) {
    const origin_s = start_s + s * 0.01;
    const column = store.open(`s${s}`);
    for (let seq = 0; seq < packets; seq++) {
      const d_ms = seq === 0 ? 0 : (dev.next().value as number);
      const p: PacketTimes = {
        seq,
        scheduled_s: origin_s + seq * 0.08,
        start_s: origin_s + seq * 0.08 + d_ms / 1000,
        completed_s: origin_s + seq * 0.08 + d_ms / 1000 + 0.0001,
        send_ms: 0.1 + (seq % 7) * 0.01,
        buffered_bytes: 0,
      };
      pacing.record(p, origin_s);
      pooled.record(p, origin_s);
      column.push(p);
    }
  }
  return decodeSamples(encodeSamples(store.toFile(pacing)));
}

describe('mergeSamples', () => {
  it('gives the figures of one pooled computation: counts exactly, percentiles within HDR precision', () => {
    const pooled = new PacingRecorder(80);
    const a = process(100, 8, 400, 1, pooled);
    const b = process(110, 5, 300, 2, pooled);
    const merged = mergeSamples([a, b]);
    const whole = pooled.figures();
    expect(merged.packets).toEqual(whole.packets);
    expect(merged.packets.late).toBeGreaterThan(0);
    expect(merged.sessions_streamed).toBe(13);
    for (const k of ['p50', 'p90', 'p99', 'p99_9', 'max'] as const) {
      const exact = whole.pacing_deviation_ms[k] as number;
      expect(Math.abs((merged.pacing_deviation_ms[k] as number) - exact)).toBeLessThanOrEqual(exact * 0.001 + 0.001);
    }
    expect(merged.websocket_send_ms.count).toBe(whole.websocket_send_ms.count);
    expect(merged.pacing_deviation_signed_ms.max).toBeCloseTo(whole.pacing_deviation_signed_ms.max as number, 3);
  });

  it('lines processes up on the shared clock for the peak of overlapping streams', () => {
    const pooled = new PacingRecorder(80);
    // 8 sessions from t=100 for 32 s, and 5 from t=110: all 13 overlap from 110 on.
    expect(mergeSamples([process(100, 8, 400, 1, pooled), process(110, 5, 300, 2, pooled)]).peak_overlapping_streams).toBe(13);
    // The second process starts after the first ended: never more than 8 at once.
    expect(mergeSamples([process(100, 8, 400, 1, pooled), process(200, 5, 300, 2, pooled)]).peak_overlapping_streams).toBe(8);
  });

  it('keeps steady-state percentiles: each process\'s packets after its own warm-up, as one pooled recorder would', () => {
    // The same steady-from time in the pooled recorder as in each process: 105 s and 115 s.
    const pooledA = new PacingRecorder(80, 105);
    const pooledB = new PacingRecorder(80, 115);
    const a = process(100, 8, 400, 1, pooledA);
    const b = process(110, 5, 300, 2, pooledB);
    const merged = mergeSamples([a, b], [105, 115]);
    const steady = merged.pacing_deviation_steady_ms;
    expect(steady).toBeDefined();
    expect(steady?.count).toBe(pooledA.steadyDeviation.totalCount + pooledB.steadyDeviation.totalCount);
    expect(steady?.count).toBeLessThan(merged.packets.sent);
    expect(mergeSamples([a, b]).pacing_deviation_steady_ms).toBeUndefined();
  });

  it('refuses runs with different packet lengths', () => {
    const a = decodeSamples(encodeSamples(new SampleStore(80).toFile(new PacingRecorder(80))));
    const b = decodeSamples(encodeSamples(new SampleStore(40).toFile(new PacingRecorder(40))));
    expect(() => mergeSamples([a, b])).toThrow(/80 ms and 40 ms/);
  });
});
