import { ManualTimers } from '@duplex-bench/pacer/testing';
import type { WebSocket } from 'ws';
import { WsConnection } from './connection';
import { startWsTestServer, within, type TestServer } from './test-servers.spec-helpers';
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

  it("acknowledge the audio received, every ack_every_ms on the connection's timers, and only what is new", async () => {
    const received: Array<Record<string, unknown>> = [];
    let nextFrame: () => void = () => undefined;
    const started = await grantingServer(received, () => nextFrame());
    server = started.server;
    const timers = new ManualTimers();
    conn = WsConnection.open(server.url, { timers });
    const flow = new VllmOmniFlow('s', { turn_detection: 'server_vad', commit_every_packets: 0, ack_every_ms: 250 });
    flow.attach(conn);
    // The ack ticker is armed with the attach, in the background (it never holds the process open).
    expect(timers.pending.filter((t) => t.delay_ms === 250).map((t) => t.background)).toEqual([true]);
    const sent: string[] = [];
    await within(flow.handshake(conn, 16_000, { onSend: (frame) => sent.push(frame) }), BOUND_MS, 'handshake');
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
    ws.send(JSON.stringify({ type: 'response.created', response: { id: 'r1' } }));
    ws.send(JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r1', item_id: 'i1', delta: audio }));
    await within(delivered, BOUND_MS, 'audio delta');
    expect(received.filter((e) => e.type === 'playback.ack')).toEqual([]);

    const acked = new Promise<void>((resolve) => (nextFrame = resolve));
    timers.fire();
    await within(acked, BOUND_MS, 'playback.ack');
    expect(received.filter((e) => e.type === 'playback.ack')).toEqual([expect.objectContaining({ response_id: 'r1', played_ms: 500, committed_ms: 500 })]);
    expect(acks()).toBe(1);
    // Nothing new by the next wake: no second ack (sends are counted as they go), and the ticker is armed again.
    timers.fire();
    expect(acks()).toBe(1);
    expect(timers.pending.filter((t) => t.delay_ms === 250)).toHaveLength(1);
  });
});
