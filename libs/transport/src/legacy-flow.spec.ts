import { VirtualTime } from '@duplex-bench/pacer/testing';
import { ProtocolError } from '@duplex-bench/protocol';
import { createSessionFlow } from './create-flow';
import { TransportError } from './errors';
import { FakeServer, type FakeServerSide } from './fake-server';
import { LegacyFlow } from './legacy-flow';

type Echo = 'as asked' | 'server_vad';

/**
 * A legacy (turn-based) server in virtual time, as sglang-omni's facade answers: `session.created`
 * at once, every `session.update` answered with `session.updated` after `answer_ms` (the probe's
 * answer after `probe_answer_ms`; null: never), turn detection echoed as asked or substituted.
 */
function legacyServer(time: VirtualTime, o: { echo?: Echo; probe_answer_ms?: number | null } = {}) {
  return new FakeServer(time, () => ({
    accept: (side) => {
      const session: Record<string, unknown> = { id: 'sess_a', object: 'realtime.session', modalities: ['text'], input_audio_format: 'pcm16', output_audio_format: 'pcm16' };
      side.send({ type: 'session.created', event_id: 'evt_0', session: { ...session } });
      let updates = 0;
      side.onMessage((e) => {
        if (e.type !== 'session.update') return;
        const asked = (e.session ?? {}) as Record<string, unknown>;
        if (updates++ === 0) {
          const turn = asked.turn_detection as Record<string, unknown>;
          Object.assign(session, asked, { turn_detection: o.echo === 'server_vad' ? { ...turn, type: 'server_vad' } : turn });
          side.send({ type: 'session.updated', event_id: 'evt_1', session: { ...session } });
          return;
        }
        if (o.probe_answer_ms === null) return;
        side.send({ type: 'session.updated', event_id: `evt_${updates}`, session: { ...session } }, o.probe_answer_ms ?? 0);
      });
    },
  }));
}

async function openSession(time: VirtualTime, o: Parameters<typeof legacyServer>[1] & { turn_detection?: 'server_vad' | 'semantic_vad' } = {}) {
  const server = legacyServer(time, o);
  const conn = server.connect('ws://fake/v1/realtime', {});
  const flow = new LegacyFlow('s0', { turn_detection: o.turn_detection ?? 'server_vad', tail_ms: 1000 });
  flow.attach(conn);
  const options = { clock: time, drain_timeout_ms: 30_000, close_timeout_ms: 1000, handshake_timeout_ms: 5000 };
  const grant = flow.handshake(conn, 16_000, options);
  return { server, conn, flow, options, grant, side: () => server.sessions[0] as FakeServerSide };
}

const sent = (side: FakeServerSide) => side.received.map((e) => e.type);

describe("sglang-omni's legacy turn-based flow (client.py at 3d801fa0)", () => {
  it('is the flow of the sglang-legacy dialect', () => {
    expect(createSessionFlow({ protocol: 'sglang-legacy', turn_detection: 'server_vad', tail_ms: 1000 }, 's')).toBeInstanceOf(LegacyFlow);
  });

  it('opens with session.update {modalities: text and audio, turn_detection} and takes the echo of the type asked; output pcm16 is 24 kHz', async () => {
    const time = new VirtualTime();
    const { grant, side } = await openSession(time, { turn_detection: 'semantic_vad' });
    await expect(time.run(grant)).resolves.toEqual({ output_sample_rate: 24000 });
    expect(side().received).toEqual([{ type: 'session.update', event_id: 's0_configure', session: { modalities: ['text', 'audio'], turn_detection: { type: 'semantic_vad' } } }]);
  });

  it('fails the session when session.updated echoes another turn_detection.type (the facade ran server_vad instead), before any input', async () => {
    const time = new VirtualTime();
    const { grant, side } = await openSession(time, { turn_detection: 'semantic_vad', echo: 'server_vad' });
    const err = await time.run(grant.catch((e: unknown) => e));
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as ProtocolError).message).toBe('session.updated echoed turn_detection.type "server_vad", requested "semantic_vad"');
    expect(sent(side())).toEqual(['session.update']);
  });

  it('appends as the native frame (sglang seq and t_start_ms), commits nothing, and stops on any server error', () => {
    const flow = new LegacyFlow('s0', { turn_detection: 'server_vad', tail_ms: 1000 });
    const frame = JSON.parse(flow.append('s0_a1', 1, 80, Buffer.from(Buffer.alloc(4).toString('base64'))).toString());
    expect(frame).toEqual({ type: 'input_audio_buffer.append', event_id: 's0_a1', audio: 'AAAAAA==', sglang: { seq: 1, t_start_ms: 80 } });
    expect(flow.afterAppend()).toBeNull();
    expect(flow.endsOn()).toBe(true);
    expect(flow.closesOnFailure()).toBe(false);
  });

  it('ends with no end of input, drain or close event: the probe a tail after, its answer, 0.2 s more, then the socket closes', async () => {
    const time = new VirtualTime();
    const { conn, flow, options, grant, side } = await openSession(time, { probe_answer_ms: 35 });
    await time.run(grant);
    const t0 = time.now;
    let probedAt: number | null = null;
    side().onMessage((e) => {
      if (e.type === 'session.update') {
        probedAt = time.now - t0;
        side().send({ type: 'session.updated', event_id: 'evt_probe', session: { id: 'sess_a' } }, 35);
      }
    });
    let closedAt: number | null = null;
    const traced: string[] = [];
    await time.run(flow.end(conn, { ...options, onSend: (frame) => traced.push(frame) }).then(() => (closedAt = time.now - t0)));
    // The tail is 1 s; the probe is a session.update whose session is empty.
    expect(probedAt).toBeCloseTo(1000, 3);
    expect(traced).toEqual(['{"type":"session.update","event_id":"s0_probe","session":{}}']);
    expect(sent(side())).toEqual(['session.update', 'session.update']);
    // Answered 35 ms later; the close frame went 200 ms after that.
    expect(closedAt).toBeCloseTo(1235, 3);
    expect(side().clientClose).toEqual({ code: 1000, reason: 'done' });
    expect(flow.dialectEvents()).toEqual({ responses_created: 0, responses_overlapped_by_speech: 0, responses_open_at_close: 0, probe_ack_ms: expect.closeTo(35, 3) });
  });

  it("counts the oracle's response figures: created, open when the user spoke, open at the close", async () => {
    const time = new VirtualTime();
    const { conn, flow, options, grant, side } = await openSession(time);
    await time.run(grant);
    const s = side();
    s.send({ type: 'response.created', event_id: 'e1', response: { id: 'r0', status: 'in_progress' } });
    s.send({ type: 'response.done', event_id: 'e2', response: { id: 'r0', status: 'completed', status_details: { reason: 'stop' } } }, 10);
    s.send({ type: 'response.created', event_id: 'e3', response: { id: 'r1', status: 'in_progress' } }, 20);
    s.send({ type: 'input_audio_buffer.speech_started', event_id: 'e4', audio_start_ms: 0, item_id: 'i1' }, 30);
    s.send({ type: 'output_audio_buffer.cleared', event_id: 'e5', response_id: 'r1', item_id: 'a1' }, 31);
    s.send({ type: 'response.done', event_id: 'e6', response: { id: 'r1', status: 'cancelled', status_details: { reason: 'turn_detected' } } }, 32);
    s.send({ type: 'response.created', event_id: 'e7', response: { id: 'r2', status: 'in_progress' } }, 40);
    await time.run(flow.end(conn, options));
    expect(flow.dialectEvents()).toMatchObject({ responses_created: 3, responses_overlapped_by_speech: 1, responses_open_at_close: 1 });
  });

  it('sends no probe when a server error comes during the tail: the session ends with that error', async () => {
    const time = new VirtualTime();
    const { conn, flow, options, grant, side } = await openSession(time);
    await time.run(grant);
    const ending = flow.end(conn, options).catch((e: unknown) => e);
    side().send({ type: 'error', event_id: 'e9', sglang: { fatal: false }, error: { type: 'invalid_request_error', code: 'not_supported', message: 'no' } }, 400);
    const err = await time.run(ending);
    expect(err).toMatchObject({ code: 'SERVER_ERROR', info: { server_code: 'not_supported', fatal: false } });
    expect(sent(side())).toEqual(['session.update']);
  });

  it('ends as drain_timeout, naming the probe, when its session.updated never comes within the drain bound', async () => {
    const time = new VirtualTime();
    const { conn, flow, options, grant } = await openSession(time, { probe_answer_ms: null });
    await time.run(grant);
    const err = await time.run(flow.end(conn, { ...options, drain_timeout_ms: 5000 }).catch((e: unknown) => e));
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ reason: 'drain_timeout', message: 'no session.updated answered the liveness probe within 5000 ms' });
    expect(flow.dialectEvents()).not.toHaveProperty('probe_ack_ms');
  });
});
