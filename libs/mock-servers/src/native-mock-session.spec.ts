import { VirtualTimeScheduler } from 'rxjs';
import type WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { nativeAppend, nativeGrant, nativeInputEnd, nativeSessionClose, nativeSessionUpdate, type NativeLimits } from '@duplex-bench/protocol';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog } from './behaviour-log';
import type { MockFault } from './mock-fault';
import type { ModelOptions } from './model-session';
import { NativeMockSession } from './native-mock-session';
import type { MockHost } from './openai-mock-session';

type Event = Record<string, unknown> & { type: string };

/** The server side of a socket, as a session uses it: what went out, how it was ended, and whether it was paused. */
class FakeSocket {
  readonly OPEN = 1;
  readyState = 1;
  readonly frames: Array<{ t_ms: number; text: string; event: Event | null }> = [];
  readonly closes: Array<{ code: number; reason: string }> = [];
  terminated_ms: number | null = null;
  paused = false;
  /** The TCP socket under the WebSocket, as `linger` reaches for it. */
  readonly _socket = { pause: () => (this.paused = true) };
  constructor(private readonly now: () => number) {}
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
    this.readyState = 2;
  }
  terminate(): void {
    this.terminated_ms = this.now();
    this.readyState = 3;
  }
  get events(): Event[] {
    return this.frames.map((f) => f.event ?? { type: '(not JSON)' });
  }
  types(): string[] {
    return this.events.map((e) => e.type);
  }
  of(type: string): Event[] {
    return this.events.filter((e) => e.type === type);
  }
}

const LIMITS: NativeLimits = { max_input_bytes: 1e9, max_output_bytes: 1e9, max_output_events: 1e6, max_history_chars: 65536, cleanup_timeout_s: 30 };
/** One 80 ms unit of 22,050 Hz output silence. */
const PAYLOAD = Buffer.alloc(3528).toString('base64');

/** One native session on a host in virtual time: 80 ms units, append-echo unless a model is given. */
function session(o: { fault?: MockFault; model?: ModelOptions; replies?: number; limits?: NativeLimits } = {}) {
  const scheduler = new VirtualTimeScheduler();
  const clock = schedulerTimerHost(scheduler);
  const arrivals = new ArrivalOffsets();
  let completed = 0;
  let arrivalsDone = 0;
  const ws = new FakeSocket(() => scheduler.now());
  const host: MockHost = {
    clock,
    send: (w, text) => {
      let event: Event | null = null;
      try {
        event = JSON.parse(text) as Event;
      } catch {
        event = null;
      }
      (w as unknown as FakeSocket).frames.push({ t_ms: scheduler.now(), text, event });
    },
    arrivals: () => arrivals,
    arrivalsDone: (a) => (arrivalsDone += a === arrivals ? 1 : 0),
    completed: () => completed++,
    behaviourLog: (id) => new BehaviourLog(id),
  };
  const options = { grant: nativeGrant(22050, 80, o.limits ?? LIMITS), replies_per_unit: o.replies ?? 3, model: o.model ?? null, behaviour: null };
  const s = new NativeMockSession(ws as unknown as WebSocket, host, 'mock_0', options, PAYLOAD, o.fault ?? null);
  const send = (frame: string | Buffer) => s.onMessage(Buffer.from(frame), false, clock.now_s());
  /** An append of `ms` of 16 kHz input, with the client's seq and media time. */
  const append = (seq: number, ms = 80, t_start_ms = seq * 80) => send(nativeAppend(`a${seq}`, seq, t_start_ms, Buffer.from(Buffer.alloc(ms * 32).toString('base64'))));
  return { scheduler, ws, session: s, send, append, arrivals, completed: () => completed, arrivalsDone: () => arrivalsDone };
}

const mediaTime = (e: Event) => (e.sglang as { media_time: { t_start_ms: number; duration_ms: number } }).media_time;

describe('NativeMockSession', () => {
  it('says session.created on start and grants on session.update, echoing the client event id', () => {
    const s = session();
    s.session.start();
    s.send(nativeSessionUpdate('u1'));
    expect(s.ws.events[0]).toEqual({ type: 'session.created', event_id: 'mock_0_e0', session: { id: 'mock_0', sglang: { granted: null } } });
    expect(s.ws.events[1]).toMatchObject({ type: 'session.updated', event_id: 'mock_0_e1', client_event_id: 'u1', session: { id: 'mock_0', sglang: { granted: { native_unit_ms: 80 } } } });
  });

  it('acknowledges each append with its seq and the input accepted so far, measured from the base64 length', () => {
    const s = session();
    s.append(0, 80);
    s.append(1, 30);
    // No sglang numbers: the seq is the append count, and nothing is decoded.
    s.send('{"type":"input_audio_buffer.append","event_id":"a2","audio":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}');
    expect(s.ws.of('sglang.input_audio.accepted').map((e) => [e.client_event_id, e.seq, e.accepted_end_ms])).toEqual([
      ['a0', 0, 80],
      ['a1', 1, 110],
      ['a2', 2, 110 + 32 / 32],
    ]);
  });

  it('append-echo: opens one response with the first append and answers every whole unit at once, whatever the append size', () => {
    const s = session({ replies: 2 });
    for (let i = 0; i < 4; i++) s.append(i, 40, i * 40);
    expect(s.ws.of('response.created')).toHaveLength(1);
    expect(s.ws.of('sglang.unit.done').map(mediaTime)).toEqual([
      { t_start_ms: 0, duration_ms: 80 },
      { t_start_ms: 80, duration_ms: 80 },
    ]);
    // replies 2: an audio delta and the unit's done, no transcript.
    expect(s.ws.of('response.output_audio_transcript.delta')).toEqual([]);
    expect(s.ws.of('response.output_audio.delta').map((e) => e.delta)).toEqual([PAYLOAD, PAYLOAD]);
  });

  it("records each append's arrival against the media time the client stated, or the input accepted before it", () => {
    const s = session();
    s.scheduler.schedule(() => s.append(0), 5);
    s.scheduler.schedule(() => s.append(1), 100);
    s.scheduler.schedule(() => s.send('{"type":"input_audio_buffer.append","event_id":"a2","audio":""}'), 170);
    s.scheduler.flush();
    const deviations: number[] = [];
    s.arrivals.forEachDeviation((d) => deviations.push(Math.round(d * 1000) / 1000));
    // Offsets 5, 100 − 80 = 20 and (no t_start_ms) 170 − 160 = 10: against the smallest, 5.
    expect(deviations).toEqual([0, 15, 5]);
  });

  it('refuses an unknown event type and a binary frame with non-fatal errors, and goes on', () => {
    const s = session();
    s.send('{"type":"conversation.item.create","event_id":"x1"}');
    s.session.onMessage(Buffer.from([1, 2, 3]), true, 0);
    s.append(0);
    expect(s.ws.of('error').map((e) => [(e.error as { code: string }).code, (e.error as { event_id?: string }).event_id, (e.sglang as { fatal: boolean }).fatal])).toEqual([
      ['unknown_event', 'x1', false],
      ['binary_frame', undefined, false],
    ]);
    expect(s.ws.of('sglang.unit.done')).toHaveLength(1);
  });

  it('on session.close ends the open response cancelled, says session.closed, counts the session completed, then ignores the client', () => {
    const s = session();
    s.append(0);
    s.send(nativeSessionClose('c1'));
    expect(s.ws.types().slice(-3)).toEqual(['response.output_audio.done', 'response.done', 'session.closed']);
    expect(s.ws.of('response.done')[0]).toMatchObject({ response: { status: 'cancelled', status_details: { reason: 'client_closed' } } });
    expect(s.completed()).toBe(1);
    const sent = s.ws.frames.length;
    s.append(1);
    s.send(nativeInputEnd('e1'));
    expect(s.ws.frames).toHaveLength(sent);
  });

  it('drops a client that does not close 5 s after session.closed, and not one that did', () => {
    const lingering = session();
    lingering.scheduler.schedule(() => lingering.send(nativeSessionClose('c1')), 1000);
    lingering.scheduler.flush();
    expect(lingering.ws.terminated_ms).toBe(6000);

    const polite = session();
    polite.scheduler.schedule(() => polite.send(nativeSessionClose('c1')), 1000);
    // The socket closed: the host disposes of the session.
    polite.scheduler.schedule(() => polite.session.dispose(), 1200);
    polite.scheduler.flush();
    expect(polite.ws.terminated_ms).toBeNull();
    expect(polite.arrivalsDone()).toBe(1);
  });

  it('a model profile: answers on its own clock, and a session.close cancels the queued output', () => {
    const s = session({ model: { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: Infinity } });
    s.scheduler.schedule(() => {
      s.append(0);
      s.append(1);
    }, 0);
    s.scheduler.schedule(() => s.send(nativeSessionClose('c1')), 220);
    s.scheduler.flush();
    expect(s.ws.frames.filter((f) => f.event?.type === 'response.output_audio.delta').map((f) => f.t_ms)).toEqual([200]);
    expect(s.ws.of('response.done')[0]).toMatchObject({ response: { status: 'cancelled' } });
  });

  it('a model profile that falls behind refuses appends past its input budget as a non-fatal buffer_overflow, as sglang-omni does', () => {
    // rtf 2: each 80 ms unit takes 160 ms, so the input held unprocessed grows by 80 ms every 160 ms.
    const limits = { ...LIMITS, max_input_bytes: 800 * 32 };
    const s = session({ model: { ttfp_ms: 0, rtf: 2, burst_units: 1, turn_every_s: Infinity }, limits });
    for (let seq = 0; seq < 40; seq++) s.scheduler.schedule(() => s.append(seq), seq * 80);
    s.scheduler.flush();
    const refused = s.ws.of('error');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatchObject({ error: { code: 'buffer_overflow', message: 'input budget exhausted; retry this seq' }, sglang: { fatal: false } });
    const accepted = s.ws.of('sglang.input_audio.accepted');
    expect(accepted.length + refused.length).toBe(40);
    // The first refusal comes once 800 ms are held: not before 800 ms of input went in.
    expect(accepted.length).toBeGreaterThanOrEqual(10);
    // Within the budget nothing is refused.
    const roomy = session({ model: { ttfp_ms: 0, rtf: 2, burst_units: 1, turn_every_s: Infinity } });
    for (let seq = 0; seq < 40; seq++) roomy.scheduler.schedule(() => roomy.append(seq), seq * 80);
    roomy.scheduler.flush();
    expect(roomy.ws.of('error')).toEqual([]);
  });

  it('a model profile: input end pads the tail to a whole unit of output and drains once the response is done', () => {
    const s = session({ model: { ttfp_ms: 100, rtf: 0.5, burst_units: 1, turn_every_s: Infinity } });
    s.scheduler.schedule(() => {
      s.append(0);
      s.append(1, 30);
      s.send(nativeInputEnd('e1'));
    }, 0);
    s.scheduler.flush();
    expect(s.ws.of('sglang.unit.done').map(mediaTime)).toEqual([
      { t_start_ms: 0, duration_ms: 80 },
      { t_start_ms: 80, duration_ms: 30 },
    ]);
    expect(s.ws.of('response.output_audio.delta').map((e) => e.delta)).toEqual([PAYLOAD, PAYLOAD]);
    expect(s.ws.types().slice(-2)).toEqual(['response.done', 'sglang.input_audio.drained']);
    expect(s.ws.of('sglang.input_audio.drained')[0]).toMatchObject({ client_event_id: 'e1', accepted_end_ms: 110, consumed_ms: 110, padding_ms: 50 });
    expect(s.ws.frames.at(-1)?.t_ms).toBe(140);
  });

  describe('faults', () => {
    it('linger: after session.closed, neither closes nor reads (the socket paused), and is never dropped', () => {
      const s = session({ fault: { after_appends: 5, action: 'linger' } });
      s.send(nativeSessionClose('c1'));
      s.scheduler.flush();
      expect(s.ws.paused).toBe(true);
      expect(s.ws.terminated_ms).toBeNull();
      expect(s.ws.closes).toEqual([]);
    });

    it('padded_tail: the last unit reports a whole unit, and drained counts the padding as consumed', () => {
      const s = session({ fault: { after_appends: 1, action: 'padded_tail' } });
      s.append(0);
      s.append(1, 30);
      s.send(nativeInputEnd('e1'));
      expect(s.ws.of('sglang.unit.done').map(mediaTime).at(-1)).toEqual({ t_start_ms: 80, duration_ms: 80 });
      expect(s.ws.of('sglang.input_audio.drained')[0]).toMatchObject({ accepted_end_ms: 110, consumed_ms: 160, padding_ms: 50 });
    });

    it('drained_first: drained comes before the response is done', () => {
      const s = session({ fault: { after_appends: 1, action: 'drained_first' } });
      s.append(0);
      s.send(nativeInputEnd('e1'));
      const types = s.ws.types();
      expect(types.slice(-3)).toEqual(['sglang.input_audio.drained', 'response.output_audio.done', 'response.done']);
      const clean = session();
      clean.append(0);
      clean.send(nativeInputEnd('e1'));
      expect(clean.ws.types().at(-1)).toBe('sglang.input_audio.drained');
    });

    it('unknown_event: one event of an undefined type at the fault append, which is still answered, and none after', () => {
      const s = session({ fault: { after_appends: 2, action: 'unknown_event' } });
      for (let i = 0; i < 4; i++) s.append(i);
      expect(s.ws.of('vendor.keepalive')).toHaveLength(1);
      const types = s.ws.types();
      expect(types.indexOf('vendor.keepalive')).toBeGreaterThan(types.indexOf('sglang.unit.done'));
      expect(s.ws.of('sglang.unit.done')).toHaveLength(4);
    });

    it('stop_answering: nothing more goes out, queued model output included, and the socket stays open', () => {
      const s = session({ fault: { after_appends: 2, action: 'stop_answering' }, model: { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: Infinity } });
      s.scheduler.schedule(() => s.append(0), 0);
      s.scheduler.schedule(() => s.append(1), 80);
      s.scheduler.schedule(() => s.send(nativeSessionClose('c1')), 100);
      s.scheduler.flush();
      expect(s.ws.types()).toEqual(['sglang.input_audio.accepted', 'response.created']);
      expect([s.ws.closes, s.ws.terminated_ms]).toEqual([[], null]);
      // No model timer was left to fire: the last thing that happened was the ignored session.close.
      expect(s.scheduler.now()).toBe(100);
    });

    it('fatal_error: a fatal error naming the append, session.closed for an error, a 1011 close, and no queued model output after', () => {
      const s = session({ fault: { after_appends: 2, action: 'fatal_error' }, model: { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: Infinity } });
      s.scheduler.schedule(() => s.append(0), 0);
      s.scheduler.schedule(() => s.append(1), 80);
      s.scheduler.flush();
      expect(s.ws.types()).toEqual(['sglang.input_audio.accepted', 'response.created', 'error', 'session.closed']);
      expect(s.ws.of('error')[0]).toMatchObject({ error: { type: 'server_error', code: 'injected_fault', event_id: 'a1' }, sglang: { fatal: true } });
      expect(s.ws.of('session.closed')[0]).toMatchObject({ reason: 'error' });
      expect(s.ws.of('session.closed')[0].client_event_id).toBeUndefined();
      expect(s.ws.closes).toEqual([{ code: 1011, reason: 'injected fault' }]);
    });

    it('non_finite: a receipt whose number JSON cannot hold, instead of the answer', () => {
      const s = session({ fault: { after_appends: 1, action: 'non_finite' } });
      s.append(0);
      expect(s.ws.frames).toHaveLength(1);
      expect(s.ws.frames[0].text).toContain('"accepted_end_ms":1e999');
      expect(s.ws.frames[0].event?.accepted_end_ms).toBe(Infinity);
    });
  });
});
