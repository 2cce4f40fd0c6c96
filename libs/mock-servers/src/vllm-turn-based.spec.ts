import { VirtualTimeScheduler } from 'rxjs';
import type WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog } from './behaviour-log';
import type { MockHost } from './openai-mock-session';
import { VllmMockSession, type VllmMockOptions } from './vllm-mock-session';
import { FakeSocket, type Event } from './fake-socket.spec-helpers';

const OPTIONS: VllmMockOptions = { output_sample_rate: 24000, unit_ms: 80, ttfp_ms: 200, rtf: 0.5, silence_ms: 500, listen_every: 0, config_timeout_ms: 10_000, journal_max_bytes: 8 * 2 ** 20, turn_based: true };

/** A turn-based model's session (Qwen3-Omni) in virtual time. */
function turnSession(o: Partial<VllmMockOptions> = {}) {
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
  const slot = { limit: 2, take: () => true, released: () => undefined, disconnected: () => undefined };
  const s = new VllmMockSession(ws as unknown as WebSocket, host, 'mock_0', { ...OPTIONS, ...o }, slot);
  const send = (event: Record<string, unknown>) => s.onMessage(Buffer.from(JSON.stringify(event)), false, clock.now_s());
  const at = (t_ms: number, fn: () => void) => scheduler.schedule(fn, t_ms);
  /** 80 ms appends, one every 80 ms from `from_ms`: speech (a tone) or silence. */
  const speak = (from_ms: number, loud: boolean[]) => loud.forEach((l, i) => at(from_ms + i * 80, () => send({ type: 'input_audio_buffer.append', audio: pcm(l) })));
  const types = () => ws.frames.map((f) => f.event.type);
  const of = (type: string) => ws.frames.filter((f) => f.event.type === type);
  return { scheduler, session: s, send, at, speak, types, of };
}

function pcm(loud: boolean): string {
  const out = Buffer.alloc(80 * 16 * 2);
  if (loud) for (let i = 0; i < 80 * 16; i++) out.writeInt16LE(Math.round(3277 * Math.sin((2 * Math.PI * 440 * i) / 16000)), i * 2);
  return out.toString('base64');
}

const talk = (turns: number) => Array.from({ length: turns }, () => [...Array<boolean>(10).fill(true), ...Array<boolean>(10).fill(false)]).flat();

describe('VllmMockSession as a turn-based model (--turn-based)', () => {
  it('under server VAD: commits each turn itself when its 500 ms of silence pass, answers it, and counts nothing against a client that behaves', () => {
    const s = turnSession();
    s.send({ type: 'session.update', session: { turn_detection: { type: 'server_vad' }, extra_body: { auto_response: false } } });
    s.speak(0, talk(3));
    s.scheduler.flush();
    expect(s.of('input_audio_buffer.speech_stopped')).toHaveLength(3);
    expect(s.of('input_audio_buffer.committed')).toHaveLength(3);
    // Each commit follows its speech_stopped at once: the turn is committed when the VAD ends it.
    const stops = s.of('input_audio_buffer.speech_stopped').map((f) => f.t_ms);
    expect(s.of('input_audio_buffer.committed').map((f) => f.t_ms)).toEqual(stops);
    // Speech to 800 ms; the 7th silent append (at 1,280 ms) brings 560 ms of silence, past 500.
    expect(stops[0]).toBe(800 + 6 * 80);
    expect(s.of('response.created')).toHaveLength(1);
    // The later turns wait for the first answer's playback acknowledgement (ack-only), as before.
    expect(s.session.blocked_turns).toBeGreaterThan(0);
    expect(s.session.violations).toEqual({});
  });

  it('counts what their benchmark never does: auto_response left on, a commit under server VAD, a close with a turn open', () => {
    const s = turnSession();
    s.send({ type: 'session.update', session: { turn_detection: { type: 'server_vad' }, extra_body: { auto_response: true } } });
    s.speak(0, [true, true, true, true]);
    s.at(400, () => s.send({ type: 'input_audio_buffer.commit' }));
    s.speak(480, [true, true]);
    s.at(700, () => s.send({ type: 'session.close' }));
    s.scheduler.flush();
    expect(s.session.violations).toEqual({ auto_response_under_server_vad: 1, commit_under_server_vad: 1, closed_with_open_turn: 1 });
  });

  it('without server VAD: no speech events, and only the client commits are answered', () => {
    const s = turnSession();
    s.send({ type: 'session.update', session: { turn_detection: null, extra_body: { auto_response: false } } });
    s.speak(0, talk(2));
    s.at(1700, () => s.send({ type: 'input_audio_buffer.commit' }));
    s.scheduler.flush();
    expect(s.types().filter((t) => t.startsWith('input_audio_buffer.speech'))).toEqual([]);
    // The committed turn is answered: its response begins with its first audio, ttfp_ms after the commit.
    expect(s.of('response.created').map((f) => f.t_ms)).toEqual([1900]);
    expect(s.session.violations).toEqual({});
  });
});
