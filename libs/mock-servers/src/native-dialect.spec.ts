import { VirtualTimeScheduler } from 'rxjs';
import type WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { NATIVE_INPUT_BYTES_PER_MS } from '@duplex-bench/protocol';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog } from './behaviour-log';
import type { MockConnection } from './mock-dialect';
import { mockSettings, type MockServerOptions } from './mock-options';
import { nativeDialect } from './native-dialect';
import type { MockHost } from './openai-mock-session';
import { FakeSocket, type Event } from './fake-socket.spec-helpers';

/** The native dialect on a host in virtual time, with what the host was told. */
function harness(options: MockServerOptions = {}) {
  const scheduler = new VirtualTimeScheduler();
  const clock = schedulerTimerHost(scheduler);
  const done: ArrivalOffsets[] = [];
  let completed = 0;
  const host: MockHost = {
    clock,
    send: (ws, frame) => (ws as unknown as FakeSocket).frames.push({ t_ms: scheduler.now(), event: JSON.parse(frame) as Event }),
    arrivals: () => new ArrivalOffsets(),
    arrivalsDone: (a) => done.push(a),
    completed: () => completed++,
    behaviourLog: (id) => new BehaviourLog(id),
  };
  const dialect = nativeDialect(mockSettings(options), host);
  const open = (id = 'mock_0', fault: Parameters<typeof dialect.open>[2] = null) => {
    const ws = new FakeSocket();
    const connection: MockConnection = dialect.open(ws as unknown as WebSocket, id, fault);
    const send = (event: Record<string, unknown>) => connection.session.onMessage(Buffer.from(JSON.stringify(event)), false, clock.now_s());
    return { ws, connection, send };
  };
  return { scheduler, dialect, open, done, completed: () => completed };
}

/** `ms` of 16 kHz PCM16 silence, base64. */
const audio = (ms: number) => Buffer.alloc(ms * NATIVE_INPUT_BYTES_PER_MS).toString('base64');

describe('nativeDialect', () => {
  it('refuses upgrades when full, as the native server answers HTTP 503', () => {
    expect(harness().dialect.refuses_upgrade_when_full).toBe(true);
  });

  it('speaks first: session.created for the session id, once the host has wired the socket', () => {
    const { open } = harness();
    const s = open('mock_7');
    expect(s.ws.frames).toEqual([]);
    s.connection.start();
    expect(s.ws.frames.map((f) => f.event)).toEqual([{ type: 'session.created', event_id: 'mock_7_e0', session: { id: 'mock_7', sglang: { granted: null } } }]);
  });

  it("grants the profile's unit and output rate, 16 kHz input, and limits no benchmark reaches: an hour of input per session", () => {
    for (const [profile, unit_ms, rate] of [
      ['append-echo', 80, 22050],
      ['minicpmo', 1000, 24000],
    ] as const) {
      const { open } = harness({ profile });
      const s = open();
      s.send({ type: 'session.update', event_id: 'u1', session: {} });
      const updated = s.ws.frames[0].event as unknown as { client_event_id: string; session: { sglang: { granted: Record<string, unknown> & { limits: Record<string, number> } } } };
      expect(updated).toMatchObject({ type: 'session.updated', client_event_id: 'u1' });
      const grant = updated.session.sglang.granted;
      expect(grant).toMatchObject({ native_unit_ms: unit_ms, first_unit_ms: unit_ms, input_audio_format: { rate: 16000 }, output_audio_format: { rate }, tail_policy: 'pad' });
      // The newest grant's limits (RuntimeLimits' defaults): 60 s of input held unprocessed, and no more keys than those.
      expect(Object.keys(grant.limits).sort()).toEqual(['cleanup_timeout_s', 'max_history_chars', 'max_input_bytes', 'max_output_bytes', 'max_output_events']);
      expect(grant.limits).toEqual({ max_input_bytes: 60 * 1000 * NATIVE_INPUT_BYTES_PER_MS, max_output_bytes: 4 * 1024 * 1024, max_output_events: 256, max_history_chars: 65536, cleanup_timeout_s: 30 });
      expect(grant).toMatchObject({ sampling_parameters: [], supports_reference_audio: false });
    }
  });

  it('append-echo: answers each whole unit at once with replies_per_append events (audio, transcript, unit done)', () => {
    const { open, scheduler } = harness({ replies_per_append: 4 });
    const s = open();
    s.send({ type: 'session.update', event_id: 'u1', session: {} });
    s.send({ type: 'input_audio_buffer.append', event_id: 'a0', audio: audio(80) });
    s.send({ type: 'input_audio_buffer.append', event_id: 'a1', audio: audio(80) });
    scheduler.flush();
    expect(s.ws.types()).toEqual([
      'session.updated',
      'sglang.input_audio.accepted',
      'response.created',
      'response.output_audio.delta',
      'response.output_audio_transcript.delta',
      'response.output_audio_transcript.delta',
      'sglang.unit.done',
      'sglang.input_audio.accepted',
      'response.output_audio.delta',
      'response.output_audio_transcript.delta',
      'response.output_audio_transcript.delta',
      'sglang.unit.done',
    ]);
    expect(s.ws.frames.every((f) => f.t_ms === 0)).toBe(true);
    // One output unit of silence per input unit: 80 ms at 22,050 Hz.
    const delta = s.ws.frames.find((f) => f.event.type === 'response.output_audio.delta')?.event.delta as string;
    expect(Buffer.from(delta, 'base64').length).toBe(1764 * 2);
  });

  it("a model profile answers on the host's clock: first audio ttfp_ms after the turn began", () => {
    const { open, scheduler } = harness({ profile: 'nemotron', model: { ttfp_ms: 300 } });
    const s = open();
    s.send({ type: 'session.update', event_id: 'u1', session: {} });
    s.send({ type: 'input_audio_buffer.append', event_id: 'a0', audio: audio(80) });
    scheduler.flush();
    const first = s.ws.frames.find((f) => f.event.type === 'response.output_audio.delta');
    expect(first?.t_ms).toBe(300);
  });

  it("on close, hands the session's arrivals to the host and stops its model: nothing goes out after", () => {
    const { open, scheduler, done } = harness({ profile: 'nemotron', model: { ttfp_ms: 300 } });
    const s = open();
    s.send({ type: 'session.update', event_id: 'u1', session: {} });
    s.send({ type: 'input_audio_buffer.append', event_id: 'a0', audio: audio(80) });
    s.send({ type: 'input_audio_buffer.append', event_id: 'a1', audio: audio(80) });
    scheduler.schedule(() => s.connection.closed(1006), 100);
    scheduler.flush();
    expect(done).toHaveLength(1);
    expect(done[0].count).toBe(2);
    expect(s.ws.types()).not.toContain('response.output_audio.delta');
  });

  it('gives each session its own ids, and the fault only to the session opened with one', () => {
    const { open } = harness();
    const good = open('mock_0');
    const bad = open('mock_1', { after_appends: 1, action: 'close' });
    for (const s of [good, bad]) {
      s.connection.start();
      s.send({ type: 'session.update', event_id: 'u1', session: {} });
      s.send({ type: 'input_audio_buffer.append', event_id: 'a0', audio: audio(80) });
    }
    expect(good.ws.frames.every((f) => String(f.event.event_id).startsWith('mock_0_'))).toBe(true);
    expect(good.ws.types()).toContain('sglang.unit.done');
    expect(good.ws.closes).toEqual([]);
    expect(bad.ws.closes).toEqual([{ code: 1011, reason: 'injected fault' }]);
    expect(bad.ws.types()).not.toContain('sglang.input_audio.accepted');
  });

  it("counts a session completed when it answers the client's session.close", () => {
    const h = harness();
    const s = h.open();
    s.send({ type: 'session.update', event_id: 'u1', session: {} });
    s.send({ type: 'session.close', event_id: 'c1' });
    expect(h.completed()).toBe(1);
    expect(s.ws.types()).toContain('session.closed');
    s.connection.closed(1000);
    expect(h.completed()).toBe(1);
  });
});
