import type { FakeServerSide } from '@duplex-bench/transport/testing';
import { openaiServer } from './openai-server.spec-helpers';
import { openai, receivedOf, virtualSession, vllm, OPENAI, VLLM } from './session.spec-helpers';

describe('an openai session in virtual time', () => {
  it('waits for the server to speak first, commits and asks for a response every 5 packets, drains until quiet, and closes', async () => {
    const v = openai();
    const result = await v.result();
    expect(result).toMatchObject({ completed: true, packets_sent: 10, late: 0, output_sample_rate: 24_000, responses: [expect.anything(), expect.anything()] });
    const side = v.server.sessions[0];
    const types = side.received.map((e) => e.type);
    expect(types[0]).toBe('session.update');
    expect(types.filter((t) => t === 'input_audio_buffer.commit')).toHaveLength(2);
    expect(types.filter((t) => t === 'response.create')).toHaveLength(2);
    // OpenAI has no session.close: the socket closes with a close frame once the server is quiet.
    expect(types).not.toContain('session.close');
    expect(side.clientClose?.code).toBe(1000);
  });

  it('never sends response.create while a response is active: a second one waits for response.done', async () => {
    // Answers take 600 ms to finish: the commit at packet 10 (400 ms after the first) comes while the first is active.
    const v = openai({ answer_ms: 300 }, 0.8);
    await v.result();
    const side = v.server.sessions[0];
    const order = side.received.map((e) => e.type).filter((t) => t === 'response.create' || t === 'input_audio_buffer.commit');
    expect(order).toEqual(['input_audio_buffer.commit', 'response.create', 'input_audio_buffer.commit', 'response.create']);
    const times = v.sink.sentLines.filter((l) => l.event.type === 'response.create').map((l) => l.time_s);
    const done = v.sink.receivedLines.find((l) => l.event.type === 'response.done');
    expect(times[1]).toBeGreaterThanOrEqual(done?.time_s ?? Infinity);
  });
});

describe('a vllm-omni session in virtual time', () => {
  it('speaks first, acknowledges every numbered event and playback, commits, and ends with session.close → session.closed', async () => {
    const v = vllm();
    const result = await v.result();
    expect(result).toMatchObject({ completed: true, packets_sent: 10 });
    const side = v.server.sessions[0];
    expect(side.received[0].type).toBe('session.update');
    const acks = receivedOf(side, 'session.event_ack').map((e) => e.server_event_seq as number);
    const highest = v.sink.receivedLines.filter((l) => l.event.type !== 'session.closed').map((l) => l.event.server_event_seq as number);
    expect(Math.max(...acks)).toBe(Math.max(...highest));
    expect(receivedOf(side, 'playback.ack').length).toBeGreaterThan(0);
    expect(side.received.at(-1)?.type).toBe('session.close');
    expect(result.server_event_seq).toMatchObject({ gaps: 0, missing_events: 0 });
  });

  it('a first playback ack refused as playback_ack_too_late is counted, and the session completes', async () => {
    const result = await vllm({ ack_error: 'playback_ack_too_late' }).result();
    expect(result).toMatchObject({ completed: true, dialect_events: { playback_ack_too_late: 2 } });
  });

  it("says session.close to a server that shows vLLM-Omni's extensions (numbered events), and waits for session.closed", async () => {
    const v = virtualSession({ dialect: OPENAI, accept: (side) => openaiServer(side, { numbered: true }) });
    const result = await v.result();
    expect(result).toMatchObject({ completed: true, server_event_seq: { seen: expect.any(Number), gaps: 0 } });
    expect(v.server.sessions[0].received.map((e) => e.type).slice(-1)).toEqual(['session.close']);
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

describe('admission', () => {
  it('an upgrade refused with HTTP 503 is retried 3 times 250 ms apart, each retried refusal traced, then admission_refused', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, answer: () => ({ refuse: 503 }) });
    const t0 = v.time.now;
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'admission_refused', admission_refusals: 4 });
    expect(v.server.upgrades).toHaveLength(4);
    // The fourth refusal spends the retries: sglang-omni's client records it as the session's error, not as an attempt.
    expect(v.sink.admissions.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(v.time.now - t0).toBeCloseTo(750, 0);
  });

  it('a vLLM-Omni server full at first admits the session on a later attempt, with a doubling backoff', async () => {
    const v = virtualSession({
      dialect: { protocol: 'vllm-omni', turn_detection: 'none', commit_every_packets: 5 },
      answer: (n) => ({ accept: (side) => openaiServer(side, { vllm: true, refuse: n < 2 }) }),
      ctx: { admission: { retries: 3, backoff_ms: 300, max_backoff_ms: 5000 } },
    });
    const result = await v.result();
    expect(result).toMatchObject({ completed: true, admission_refusals: 2 });
    expect(v.sink.admissions.map((a) => a.refusal)).toEqual([{ code: 'resource_exhausted' }, { code: 'resource_exhausted' }]);
    // The two refused attempts' counts are forgotten: the session saw no server error of its own.
    expect(result.server_errors).toBe(0);
  });
});
