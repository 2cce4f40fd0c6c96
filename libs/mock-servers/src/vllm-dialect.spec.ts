import { VirtualTimeScheduler } from 'rxjs';
import type WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { BehaviourLog } from './behaviour-log';
import type { MockConnection } from './mock-dialect';
import { mockSettings, type MockServerOptions } from './mock-options';
import { MockStatsRecorder } from './mock-stats';
import type { MockHost } from './openai-mock-session';
import { vllmDialect } from './vllm-dialect';
import { FakeSocket, type Event } from './fake-socket.spec-helpers';

/** The vllm-omni dialect on a host in virtual time, its stats the server's recorder. */
function harness(options: Omit<MockServerOptions, 'protocol'> = {}) {
  const o: MockServerOptions = { ...options, protocol: 'openai', openai: { flavor: 'vllm-omni', ...options.openai } };
  const scheduler = new VirtualTimeScheduler();
  const clock = schedulerTimerHost(scheduler);
  const stats = new MockStatsRecorder({ clock, unit_ms: 80, arrival_origin: 'test', vllm: true });
  // Only its loop-lag timer reads time on its own, and it re-arms forever: a virtual flush would never end.
  stats.stop();
  const host: MockHost = {
    clock,
    send: (ws, frame) => (ws as unknown as FakeSocket).frames.push({ t_ms: scheduler.now(), event: JSON.parse(frame) as Event }),
    arrivals: () => stats.arrivals(),
    arrivalsDone: (a) => stats.arrivalsDone(a),
    completed: () => stats.sessionCompleted(),
    behaviourLog: (id) => new BehaviourLog(id),
  };
  const dialect = vllmDialect(mockSettings(o), o, host, stats);
  let next = 0;
  const open = () => {
    const ws = new FakeSocket();
    const connection: MockConnection = dialect.open(ws as unknown as WebSocket, `mock_${next++}`, null);
    connection.start();
    const send = (event: Record<string, unknown>) => connection.session.onMessage(Buffer.from(JSON.stringify(event)), false, clock.now_s());
    const opening = (session: Record<string, unknown> = {}) => send({ type: 'session.update', event_id: 'u1', session });
    return { ws, connection, send, opening };
  };
  const at = (t_ms: number, fn: () => void) => scheduler.schedule(fn, t_ms);
  /** A socket that connects at `t_ms` and opens its session at once (one silent for 10 s is timed out). */
  const openAt = (t_ms: number) => {
    const later = { ws: new FakeSocket() };
    at(t_ms, () => {
      const s = open();
      later.ws = s.ws;
      s.opening();
    });
    return later;
  };
  return { scheduler, dialect, stats, open, at, openAt };
}

/** `ms` of 16 kHz PCM16: a 440 Hz tone at −20 dBFS (speech by vLLM-Omni's RMS rule), or silence. */
function pcm(ms: number, loud: boolean): string {
  const n = 16 * ms;
  const out = Buffer.alloc(n * 2);
  if (loud) for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(3277 * Math.SQRT2 * Math.sin((2 * Math.PI * 440 * i) / 16000)), i * 2);
  return out.toString('base64');
}

describe('vllmDialect', () => {
  it('lets the client speak first: nothing on open, and admission at the opening session.update rather than the upgrade', () => {
    const h = harness({ max_sessions: 1 });
    expect(h.dialect.refuses_upgrade_when_full).toBe(false);
    const s = h.open();
    expect(s.ws.frames).toEqual([]);
    expect(h.stats.counts().accepted).toBe(0);
    s.opening();
    expect(s.ws.types()).toEqual(['session.created', 'session.updated']);
    expect(h.stats.counts().accepted).toBe(1);
  });

  it('refuses an opening past max_sessions with resource_exhausted and a close, logging each decision with the slots held before it', () => {
    const h = harness({ max_sessions: 1 });
    const a = h.open();
    a.opening();
    const b = h.open();
    b.opening();
    expect(b.ws.frames.map((f) => f.event)).toEqual([{ type: 'error', error: { type: 'rate_limit_error', code: 'resource_exhausted', message: 'duplex_session_capacity_exhausted: limit=1' } }]);
    expect(b.ws.closes).toEqual([{ code: 1000, reason: 'resource_exhausted' }]);
    const stats = h.stats.stats();
    expect(stats.admissions.log.map((e) => [e.outcome, e.held])).toEqual([
      ['accepted', 0],
      ['refused', 1],
    ]);
    expect(stats.sessions.refused_full).toBe(1);
  });

  it('lets every session in without max_sessions', () => {
    const h = harness();
    for (let i = 0; i < 5; i++) {
      const s = h.open();
      s.opening();
      expect(s.ws.types()).toEqual(['session.created', 'session.updated']);
    }
    expect(h.stats.counts()).toMatchObject({ accepted: 5, refused: 0 });
  });

  it('frees the slot at once when the session ends with session.close, and a refused session held none', () => {
    const h = harness({ max_sessions: 1 });
    const a = h.open();
    a.opening();
    const refused = h.open();
    refused.opening();
    refused.connection.closed(1000);
    a.send({ type: 'session.close' });
    a.connection.closed(1000);
    const b = h.open();
    b.opening();
    expect(b.ws.types()).toEqual(['session.created', 'session.updated']);
    expect(h.stats.stats().sessions.held_after_disconnect).toBe(0);
  });

  it('holds the slot of a session that disconnected without session.close for the grace, 30 s by default, counted as held', () => {
    const h = harness({ max_sessions: 1 });
    const a = h.open();
    a.opening();
    a.connection.closed(1006);
    expect(h.stats.stats().sessions.held_after_disconnect).toBe(1);
    const early = h.openAt(29_999);
    h.at(30_000, () => expect(h.stats.stats().sessions.held_after_disconnect).toBe(0));
    const late = h.openAt(30_001);
    h.scheduler.flush();
    expect(early.ws.errorCodes()).toEqual(['resource_exhausted']);
    expect(late.ws.types()).toEqual(['session.created', 'session.updated']);
  });

  it('takes the disconnect grace given', () => {
    const h = harness({ max_sessions: 1, openai: { disconnect_grace_ms: 1000 } });
    const a = h.open();
    a.opening();
    a.connection.closed(1006);
    const early = h.openAt(999);
    const late = h.openAt(1001);
    h.scheduler.flush();
    expect(early.ws.errorCodes()).toEqual(['resource_exhausted']);
    expect(late.ws.errorCodes()).toEqual([]);
  });

  it('holds no slot for a socket that closed before it opened a session', () => {
    const h = harness({ max_sessions: 1 });
    h.open().connection.closed(1006);
    expect(h.stats.stats().sessions.held_after_disconnect).toBe(0);
    const b = h.open();
    b.opening();
    expect(b.ws.types()).toEqual(['session.created', 'session.updated']);
  });

  it('cancels the grace timers on shutdown: a held slot is never freed after close()', () => {
    const h = harness({ max_sessions: 1 });
    const a = h.open();
    a.opening();
    a.connection.closed(1006);
    h.dialect.close();
    h.scheduler.flush();
    expect(h.scheduler.now()).toBe(0);
    expect(h.stats.stats().sessions.held_after_disconnect).toBe(1);
  });

  it('waits 10 s for the opening by default, or config_timeout_ms, then errs config_timeout and closes', () => {
    for (const [given, timeout_ms] of [
      [undefined, 10_000],
      [2000, 2000],
    ] as const) {
      const h = harness(given === undefined ? {} : { openai: { config_timeout_ms: given } });
      const s = h.open();
      h.scheduler.flush();
      expect(h.scheduler.now()).toBe(timeout_ms);
      expect(s.ws.errorCodes()).toEqual(['config_timeout']);
      expect(s.ws.closes).toEqual([{ code: 1000, reason: 'config_timeout' }]);
    }
  });

  it('refuses an audio session without a reference voice only with require_ref_audio', () => {
    const strict = harness({ openai: { require_ref_audio: true } });
    const bare = strict.open();
    bare.opening();
    expect(bare.ws.errorCodes()).toEqual(['ref_audio_required']);
    const voiced = strict.open();
    voiced.opening({ extra_body: { ref_audio: 'voice.wav' } });
    expect(voiced.ws.types()).toEqual(['session.created', 'session.updated']);
    const lenient = harness().open();
    lenient.opening();
    expect(lenient.ws.types()).toEqual(['session.created', 'session.updated']);
  });

  it('asks for a resync past journal_max_bytes unacknowledged, and not under the default 8 MiB', () => {
    const small = harness({ openai: { journal_max_bytes: 100 } }).open();
    small.opening();
    expect(small.ws.types()).toEqual(['session.created', 'session.updated', 'session.resync_required']);
    const big = harness().open();
    big.opening();
    for (let i = 0; i < 100; i++) big.send({ type: 'session.heartbeat' });
    expect(big.ws.types()).not.toContain('session.resync_required');
  });

  it("ends the user's turn after silence_ms of input, answers after the model's ttfp_ms, and reports the turns that waited for a playback ack when the socket closes", () => {
    const h = harness({ profile: 'model', model: { ttfp_ms: 300, rtf: 0.5 }, openai: { silence_ms: 160 } });
    const s = h.open();
    s.opening();
    const speakThenPause = (from_ms: number) => {
      h.at(from_ms, () => s.send({ type: 'input_audio_buffer.append', audio: pcm(80, true) }));
      h.at(from_ms + 80, () => s.send({ type: 'input_audio_buffer.append', audio: pcm(80, false) }));
      h.at(from_ms + 160, () => s.send({ type: 'input_audio_buffer.append', audio: pcm(80, false) }));
    };
    speakThenPause(0);
    // The first response is never acknowledged as played: the second turn waits.
    speakThenPause(1000);
    h.scheduler.flush();
    const speech_stopped = s.ws.frames.filter((f) => f.event.type === 'input_audio_buffer.speech_stopped').map((f) => f.t_ms);
    expect(speech_stopped).toEqual([160, 1160]);
    // The response begins with its first audio, the model's ttfp_ms after the turn.
    expect(s.ws.frames.filter((f) => f.event.type === 'response.created').map((f) => f.t_ms)).toEqual([160 + 300]);
    expect(s.ws.frames.find((f) => f.event.type === 'response.output_audio.delta')?.t_ms).toBe(160 + 300);
    expect(h.stats.stats().sessions.blocked_turns).toBe(0);
    s.connection.closed(1006);
    expect(h.stats.stats().sessions.blocked_turns).toBe(1);
  });

  it('keeps listening every listen_every-th turn', () => {
    const h = harness({ openai: { listen_every: 2, silence_ms: 80 } });
    const s = h.open();
    s.opening();
    for (let turn = 0; turn < 2; turn++) {
      s.send({ type: 'input_audio_buffer.append', audio: pcm(80, true) });
      s.send({ type: 'input_audio_buffer.append', audio: pcm(80, false) });
      h.scheduler.flush();
      // Acknowledge what was played, so the next turn need not wait.
      const last = s.ws.frames.filter((f) => f.event.type === 'response.created').pop()?.event.response_id as string;
      s.send({ type: 'playback.ack', response_id: last, played_ms: 80 });
    }
    expect(s.ws.types().filter((t) => t === 'response.speak' || t === 'response.listen')).toEqual(['response.speak', 'response.listen']);
  });
});
