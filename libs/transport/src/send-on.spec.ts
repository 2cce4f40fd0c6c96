import { firstValueFrom, from, lastValueFrom, map, take, toArray } from 'rxjs';
import type { Clock } from '@duplex-bench/pacer';
import { WsConnection } from './connection';
import { sendOn, type OutgoingFrame } from './send-on';
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
  let onReceived: () => void = () => undefined;

  beforeEach(async () => {
    received = [];
    server = await startWsTestServer(() => (ws) =>
      ws.on('message', (data: Buffer) => {
        received.push(data.toString());
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
});
