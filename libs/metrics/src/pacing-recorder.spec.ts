import { percentilesMs } from './histogram';
import { PacingRecorder, type PacketTimes } from './pacing-recorder';

/** A packet sent `dev_ms` off its schedule, from origin 0 with 80 ms packets. */
function packet(seq: number, dev_ms: number, extra: Partial<PacketTimes> = {}): PacketTimes {
  const start_s = (seq * 80 + dev_ms) / 1000;
  return { seq, scheduled_s: (seq * 80) / 1000, start_s, completed_s: start_s + 0.0002, send_ms: 0.2, buffered_bytes: 0, ...extra };
}

describe('PacingRecorder', () => {
  it('counts a packet late only beyond one packet, either way', () => {
    const recorder = new PacingRecorder(80);
    expect(recorder.record(packet(0, 0), 0)).toBe(false);
    // 0.16 s − 1 × 80 ms is exactly 80 ms: on the line, not late.
    expect(recorder.record({ ...packet(1, 0), start_s: 0.16 }, 0)).toBe(false);
    expect(recorder.record(packet(2, 79.9), 0)).toBe(false);
    expect(recorder.record(packet(3, 80.1), 0)).toBe(true);
    expect(recorder.record(packet(4, -80.1), 0)).toBe(true);
    expect(recorder.record(packet(5, -79.9), 0)).toBe(false);
    expect(recorder.sent).toBe(6);
    expect(recorder.late).toBe(2);
    expect(recorder.figures().packets).toEqual({ sent: 6, late: 2 });
  });

  it('measures from the origin it is given and the packet period it was built with', () => {
    const recorder = new PacingRecorder(20);
    // Packet 5 of a session whose packet 0 started at t = 50 s, due at 50.1 s, sent at 50.125 s.
    expect(recorder.record({ ...packet(5, 0), start_s: 50.125 }, 50)).toBe(true);
    expect(recorder.signedMax).toBeCloseTo(25, 6);
  });

  it('keeps the signed min and max and the |deviation| histogram', () => {
    const recorder = new PacingRecorder(80);
    for (const [seq, dev] of [
      [0, 0],
      [1, -3],
      [2, 4.5],
      [3, 1],
    ]) {
      recorder.record(packet(seq, dev), 0);
    }
    const figures = recorder.figures();
    expect(figures.pacing_deviation_signed_ms).toEqual({ min: -3, max: 4.5 });
    expect(figures.pacing_deviation_ms.count).toBe(4);
    // Percentiles are of |deviation|: 3 ms early counts as 3.
    expect(figures.pacing_deviation_ms.max).toBeCloseTo(4.5, 2);
    expect(figures.pacing_deviation_ms.p50).toBeCloseTo(1, 2);
  });

  it('reports no signed extremes before any packet', () => {
    const figures = new PacingRecorder(80).figures();
    expect(figures.pacing_deviation_signed_ms).toEqual({ min: null, max: null });
    expect(figures.packets).toEqual({ sent: 0, late: 0 });
    expect(figures.pacing_deviation_ms).toEqual({ count: 0, p50: null, p90: null, p99: null, p99_9: null, max: null });
  });

  it('splits steady state from warm-up by send start once setSteadyFrom is called', () => {
    const recorder = new PacingRecorder(80);
    recorder.setSteadyFrom(0.16);
    recorder.record(packet(0, 0), 0);
    recorder.record(packet(1, 50), 0); // 50 ms late, in the warm-up
    recorder.record(packet(2, -1), 0); // start 0.159 s: still warm-up
    recorder.record(packet(3, 2), 0);
    recorder.record(packet(4, 0), 0);
    expect(recorder.deviation.totalCount).toBe(5);
    expect(recorder.steadyDeviation.totalCount).toBe(2);
    expect(percentilesMs(recorder.deviation).max).toBeCloseTo(50, 1);
    expect(percentilesMs(recorder.steadyDeviation).max).toBeCloseTo(2, 2);
  });

  it('counts every packet as steady when no warm-up is set, and none before a steady_from given up front', () => {
    const all = new PacingRecorder(80);
    all.record(packet(0, 0), 0);
    expect(all.steadyDeviation.totalCount).toBe(1);
    const later = new PacingRecorder(80, 1000);
    later.record(packet(0, 0), 0);
    expect(later.steadyDeviation.totalCount).toBe(0);
  });

  it('records send duration, append span (clamped at 0) and the buffered peak', () => {
    const recorder = new PacingRecorder(80);
    recorder.record(packet(0, 0, { send_ms: 1.5, completed_s: 0.003, buffered_bytes: 5120 }), 0);
    // Completed before it was due (sent early): span 0, not negative.
    recorder.record(packet(1, -5, { send_ms: 0.5, completed_s: 0.076, buffered_bytes: 100 }), 0);
    const figures = recorder.figures();
    expect(figures.websocket_send_ms.count).toBe(2);
    expect(figures.websocket_send_ms.max).toBeCloseTo(1.5, 2);
    expect(figures.append_span_ms.max).toBeCloseTo(3, 2);
    expect(recorder.appendSpan.minNonZeroValue).toBeGreaterThan(0);
    expect(figures.append_span_ms.count).toBe(2);
    expect(figures.buffered_amount_peak_bytes).toBe(5120);
  });
});
