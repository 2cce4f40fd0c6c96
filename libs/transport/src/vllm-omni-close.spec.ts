import { VirtualTime } from '@duplex-bench/pacer/testing';
import type { TransportError } from './errors';
import { FakeServer } from './fake-server';
import { VllmOmniFlow } from './vllm-omni-flow';

/** A vLLM-Omni server that grants the session, then (from the end of input on) sends `chatter` or nothing, and never answers `session.close`. */
async function session(time: VirtualTime, chatter: boolean) {
  const server = new FakeServer(time, () => ({
    accept: (side) =>
      side.onMessage((e) => {
        if (e.type === 'session.update') side.send({ type: 'session.created', session: {} });
        // It opens a response it never finishes: the drain runs out, but the server did speak.
        if (chatter && e.type === 'input_audio_buffer.commit') side.send({ type: 'response.created', response: { id: 'r0' } });
      }),
  }));
  const conn = server.connect('ws://fake/v1/realtime', {});
  const flow = new VllmOmniFlow('s', { turn_detection: 'none', commit_every_packets: 25, no_playback_ack: true });
  flow.attach(conn);
  await time.run(flow.handshake(conn, 16_000, {}));
  flow.append('a0', 0, 0, new Uint8Array(Buffer.from('AAAA')));
  return { conn, flow, server };
}

describe('vLLM-Omni: the close after a failed drain', () => {
  it('sends session.close and does not wait 20 s for session.closed from a server that sent nothing through the whole drain bound', async () => {
    const time = new VirtualTime();
    const { conn, flow, server } = await session(time, false);
    const err = (await time.run(flow.end(conn, { drain_timeout_ms: 3000 }).catch((e: unknown) => e))) as TransportError;
    expect(err).toMatchObject({ reason: 'drain_timeout' });
    const from = time.now;
    await time.run(flow.abort(conn, err, { close_timeout_ms: 20_000 }).catch(() => undefined));
    expect(time.now - from).toBeCloseTo(0, 3);
    await time.advance(1);
    expect(server.sessions[0].received.map((e) => e.type).at(-1)).toBe('session.close');
  });

  it('waits their client\'s 20 s when the server still spoke during the drain', async () => {
    const time = new VirtualTime();
    const { conn, flow } = await session(time, true);
    const err = (await time.run(flow.end(conn, { drain_timeout_ms: 3000 }).catch((e: unknown) => e))) as TransportError;
    expect(err).toMatchObject({ reason: 'drain_timeout' });
    const from = time.now;
    await time.run(flow.abort(conn, err, { close_timeout_ms: 20_000 }).catch(() => undefined));
    expect(time.now - from).toBeCloseTo(20_000, 3);
  });
});

describe('vLLM-Omni: the drain bound when none is given', () => {
  it("waits as their eval runner waits for response.done: the input sent plus 20 s, at least 20 s", async () => {
    for (const [packets, bound_ms] of [
      [0, 20_000],
      [50, 24_000],
    ] as const) {
      const time = new VirtualTime();
      const { conn, flow } = await session(time, false);
      // 50 packets of 80 ms at 16 kHz: 4 s of input, beside the 3 bytes of the session's first append.
      const packet = new Uint8Array(Buffer.from(Buffer.alloc(2560).toString('base64')));
      for (let i = 0; i < packets; i++) flow.append(`a${i + 1}`, i + 1, 0, packet);
      const from = time.now;
      const err = (await time.run(flow.end(conn, {}).catch((e: unknown) => e))) as TransportError;
      expect(err).toMatchObject({ reason: 'drain_timeout' });
      expect(time.now - from).toBeCloseTo(bound_ms, -1);
    }
  });
});

describe('vLLM-Omni: event acks', () => {
  it('acks every numbered event of a read, in order, as their client does; nothing for session.closed, nor after it', async () => {
    const time = new VirtualTime();
    const numbered = (type: string, server_event_seq: number) => ({ type, event_id: `e${server_event_seq}`, server_event_seq });
    const server = new FakeServer(time, () => ({
      accept: (side) =>
        side.onMessage((e) => {
          if (e.type !== 'session.update') return;
          side.send({ type: 'session.created', session: {} });
          // One read of three journaled events, then one more 10 ms later, then one read that ends with session.closed.
          side.later(5, () => side.sendAll([numbered('vendor.note', 1), numbered('vendor.note', 2), numbered('vendor.note', 3)]));
          side.later(15, () => side.send(numbered('vendor.note', 4)));
          side.later(25, () => side.sendAll([numbered('vendor.note', 5), numbered('session.closed', 6)]));
        }),
    }));
    const conn = server.connect('ws://fake/v1/realtime', {});
    const flow = new VllmOmniFlow('s', { turn_detection: 'none', commit_every_packets: 25, no_playback_ack: true });
    flow.attach(conn);
    await time.run(flow.handshake(conn, 16_000, {}));
    await time.advance(100);
    const acks = server.sessions[0].received.filter((e) => e.type === 'session.event_ack').map((e) => e.server_event_seq);
    expect(acks).toEqual([1, 2, 3, 4, 5]);
  });
});
