import { firstValueFrom, from, lastValueFrom, map, take, tap, toArray } from 'rxjs';
import { nativeAppend } from '@duplex-bench/protocol';
import type { Clock, Tick } from '@duplex-bench/pacer';
import { WsConnection } from './connection';
import { sendAppends, sendOn, sendWithReceipt, type OutgoingFrame } from './send-on';
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

  it('splices each append into the buffer of the one before once the kernel took it, and every frame arrives whole', async () => {
    const count = 120;
    const audio = { packet_ms: 80, packetBase64: (seq: number) => Buffer.from(String.fromCharCode(65 + (seq % 26)).repeat(3412)) };
    const flow = { append: (event_id: string, seq: number, t_start_ms: number, b64: Uint8Array) => nativeAppend(event_id, seq, t_start_ms, b64) };
    const expected = Array.from({ length: count }, (_, seq) => nativeAppend(`s9_a${seq}`, seq, seq * 80, audio.packetBase64(seq)).toString());
    const ticks: Tick[] = expected.map((_, seq) => ({ seq, due_s: seq * 0.08, fired_s: seq * 0.08, origin_s: 0 }));
    const allReceived = new Promise<void>((resolve) => {
      onReceived = () => received.length === count && resolve();
    });
    // What a subscriber of the receipt reads as it passes, as the tracer does.
    const seen: string[] = [];
    const receipts = await within(
      lastValueFrom(
        from(ticks).pipe(
          sendAppends(conn as WsConnection, flow, audio, 's9_a'),
          tap((r) => seen.push(r.frame.toString())),
          toArray(),
        ),
      ),
      BOUND_MS,
      'receipts',
    );

    expect(seen).toEqual(expected);
    await within(allReceived, BOUND_MS, 'server received every frame');
    expect(received).toEqual(expected);
    // The buffer is the one before exactly when the socket held nothing of that one after its send.
    const frames = receipts.map((r) => r.frame as Buffer);
    for (let i = 1; i < count; i++) expect([i, frames[i].buffer === frames[i - 1].buffer]).toEqual([i, receipts[i - 1].buffered_bytes === 0]);
    expect(receipts.filter((r) => r.buffered_bytes === 0).length).toBeGreaterThan(count / 2);
  });
});

describe('sendWithReceipt', () => {
  const clock = { now_s: () => 1 };
  const append = (seq: number) => nativeAppend(`s3_a${seq}`, seq, seq * 80, Buffer.from('QUJD'.repeat(800)));

  it('leaves a frame the socket still buffers untouched by the appends after it', () => {
    const sent: (string | Buffer)[] = [];
    const held = { send: (f: string | Buffer) => sent.push(f), bufferedAmount: 4096 };
    const texts = [0, 1, 2].map((seq) => append(seq).toString());
    const receipts = [0, 1, 2].map((seq) => sendWithReceipt(held, clock, seq, `s3_a${seq}`, append(seq), 0, 0));
    expect(sent.map((f) => f.toString())).toEqual(texts);
    expect(receipts.map((r) => r.buffered_bytes)).toEqual([4096, 4096, 4096]);
    expect(new Set(sent.map((f) => (f as Buffer).buffer)).size).toBe(3);
  });

  it('hands back a frame the socket passed on whole, and the next append is built in it', () => {
    const sent: (string | Buffer)[] = [];
    const free = { send: (f: string | Buffer) => sent.push(f.toString()), bufferedAmount: 0 };
    const first = append(0);
    sendWithReceipt(free, clock, 0, 's3_a0', first, 0, 0);
    const second = append(1);
    expect(second.buffer).toBe(first.buffer);
    sendWithReceipt(free, clock, 1, 's3_a1', second, 0, 0);
    expect(sent).toEqual([append(0).toString(), append(1).toString()]);
  });
});
