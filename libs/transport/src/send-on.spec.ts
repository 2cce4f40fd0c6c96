import { firstValueFrom, from, lastValueFrom, map, take, toArray } from 'rxjs';
import type { Clock, Tick } from '@duplex-bench/pacer';
import { WsConnection } from './connection';
import { sendAppends, sendOn, type OutgoingFrame } from './send-on';
import { startWsTestServer, within, type TestServer } from './test-servers.spec-helpers';

const BOUND_MS = 3000;

/** A clock that advances by `step_s` on every reading. */
function steppingClock(start_s: number, step_s: number): Clock & { readings: number } {
  let now = start_s;
  const clock = {
    readings: 0,
    now_s: () => {
      clock.readings++;
      now += step_s;
      return now;
    },
  };
  return clock;
}

describe('sendOn', () => {
  let server: TestServer | undefined;
  let conn: WsConnection | undefined;
  let received: string[] = [];
  let binary: boolean[] = [];
  let onReceived: () => void = () => undefined;

  beforeEach(async () => {
    received = [];
    binary = [];
    server = await startWsTestServer(() => (ws) =>
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        received.push(data.toString());
        binary.push(isBinary);
        onReceived();
      }),
    );
    conn = WsConnection.open(server.url);
    await within(conn.opened, BOUND_MS, 'opened');
  });

  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
    conn = undefined;
    server = undefined;
  });

  it('sends each frame in order and emits a receipt timed by the injected clock', async () => {
    const clock = steppingClock(10, 0.002);
    const frameOf = (seq: number) => `{"type":"input_audio_buffer.append","event_id":"s1_append_${seq}","sglang":{"seq":${seq}}}`;
    const allReceived = new Promise<void>((resolve) => {
      onReceived = () => received.length === 3 && resolve();
    });
    // As the pacer does: send start is read from the same clock just before the frame goes to sendOn.
    const outgoing = from([0, 1, 2]).pipe(
      map(
        (seq): OutgoingFrame => ({ seq, event_id: `s1_append_${seq}`, frame: frameOf(seq), scheduled_s: 10 + seq * 0.08, start_s: clock.now_s() }),
      ),
    );
    const receipts = await within(lastValueFrom(outgoing.pipe(sendOn(conn as WsConnection, clock), toArray())), BOUND_MS, 'receipts');

    expect(receipts.map((r) => r.seq)).toEqual([0, 1, 2]);
    for (const r of receipts) {
      expect(r.event_id).toBe(`s1_append_${r.seq}`);
      expect(r.frame).toBe(frameOf(r.seq));
      expect(r.scheduled_s).toBe(10 + r.seq * 0.08);
      expect(r.completed_s).toBeGreaterThanOrEqual(r.start_s);
      expect(r.send_ms).toBeGreaterThanOrEqual(0);
      // Readings: start (pacer), before send, after send, 2 ms apart each.
      expect(r.send_ms).toBeCloseTo(2, 9);
      expect(r.completed_s - r.start_s).toBeCloseTo(0.004, 9);
      expect(r.buffered_bytes).toBeGreaterThanOrEqual(0);
    }
    expect(receipts[2].completed_s).toBeCloseTo(10 + 9 * 0.002, 9);
    expect(clock.readings).toBe(9);

    await within(allReceived, BOUND_MS, 'server received every frame');
    expect(received).toEqual([0, 1, 2].map(frameOf));
  });

  it('uses the monotonic clock by default', async () => {
    const receipt = await within(
      firstValueFrom(
        from([{ seq: 0, event_id: 'e0', frame: '{"type":"x"}', scheduled_s: 0, start_s: 0 }]).pipe(sendOn(conn as WsConnection), take(1)),
      ),
      BOUND_MS,
      'receipt',
    );
    expect(receipt.completed_s).toBeGreaterThan(0);
    expect(receipt.send_ms).toBeGreaterThanOrEqual(0);
  });

  it("sends each tick's packet as the dialect's append, as bytes in a text frame, with the tick's due and fire times", async () => {
    const clock = steppingClock(20, 0.001);
    const audio = { packet_ms: 80, packetBase64: (seq: number) => Buffer.from(['AAAA', 'BBBB', 'CCCC'][seq]) };
    const flow = { append: (event_id: string, seq: number, t_start_ms: number, b64: Uint8Array) => Buffer.from(`{"event_id":"${event_id}","t":${t_start_ms},"audio":"${Buffer.from(b64).toString()}","seq":${seq}}`) };
    const ticks: Tick[] = [0, 1, 2].map((seq) => ({ seq, due_s: 1 + seq * 0.08, fired_s: 1 + seq * 0.08 + seq * 0.001, origin_s: 1 }));
    const allReceived = new Promise<void>((resolve) => {
      onReceived = () => received.length === 3 && resolve();
    });
    const receipts = await within(lastValueFrom(from(ticks).pipe(sendAppends(conn as WsConnection, flow, audio, 's7_a', clock), toArray())), BOUND_MS, 'receipts');

    expect(receipts.map((r) => [r.seq, r.event_id, r.scheduled_s, r.start_s])).toEqual(ticks.map((t) => [t.seq, `s7_a${t.seq}`, t.due_s, t.fired_s]));
    for (const r of receipts) expect(r.send_ms).toBeCloseTo(1, 9);
    await within(allReceived, BOUND_MS, 'server received every frame');
    // A text frame: the server's ws hands it over as text, not binary.
    expect(received).toEqual(['{"event_id":"s7_a0","t":0,"audio":"AAAA","seq":0}', '{"event_id":"s7_a1","t":80,"audio":"BBBB","seq":1}', '{"event_id":"s7_a2","t":160,"audio":"CCCC","seq":2}']);
    expect(binary).toEqual([false, false, false]);
  });
});
