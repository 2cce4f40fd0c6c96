import { TestScheduler } from 'rxjs/testing';
import { PacingRecorder, type PacketTimes } from './pacing-recorder';
import { recordPacing } from './record-pacing';

const sent = (seq: number, dev_ms: number): PacketTimes => {
  const start_s = 5 + (seq * 80 + dev_ms) / 1000;
  return { seq, scheduled_s: 5 + seq * 0.08, start_s, completed_s: start_s + 0.0001, send_ms: 0.1, buffered_bytes: 0 };
};

describe('recordPacing', () => {
  it("marks each packet late or not against its session's packet 0, and records it in the histograms and the session's column", () => {
    const recorder = new PacingRecorder(80);
    const column: PacketTimes[] = [];
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      const packets = { a: sent(0, 0), b: sent(1, 2), c: sent(2, 95) };
      const out = cold('a 79ms b 79ms (c|)', packets).pipe(recordPacing(recorder, column));
      expectObservable(out).toBe('a 79ms b 79ms (c|)', { a: { ...packets.a, late: false }, b: { ...packets.b, late: false }, c: { ...packets.c, late: true } });
    });
    expect(column.map((p) => p.seq)).toEqual([0, 1, 2]);
    expect({ sent: recorder.sent, late: recorder.late }).toEqual({ sent: 3, late: 1 });
    expect(recorder.figures().pacing_deviation_ms.max).toBeCloseTo(95, 1);
  });
});
