import { VirtualTime } from '@duplex-bench/pacer/testing';
import type { Connection } from './connection';
import { FakeServer, type FakeServerSide } from './fake-server';
import type { VllmOmniFlowConfig } from './flow';
import { VllmOmniFlow } from './vllm-omni-flow';

const RATE = 24_000;

/** 24 kHz 16-bit audio of `ms`, as a delta's base64. */
const audioOf = (ms: number): string => Buffer.alloc((RATE * 2 * ms) / 1000).toString('base64');

/**
 * A session in virtual time against a vllm-omni server that grants it (session.created, then
 * session.updated at 24 kHz) and does what the test tells it to; acks every 250 ms unless `config`
 * says otherwise. The flow is attached, not yet shaken hands: `handshake` does that.
 */
function ackSession(config: Partial<VllmOmniFlowConfig>) {
  // On time to the ms: the acks' played_ms are whole ms of the playout clock.
  const time = new VirtualTime(0);
  const server = new FakeServer(time, () => ({
    accept: (side) =>
      side.onMessage((e) => {
        if (e.type !== 'session.update') return;
        side.send({ type: 'session.created', session: {} });
        side.send({ type: 'session.updated', session: { audio: { output: { format: { rate: RATE } } } } });
      }),
  }));
  const conn = server.connect('ws://fake/v1/realtime', {});
  const flow = new VllmOmniFlow('s', { turn_detection: 'server_vad', commit_every_packets: 0, ack_every_ms: 250, ...config });
  flow.attach(conn);
  const sent: string[] = [];
  const handshake = async (): Promise<FakeServerSide> => {
    await time.run(flow.handshake(conn, 16_000, { onSend: (frame) => sent.push(frame) }));
    return server.sessions[0];
  };
  return { time, conn, flow, sent, handshake };
}

/** The session's failure, once it fails (null until then). */
function failureOf(conn: Connection): () => { reason?: string; info?: { server_code?: string } } | null {
  let failure: { reason?: string; info?: { server_code?: string } } | null = null;
  conn.events$.subscribe({ error: (e) => (failure = e as typeof failure) });
  return () => failure;
}

const acksOf = (side: FakeServerSide) => side.received.filter((e) => e.type === 'playback.ack');

describe('VllmOmniFlow playback acknowledgements', () => {
  it("acknowledge the audio played on the playout clock, every ack_every_ms on the connection's timers, and only what is new", async () => {
    const { time, flow, sent, handshake } = ackSession({});
    // The ack ticker is armed with the attach, in the background (it never holds the process open).
    expect(time.pending.filter((t) => t.delay_ms === 250).map((t) => t.background)).toEqual([true]);
    const side = await handshake();
    const acks = () => sent.filter((f) => f.includes('"playback.ack"')).length;

    // The response is acked at 0 ms as soon as it is created: that keeps its place in the ledger.
    side.send({ type: 'response.created', response: { id: 'r1' } });
    await time.advance(0);
    expect(acksOf(side)).toEqual([expect.objectContaining({ response_id: 'r1', item_id: 'item_r1', played_ms: 0, committed_ms: 0 })]);
    // 0.5 s of audio in one delta.
    side.send({ type: 'response.output_audio.delta', response_id: 'r1', item_id: 'i1', delta: audioOf(500) });
    await time.advance(0);
    expect(acks()).toBe(1);

    // 250 ms later half of it has played: that is what the ack says, not the 500 ms received.
    expect(flow.afterAppend()).toBeNull();
    await time.advance(250);
    expect(acksOf(side).at(-1)).toEqual(expect.objectContaining({ response_id: 'r1', played_ms: 250, committed_ms: 250 }));
    await time.advance(250);
    expect(acksOf(side).at(-1)).toEqual(expect.objectContaining({ response_id: 'r1', played_ms: 500, committed_ms: 500 }));
    expect(acks()).toBe(3);
    // All of it played and acknowledged: no further ack (sends are counted as they go), and the ticker is armed again.
    await time.advance(250);
    expect(acks()).toBe(3);
    expect(time.pending.filter((t) => t.delay_ms === 250)).toHaveLength(1);
  });

  it('acknowledges the played ms across an underrun: two bursts with a gap between them, the gap not counted', async () => {
    const { time, handshake } = ackSession({});
    const side = await handshake();
    side.send({ type: 'response.created', response: { id: 'r1' } });
    // Burst 1 at 0 ms: 200 ms of audio.
    side.send({ type: 'response.output_audio.delta', response_id: 'r1', delta: audioOf(200) });
    // The ack at 250 ms: burst 1 has played out (200), the speaker waits in an underrun.
    await time.advance(250);
    // Burst 2 arrives at 250 ms (400 ms of audio): it plays from then, 50 ms of gap skipped by nobody.
    side.send({ type: 'response.output_audio.delta', response_id: 'r1', delta: audioOf(400) });
    await time.advance(250);
    // At 500 ms: 200 + 250 played (received: 600; elapsed since the first audio: 500).
    expect(acksOf(side).map((e) => e.played_ms)).toEqual([0, 200, 450]);
  });

  it('acks responses acked before after a later commit, and ends on an error that refuses what it sent, saying session.close', async () => {
    const { time, conn, flow, sent, handshake } = ackSession({ turn_detection: 'none', commit_every_packets: 1 });
    const side = await handshake();
    const failure = failureOf(conn);
    side.send({ type: 'response.created', response: { id: 'r1' } });
    await time.advance(0);
    // A packet and the commit that follows it.
    flow.append('a0', 0, 0, Buffer.from(Buffer.alloc(2560).toString('base64')));
    expect(flow.afterAppend()).toEqual([expect.stringContaining('input_audio_buffer.commit')]);
    side.send({ type: 'response.output_audio.delta', response_id: 'r1', delta: audioOf(500) });
    await time.advance(250);
    expect(acksOf(side).map((e) => e.played_ms)).toEqual([0, 250]);

    side.send({ type: 'error', error: { type: 'invalid_request_error', code: 'playback_item_mismatch', message: 'mismatch' }, server_event_seq: 9 });
    await time.advance(0);
    expect(failure()).toMatchObject({ reason: 'client_protocol_error', info: { server_code: 'playback_item_mismatch' } });
    // It said session.close, its last frame, and closed.
    expect(side.received.at(-1)?.type).toBe('session.close');
    expect(sent.filter((f) => f.includes('"session.close"'))).toHaveLength(1);
  });

  it('counts a first ack that raced a later commit (playback_ack_too_late), never acks that response again, and goes on', async () => {
    const { time, conn, flow, sent, handshake } = ackSession({ turn_detection: 'none', commit_every_packets: 1 });
    const side = await handshake();
    const failure = failureOf(conn);
    // r1 is created and acked at 0 ms, and the server confirms it: its place is kept.
    side.send({ type: 'response.created', response: { id: 'r1' } });
    side.send({ type: 'playback.acknowledged', event: { type: 'playback.acknowledged', item_id: 'item_r1', played_ms: 0 } });
    // r2 was created on the server before a commit it had already taken; its 0 ms ack is refused.
    side.send({ type: 'response.created', response: { id: 'r2' } });
    await time.advance(0);
    side.send({ type: 'error', error: { type: 'invalid_request_error', code: 'playback_ack_too_late', message: 'playback.ack arrived after a later user input was committed.' } });
    for (const id of ['r1', 'r2']) side.send({ type: 'response.output_audio.delta', response_id: id, delta: audioOf(500) });
    await time.advance(0);
    expect(flow.dialectEvents()).toMatchObject({ playback_ack_too_late: 1 });
    expect(failure()).toBeNull();
    // The next tick acks r1's played audio and leaves r2 alone.
    await time.advance(250);
    expect(acksOf(side).map((e) => [e.response_id, e.played_ms])).toEqual([['r1', 0], ['r2', 0], ['r1', 250]]);
    expect(sent.filter((f) => f.includes('"session.close"'))).toHaveLength(0);
  });

  it("counts a first ack that its response's end overtook (a listen with nothing to play: playback_item_not_found naming it) and goes on; the same refusal of a response that had audio fails the session", async () => {
    const { time, conn, flow, handshake } = ackSession({ turn_detection: 'none', commit_every_packets: Infinity });
    const side = await handshake();
    const failure = failureOf(conn);
    // r1 is created and ends in a listen at once: its 0 ms ack, sent as response.created arrived, reaches a server that kept no item for it.
    side.send({ type: 'response.created', response: { id: 'r1' } });
    side.send({ type: 'response.listen', response_id: 'r1' });
    side.send({ type: 'response.done', response_id: 'r1', response: { id: 'r1', status: 'completed' } });
    await time.advance(0);
    expect(acksOf(side).map((e) => e.response_id)).toEqual(['r1']);
    side.send({ type: 'error', error: { type: 'invalid_request_error', code: 'playback_item_not_found', message: 'No assistant response item is registered for r1.' }, server_event_seq: 7 });
    side.send({ type: 'response.created', response: { id: 'r2' } });
    side.send({ type: 'response.output_audio.delta', response_id: 'r2', delta: audioOf(500) });
    await time.advance(0);
    expect(flow.dialectEvents()).toMatchObject({ playback_ack_after_end: 1, playback_ack_too_late: 0 });
    expect(failure()).toBeNull();
    // r2 had audio: a refusal naming it is the client's fault.
    side.send({ type: 'response.done', response_id: 'r2', response: { id: 'r2', status: 'completed' } });
    side.send({ type: 'error', error: { type: 'invalid_request_error', code: 'playback_item_not_found', message: 'No assistant response item is registered for r2.' }, server_event_seq: 8 });
    await time.advance(0);
    expect(failure()).toMatchObject({ reason: 'client_protocol_error', info: { server_code: 'playback_item_not_found' } });
    expect(flow.dialectEvents()).toMatchObject({ playback_ack_after_end: 1 });
  });
});
