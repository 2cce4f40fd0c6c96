import { VirtualTimeScheduler } from 'rxjs';
import WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { nativeAppend, nativeGrant, nativeSessionClose, nativeSessionUpdate, type NativeLimits } from '@duplex-bench/protocol';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog } from './behaviour-log';
import { injectFault, mockFaultsOf, OVERSIZED_FRAME_BYTES, UNKNOWN_EVENT_FLOOD, type FaultTarget, type MockFault } from './mock-fault';
import { NativeMockSession } from './native-mock-session';
import { OpenAIMockSession, type MockHost } from './openai-mock-session';
import { startFaultyMock } from './testing';
import { VllmMockSession, type VllmMockOptions, type VllmSlot } from './vllm-mock-session';

/** The server side of a socket: text frames as sent (JSON or not), binary frames, closes, and whether it was paused. */
class Socket {
  readonly OPEN = 1;
  readyState = 1;
  readonly texts: string[] = [];
  readonly binaries: Buffer[] = [];
  readonly closes: Array<{ code: number; reason: string }> = [];
  terminated = false;
  paused = false;
  readonly _socket = { pause: () => (this.paused = true) };
  send(data: Buffer): void {
    this.binaries.push(data);
  }
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
  }
  terminate(): void {
    this.terminated = true;
  }
  /** Each text frame's type, `(not JSON)` where it does not parse. */
  types(): string[] {
    return this.texts.map((t) => {
      try {
        return (JSON.parse(t) as { type: string }).type;
      } catch {
        return '(not JSON)';
      }
    });
  }
  parsed(): Array<Record<string, unknown>> {
    return this.texts.flatMap((t) => {
      try {
        return [JSON.parse(t) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }
}

function host(scheduler: VirtualTimeScheduler): MockHost {
  return {
    clock: schedulerTimerHost(scheduler),
    send: (w, frame) => (w as unknown as Socket).texts.push(frame),
    arrivals: () => new ArrivalOffsets(),
    arrivalsDone: () => undefined,
    completed: () => undefined,
    behaviourLog: (id) => new BehaviourLog(id),
  };
}

describe('injectFault (the faults every dialect shares)', () => {
  function target() {
    const ws = new Socket();
    const calls: string[] = [];
    const t: FaultTarget = {
      ws: ws as unknown as WebSocket,
      raw: (frame) => ws.texts.push(frame),
      malformed: '{"type":"x","delta":',
      unknown: () => '{"type":"vendor.keepalive"}',
      fatal: () => calls.push('fatal'),
      silence: () => calls.push('silence'),
    };
    return { ws, calls, t };
  }
  const fault = (action: MockFault['action']): MockFault => ({ action, after_appends: 1 });

  it('binary_frame: one binary frame on the first faulty append, and the append is answered', () => {
    const { ws, t } = target();
    expect(injectFault(fault('binary_frame'), t, true)).toBe('answer');
    expect(injectFault(fault('binary_frame'), t, false)).toBe('answer');
    expect(ws.binaries).toHaveLength(1);
  });

  it('oversized_frame: one JSON frame past 8 MiB, then silence', () => {
    const { ws, calls, t } = target();
    expect(injectFault(fault('oversized_frame'), t, true)).toBe('skip');
    expect(ws.texts).toHaveLength(1);
    expect(ws.texts[0].length).toBe(OVERSIZED_FRAME_BYTES);
    expect(OVERSIZED_FRAME_BYTES).toBeGreaterThan(8 * 2 ** 20);
    expect(ws.types()).toEqual(['vendor.padding']);
    expect(calls).toEqual(['silence']);
  });

  it('unknown_event_flood: 20,000 unknown events once, and the append is answered', () => {
    const { ws, t } = target();
    expect(injectFault(fault('unknown_event_flood'), t, true)).toBe('answer');
    expect(injectFault(fault('unknown_event_flood'), t, false)).toBe('answer');
    expect(ws.texts).toHaveLength(UNKNOWN_EVENT_FLOOD);
  });

  it('stop_reading: the socket is paused and the session silenced, once; nothing is answered', () => {
    const { ws, calls, t } = target();
    expect(injectFault(fault('stop_reading'), t, true)).toBe('skip');
    expect(injectFault(fault('stop_reading'), t, false)).toBe('skip');
    expect([ws.paused, calls, ws.closes, ws.terminated]).toEqual([true, ['silence'], [], false]);
  });

  it("fatal_error: the dialect's fatal error, then a 1011 close", () => {
    const { ws, calls, t } = target();
    expect(injectFault(fault('fatal_error'), t, true)).toBe('skip');
    expect([calls, ws.closes]).toEqual([['fatal'], [{ code: 1011, reason: 'injected fault' }]]);
  });

  it('non_finite is left to a dialect without the hook; refuse_admission is the host’s', () => {
    const { t } = target();
    expect(injectFault(fault('non_finite'), t, true)).toBe('dialect');
    expect(injectFault(fault('refuse_admission'), t, true)).toBe('answer');
    expect(injectFault(fault('duplicate_seq'), t, true)).toBe('dialect');
  });

  it('lists what each dialect takes: sequence faults only where the dialect numbers events, no_session_closed where it has session.closed', () => {
    expect(mockFaultsOf('native')).toEqual(expect.arrayContaining(['duplicate_seq', 'no_session_closed', 'refuse_admission', 'oversized_frame']));
    expect(mockFaultsOf('openai')).not.toContain('duplicate_seq');
    expect(mockFaultsOf('openai')).not.toContain('no_session_closed');
    expect(mockFaultsOf('openai', true)).toContain('duplicate_seq');
    expect(mockFaultsOf('vllm-omni')).toEqual(expect.arrayContaining(['duplicate_seq', 'no_session_closed', 'non_finite']));
    // The legacy protocol has no session.close: nothing to leave unanswered.
    expect(mockFaultsOf('legacy')).toContain('non_finite');
    expect(mockFaultsOf('legacy')).not.toContain('no_session_closed');
  });
});

describe('MockFault on the native dialect: its own hooks', () => {
  const LIMITS: NativeLimits = { max_input_bytes: 1e9, max_output_bytes: 1e9, max_output_events: 1e6, max_history_chars: 65536, cleanup_timeout_s: 30 };
  function native(fault: MockFault) {
    const scheduler = new VirtualTimeScheduler();
    const ws = new Socket();
    const s = new NativeMockSession(ws as unknown as WebSocket, host(scheduler), 'mock_0', { grant: nativeGrant(22050, 80, LIMITS), replies_per_unit: 2, model: null, behaviour: null }, Buffer.alloc(3528).toString('base64'), fault);
    const send = (frame: string | Buffer) => s.onMessage(Buffer.from(frame), false, scheduler.now() / 1000);
    const append = (seq: number) => send(nativeAppend(`a${seq}`, seq, seq * 80, Buffer.from(Buffer.alloc(80 * 32).toString('base64'))));
    send(nativeSessionUpdate('u1'));
    return { ws, send, append, scheduler };
  }
  const receipts = (ws: Socket) => ws.parsed().filter((e) => e.type === 'sglang.input_audio.accepted').map((e) => e.seq);

  it('duplicate_seq: the receipt of the faulty append comes twice, and the session goes on', () => {
    const s = native({ action: 'duplicate_seq', after_appends: 2 });
    for (let i = 0; i < 3; i++) s.append(i);
    expect(receipts(s.ws)).toEqual([0, 1, 1, 2]);
  });

  it('no_session_closed: session.close is answered with neither session.closed nor a close, and nothing ends the socket', () => {
    const s = native({ action: 'no_session_closed', after_appends: 1 });
    s.append(0);
    s.send(nativeSessionClose('c1'));
    s.scheduler.flush();
    expect(s.ws.types()).not.toContain('session.closed');
    expect([s.ws.closes, s.ws.terminated]).toEqual([[], false]);
  });

  it('binary_frame goes through the shared code: one binary frame, the append answered', () => {
    const s = native({ action: 'binary_frame', after_appends: 1 });
    s.append(0);
    expect(s.ws.binaries).toHaveLength(1);
    expect(receipts(s.ws)).toEqual([0]);
  });
});

describe('MockFault on the openai dialect: its own hooks', () => {
  function openai(fault: MockFault, vllm = true) {
    const scheduler = new VirtualTimeScheduler();
    const ws = new Socket();
    const options = { names: 'ga' as const, vllm, input_sample_rate: 24000, output_sample_rate: 24000, unit_ms: 80, silence_ms: 500, model: { ttfp_ms: 0, rtf: 0, burst_units: 1, turn_every_s: 5 } };
    const s = new OpenAIMockSession(ws as unknown as WebSocket, host(scheduler), 'mock_0', options, Buffer.alloc(3840).toString('base64'), fault);
    const append = () => s.onMessage(Buffer.from(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.alloc(3840).toString('base64') })), false, scheduler.now() / 1000);
    return { ws, append };
  }

  it('non_finite: a speech_started whose audio_start_ms JSON cannot hold, and the append is not answered', () => {
    const s = openai({ action: 'non_finite', after_appends: 1 }, false);
    s.append();
    expect(s.ws.texts).toHaveLength(1);
    expect(s.ws.texts[0]).toContain('"audio_start_ms":1e999');
    expect(JSON.parse(s.ws.texts[0])).toMatchObject({ type: 'input_audio_buffer.speech_started', audio_start_ms: Infinity });
  });

  it('duplicate_seq (vLLM-Omni extensions): one server_event_seq comes twice', () => {
    const s = openai({ action: 'duplicate_seq', after_appends: 2 });
    s.append();
    s.append();
    const seqs = s.ws.parsed().map((e) => e.server_event_seq as number);
    const repeats = seqs.filter((n, i) => i > 0 && n === seqs[i - 1]);
    expect(repeats).toHaveLength(1);
  });

  it('refuses a fault the dialect has no concept of', () => {
    expect(() => openai({ action: 'no_session_closed', after_appends: 1 }).append()).toThrow(new RangeError('fault no_session_closed is not defined for the openai dialect'));
    expect(() => openai({ action: 'duplicate_seq', after_appends: 1 }, false).append()).toThrow(/needs server_event_seq/);
  });
});

describe('MockFault on the vllm-omni dialect', () => {
  const OPTIONS: VllmMockOptions = { output_sample_rate: 24000, unit_ms: 80, ttfp_ms: 0, rtf: 0, silence_ms: 160, listen_every: 0, config_timeout_ms: 10_000, journal_max_bytes: 8 * 2 ** 20 };
  function vllm(fault: MockFault) {
    const scheduler = new VirtualTimeScheduler();
    const ws = new Socket();
    const slotCalls: string[] = [];
    const slot: VllmSlot = { limit: 2, take: () => (slotCalls.push('take'), true), released: () => slotCalls.push('released'), disconnected: () => slotCalls.push('disconnected') };
    const s = new VllmMockSession(ws as unknown as WebSocket, host(scheduler), 'mock_0', OPTIONS, slot, fault);
    const send = (event: Record<string, unknown>) => s.onMessage(Buffer.from(JSON.stringify(event)), false, scheduler.now() / 1000);
    send({ type: 'session.update', session: { audio: { input: { sample_rate_hz: 16000 } } } });
    const opened = ws.texts.length;
    /** 80 ms of a loud tone, so server VAD hears speech. */
    const loud = Buffer.alloc(80 * 32);
    for (let i = 0; i < loud.length / 2; i++) loud.writeInt16LE(Math.round(4000 * Math.sin((2 * Math.PI * 440 * i) / 16000)), i * 2);
    const append = () => send({ type: 'input_audio_buffer.append', audio: loud.toString('base64') });
    return { ws, send, append, opened, slotCalls, scheduler };
  }
  const seqs = (ws: Socket) => ws.parsed().flatMap((e) => (typeof e.server_event_seq === 'number' ? [e.server_event_seq] : []));

  it('close: the socket closes 1011 at the faulty append, the ones before answered', () => {
    const s = vllm({ action: 'close', after_appends: 2 });
    s.append();
    const before = s.ws.texts.length;
    s.append();
    expect(before).toBeGreaterThan(s.opened);
    expect(s.ws.texts).toHaveLength(before);
    expect(s.ws.closes).toEqual([{ code: 1011, reason: 'injected fault' }]);
  });

  it('fatal_error: a numbered error (server_error, injected_fault), session.closed with reason error, the slot freed, a 1011 close', () => {
    const s = vllm({ action: 'fatal_error', after_appends: 1 });
    s.append();
    const tail = s.ws.parsed().slice(s.opened);
    expect(tail).toMatchObject([
      { type: 'error', error: { type: 'server_error', code: 'injected_fault' } },
      { type: 'session.closed', reason: 'error' },
    ]);
    expect(tail.every((e) => typeof e.server_event_seq === 'number')).toBe(true);
    expect(s.slotCalls).toEqual(['take', 'released']);
    expect(s.ws.closes).toEqual([{ code: 1011, reason: 'injected fault' }]);
  });

  it('malformed_frame and non_finite: a frame that does not parse; a numbered speech_started at 1e999', () => {
    const m = vllm({ action: 'malformed_frame', after_appends: 1 });
    m.append();
    expect(m.ws.types().slice(m.opened)).toEqual(['(not JSON)']);
    const n = vllm({ action: 'non_finite', after_appends: 1 });
    n.append();
    expect(n.ws.texts.at(-1)).toContain('"audio_start_ms":1e999');
    expect(n.ws.parsed().at(-1)).toMatchObject({ type: 'input_audio_buffer.speech_started', server_event_seq: (seqs(n.ws).at(-2) ?? 0) + 1 });
  });

  it('duplicate_seq: the next server_event_seq repeats the last one, and the session goes on', () => {
    const s = vllm({ action: 'duplicate_seq', after_appends: 1 });
    s.append();
    s.append();
    const n = seqs(s.ws);
    expect(n.filter((x, i) => i > 0 && x === n[i - 1])).toHaveLength(1);
  });

  it('stop_answering: nothing more, the turn timers included', () => {
    const s = vllm({ action: 'stop_answering', after_appends: 1 });
    for (let i = 0; i < 5; i++) s.append();
    s.scheduler.flush();
    expect(s.ws.texts).toHaveLength(s.opened);
    expect(s.ws.closes).toEqual([]);
  });

  it('no_session_closed: session.close is answered with neither session.closed nor a close; the slot is freed', () => {
    const s = vllm({ action: 'no_session_closed', after_appends: 1 });
    s.append();
    s.send({ type: 'session.close' });
    s.scheduler.flush();
    expect(s.ws.types()).not.toContain('session.closed');
    expect(s.ws.closes).toEqual([]);
    expect(s.slotCalls).toEqual(['take', 'released']);
  });
});

describe('refuse_admission', () => {
  function upgrade(url: string): Promise<number | 'open'> {
    return new Promise((resolve) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      ws.once('open', () => {
        ws.terminate();
        resolve('open');
      });
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.once('error', () => undefined);
    });
  }

  it('refuses the upgrade with 503 for the sessions the fault picks, on every dialect', async () => {
    for (const options of [{}, { protocol: 'openai' as const }, { protocol: 'openai' as const, openai: { flavor: 'vllm-omni' as const } }]) {
      const server = await startFaultyMock({ action: 'refuse_admission', after_appends: 0, every_nth_session: 2 }, { port: 0, ...options });
      try {
        const outcomes = [];
        for (let i = 0; i < 3; i++) outcomes.push(await upgrade(server.url));
        expect(outcomes).toEqual([503, 'open', 503]);
        expect(server.stats().sessions.opened).toBe(1);
      } finally {
        await server.close();
      }
    }
  });
});
