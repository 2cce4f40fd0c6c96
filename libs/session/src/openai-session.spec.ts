import { openaiServer, type OpenAIScript } from './openai-server.spec-helpers';
import { receivedOf, virtualSession } from './session.spec-helpers';

function openai(script: OpenAIScript = {}, input_s = 0.8) {
  return virtualSession({ dialect: { protocol: 'openai', turn_detection: 'none', commit_every_packets: 5 }, input_s, accept: (side) => openaiServer(side, script) });
}

function vllm(script: OpenAIScript = {}, input_s = 0.8, extra: Record<string, unknown> = {}) {
  return virtualSession({
    dialect: { protocol: 'vllm-omni', turn_detection: 'none', commit_every_packets: 5, ack_every_ms: 250, ...extra },
    input_s,
    accept: (side) => openaiServer(side, { vllm: true, ...script }),
  });
}

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

  it('counts a server error after the grant and goes on', async () => {
    const result = await openai({ error_after_grant: 'unknown_parameter' }).result();
    expect(result).toMatchObject({ completed: true, server_errors: 1, server_error_codes: { unknown_parameter: 1 } });
  });

  it('times the first audio from response.created received', async () => {
    const result = await openai({ answer_ms: 40 }).result();
    // Created and its first delta arrive at the same instant.
    expect(result.responses?.[0].ttfp_ms).toBe(0);
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

  it('any other refusal of what the client sent ends the session as client_protocol_error, saying session.close', async () => {
    const v = vllm({ ack_error: 'playback_item_mismatch' });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'client_protocol_error', server_error: { code: 'playback_item_mismatch' } });
    expect(v.server.sessions[0].received.map((e) => e.type)).toContain('session.close');
  });
});

describe('admission', () => {
  it('an upgrade refused with HTTP 503 is retried 3 times 250 ms apart, each refusal traced, then admission_refused', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, answer: () => ({ refuse: 503 }) });
    const t0 = v.time.now;
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'admission_refused', admission_refusals: 4 });
    expect(v.server.upgrades).toHaveLength(4);
    expect(v.sink.admissions.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
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

  it('a server that never answers the upgrade runs into the connect bound: connect_timeout', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, answer: () => 'hang', ctx: { connect_timeout_ms: 2000 } });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'connect_timeout' });
  });

  it('a server that accepts and says nothing runs into the handshake bound: handshake_timeout', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, ctx: { handshake_timeout_ms: 3000 } });
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'handshake_timeout' });
  });
});
