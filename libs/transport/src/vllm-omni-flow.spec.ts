import { ManualTimers } from '@duplex-bench/pacer/testing';
import type { WebSocket } from 'ws';
import { WsConnection } from './connection';
import { startWsTestServer, within, type TestServer } from './test-servers.spec-helpers';
import type { VllmOmniFlowConfig } from './flow';
import { VllmOmniFlow } from './vllm-omni-flow';

const BOUND_MS = 3000;
const RATE = 24_000;

/** A vllm-omni server that grants the session and then streams what the test tells it to. */
async function grantingServer(received: Array<Record<string, unknown>>, onFrame: () => void): Promise<{ server: TestServer; socket: Promise<WebSocket> }> {
  let opened: (ws: WebSocket) => void = () => undefined;
  const socket = new Promise<WebSocket>((resolve) => (opened = resolve));
  const server = await startWsTestServer(() => (ws) => {
    opened(ws);
    ws.on('message', (data) => {
      const event = JSON.parse(String(data)) as Record<string, unknown>;
      received.push(event);
      if (event.type === 'session.update') {
        ws.send(JSON.stringify({ type: 'session.created', session: {} }));
        ws.send(JSON.stringify({ type: 'session.updated', session: { audio: { output: { format: { rate: RATE } } } } }));
      }
      onFrame();
    });
  });
  return { server, socket };
}

describe('VllmOmniFlow playback acknowledgements', () => {
  let server: TestServer | undefined;
  let conn: WsConnection | undefined;

  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
  });

  /**
   * A session against the granting server on hand-fired timers (acks every 250 ms unless `config`
   * says otherwise), the flow attached and not yet shaken hands; `onFrame(f)` calls `f` at each
   * frame the server reads from then on.
   */
  async function ackSession(config: Partial<VllmOmniFlowConfig>) {
    const received: Array<Record<string, unknown>> = [];
    let next: () => void = () => undefined;
    const started = await grantingServer(received, () => next());
    server = started.server;
    const timers = new ManualTimers();
    const c = WsConnection.open(server.url, { timers, clock: timers });
    conn = c;
    const flow = new VllmOmniFlow('s', { turn_detection: 'server_vad', commit_every_packets: 0, ack_every_ms: 250, ...config });
    flow.attach(c);
    return { received, started, timers, flow, c, onFrame: (f: () => void) => (next = f) };
  }

  it("acknowledge the audio played on the playout clock, every ack_every_ms on the connection's timers, and only what is new", async () => {
    const { received, started, timers, flow, c, onFrame } = await ackSession({});
    // The ack ticker is armed with the attach, in the background (it never holds the process open).
    expect(timers.pending.filter((t) => t.delay_ms === 250).map((t) => t.background)).toEqual([true]);
    const sent: string[] = [];
    await within(flow.handshake(c, 16_000, { onSend: (frame) => sent.push(frame) }), BOUND_MS, 'handshake');
    const acks = () => sent.filter((f) => f.includes('"playback.ack"')).length;
    const ws = await started.socket;

    // 0.5 s of 24 kHz 16-bit audio in one delta.
    const audio = Buffer.alloc(RATE).toString('base64');
    const delivered = new Promise<void>((resolve) => {
      const sub = conn?.events$.subscribe((e) => {
        if (e.frame.type === 'response.output_audio.delta') {
          sub?.unsubscribe();
          resolve();
        }
      });
    });
    // The response is acked at 0 ms as soon as it is created: that keeps its place in the ledger.
    const reserved = new Promise<void>((resolve) => onFrame(resolve));
    ws.send(JSON.stringify({ type: 'response.created', response: { id: 'r1' } }));
    await within(reserved, BOUND_MS, 'the 0 ms ack');
    expect(received.filter((e) => e.type === 'playback.ack')).toEqual([expect.objectContaining({ response_id: 'r1', item_id: 'item_r1', played_ms: 0, committed_ms: 0 })]);
    ws.send(JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r1', item_id: 'i1', delta: audio }));
    await within(delivered, BOUND_MS, 'audio delta');
    expect(acks()).toBe(1);

    // 250 ms later half of it has played: that is what the ack says, not the 500 ms received.
    expect(flow.afterAppend()).toBeNull();
    let acked = new Promise<void>((resolve) => onFrame(resolve));
    timers.fire();
    await within(acked, BOUND_MS, 'playback.ack');
    expect(received.filter((e) => e.type === 'playback.ack').at(-1)).toEqual(expect.objectContaining({ response_id: 'r1', played_ms: 250, committed_ms: 250 }));
    acked = new Promise<void>((resolve) => onFrame(resolve));
    timers.fire();
    await within(acked, BOUND_MS, 'playback.ack');
    expect(received.filter((e) => e.type === 'playback.ack').at(-1)).toEqual(expect.objectContaining({ response_id: 'r1', played_ms: 500, committed_ms: 500 }));
    expect(acks()).toBe(3);
    // All of it played and acknowledged: no further ack (sends are counted as they go), and the ticker is armed again.
    timers.fire();
    expect(acks()).toBe(3);
    expect(timers.pending.filter((t) => t.delay_ms === 250)).toHaveLength(1);
  });

  it('acknowledges the played ms across an underrun: two bursts with a gap between them, the gap not counted', async () => {
    const { received, started, timers, flow, c, onFrame } = await ackSession({});
    await within(flow.handshake(c, 16_000, {}), BOUND_MS, 'handshake');
    const ws = await started.socket;
    const deltas = (n: number) =>
      new Promise<void>((resolve) => {
        let seen = 0;
        const sub = conn?.events$.subscribe((e) => {
          if (e.frame.type === 'response.output_audio.delta' && ++seen === n) {
            sub?.unsubscribe();
            resolve();
          }
        });
      });
    const reserved = new Promise<void>((resolve) => onFrame(resolve));
    ws.send(JSON.stringify({ type: 'response.created', response: { id: 'r1' } }));
    await within(reserved, BOUND_MS, 'the 0 ms ack');
    // Burst 1 at 0 ms: 200 ms of audio (24 kHz, 16-bit).
    let got = deltas(1);
    ws.send(JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r1', delta: Buffer.alloc(9600).toString('base64') }));
    await within(got, BOUND_MS, 'burst 1');
    // The ack at 250 ms: burst 1 has played out (200), the speaker waits in an underrun.
    let acked = new Promise<void>((resolve) => onFrame(resolve));
    timers.fire();
    await within(acked, BOUND_MS, 'the ack at 250 ms');
    // Burst 2 arrives at 250 ms (400 ms of audio): it plays from then, 50 ms of gap skipped by nobody.
    got = deltas(1);
    ws.send(JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r1', delta: Buffer.alloc(19200).toString('base64') }));
    await within(got, BOUND_MS, 'burst 2');
    acked = new Promise<void>((resolve) => onFrame(resolve));
    timers.fire();
    await within(acked, BOUND_MS, 'the ack at 500 ms');
    // At 500 ms: 200 + 250 played (received: 600; elapsed since the first audio: 500).
    expect(received.filter((e) => e.type === 'playback.ack').map((e) => e.played_ms)).toEqual([0, 200, 450]);
  });

  it('acks responses acked before after a later commit, and ends on an error that refuses what it sent, saying session.close', async () => {
    const { received, started, timers, flow, c, onFrame } = await ackSession({ turn_detection: 'none', commit_every_packets: 1 });
    const sent: string[] = [];
    await within(flow.handshake(c, 16_000, { onSend: (frame) => sent.push(frame) }), BOUND_MS, 'handshake');
    const ws = await started.socket;
    const reserved = new Promise<void>((resolve) => onFrame(resolve));
    ws.send(JSON.stringify({ type: 'response.created', response: { id: 'r1' } }));
    await within(reserved, BOUND_MS, 'the 0 ms ack');
    // A packet and the commit that follows it.
    flow.append('a0', 0, 0, Buffer.from(Buffer.alloc(2560).toString('base64')));
    expect(flow.afterAppend()).toEqual([expect.stringContaining('input_audio_buffer.commit')]);
    const delivered = new Promise<void>((resolve) => {
      const sub = conn?.events$.subscribe((e) => {
        if (e.frame.type === 'response.output_audio.delta') {
          sub?.unsubscribe();
          resolve();
        }
      });
    });
    ws.send(JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r1', delta: Buffer.alloc(RATE).toString('base64') }));
    await within(delivered, BOUND_MS, 'audio delta');
    const acked = new Promise<void>((resolve) => onFrame(resolve));
    timers.fire();
    await within(acked, BOUND_MS, 'the ack after the commit');
    expect(received.filter((e) => e.type === 'playback.ack').map((e) => e.played_ms)).toEqual([0, 250]);

    const failed = new Promise<unknown>((resolve) => conn?.events$.subscribe({ error: resolve }));
    const farewell = new Promise<void>((resolve) => onFrame(() => received.some((e) => e.type === 'session.close') && resolve()));
    ws.send(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code: 'playback_item_mismatch', message: 'mismatch' }, server_event_seq: 9 }));
    const error = (await within(failed, BOUND_MS, 'the session to fail')) as { reason?: string; info?: { server_code?: string } };
    expect(error.reason).toBe('client_protocol_error');
    expect(error.info?.server_code).toBe('playback_item_mismatch');
    await within(farewell, BOUND_MS, 'session.close before the close frame');
    expect(sent.filter((f) => f.includes('"session.close"'))).toHaveLength(1);
  });

  it('counts a first ack that raced a later commit (playback_ack_too_late), never acks that response again, and goes on', async () => {
    const { received, started, timers, flow, c, onFrame } = await ackSession({ turn_detection: 'none', commit_every_packets: 1 });
    const sent: string[] = [];
    await within(flow.handshake(c, 16_000, { onSend: (frame) => sent.push(frame) }), BOUND_MS, 'handshake');
    const ws = await started.socket;
    let failure: unknown = null;
    c.events$.subscribe({ error: (e) => (failure = e) });
    // r1 is created and acked at 0 ms, and the server confirms it: its place is kept.
    let reserved = new Promise<void>((resolve) => onFrame(resolve));
    ws.send(JSON.stringify({ type: 'response.created', response: { id: 'r1' } }));
    await within(reserved, BOUND_MS, 'the 0 ms ack of r1');
    ws.send(JSON.stringify({ type: 'playback.acknowledged', event: { type: 'playback.acknowledged', item_id: 'item_r1', played_ms: 0 } }));
    // r2 was created on the server before a commit it had already taken; its 0 ms ack is refused.
    reserved = new Promise<void>((resolve) => onFrame(resolve));
    ws.send(JSON.stringify({ type: 'response.created', response: { id: 'r2' } }));
    await within(reserved, BOUND_MS, 'the 0 ms ack of r2');
    let deltas = 0;
    const counted = new Promise<void>((resolve) => {
      const sub = c.events$.subscribe((e) => {
        if (e.frame.type === 'response.output_audio.delta' && ++deltas === 2) {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    ws.send(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code: 'playback_ack_too_late', message: 'playback.ack arrived after a later user input was committed.' } }));
    for (const id of ['r1', 'r2']) ws.send(JSON.stringify({ type: 'response.output_audio.delta', response_id: id, delta: Buffer.alloc(RATE).toString('base64') }));
    await within(counted, BOUND_MS, 'the refusal and both deltas read');
    expect(flow.dialectEvents()).toMatchObject({ playback_ack_too_late: 1 });
    expect(failure).toBeNull();
    // The next tick acks r1's played audio and leaves r2 alone.
    const acked = new Promise<void>((resolve) => onFrame(resolve));
    timers.fire();
    await within(acked, BOUND_MS, 'the next ack');
    const acks = received.filter((e) => e.type === 'playback.ack').map((e) => [e.response_id, e.played_ms]);
    expect(acks).toEqual([['r1', 0], ['r2', 0], ['r1', 250]]);
    expect(sent.filter((f) => f.includes('"session.close"'))).toHaveLength(0);
  });

  it("counts a first ack that its response's end overtook (a listen with nothing to play: playback_item_not_found naming it) and goes on; the same refusal of a response that had audio fails the session", async () => {
    const { started, flow, c, onFrame } = await ackSession({ turn_detection: 'none', commit_every_packets: Infinity });
    await within(flow.handshake(c, 16_000, {}), BOUND_MS, 'handshake');
    const ws = await started.socket;
    let failure: { reason?: string; info?: { server_code?: string } } | null = null;
    c.events$.subscribe({ error: (e) => (failure = e as typeof failure) });
    // r1 is created and ends in a listen at once: its 0 ms ack, sent as response.created arrived, reaches a server that kept no item for it.
    const acked = new Promise<void>((resolve) => onFrame(resolve));
    ws.send(JSON.stringify({ type: 'response.created', response: { id: 'r1' } }));
    ws.send(JSON.stringify({ type: 'response.listen', response_id: 'r1' }));
    ws.send(JSON.stringify({ type: 'response.done', response_id: 'r1', response: { id: 'r1', status: 'completed' } }));
    await within(acked, BOUND_MS, 'the 0 ms ack of r1');
    const read = new Promise<void>((resolve) => {
      const sub = c.events$.subscribe((e) => {
        if (e.frame.type === 'response.output_audio.delta') {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    ws.send(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code: 'playback_item_not_found', message: 'No assistant response item is registered for r1.' }, server_event_seq: 7 }));
    ws.send(JSON.stringify({ type: 'response.created', response: { id: 'r2' } }));
    ws.send(JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r2', delta: Buffer.alloc(RATE).toString('base64') }));
    await within(read, BOUND_MS, 'the refusal and r2 read');
    expect(flow.dialectEvents()).toMatchObject({ playback_ack_after_end: 1, playback_ack_too_late: 0 });
    expect(failure).toBeNull();
    // r2 had audio: a refusal naming it is the client's fault.
    const failed = new Promise<void>((resolve) => c.events$.subscribe({ error: () => resolve() }));
    ws.send(JSON.stringify({ type: 'response.done', response_id: 'r2', response: { id: 'r2', status: 'completed' } }));
    ws.send(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code: 'playback_item_not_found', message: 'No assistant response item is registered for r2.' }, server_event_seq: 8 }));
    await within(failed, BOUND_MS, 'the session to fail');
    expect(failure).toMatchObject({ reason: 'client_protocol_error', info: { server_code: 'playback_item_not_found' } });
    expect(flow.dialectEvents()).toMatchObject({ playback_ack_after_end: 1 });
  });
});
