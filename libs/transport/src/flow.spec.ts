import { monotonicClock } from '@duplex-bench/pacer';
import { VirtualTime } from '@duplex-bench/pacer/testing';
import type { Connection } from './connection';
import { FakeServer } from './fake-server';
import { drainTimeoutMs, sendTraced } from './flow';

const UPDATE = '{"type":"session.update","event_id":"s1_update"}';

describe('sendTraced: a control frame, stamped, sent and traced', () => {
  it("sends the frame to the server and traces it with the time on the flow's clock", async () => {
    const time = new VirtualTime();
    const server = new FakeServer(time, () => ({ accept: () => undefined }));
    const conn = server.connect('ws://fake/v1/realtime', {});
    await time.run(conn.opened);
    await time.advance(250);
    const traced: Array<[string, number]> = [];
    sendTraced(conn, UPDATE, { clock: time, onSend: (frame, sent_s) => traced.push([frame, sent_s]) });
    expect(traced).toEqual([[UPDATE, expect.closeTo(0.25, 6)]]);
    await time.advance(0);
    expect(server.sessions[0].received).toEqual([{ type: 'session.update', event_id: 's1_update' }]);
  });

  it('stamps the frame before it is sent: a send that takes time does not move its stamp', () => {
    let now_s = 4;
    const sent: Array<[string, number]> = [];
    // A socket that takes 5 ms to take the frame (a large one, a busy loop).
    const conn = {
      send: (frame: string) => {
        sent.push([frame, now_s]);
        now_s += 0.005;
      },
    } as unknown as Connection;
    const traced: number[] = [];
    sendTraced(conn, UPDATE, { clock: { now_s: () => now_s }, onSend: (_frame, sent_s) => traced.push(sent_s) });
    expect(sent).toEqual([[UPDATE, 4]]);
    expect(traced).toEqual([4]);
  });

  it('reads the monotonic clock when the flow was given none, and sends without a trace hook', () => {
    const sent: string[] = [];
    const conn = { send: (frame: string) => void sent.push(frame) } as unknown as Connection;
    const traced: number[] = [];
    const before_s = monotonicClock.now_s();
    sendTraced(conn, UPDATE, { onSend: (_frame, sent_s) => traced.push(sent_s) });
    const after_s = monotonicClock.now_s();
    expect(traced).toHaveLength(1);
    expect(traced[0]).toBeGreaterThanOrEqual(before_s);
    expect(traced[0]).toBeLessThanOrEqual(after_s);
    sendTraced(conn, UPDATE, {});
    expect(sent).toEqual([UPDATE, UPDATE]);
  });
});

describe('drainTimeoutMs: the bound on the end of input', () => {
  it("takes the one given; else 30 s, and for vllm-omni their eval runner's max(20 s, input + 20 s)", () => {
    expect(drainTimeoutMs('vllm-omni', 5000, 60_000)).toBe(5000);
    expect(drainTimeoutMs('native', undefined, 60_000)).toBe(30_000);
    expect(drainTimeoutMs('openai', undefined, 0)).toBe(30_000);
    expect(drainTimeoutMs('vllm-omni', undefined, 60_000)).toBe(80_000);
    expect(drainTimeoutMs('vllm-omni', undefined, 0)).toBe(20_000);
  });
});
