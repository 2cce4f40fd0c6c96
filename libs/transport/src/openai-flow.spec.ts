import { ManualTimers } from '@duplex-bench/pacer/testing';
import type { WebSocket } from 'ws';
import { WsConnection } from './connection';
import { TransportError } from './errors';
import { OpenAIFlow, readSessionCreated } from './openai-flow';
import { startWsTestServer, within, type TestServer } from './test-servers.spec-helpers';

const BOUND_MS = 3000;
const HANDSHAKE_MS = 10_000;

type Event = Record<string, unknown> & { type: string };

/** Collects what a test server receives; `until` resolves at the first event (seen or to come) that matches. */
class Inbox {
  readonly events: Event[] = [];
  private waiters: Array<{ match: (e: Event) => boolean; resolve: () => void }> = [];

  add(e: Event): void {
    this.events.push(e);
    this.waiters = this.waiters.filter((w) => !(w.match(e) && (w.resolve(), true)));
  }

  until(match: (e: Event) => boolean, what: string): Promise<void> {
    if (this.events.some(match)) return Promise.resolve();
    return within(new Promise<void>((resolve) => this.waiters.push({ match, resolve })), BOUND_MS, what);
  }

  types(): string[] {
    return this.events.map((e) => e.type);
  }
}

/** An OpenAI-GA-like server: greets, grants the session, and then sends what the test tells it to. */
async function gaServer(inbox: Inbox): Promise<{ server: TestServer; socket: Promise<WebSocket> }> {
  let opened: (ws: WebSocket) => void = () => undefined;
  const socket = new Promise<WebSocket>((resolve) => (opened = resolve));
  const server = await startWsTestServer(() => (ws) => {
    opened(ws);
    ws.send(JSON.stringify({ type: 'session.created', event_id: 'e0', session: { type: 'realtime' } }));
    ws.on('message', (data) => {
      const event = JSON.parse(String(data)) as Event;
      if (event.type === 'session.update') ws.send(JSON.stringify({ type: 'session.updated', event_id: 'e1', session: event.session }));
      inbox.add(event);
    });
  });
  return { server, socket };
}

const created = (id: string) => JSON.stringify({ type: 'response.created', response: { id, status: 'in_progress' } });
const done = (id: string) => JSON.stringify({ type: 'response.done', response: { id, status: 'completed' } });

describe('OpenAIFlow response.create', () => {
  let server: TestServer | undefined;
  let conn: WsConnection | undefined;

  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
  });

  /** A granted session with turn detection off and a commit after every append. */
  async function granted(timers: ManualTimers) {
    const inbox = new Inbox();
    const started = await gaServer(inbox);
    server = started.server;
    conn = WsConnection.open(server.url, { timers });
    const flow = new OpenAIFlow('s', { turn_detection: 'none', commit_every_packets: 1, end_quiet_ms: 200 });
    flow.attach(conn);
    const sent: string[] = [];
    const options = { onSend: (frame: string) => sent.push(frame), drain_timeout_ms: 30_000, close_timeout_ms: 500 };
    await within(flow.handshake(conn, 24_000, options), BOUND_MS, 'handshake');
    const ws = await started.socket;
    const c = conn;
    /** One packet and the frames the flow puts after it, sent as the session sends them. */
    const packet = (seq: number): string[] => {
      c.send(flow.append(`s_a${seq}`, seq, seq * 80, Buffer.from('AAAA')));
      const after = flow.afterAppend() ?? [];
      for (const frame of after) c.send(frame);
      return after.map((f) => (JSON.parse(f) as Event).type);
    };
    return { inbox, ws, flow, sent, options, packet };
  }

  it('asks for the session.update with the rate and turn detection given, and asks for a response after a commit when none is active', async () => {
    const { inbox, packet } = await granted(new ManualTimers());
    expect(inbox.events[0]).toMatchObject({ type: 'session.update', session: { audio: { input: { format: { type: 'audio/pcm', rate: 24_000 }, turn_detection: null } } } });
    expect(packet(0)).toEqual(['input_audio_buffer.commit', 'response.create']);
  });

  it('holds response.create while a response is active, folds the next into it, and sends it when the response is done', async () => {
    const { inbox, ws, sent, packet } = await granted(new ManualTimers());
    expect(packet(0)).toEqual(['input_audio_buffer.commit', 'response.create']);
    // Asked for and not yet created: the next turn's create waits too (the server may be about to create).
    expect(packet(1)).toEqual(['input_audio_buffer.commit']);
    ws.send(created('resp_0'));
    await inbox.until((e) => e.event_id === 's_a1', 'second append');
    expect(packet(2)).toEqual(['input_audio_buffer.commit']);
    await inbox.until((e) => e.event_id === 's_c2', 'third commit');
    expect(inbox.types().filter((t) => t === 'response.create')).toHaveLength(1);

    ws.send(done('resp_0'));
    await inbox.until((e) => e.type === 'response.create' && e.event_id !== 's_r0', 'the waiting response.create');
    // One create for both commits made meanwhile, sent through the trace hook.
    expect(inbox.events.filter((e) => e.type === 'response.create').map((e) => e.event_id)).toEqual(['s_r0', 's_r1']);
    expect(sent.map((f) => (JSON.parse(f) as Event).type)).toEqual(['session.update', 'response.create']);
    // Asked for again: the next commit's create waits for this one's response.
    expect(packet(3)).toEqual(['input_audio_buffer.commit']);
  });

  it('takes a refusal that names no event (conversation_already_has_active_response) as the answer to the create in flight', async () => {
    const { inbox, ws, packet } = await granted(new ManualTimers());
    packet(0);
    await inbox.until((e) => e.type === 'response.create', 'first create');
    ws.send(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code: 'conversation_already_has_active_response', message: 'busy', event_id: null } }));
    await within(
      new Promise<void>((resolve) => {
        const sub = conn?.events$.subscribe((e) => {
          if (e.frame.type === 'error') {
            sub?.unsubscribe();
            resolve();
          }
        });
      }),
      BOUND_MS,
      'the refusal',
    );
    // Nothing is asked for or open any more: the next commit asks at once.
    expect(packet(1)).toEqual(['input_audio_buffer.commit', 'response.create']);
  });

  it('at the end, commits the rest, waits for the active response, sends the create that waited, and waits for its response too', async () => {
    const timers = new ManualTimers();
    const { inbox, ws, flow, options, packet } = await granted(timers);
    packet(0);
    ws.send(created('resp_0'));
    await inbox.until((e) => e.type === 'response.create', 'first create');
    // One more packet and no afterAppend: the end commits it.
    conn?.send(flow.append('s_a1', 1, 80, Buffer.from('AAAA')));
    let ended = false;
    const ending = flow.end(conn as WsConnection, options).then(() => (ended = true));
    await inbox.until((e) => e.event_id === 's_c1', 'last commit');
    expect(inbox.types().filter((t) => t === 'response.create')).toHaveLength(1);
    // Busy: no quiet wait is armed, only the drain bound.
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([30_000]);

    ws.send(done('resp_0'));
    await inbox.until((e) => e.event_id === 's_r1', 'the create that waited');
    expect(ended).toBe(false);
    ws.send(created('resp_1'));
    ws.send(done('resp_1'));
    const quiet = () => timers.pending.some((t) => t.delay_ms === 200);
    await within(
      new Promise<void>((resolve) => {
        const poll = () => (quiet() ? resolve() : setImmediate(poll));
        poll();
      }),
      BOUND_MS,
      'quiet wait armed',
    );
    timers.pending.find((t) => t.delay_ms === 200)?.fn();
    await within(ending, BOUND_MS, 'end');
    expect(inbox.types().filter((t) => t === 'response.create')).toEqual(['response.create', 'response.create']);
  });
});

describe('OpenAIFlow against a server that waits for the client to speak first', () => {
  let server: TestServer | undefined;
  let conn: WsConnection | undefined;

  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
  });

  /** The handshake of a flow against a server that upgrades and then does what `onOpen` says. */
  async function handshakeAgainst(onOpen: (ws: WebSocket) => void) {
    server = await startWsTestServer(() => onOpen);
    const timers = new ManualTimers();
    conn = WsConnection.open(server.url, { timers });
    const c = conn;
    const firstFrame = new Promise<void>((resolve) => c.events$.subscribe({ next: () => resolve(), error: () => undefined }));
    const flow = new OpenAIFlow('s', { turn_detection: 'server_vad', commit_every_packets: 0 });
    flow.attach(conn);
    const outcome = flow.handshake(conn, 24_000, { handshake_timeout_ms: HANDSHAKE_MS }).then(
      () => null,
      (err: unknown) => err,
    );
    await within(conn.opened, BOUND_MS, 'upgrade');
    return { timers, outcome, firstFrame };
  }

  it('ends at the handshake bound with an error naming --protocol vllm-omni when nothing at all arrives', async () => {
    const { timers, outcome } = await handshakeAgainst(() => undefined);
    expect(timers.pending.map((t) => t.delay_ms)).toEqual([HANDSHAKE_MS]);
    timers.fire();
    const err = (await within(outcome, BOUND_MS, 'handshake end')) as TransportError;
    expect(err).toBeInstanceOf(TransportError);
    expect(err.reason).toBe('handshake_timeout');
    expect(err.message).toBe(
      "no session.created within 10 s: this server waits for the client to speak first, as vLLM-Omni's duplex endpoint does; try --protocol vllm-omni",
    );
  });

  it("says the same when the server gives up waiting for session.update (vLLM-Omni's config_timeout), before the bound", async () => {
    const { outcome } = await handshakeAgainst((ws) =>
      ws.send(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code: 'config_timeout', message: 'Timeout waiting for session.update' } })),
    );
    const err = (await within(outcome, BOUND_MS, 'handshake end')) as TransportError;
    expect(err.reason).toBe('handshake_timeout');
    expect(err.message).toMatch(/^no session\.created: the server gave up waiting for session\.update \(.*Timeout waiting for session\.update\): .*try --protocol vllm-omni$/);
  });

  it('keeps the plain timeout for a server that spoke but never greeted', async () => {
    const { timers, outcome, firstFrame } = await handshakeAgainst((ws) => ws.send(JSON.stringify({ type: 'rate_limits.updated', rate_limits: [] })));
    await within(firstFrame, BOUND_MS, 'first frame');
    timers.fire();
    const err = (await within(outcome, BOUND_MS, 'handshake end')) as TransportError;
    expect(err.reason).toBe('handshake_timeout');
    expect(err.message).toBe('no session.created within 10000 ms');
  });

  it('reads the greeting for the packet size with the same error', async () => {
    server = await startWsTestServer(() => () => undefined);
    const timers = new ManualTimers();
    const reading = readSessionCreated(server.url, { connect_timeout_ms: 2000, timers }).then(
      () => null,
      (err: unknown) => err,
    );
    await within(
      new Promise<void>((resolve) => {
        const poll = () => (timers.pending.length === 1 && timers.pending[0].delay_ms === 2000 ? resolve() : setImmediate(poll));
        poll();
      }),
      BOUND_MS,
      'upgrade',
    );
    timers.fire();
    const err = (await within(reading, BOUND_MS, 'greeting read')) as TransportError;
    expect(err.message).toMatch(/^no session\.created within 2 s: .*try --protocol vllm-omni$/);
  });
});

describe('OpenAIFlow under server VAD: barge-in (the OpenAI Agents SDK on input_audio_buffer.speech_started) and the turn open at the end', () => {
  let server: TestServer | undefined;
  let conn: WsConnection | undefined;

  afterEach(async () => {
    await conn?.close(500);
    await server?.close();
  });

  /** 24 kHz 16-bit mono: `ms` of audio as base64. */
  const audio = (ms: number) => Buffer.alloc(ms * 48).toString('base64');
  const delta = (item_id: string, ms: number) => JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r1', item_id, output_index: 0, content_index: 0, delta: audio(ms) });
  const speechStarted = (extra: Record<string, unknown> = {}) => JSON.stringify({ type: 'input_audio_buffer.speech_started', item_id: 'in_1', audio_start_ms: 0, ...extra });

  /** A session under server VAD whose server states `interrupt_response`, on a clock the test sets (`timers.now`, ms). */
  async function bargeSession(interrupt_response: boolean) {
    const inbox = new Inbox();
    let opened: (ws: WebSocket) => void = () => undefined;
    const socket = new Promise<WebSocket>((resolve) => (opened = resolve));
    server = await startWsTestServer(() => (ws) => {
      opened(ws);
      ws.send(JSON.stringify({ type: 'session.created', event_id: 'e0', session: { type: 'realtime' } }));
      ws.on('message', (data) => {
        const event = JSON.parse(String(data)) as Event;
        const turn_detection = { type: 'server_vad', interrupt_response };
        if (event.type === 'session.update') ws.send(JSON.stringify({ type: 'session.updated', event_id: 'e1', session: { type: 'realtime', audio: { input: { turn_detection }, output: { format: { type: 'audio/pcm', rate: 24_000 } } } } }));
        inbox.add(event);
      });
    });
    const timers = new ManualTimers();
    conn = WsConnection.open(server.url, { timers, clock: timers });
    const flow = new OpenAIFlow('s', { turn_detection: 'server_vad', commit_every_packets: 0 });
    flow.attach(conn);
    const sent: Event[] = [];
    await within(flow.handshake(conn, 24_000, { onSend: (frame) => sent.push(JSON.parse(frame) as Event) }), BOUND_MS, 'handshake');
    const ws = await socket;
    const c = conn;
    let marks = 0;
    /** Sends `frames` at `at_ms` on the session's clock, and resolves once the flow has read them all. */
    const at = async (at_ms: number, ...frames: string[]) => {
      timers.now = at_ms;
      const mark = `m${marks++}`;
      const read = new Promise<void>((resolve) => {
        const sub = c.events$.subscribe((e) => {
          if (e.frame.type === 'test.mark' && e.frame.event().mark === mark) {
            sub.unsubscribe();
            resolve();
          }
        });
      });
      for (const f of frames) ws.send(f);
      ws.send(JSON.stringify({ type: 'test.mark', mark }));
      await within(read, BOUND_MS, `frames at ${at_ms} ms`);
    };
    const bargeFrames = () => sent.filter((e) => e.type === 'conversation.item.truncate' || e.type === 'response.cancel');
    return { inbox, at, sent, bargeFrames, flow, timers, conn: c };
  }

  /** Fires the first pending timer of `delay_ms` once it is armed. */
  async function fire(timers: ManualTimers, delay_ms: number): Promise<void> {
    const armed = () => timers.pending.find((t) => t.delay_ms === delay_ms);
    await within(
      new Promise<void>((resolve) => {
        const poll = () => (armed() ? resolve() : setImmediate(poll));
        poll();
      }),
      BOUND_MS,
      `a ${delay_ms} ms timer`,
    );
    armed()?.fn();
  }

  it('at the end of input, waits past server_vad\'s silence for a turn still open; input cut mid-speech ends the session, counted, not failed at the drain bound', async () => {
    const { at, flow, timers, conn: c } = await bargeSession(false);
    await at(1_000, speechStarted());
    const ending = flow.end(c, { drain_timeout_ms: 30_000, close_timeout_ms: 500 });
    // server_vad's 500 ms of silence (none stated) and a second.
    await fire(timers, 1_500);
    await fire(timers, 200);
    await within(ending, BOUND_MS, 'end');
    expect(flow.dialectEvents()).toEqual({ speech_cut_at_end: 1 });
  });

  it('a turn that closes after the end of input is waited for and not counted as cut', async () => {
    const { at, flow, timers, conn: c } = await bargeSession(false);
    await at(1_000, speechStarted());
    const ending = flow.end(c, { drain_timeout_ms: 30_000, close_timeout_ms: 500 });
    await at(1_400, JSON.stringify({ type: 'input_audio_buffer.speech_stopped', item_id: 'in_1', audio_end_ms: 1_300 }));
    await at(1_450, created('r2'), done('r2'));
    await fire(timers, 200);
    await within(ending, BOUND_MS, 'end');
    expect(flow.dialectEvents()).toBeNull();
  });

  it('truncates the item playing at its played ms on the playout clock: two bursts with an underrun, not the ms received nor the ms since the first', async () => {
    const { at, bargeFrames, inbox } = await bargeSession(true);
    await at(0, created('r1'), delta('item_a', 200));
    // Burst 1 played out at 200 ms; burst 2 comes at 250 ms and plays from then.
    await at(250, delta('item_a', 400));
    await at(500, speechStarted());
    await inbox.until((e) => e.type === 'conversation.item.truncate', 'the truncate');
    // 200 + 250 played (received: 600; elapsed since the first delta: 500). The server interrupts itself: no cancel.
    expect(bargeFrames()).toEqual([{ type: 'conversation.item.truncate', event_id: 's_trunc0', item_id: 'item_a', content_index: 0, audio_end_ms: 450 }]);
  });

  it('with interrupt_response not true, cancels the response in progress once; a second speech start with no audio since sends nothing', async () => {
    const { at, bargeFrames } = await bargeSession(false);
    await at(0, created('r1'), delta('item_a', 1000));
    await at(300, speechStarted());
    await at(400, speechStarted());
    expect(bargeFrames()).toEqual([
      { type: 'conversation.item.truncate', event_id: 's_trunc0', item_id: 'item_a', content_index: 0, audio_end_ms: 300 },
      { type: 'response.cancel', event_id: 's_cancel1' },
    ]);
  });

  it('sends no cancel without a response in progress, and no truncate once the item has played out with no response in progress', async () => {
    const { at, bargeFrames } = await bargeSession(false);
    await at(0, created('r1'), delta('item_a', 600), done('r1'));
    // The response is over, its audio still playing: truncated where it plays, nothing to cancel.
    await at(200, speechStarted());
    expect(bargeFrames()).toEqual([{ type: 'conversation.item.truncate', event_id: 's_trunc0', item_id: 'item_a', content_index: 0, audio_end_ms: 200 }]);
    // A later answer, over and played out: playback was over, nothing is sent.
    await at(1000, created('r2'), delta('item_b', 300), done('r2'));
    await at(1500, speechStarted());
    expect(bargeFrames()).toHaveLength(1);
  });

  it("clamps audio_end_ms to the item's audio received (rounded up), as the SDK does with a speech_started that states a later end", async () => {
    const { at, bargeFrames } = await bargeSession(true);
    await at(0, created('r1'), JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r1', item_id: 'item_a', content_index: 0, delta: Buffer.alloc(2402).toString('base64') }));
    // 1,201 samples: 50.04 ms received; the event's own audio_end_ms (9,000) is past it.
    await at(30, speechStarted({ audio_end_ms: 9000 }));
    expect(bargeFrames()).toEqual([{ type: 'conversation.item.truncate', event_id: 's_trunc0', item_id: 'item_a', content_index: 0, audio_end_ms: 51 }]);
  });
});
