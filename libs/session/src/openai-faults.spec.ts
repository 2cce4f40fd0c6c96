import type { FakeServerSide } from '@duplex-bench/transport/testing';
import { openaiServer } from './openai-server.spec-helpers';
import { receivedOf, virtualSession } from './session.spec-helpers';

const OPENAI = { protocol: 'openai', turn_detection: 'none', commit_every_packets: 5 } as const;
const VLLM = { protocol: 'vllm-omni', turn_detection: 'none', commit_every_packets: 5, ack_every_ms: 250 } as const;

describe('an openai session whose server misbehaves', () => {
  it('a server that stops answering ends the session as drain_timeout at the drain bound', async () => {
    const v = virtualSession({
      dialect: OPENAI,
      // Grants, then never answers anything again: the first response.create is never answered.
      accept: (side) => {
        side.send({ type: 'session.created', session: {} });
        side.onMessage((e) => e.type === 'session.update' && side.send({ type: 'session.updated', session: {} }));
      },
      ctx: { drain_timeout_ms: 2000 },
    });
    const t0 = v.time.now;
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'drain_timeout' });
    // The input ends at 0.8 s; the bound is 2 s after it.
    expect(v.time.now - t0).toBeGreaterThanOrEqual(2800);
    expect(v.time.now - t0).toBeLessThan(2800 + 3000);
  });

  it('an error answering session.update ends the session at the handshake as server_error', async () => {
    const v = virtualSession({
      dialect: OPENAI,
      accept: (side) => {
        side.send({ type: 'session.created', session: {} });
        side.onMessage((e) => e.type === 'session.update' && side.send({ type: 'error', error: { type: 'invalid_request_error', code: 'unsupported_audio_format', message: 'no' } }));
      },
    });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_error', packets_sent: 0, message: expect.stringContaining('unsupported_audio_format') });
  });

  it('a server that closes the socket after an error event: server_error, with the error and the close in the message', async () => {
    const v = virtualSession({
      dialect: OPENAI,
      accept: (side) => {
        openaiServer(side);
        side.later(300, () => {
          side.send({ type: 'error', error: { type: 'server_error', code: 'engine_dead', message: 'engine died' } });
          side.close(1011, 'engine');
        });
      },
    });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_error' });
    expect(result.message).toMatch(/engine_dead.*then server closed the session \(code 1011/);
  });

  it('a server that waits for the client to speak first (vLLM-Omni) runs into the handshake bound', async () => {
    const v = virtualSession({ dialect: OPENAI, accept: () => undefined, ctx: { handshake_timeout_ms: 4000 } });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'handshake_timeout', packets_sent: 0 });
  });

  it("says session.close to a server that shows vLLM-Omni's extensions (numbered events), and waits for session.closed", async () => {
    const v = virtualSession({ dialect: OPENAI, accept: (side) => openaiServer(side, { numbered: true }) });
    const result = await v.result();
    expect(result).toMatchObject({ completed: true, server_event_seq: { seen: expect.any(Number), gaps: 0 } });
    expect(v.server.sessions[0].received.map((e) => e.type).slice(-1)).toEqual(['session.close']);
  });
});

describe('openai barge-in, as the Agents SDK does it', () => {
  /** A server with server VAD: one response of 1 s of audio at 100 ms, then the user speaks at 400 ms. */
  function bargeServer(interrupts: boolean) {
    return (side: FakeServerSide) => {
      const session = { audio: { input: { turn_detection: { type: 'server_vad', interrupt_response: interrupts } }, output: { format: { rate: 24_000 } } } };
      side.send({ type: 'session.created', session });
      side.onMessage((e) => {
        if (e.type === 'session.update') {
          side.send({ type: 'session.updated', session });
          side.later(100, () => {
            side.send({ type: 'response.created', response: { id: 'r1' } });
            side.send({ type: 'response.output_audio.delta', response_id: 'r1', item_id: 'item_1', content_index: 0, delta: Buffer.alloc(48_000).toString('base64') });
          });
          side.later(400, () => side.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 300 }));
          side.later(500, () => {
            side.send({ type: 'input_audio_buffer.speech_stopped' });
            side.send({ type: 'response.done', response: { id: 'r1', status: 'cancelled' } });
          });
        }
      });
    };
  }

  it('truncates the playing item at its played position and cancels the response in progress', async () => {
    const v = virtualSession({ dialect: { protocol: 'openai', turn_detection: 'server_vad', commit_every_packets: 0 }, accept: bargeServer(false) });
    await v.result();
    const side = v.server.sessions[0];
    // Audio arrived at 100 ms; the user spoke at 400 ms: 300 ms of it played.
    expect(receivedOf(side, 'conversation.item.truncate')).toEqual([expect.objectContaining({ item_id: 'item_1', content_index: 0, audio_end_ms: 300 })]);
    expect(receivedOf(side, 'response.cancel')).toHaveLength(1);
  });

  it('sends no response.cancel to a server that interrupts the response itself (interrupt_response: true)', async () => {
    const v = virtualSession({ dialect: { protocol: 'openai', turn_detection: 'server_vad', commit_every_packets: 0 }, accept: bargeServer(true) });
    await v.result();
    const side = v.server.sessions[0];
    expect(receivedOf(side, 'conversation.item.truncate')).toHaveLength(1);
    expect(receivedOf(side, 'response.cancel')).toHaveLength(0);
  });
});

describe('a vllm-omni session: opening, heartbeat, server VAD', () => {
  it('an error before session.created (the opening refused) ends the session without session.close: there is no session to close', async () => {
    const v = virtualSession({
      dialect: VLLM,
      accept: (side) => side.onMessage((e) => e.type === 'session.update' && side.send({ type: 'error', error: 'ref_audio is required', code: 'ref_audio_required' })),
    });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'server_error', server_error: { code: 'ref_audio_required' } });
    expect(v.server.sessions[0].received.map((e) => e.type)).toEqual(['session.update']);
  });

  it('sends the lease heartbeat every heartbeat period while the session is open', async () => {
    const v = virtualSession({ dialect: { ...VLLM, heartbeat_every_ms: 300 }, input_s: 1.6, accept: (side) => openaiServer(side, { vllm: true }) });
    await v.result();
    const beats = receivedOf(v.server.sessions[0], 'session.heartbeat').length;
    // 1.6 s of input and the end: a beat every 300 ms.
    expect(beats).toBeGreaterThanOrEqual(5);
    expect(beats).toBeLessThanOrEqual(8);
  });

  it('with server VAD, commits nothing while streaming', async () => {
    const v = virtualSession({ dialect: { ...VLLM, turn_detection: 'server_vad' }, input_s: 1.6, accept: (side) => openaiServer(side, { vllm: true }) });
    await v.result();
    const side = v.server.sessions[0];
    const lastAppend = side.received.map((e) => e.type).lastIndexOf('input_audio_buffer.append');
    expect(side.received.slice(0, lastAppend).filter((e) => e.type === 'input_audio_buffer.commit')).toHaveLength(0);
  });
});
