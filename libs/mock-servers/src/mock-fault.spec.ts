import { VirtualTimeScheduler } from 'rxjs';
import WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { nativeSessionUpdate } from '@duplex-bench/protocol';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog } from './behaviour-log';
import type { MockFault } from './mock-fault';
import { OpenAIMockSession, type MockHost } from './openai-mock-session';
import { startFaultyMock } from './testing';

type Event = Record<string, unknown> & { type: string };

/** The server side of a socket, as a session uses it: what went out, and how it was ended. */
class FakeSocket {
  readonly OPEN = 1;
  readyState = 1;
  readonly texts: string[] = [];
  readonly closes: Array<{ code: number; reason: string }> = [];
  terminated = false;
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
  }
  terminate(): void {
    this.terminated = true;
  }
  types(): string[] {
    return this.texts.map((t) => {
      try {
        return (JSON.parse(t) as Event).type;
      } catch {
        return '(not JSON)';
      }
    });
  }
}

/** An openai session (vLLM-Omni numbering on, append-echo timings) that misbehaves as `fault` says, on a host in virtual time. */
function openaiSession(fault: MockFault) {
  const scheduler = new VirtualTimeScheduler();
  const clock = schedulerTimerHost(scheduler);
  const ws = new FakeSocket();
  const host: MockHost = {
    clock,
    send: (w, frame) => (w as unknown as FakeSocket).texts.push(frame),
    arrivals: () => new ArrivalOffsets(),
    arrivalsDone: () => undefined,
    completed: () => undefined,
    behaviourLog: (id) => new BehaviourLog(id),
  };
  const options = { names: 'ga' as const, vllm: true, input_sample_rate: 24000, output_sample_rate: 24000, unit_ms: 80, silence_ms: 500, model: { ttfp_ms: 0, rtf: 0, burst_units: 1, turn_every_s: 5 } };
  const session = new OpenAIMockSession(ws as unknown as WebSocket, host, 'mock_0', options, Buffer.alloc(3840).toString('base64'), fault);
  /** One 80 ms append at 24 kHz. */
  const append = () => session.onMessage(Buffer.from(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.alloc(3840).toString('base64') })), false, clock.now_s());
  return { ws, session, append, scheduler };
}

/** What one answered append sends under server VAD on a fresh turn: the turn's opening, then its unit. */
const FIRST_APPEND = ['input_audio_buffer.speech_started', 'response.created', 'response.output_item.added', 'response.content_part.added', 'response.output_audio.delta', 'response.output_audio_transcript.delta'];
const LATER_APPEND = ['response.output_audio.delta', 'response.output_audio_transcript.delta'];

describe('MockFault on the openai dialect', () => {
  it('close: closes with 1011 instead of answering the append at after_appends, and the ones before are answered', () => {
    const s = openaiSession({ after_appends: 2, action: 'close' });
    s.append();
    s.append();
    expect(s.ws.types()).toEqual(FIRST_APPEND);
    expect(s.ws.closes).toEqual([{ code: 1011, reason: 'injected fault' }]);
  });

  it('drop: ends the connection without a close frame', () => {
    const s = openaiSession({ after_appends: 1, action: 'drop' });
    s.append();
    expect([s.ws.terminated, s.ws.closes, s.ws.texts]).toEqual([true, [], []]);
  });

  it('malformed_frame: one frame that is not JSON, then nothing more for that append', () => {
    const s = openaiSession({ after_appends: 2, action: 'malformed_frame' });
    s.append();
    s.append();
    expect(s.ws.types()).toEqual([...FIRST_APPEND, '(not JSON)']);
    expect(() => JSON.parse(s.ws.texts.at(-1) as string)).toThrow(SyntaxError);
  });

  it('fatal_error: an error event, then the server closes the session', () => {
    const s = openaiSession({ after_appends: 1, action: 'fatal_error' });
    s.append();
    expect(s.ws.types()).toEqual(['error']);
    expect(JSON.parse(s.ws.texts[0])).toMatchObject({ error: { code: 'injected_fault' } });
    expect(s.ws.closes).toEqual([{ code: 1011, reason: 'injected fault' }]);
  });

  it('stop_answering: nothing more, timers and queued output included', () => {
    const s = openaiSession({ after_appends: 2, action: 'stop_answering' });
    s.append();
    s.append();
    s.append();
    // The server VAD's silence timer would end the turn 500 ms on.
    s.scheduler.flush();
    expect(s.ws.types()).toEqual(FIRST_APPEND);
    expect(s.ws.closes).toEqual([]);
  });

  it('skip_event_seq: one server_event_seq number is never sent, and the session goes on', () => {
    const s = openaiSession({ after_appends: 2, action: 'skip_event_seq' });
    s.append();
    s.append();
    s.append();
    const seqs = s.ws.texts.map((t) => (JSON.parse(t) as { server_event_seq: number }).server_event_seq);
    const gaps = seqs.flatMap((n, i) => (i > 0 && n !== seqs[i - 1] + 1 ? [[seqs[i - 1], n]] : []));
    expect(gaps).toEqual([[FIRST_APPEND.length, FIRST_APPEND.length + 2]]);
    expect(s.ws.types()).toEqual([...FIRST_APPEND, ...LATER_APPEND, ...LATER_APPEND]);
  });

  it('unknown_event: one event of a type no dialect defines, then the append is answered as usual', () => {
    const s = openaiSession({ after_appends: 2, action: 'unknown_event' });
    s.append();
    s.append();
    s.append();
    expect(s.ws.types()).toEqual([...FIRST_APPEND, 'vendor.keepalive', ...LATER_APPEND, ...LATER_APPEND]);
  });

  it('refuses the faults defined for the native dialect only', () => {
    for (const action of ['refuse_appends', 'linger', 'close_in_handshake', 'padded_tail', 'drained_first', 'no_session_closed'] as const) {
      const s = openaiSession({ after_appends: 1, action });
      expect(() => s.append()).toThrow(new RangeError(`fault ${action} is not defined for the openai dialect`));
    }
  });
});

describe('MockFault.every_nth_session', () => {
  /** Connects, sends session.update, and resolves with how the session ended up once the server has answered. */
  function connect(url: string, sockets: WebSocket[]): Promise<{ updated: boolean; closed: number | null }> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    sockets.push(ws);
    const seen = { updated: false, closed: null as number | null };
    return new Promise((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => ws.send(nativeSessionUpdate('u1')));
      ws.on('message', (data: Buffer) => {
        if ((JSON.parse(data.toString()) as Event).type !== 'session.updated') return;
        seen.updated = true;
        // The fault (after_appends 0) comes right after session.updated: a ping answered after it shows there was none.
        ws.once('pong', () => resolve({ ...seen }));
        ws.ping();
      });
      ws.once('close', (code: number) => resolve({ ...seen, closed: code }));
    });
  }

  it('makes only the sessions whose index is a multiple of it misbehave', async () => {
    const server = await startFaultyMock({ after_appends: 0, action: 'close', every_nth_session: 2 }, { port: 0 });
    const sockets: WebSocket[] = [];
    try {
      const outcomes = [];
      // One after another, so the indexes are the order of connection.
      for (let i = 0; i < 4; i++) outcomes.push(await connect(server.url, sockets));
      expect(outcomes.map((o) => o.closed)).toEqual([1011, null, 1011, null]);
      expect(outcomes.every((o) => o.updated)).toBe(true);
    } finally {
      for (const ws of sockets) ws.terminate();
      await server.close();
    }
  });

  it('makes every session misbehave by default', async () => {
    const server = await startFaultyMock({ after_appends: 0, action: 'close' }, { port: 0 });
    const sockets: WebSocket[] = [];
    try {
      const outcomes = [];
      for (let i = 0; i < 2; i++) outcomes.push(await connect(server.url, sockets));
      expect(outcomes.map((o) => o.closed)).toEqual([1011, 1011]);
    } finally {
      for (const ws of sockets) ws.terminate();
      await server.close();
    }
  });
});
