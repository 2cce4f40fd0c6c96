import { TestScheduler } from 'rxjs/testing';
import { silencePackets } from '@duplex-bench/audio';
import type { Tick } from '@duplex-bench/pacer';
import { toAppendFrames } from './operators';

const tick = (seq: number, late_ms = 0): Tick => ({ seq, due_s: 1 + seq * 0.08, fired_s: 1 + seq * 0.08 + late_ms / 1000, origin_s: 1 });

describe('toAppendFrames', () => {
  it("maps each tick, as it comes, to its packet's frame in the dialect, with the tick's due and fire times", () => {
    const packets = silencePackets(0.24, 80, 16000);
    const flow = { append: (event_id: string, seq: number, t_start_ms: number, audio: Uint8Array) => Buffer.from(`${event_id}|${seq}|${t_start_ms}|${audio.length}`) };
    const b64 = packets.packetBase64(0).length;
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      const ticks = cold('a 79ms b 79ms (c|)', { a: tick(0), b: tick(1, 3), c: tick(2) });
      expectObservable(ticks.pipe(toAppendFrames(flow, packets, 's7_a'))).toBe('a 79ms b 79ms (c|)', {
        a: { seq: 0, event_id: 's7_a0', frame: Buffer.from(`s7_a0|0|0|${b64}`), scheduled_s: 1, start_s: 1 },
        b: { seq: 1, event_id: 's7_a1', frame: Buffer.from(`s7_a1|1|80|${b64}`), scheduled_s: 1.08, start_s: 1.083 },
        c: { seq: 2, event_id: 's7_a2', frame: Buffer.from(`s7_a2|2|160|${b64}`), scheduled_s: 1.16, start_s: 1.16 },
      });
    });
  });
});
