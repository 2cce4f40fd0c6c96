import { VirtualTime } from '@duplex-bench/pacer/testing';
import { vllmSessionUpdate } from '@duplex-bench/protocol';
import { trailingSilenceMs } from './create-flow';
import type { TransportError } from './errors';
import { FakeServer, type FakeServerSide } from './fake-server';
import { VllmOmniFlow } from './vllm-omni-flow';

/** A vLLM-Omni server under server VAD in virtual time: it grants the session and closes on `session.close`. */
function turnServer(time: VirtualTime) {
  const server = new FakeServer(time, () => ({
    accept: (side) =>
      side.onMessage((e) => {
        if (e.type === 'session.update') side.send({ type: 'session.created', session: { turn_detection: { type: 'server_vad' } } });
        if (e.type === 'session.close') side.send({ type: 'session.closed', session_id: 's', reason: 'client_close' });
      }),
  }));
  return server;
}

async function openTurnSession(time: VirtualTime, drain_ms = 30_000) {
  const server = turnServer(time);
  const conn = server.connect('ws://fake/v1/realtime', {});
  const flow = new VllmOmniFlow('s', { turn_detection: 'server_vad', commit_every_packets: 0, ack_every_ms: 250 });
  flow.attach(conn);
  await time.run(flow.handshake(conn, 16_000, {}));
  const side: FakeServerSide = server.sessions[0];
  return { conn, flow, side, ended: () => flow.end(conn, { drain_timeout_ms: drain_ms, close_timeout_ms: 1000 }) };
}

describe('vLLM-Omni under server VAD: a turn-based model (their duplex benchmark)', () => {
  it('opens with auto_response false and server_vad, as their runner does for server-detected turns; none keeps auto_response true', () => {
    const vad = JSON.parse(vllmSessionUpdate('u', { input_sample_rate: 16_000, output_sample_rate: 24_000, turn_detection: 'server_vad' })).session;
    expect(vad).toMatchObject({ turn_detection: { type: 'server_vad' }, extra_body: { auto_response: false } });
    const model = JSON.parse(vllmSessionUpdate('u', { input_sample_rate: 16_000, output_sample_rate: 24_000, turn_detection: 'none' })).session;
    expect(model).toMatchObject({ turn_detection: null, extra_body: { auto_response: true } });
  });

  it('sends 1.5 s of silence after the input under server_vad, none otherwise', () => {
    expect(trailingSilenceMs({ protocol: 'vllm-omni', turn_detection: 'server_vad', commit_every_packets: 0 })).toBe(1500);
    expect(trailingSilenceMs({ protocol: 'vllm-omni', turn_detection: 'none', commit_every_packets: 25 })).toBe(0);
    expect(trailingSilenceMs({ protocol: 'openai', turn_detection: 'server_vad', commit_every_packets: 0 })).toBe(0);
  });

  it('never commits, and closes only after speech and responses are over and the turns quiet for 2 s', async () => {
    const time = new VirtualTime();
    const { flow, side, ended } = await openTurnSession(time);
    flow.append('a0', 0, 0, Buffer.from(Buffer.alloc(2560).toString('base64')));
    expect(flow.afterAppend()).toBeNull();
    // The user's last turn is still being spoken when the input ends.
    side.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: 'in0' });
    await time.advance(10);
    let closedAt: number | null = null;
    const t0 = time.now;
    const ending = ended().then(() => (closedAt = time.now - t0));
    // The VAD closes it 600 ms later; the server commits it and answers with response_id on created and done.
    side.send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: 800, item_id: 'in0' }, 600);
    side.send({ type: 'input_audio_buffer.committed', item_id: 'in0' }, 610);
    side.send({ type: 'response.created', response_id: 'r1', response: { id: 'r1' } }, 700);
    side.send({ type: 'response.done', response_id: 'r1', response: { status: 'completed' } }, 1900);
    // Playback answers do not keep the session open.
    side.send({ type: 'playback.acknowledged', event: { item_id: 'item_r1' } }, 2500);
    await time.run(ending);
    expect(side.received.filter((e) => e.type === 'input_audio_buffer.commit')).toEqual([]);
    // Done at 1.9 s, then 2 s without turn activity: closed at 3.9 s, not at the playback answer's 2.5 + 2.
    expect(closedAt).toBeCloseTo(3900, -1);
    expect(side.received.at(-1)?.type).toBe('session.close');
    // The response's first ack went at its creation; the server's commit came before it, so it was not too late.
    expect(side.received.filter((e) => e.type === 'playback.ack').map((e) => e.response_id)).toContain('r1');
  });

  it('ends as turns_unsettled, naming what is open, when speech never stops within the drain bound', async () => {
    const time = new VirtualTime();
    const { side, ended } = await openTurnSession(time, 5000);
    side.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: 'in0' });
    await time.advance(10);
    const err = (await time.run(ended().catch((e: unknown) => e))) as TransportError;
    expect(err).toMatchObject({ reason: 'turns_unsettled' });
    expect(err.message).toMatch(/speech open, 0 responses open/);
  });

  it("counts the server's own commits: a response never acked is not acked for the first time after one (it would be too late)", async () => {
    const time = new VirtualTime();
    const { side } = await openTurnSession(time);
    // Audio of r2 arrives before anything created it here: it has no place in the ledger yet.
    side.send({ type: 'response.output_audio.delta', response_id: 'r2', delta: Buffer.alloc(4800).toString('base64') });
    // The server's VAD commits the next turn: a first ack of r2 would now be refused.
    side.send({ type: 'input_audio_buffer.committed', item_id: 'in1' }, 5);
    await time.advance(300);
    expect(side.received.filter((e) => e.type === 'playback.ack')).toEqual([]);
  });
});
