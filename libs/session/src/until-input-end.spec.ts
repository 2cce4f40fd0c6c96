import { SendBarrier } from './send-barrier';
import { nativeServer } from './native-server.spec-helpers';
import { native, virtualSession } from './session.spec-helpers';

describe('untilInputEnd: when the end of input may go', () => {
  it('sends the end of input no earlier than packet 0 plus the input sent, as their client waits', async () => {
    const v = native({}, 0.8);
    await v.result(0);
    const first = v.sink.receipts[0].start_s;
    const end = v.sink.sentLines.find((l) => l.event.type === 'sglang.input_audio.end');
    expect(end && Math.round((end.time_s - first) * 1000)).toBe(800);
  });

  it("holds the end of input until every session of the run sent its last packet, and leaves the hold out of the server's figures", async () => {
    const allSent = new SendBarrier();
    allSent.expect(2);
    const v = virtualSession({ dialect: { protocol: 'native' }, input_s: 0.8, accept: (s) => nativeServer(s), ctx: { allSent } });
    const running = v.result();
    // The other session of the run sends its last packet 500 ms after this one's input played out.
    v.time.arm(1300, () => allSent.done());
    const result = await running;
    const first = v.sink.receipts[0].start_s;
    const end = v.sink.sentLines.find((l) => l.event.type === 'sglang.input_audio.end');
    expect(Math.round(((end?.time_s ?? 0) - first) * 1000)).toBe(1300);
    expect(result.completed).toBe(true);
    expect(result.response_metrics?.input_end_held_ms).toBeCloseTo(500, 0);
  });
});
