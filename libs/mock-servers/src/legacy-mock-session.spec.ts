import { VirtualTimeScheduler } from 'rxjs';
import type WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog } from './behaviour-log';
import { LegacyMockSession, type LegacyMockOptions } from './legacy-mock-session';
import { mockSettings } from './mock-options';
import type { MockFault } from './mock-fault';
import type { MockHost } from './openai-mock-session';
import { FakeSocket, type Event } from './fake-socket.spec-helpers';

const OPTIONS: LegacyMockOptions = {
  input_sample_rate: 16000,
  output_sample_rate: 24000,
  delta_ms: 80,
  model: { ttfp_ms: 200, rtf: 0.5, burst_units: 4, turn_every_s: Infinity },
  leading: null,
  smart_turn: true,
};

/** One legacy session in virtual time; its frames as they went out. */
function legacySession(o: Partial<LegacyMockOptions> = {}, fault: MockFault | null = null) {
  const scheduler = new VirtualTimeScheduler();
  const clock = schedulerTimerHost(scheduler);
  const ws = new FakeSocket();
  const host: MockHost = {
    clock,
    send: (_w, frame) => ws.frames.push({ t_ms: scheduler.now(), event: JSON.parse(frame) as Event }),
    arrivals: () => new ArrivalOffsets(),
    arrivalsDone: () => undefined,
    completed: () => undefined,
    behaviourLog: (id) => new BehaviourLog(id),
  };
  const s = new LegacyMockSession(ws as unknown as WebSocket, host, 'mock_0', { ...OPTIONS, ...o }, Buffer.alloc(3840).toString('base64'), fault);
  s.start();
  const send = (event: Record<string, unknown>) => s.onMessage(Buffer.from(JSON.stringify(event)), false, clock.now_s());
  const at = (t_ms: number, fn: () => void) => scheduler.schedule(fn, t_ms);
  /** 80 ms appends, one every 80 ms from `from_ms`: speech (a tone) or silence. */
  const speak = (from_ms: number, loud: boolean[]) => loud.forEach((l, i) => at(from_ms + i * 80, () => send({ type: 'input_audio_buffer.append', event_id: `a${i}`, audio: pcm(l), sglang: { seq: i, t_start_ms: i * 80 } })));
  const of = (type: string) => ws.frames.filter((f) => f.event.type === type);
  const configure = (turn_detection: Record<string, unknown> = { type: 'server_vad' }) => send({ type: 'session.update', event_id: 'u0', session: { modalities: ['text', 'audio'], turn_detection } });
  return { scheduler, ws, send, at, speak, of, configure };
}

function pcm(loud: boolean): string {
  const out = Buffer.alloc(80 * 16 * 2);
  if (loud) for (let i = 0; i < 80 * 16; i++) out.writeInt16LE(Math.round(3277 * Math.sin((2 * Math.PI * 440 * i) / 16000)), i * 2);
  return out.toString('base64');
}

const loud = (n: number) => Array<boolean>(n).fill(true);
const quiet = (n: number) => Array<boolean>(n).fill(false);

describe('LegacyMockSession (sglang-omni LegacyRealtimeFacade, --profile qwen3-omni-half-duplex)', () => {
  it('opens with a beta session object and answers every session.update, a no-op one unchanged, echoing the turn detection it runs', () => {
    const s = legacySession();
    s.configure({ type: 'server_vad', silence_duration_ms: 500 });
    s.send({ type: 'session.update', event_id: 'probe', session: {} });
    const [created] = s.of('session.created');
    expect(created.event.session).toMatchObject({ id: 'sess_mock_0', object: 'realtime.session', modalities: ['text'], input_audio_format: 'pcm16', output_audio_format: 'pcm16' });
    const updated = s.of('session.updated').map((f) => f.event.session);
    expect(updated).toHaveLength(2);
    expect(updated[0]).toMatchObject({ id: 'sess_mock_0', modalities: ['text', 'audio'], turn_detection: { type: 'server_vad', silence_duration_ms: 500 } });
    expect(updated[1]).toEqual(updated[0]);
    // Every event has its own id.
    const ids = s.ws.frames.map((f) => f.event.event_id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('runs semantic_vad with a turn model (eagerness named), and echoes server_vad without one, as the facade substitutes it', () => {
    const s = legacySession();
    s.configure({ type: 'semantic_vad' });
    expect(s.of('session.updated')[0].event.session).toMatchObject({ turn_detection: { type: 'semantic_vad', eagerness: 'medium' } });
    const without = legacySession({ smart_turn: false });
    without.configure({ type: 'semantic_vad', eagerness: 'high' });
    expect(without.of('session.updated')[0].event.session).toMatchObject({ turn_detection: { type: 'server_vad', eagerness: 'high' } });
  });

  it('finds a turn by energy, commits it when 500 ms of silence pass, and answers it at 24 kHz in the beta names, audio at content_index 1', () => {
    const s = legacySession();
    s.configure();
    // 800 ms of speech, then silence.
    s.speak(0, [...loud(10), ...quiet(10)]);
    s.scheduler.flush();
    const types = s.ws.frames.map((f) => f.event.type).filter((t) => t !== 'session.created' && t !== 'session.updated');
    expect(types).toEqual([
      'input_audio_buffer.speech_started',
      'input_audio_buffer.speech_stopped',
      'input_audio_buffer.committed',
      'response.created',
      ...Array<string>(10).fill('response.audio.delta').flatMap((t, i) => (i === 0 ? [t, 'response.text.delta'] : [t])),
      'response.audio.done',
      'response.text.done',
      'response.done',
      'conversation.item.input_audio_transcription.delta',
      'conversation.item.input_audio_transcription.completed',
    ]);
    // Speech from 0 (the prefix padding cannot go before it), to the end of the last voiced frame at 800 ms; cut once 500 ms of silence passed.
    expect(s.of('input_audio_buffer.speech_started')[0].event).toMatchObject({ audio_start_ms: 0 });
    expect(s.of('input_audio_buffer.speech_stopped')[0].event).toMatchObject({ audio_end_ms: 800 });
    const item = s.of('input_audio_buffer.speech_started')[0].event.item_id;
    expect(s.of('input_audio_buffer.committed')[0].event).toMatchObject({ item_id: item });
    const delta = s.of('response.audio.delta')[0].event;
    expect(delta).toMatchObject({ output_index: 0, content_index: 1 });
    expect(Buffer.from(delta.delta as string, 'base64')).toHaveLength(3840);
    // First audio 200 ms after response.created; 80 ms of audio every 40 ms (rtf 0.5).
    const created_ms = s.of('response.created')[0].t_ms;
    expect(s.ws.times('response.audio.delta')).toEqual(Array.from({ length: 10 }, (_, i) => created_ms + 200 + i * 40));
    expect(s.of('response.done')[0].event.response).toMatchObject({ status: 'completed', status_details: { reason: 'stop' }, output: [{ type: 'message', role: 'assistant', content: [{ type: 'text' }, { type: 'audio' }] }] });
  });

  it('cuts an answer the user speaks over: speech_started, output_audio_buffer.cleared, then response.done cancelled by turn_detected', () => {
    const s = legacySession();
    s.configure();
    // A turn, then speech again 400 ms into its answer's audio.
    s.speak(0, [...loud(10), ...quiet(10), ...loud(10), ...quiet(10)]);
    s.scheduler.flush();
    const tail = s.ws.frames.map((f) => f.event.type);
    const second = tail.lastIndexOf('input_audio_buffer.speech_started');
    expect(tail.slice(second, second + 3)).toEqual(['input_audio_buffer.speech_started', 'output_audio_buffer.cleared', 'response.done']);
    const done = s.of('response.done').map((f) => f.event.response as Record<string, unknown>);
    expect(done[0]).toMatchObject({ id: 'resp_0', status: 'cancelled', status_details: { reason: 'turn_detected' } });
    expect(s.of('output_audio_buffer.cleared')[0].event).toMatchObject({ response_id: 'resp_0', item_id: 'item_resp_0' });
    // The second turn is answered whole.
    expect(done[1]).toMatchObject({ id: 'resp_1', status: 'completed' });
  });

  it('lets the answer play when the session asks interrupt_response: false', () => {
    const s = legacySession();
    s.configure({ type: 'server_vad', interrupt_response: false });
    s.speak(0, [...loud(10), ...quiet(10), ...loud(10), ...quiet(10)]);
    s.scheduler.flush();
    expect(s.of('output_audio_buffer.cleared')).toEqual([]);
    expect(s.of('response.done').map((f) => (f.event.response as { status: string }).status)).toEqual(['completed', 'completed']);
  });

  it('refuses what the facade does not take with a non-fatal error, and an audio session it cannot serve', () => {
    const s = legacySession();
    s.send({ type: 'sglang.input_audio.end', event_id: 'e1' });
    s.send({ type: 'session.update', event_id: 'u1', session: { modalities: ['audio'] } });
    expect(s.ws.errorCodes()).toEqual(['not_supported', 'unsupported_modality']);
    expect(s.of('error')[0].event).toMatchObject({ sglang: { fatal: false }, error: { type: 'invalid_request_error', event_id: 'e1' } });
    expect(s.of('session.updated')).toEqual([]);
  });

  it('is what startMockServer serves for the profile: 16 kHz in, 24 kHz out, 20 ms units, 80 ms deltas', () => {
    const settings = mockSettings({ profile: 'qwen3-omni-half-duplex' });
    expect(settings).toMatchObject({ input_sample_rate: 16000, output_sample_rate: 24000, unit_ms: 20, model: { burst_units: 4 } });
    expect(Buffer.from(settings.output_payload, 'base64')).toHaveLength(3840);
    expect(() => mockSettings({ profile: 'qwen3-omni-half-duplex', protocol: 'openai' })).toThrow(/legacy protocol/);
  });

  it('non_finite: from the fault on, each append is answered by a speech start whose audio_start_ms JSON cannot hold (as the openai mock does)', () => {
    const m = legacySession({}, { action: 'non_finite', after_appends: 2 });
    m.configure();
    m.speak(0, [false, false, false, false]);
    m.scheduler.flush();
    const starts = m.of('input_audio_buffer.speech_started');
    // The fault counts the append in hand: from the second (80 ms) on.
    expect(starts.map((s) => [s.t_ms, s.event.audio_start_ms])).toEqual([
      [80, Infinity],
      [160, Infinity],
      [240, Infinity],
    ]);
  });
});

