import { VirtualTimeScheduler } from 'rxjs';
import type WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog } from './behaviour-log';
import type { MockConnection } from './mock-dialect';
import { mockSettings, type MockServerOptions } from './mock-options';
import { openaiDialect } from './openai-dialect';
import type { MockHost } from './openai-mock-session';
import { FakeSocket, type Event } from './fake-socket.spec-helpers';

/** The openai dialect on a host in virtual time, with what the host was told. */
function harness(options: MockServerOptions = {}) {
  const o: MockServerOptions = { protocol: 'openai', ...options };
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
  const dialect = openaiDialect(mockSettings(o), o, host);
  const open = (id = 'mock_0') => {
    const ws = new FakeSocket();
    const connection: MockConnection = dialect.open(ws as unknown as WebSocket, id, null);
    const send = (event: Record<string, unknown>) => connection.session.onMessage(Buffer.from(JSON.stringify(event)), false, clock.now_s());
    /** `units` appends of 80 ms at 24 kHz (the default input rate), one every 80 ms from `from_ms`. */
    const appendAtPace = (units: number, from_ms = 0) => {
      for (let i = 0; i < units; i++) scheduler.schedule(() => send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(3840).toString('base64') }), from_ms + i * 80);
    };
    return { ws, connection, send, appendAtPace };
  };
  return { scheduler, dialect, open, done, completed: () => completed };
}

describe('openaiDialect', () => {
  it('refuses upgrades when full, and speaks first with session.created: GA names, server VAD with a 500 ms silence by default', () => {
    const h = harness();
    expect(h.dialect.refuses_upgrade_when_full).toBe(true);
    const s = h.open();
    s.connection.start();
    const created = s.ws.frames[0].event;
    expect(created).toMatchObject({ type: 'session.created', session: { id: 'mock_0', audio: { input: { format: { rate: 24000 }, turn_detection: { type: 'server_vad', silence_duration_ms: 500 } } } } });
    expect(created.server_event_seq).toBeUndefined();
    expect((created.session as Record<string, unknown>).capabilities).toBeUndefined();
  });

  it('passes the openai options on: the vLLM-Omni numbering and chunk period, the VAD silence', () => {
    const s = harness({ openai: { vllm: true, silence_ms: 300 }, unit_ms: 40 }).open();
    s.connection.start();
    expect(s.ws.frames[0].event).toMatchObject({ server_event_seq: 1, session: { capabilities: { chunk_period_ms: 40 }, audio: { input: { turn_detection: { silence_duration_ms: 300 } } } } });
  });

  it('append-echo answers each unit at once (no first-packet wait, no generation time), under the names asked for', () => {
    const h = harness({ openai: { names: 'beta' } });
    const s = h.open();
    s.appendAtPace(3);
    h.scheduler.flush();
    expect(s.ws.times('response.audio.delta')).toEqual([0, 80, 160]);
    expect(s.ws.times('response.output_audio.delta')).toEqual([]);
  });

  it('a model profile keeps its latencies: first audio ttfp_ms after the turn began', () => {
    const h = harness({ profile: 'model', model: { ttfp_ms: 200, rtf: 0.5 } });
    const s = h.open();
    s.appendAtPace(3);
    h.scheduler.flush();
    expect(s.ws.times('response.created')).toEqual([0]);
    expect(s.ws.times('response.output_audio.delta')[0]).toBe(200);
  });

  it('ends a turn after silence_ms without input: 500 ms by default, or as given', () => {
    for (const [given, silence_ms] of [
      [undefined, 500],
      [200, 200],
    ] as const) {
      const h = harness(given === undefined ? {} : { openai: { silence_ms: given } });
      const s = h.open();
      s.appendAtPace(4);
      h.scheduler.flush();
      // The last append arrives at 240 ms.
      expect(s.ws.times('input_audio_buffer.speech_stopped')).toEqual([240 + silence_ms]);
    }
  });

  it('append-echo starts a turn every 5 s of input by default, or every model.turn_every_s given', () => {
    const byDefault = harness();
    const a = byDefault.open();
    a.appendAtPace(80);
    byDefault.scheduler.flush();
    // Unit 63 (5,040 ms of input) is the first past 5 s.
    expect(a.ws.times('response.created')).toEqual([0, 63 * 80]);

    const given = harness({ model: { turn_every_s: 2 } });
    const b = given.open();
    b.appendAtPace(30);
    given.scheduler.flush();
    expect(b.ws.times('response.created')).toEqual([0, 25 * 80]);
  });

  it('counts a session completed when its socket closes with 1000, and not with another code', () => {
    const h = harness();
    const clean = h.open('mock_0');
    clean.connection.closed(1000);
    expect(h.completed()).toBe(1);
    const dropped = h.open('mock_1');
    dropped.connection.closed(1006);
    expect(h.completed()).toBe(1);
  });

  it("on close, hands the session's arrivals to the host and stops its timers: no turn ends after", () => {
    const h = harness();
    const s = h.open();
    s.appendAtPace(2);
    h.scheduler.schedule(() => s.connection.closed(1006), 100);
    h.scheduler.flush();
    expect(h.done).toHaveLength(1);
    expect(h.done[0].count).toBe(2);
    expect(s.ws.times('input_audio_buffer.speech_stopped')).toEqual([]);
  });
});
