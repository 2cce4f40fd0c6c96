import type { Subscription } from 'rxjs';
import {
  audioDeltaInfo,
  chunkPeriodMs,
  gaEventName,
  isKnownOpenAIType,
  OpenAIEvent,
  OPENAI_PCM_RATE,
  openaiAppend,
  openaiCommit,
  openaiInterruptsResponse,
  openaiItemTruncate,
  openaiResponseCancel,
  openaiResponseCreate,
  openaiSessionRates,
  openaiSessionUpdate,
  serverError,
  ServerEventSeqTracker,
  serverEventSeq,
  VllmEvent,
  vllmSessionClose,
  type DecodedFrame,
} from '@duplex-bench/protocol';
import { admitted, NATIVE_ADMISSION } from './admission';
import { WsConnection, type Connection, type ConnectOptions, type ReceivedEvent } from './connection';
import { ItemPlayout } from './item-playout';
import { TransportError } from './errors';
import { waitForEvent } from './wait-for';
import { waitForQuiet } from './wait-quiet';
import { FLOW_TIMEOUTS, sendTraced, type EndReport, type FlowOptions, type OpenAIFlowConfig, type ServerEventSeqFigures, type SessionFlow, type SessionGrant } from './flow';

/**
 * A server's events come in bursts: one response's `response.done` can arrive just before the next
 * turn's `speech_started` and `response.created`. Quiet must last this long to count, so the
 * session is not closed between the two (seen in the openai record test: a response never done).
 */
const END_QUIET_MS = 200;

/**
 * How long the end of input waits for the server VAD to close a turn still open (speech started,
 * not stopped): past its silence after the last audio sent, plus a second (server_vad), or
 * semantic_vad's longest timeout (8 s at `eagerness: low`; OpenAI's reference: 8, 4 and 2 s for
 * low, medium and high). Input cut in the middle of speech never gets its `speech_stopped`: the
 * turn is counted as cut by the end, not waited for until the drain bound fails the session.
 */
function speechEndWaitMs(turn_detection: OpenAIFlowConfig['turn_detection'], silence_duration_ms: number): number {
  return turn_detection === 'semantic_vad' ? 8_000 : silence_duration_ms + 1_000;
}

/** server_vad's silence before a turn ends when the session states none (OpenAI's default). */
const SERVER_VAD_SILENCE_MS = 500;

/**
 * OpenAI refuses a `response.create` while a response is in progress with this code, and names no
 * event (`error.event_id: null`; seen in openai/openai-agents-python#1466 and pipecat-ai/pipecat#3960).
 */
const ACTIVE_RESPONSE = 'conversation_already_has_active_response';

/**
 * vLLM-Omni's duplex endpoint waits for the client's `session.update` and, after 10 s without one,
 * answers `error {code: "config_timeout"}` and closes (libs/mock-servers/src/vllm-mock-session.ts).
 */
const CONFIG_TIMEOUT = 'config_timeout';

/** The error of a server that never greets: it waits for the client to speak first. */
function speaksSecond(what: string, url: string): TransportError {
  return new TransportError(
    'handshake_timeout',
    `${what}: this server waits for the client to speak first, as vLLM-Omni's duplex endpoint does; try --protocol vllm-omni`,
    { url },
  );
}

/**
 * The server's `session.created`, bounded by `timeout_ms`. An OpenAI server greets first; one that
 * says nothing in the whole bound, or gives up waiting for the client's `session.update`, is
 * another dialect's server, and the error says which flag to try. Any other `error` before the
 * greeting ends the connection with that error.
 */
export async function waitForSessionCreated(conn: Connection, timeout_ms: number): Promise<ReceivedEvent> {
  let heard = false;
  const early = conn.events$.subscribe({
    next: (e) => {
      heard = true;
      if (e.frame.type !== OpenAIEvent.error) return;
      const error = serverError(e.frame);
      conn.fail(error.info.server_code === CONFIG_TIMEOUT ? speaksSecond(`no session.created: the server gave up waiting for session.update (${error.message})`, conn.url) : error);
    },
    error: () => undefined,
  });
  try {
    return await waitForEvent(conn, OpenAIEvent.sessionCreated, timeout_ms, 'handshake_timeout');
  } catch (err) {
    // Only an upgraded socket that stayed silent: a connect that timed out is not this.
    if (!heard && conn.isOpen && err instanceof TransportError && err.reason === 'handshake_timeout') {
      throw speaksSecond(`no session.created within ${timeout_ms / 1000} s`, conn.url);
    }
    throw err;
  } finally {
    early.unsubscribe();
  }
}

/**
 * The OpenAI Realtime dialect as a session flow. `session.created` → `session.update` →
 * `session.updated`; then appends, with `input_audio_buffer.commit` + `response.create` every
 * `commit_every_packets` when the client finds the turns. The dialect has no end-of-input event:
 * the session ends when the server has been quiet for `end_quiet_ms` (no response open, asked for
 * or queued, no speech in progress), bounded by the drain timeout, and then the socket is closed.
 *
 * `response.create` goes only when no response is active and no other create is unanswered: OpenAI
 * refuses one sent while a response is in progress (`conversation_already_has_active_response`).
 * One asked for meanwhile waits and goes when the active response is done, as the OpenAI Agents
 * SDK's ResponseCreateSequencer holds it (@openai/agents-realtime 0.14.3,
 * dist/responseCreateSequencer.js). Commits are not held back. A create asked for while one
 * already waits is folded into it, as that sequencer folds its automatic requests: the waiting
 * create answers every commit made before it goes, so a slow server gets one response for them,
 * not one each for turns already answered.
 *
 * An `error` event before `session.updated` ends the session; after it, errors are counted and the
 * session goes on (OpenAI reports a refused event that way), unless the server marks one fatal.
 *
 * **Barge-in**, as the OpenAI Agents SDK's `input_audio_buffer.speech_started` handler does
 * (openai/openai-agents-python src/agents/realtime/openai_realtime.py@d89c9b19, with a playback
 * tracker, model.py `RealtimePlaybackTracker`: the played ms of the item playing):
 * when model audio arrived since the last barge-in, the item playing on the playout clock is
 * truncated at its played position (`conversation.item.truncate {item_id, content_index,
 * audio_end_ms}`: the played ms rounded, clamped to the item's audio received, rounded up), unless
 * that item has played out and no response is in progress; then, unless the session the server
 * last stated has `audio.input.turn_detection.interrupt_response: true`, `response.cancel` goes
 * when a response is in progress and none was asked cancelled since it began or ended.
 */
export class OpenAIFlow implements SessionFlow {
  readonly protocol = 'openai';
  private readonly open = new Set<string>();
  /** `response.create` ids sent and not yet answered by `response.created` (or an error naming them). */
  private readonly asked = new Set<string>();
  /** A `response.create` waiting for the active response to end (its event id), or null. */
  private queued: string | null = null;
  private speaking = false;
  /** Speech stopped and no response was created or finished since. */
  private awaitingAnswer = false;
  private ready = false;
  /** The session is closing: a create still waiting is not sent. */
  private closing = false;
  private uncommitted = 0;
  private commits = 0;
  private creates = 0;
  private readonly seq = new ServerEventSeqTracker();
  private created: Record<string, unknown> | null = null;
  private options: FlowOptions = {};
  /** The model's audio on the session's playout clock, item by item. */
  private readonly playout = new ItemPlayout();
  /** Model audio arrived since the last barge-in (the SDK's `get_last_audio_item()`). */
  private heardSinceBargeIn = false;
  /** The server interrupts a response itself when the user speaks (`interrupt_response: true` in the session it stated). */
  private serverInterrupts = false;
  /** A `response.cancel` went since the last `response.created` / `response.done` (the SDK's `cancel_requested`). */
  private cancelAsked = false;
  /** Output rate the server stated, for deltas that state none. */
  private granted_rate: number | undefined;
  private bargeIns = 0;
  /** The silence server_vad ends a turn after, as the server last stated it. */
  private silence_duration_ms = SERVER_VAD_SILENCE_MS;
  /** Turns the end of input cut in the middle of the user's speech: no `speech_stopped` came. */
  private speechCutAtEnd = 0;

  constructor(
    private readonly session_id: string,
    private readonly config: OpenAIFlowConfig,
  ) {}

  attach(conn: Connection): Subscription {
    return conn.events$.subscribe({ next: (e) => this.observe(conn, e.frame, e.received_s), error: () => undefined });
  }

  isKnownType(type: string): boolean {
    return isKnownOpenAIType(type);
  }

  private observe(conn: Connection, frame: DecodedFrame, received_s: number): void {
    this.seq.add(serverEventSeq(frame));
    const type = gaEventName(frame.type);
    switch (type) {
      case OpenAIEvent.audioDelta: {
        const info = audioDeltaInfo(frame);
        if (info.item_id === undefined) break;
        const rate = info.sample_rate_hz ?? this.config.output_sample_rate ?? this.granted_rate ?? OPENAI_PCM_RATE;
        this.playout.add(received_s, info.item_id, info.content_index ?? 0, info.bytes, rate);
        // Only the item playing now can be truncated later: those before it are let go, so a long session keeps a few.
        this.playout.dropPlayedBefore(received_s);
        this.heardSinceBargeIn = true;
        break;
      }
      case OpenAIEvent.sessionCreated:
        this.created = frame.event();
        this.readSession((this.created.session ?? {}) as Record<string, unknown>);
        break;
      case OpenAIEvent.sessionUpdated:
        this.readSession((frame.event().session ?? {}) as Record<string, unknown>);
        break;
      case OpenAIEvent.responseCreated: {
        const response = (frame.event().response ?? {}) as { id?: unknown };
        this.open.add(String(response.id ?? ''));
        // A created response answers the oldest response.create still waiting.
        this.answerOldest();
        this.awaitingAnswer = false;
        this.cancelAsked = false;
        break;
      }
      case OpenAIEvent.responseDone: {
        const response = (frame.event().response ?? {}) as { id?: unknown };
        this.open.delete(String(response.id ?? ''));
        this.awaitingAnswer = false;
        this.cancelAsked = false;
        this.sendQueued(conn);
        break;
      }
      case OpenAIEvent.speechStarted:
        this.speaking = true;
        if (this.ready && !this.closing) this.bargeIn(conn, frame, received_s);
        break;
      case OpenAIEvent.speechStopped:
        this.speaking = false;
        this.awaitingAnswer = true;
        break;
      case OpenAIEvent.error: {
        // Before the greeting, waitForSessionCreated decides what an error means.
        if (this.created === null) break;
        const error = serverError(frame);
        const about = ((frame.event().error ?? {}) as { event_id?: unknown }).event_id;
        if (typeof about === 'string') this.asked.delete(about);
        // A refused create that names no event is the one unanswered: only one is sent at a time.
        else if (error.info.server_code === ACTIVE_RESPONSE) this.answerOldest();
        if (!this.ready || error.info.fatal) conn.fail(error);
        else this.sendQueued(conn);
        break;
      }
      default:
        break;
    }
  }

  /** What a session object the server stated says: its output rate, and whether it interrupts responses itself. */
  private readSession(session: Record<string, unknown>): void {
    const output = openaiSessionRates(session).output;
    if (output) this.granted_rate = output;
    this.serverInterrupts = openaiInterruptsResponse(session);
    const detection = ((session.audio ?? {}) as { input?: { turn_detection?: { silence_duration_ms?: unknown } | null } }).input?.turn_detection;
    if (typeof detection?.silence_duration_ms === 'number') this.silence_duration_ms = detection.silence_duration_ms;
  }

  /**
   * The user started speaking (`speech_started` received at `t_s`): the SDK's barge-in. Nothing
   * without model audio since the last one; else the truncate of the item playing, and the cancel
   * of the response in progress when the server does not interrupt it itself.
   */
  private bargeIn(conn: Connection, frame: DecodedFrame, t_s: number): void {
    if (!this.heardSinceBargeIn) return;
    this.heardSinceBargeIn = false;
    const playing = this.playout.playingAt(t_s);
    const ongoing = this.open.size > 0;
    if (playing) {
      // The SDK takes a positive `audio_end_ms` of the speech_started event over the played position.
      const stated = frame.event().audio_end_ms;
      const elapsed_ms = typeof stated === 'number' && stated > 0 ? stated : playing.played_ms;
      const played_ms = Math.max(roundHalfEven(elapsed_ms), 0);
      const received_ms = Math.ceil(playing.received_ms - 1e-9);
      // An item played out, with no response in progress: playback was over, nothing to cut.
      if (!(played_ms >= received_ms && !ongoing)) {
        const n = this.bargeIns++;
        this.send(conn, openaiItemTruncate(`${this.session_id}_trunc${n}`, playing.key, playing.content_index, Math.min(played_ms, received_ms)), this.options);
      }
      this.playout.dropPlayedBefore(t_s);
    }
    if (!this.serverInterrupts && ongoing && !this.cancelAsked && conn.isOpen) {
      this.cancelAsked = true;
      this.send(conn, openaiResponseCancel(`${this.session_id}_cancel${this.bargeIns++}`), this.options);
    }
  }

  private idle(): boolean {
    return this.open.size === 0 && this.asked.size === 0 && this.queued === null && !this.speaking && !this.awaitingAnswer;
  }

  private answerOldest(): void {
    const first = this.asked.values().next();
    if (!first.done) this.asked.delete(first.value);
  }

  /** Whether a `response.create` may go now: no response in progress and none asked for unanswered. */
  private mayCreate(): boolean {
    return this.open.size === 0 && this.asked.size === 0;
  }

  /** The waiting `response.create`, once no response is active (never on a closing session). */
  private sendQueued(conn: Connection): void {
    if (this.queued === null || this.closing || !this.mayCreate() || !conn.isOpen) return;
    const create = this.queued;
    this.queued = null;
    this.asked.add(create);
    this.send(conn, openaiResponseCreate(create), this.options);
  }

  private send(conn: Connection, frame: string, options: FlowOptions): void {
    sendTraced(conn, frame, options);
  }

  async handshake(conn: Connection, input_sample_rate: number, options: FlowOptions): Promise<SessionGrant> {
    this.options = options;
    const timeout_ms = options.handshake_timeout_ms ?? FLOW_TIMEOUTS.handshake_timeout_ms;
    const created = waitForSessionCreated(conn, timeout_ms);
    await Promise.all([conn.opened, created]);
    const updated = waitForEvent(conn, OpenAIEvent.sessionUpdated, timeout_ms, 'handshake_timeout');
    const request = { input_sample_rate, turn_detection: this.config.turn_detection, output_sample_rate: this.config.output_sample_rate };
    this.send(conn, openaiSessionUpdate(`${this.session_id}_update`, request), options);
    const session = ((await updated).frame.event().session ?? {}) as Record<string, unknown>;
    this.ready = true;
    this.readSession(session);
    const grant: SessionGrant = {};
    const output = openaiSessionRates(session).output;
    if (output) grant.output_sample_rate = output;
    const chunk = this.created ? chunkPeriodMs(this.created) : undefined;
    if (chunk) grant.chunk_period_ms = chunk;
    return grant;
  }

  append(event_id: string, _seq: number, _t_start_ms: number, audio_b64: Uint8Array): Buffer {
    this.uncommitted++;
    return openaiAppend(event_id, audio_b64);
  }

  afterAppend(): string[] | null {
    if (this.config.turn_detection !== 'none' || this.uncommitted < this.config.commit_every_packets) return null;
    return this.commitFrames();
  }

  /** A commit, and a `response.create` now when none is active, else one waiting (or folded into the one that waits). */
  private commitFrames(): string[] {
    const commit = openaiCommit(`${this.session_id}_c${this.commits++}`);
    this.uncommitted = 0;
    if (this.queued !== null) return [commit];
    const create = `${this.session_id}_r${this.creates++}`;
    if (!this.mayCreate()) {
      this.queued = create;
      return [commit];
    }
    this.asked.add(create);
    return [commit, openaiResponseCreate(create)];
  }

  async end(conn: Connection, options: FlowOptions): Promise<EndReport> {
    const drain_ms = options.drain_timeout_ms ?? FLOW_TIMEOUTS.drain_timeout_ms;
    const close_ms = options.close_timeout_ms ?? FLOW_TIMEOUTS.close_timeout_ms;
    // The last turn's input is committed and answered like the others.
    if (this.config.turn_detection === 'none' && this.uncommitted > 0) {
      for (const frame of this.commitFrames()) this.send(conn, frame, options);
    }
    // A turn still open waits for the server VAD to close it, bounded: input cut mid-speech never is.
    if (this.config.turn_detection !== 'none' && this.speaking) {
      const wait_ms = speechEndWaitMs(this.config.turn_detection, this.silence_duration_ms);
      const stopped = await waitForEvent(conn, OpenAIEvent.speechStopped, wait_ms, 'drain_timeout').then(
        () => true,
        (err: unknown) => {
          if (err instanceof TransportError && err.reason === 'drain_timeout') return false;
          throw err;
        },
      );
      if (!stopped && this.speaking) {
        this.speaking = false;
        this.speechCutAtEnd++;
      }
    }
    // A create still waiting goes when the response before it is done: the drain waits for both.
    try {
      await waitForQuiet(conn, {
        idle: () => this.idle(),
        busy: () => `${this.open.size} responses open, ${this.asked.size} asked for${this.queued !== null ? ', 1 response.create waiting' : ''}${this.speaking ? ', speech in progress' : ''}`,
        quiet_ms: this.config.end_quiet_ms ?? END_QUIET_MS,
        drain_ms,
        session_id: this.session_id,
      });
    } finally {
      this.closing = true;
    }
    if (this.closesSession()) {
      const closed = waitForEvent(conn, VllmEvent.sessionClosed, close_ms, 'close_timeout');
      this.send(conn, vllmSessionClose(`${this.session_id}_close`), options);
      await closed;
    }
    await conn.close(close_ms);
    return {};
  }

  /**
   * A server that shows vLLM-Omni's extensions (`capabilities.chunk_period_ms`, `server_event_seq`)
   * is asked to close the session with `session.close`: there a plain disconnect holds the session
   * slot for its disconnect grace. OpenAI itself has no such event.
   */
  private closesSession(): boolean {
    return this.seq.seen > 0 || (this.created !== null && chunkPeriodMs(this.created) !== undefined);
  }

  /** A fatal error (or one before the handshake is done) fails the connection in `observe`; others are counted. */
  endsOn(): boolean {
    return false;
  }

  closesOnFailure(): boolean {
    return false;
  }

  async abort(conn: Connection, _error: unknown, options: FlowOptions): Promise<void> {
    this.closing = true;
    await conn.close(options.close_timeout_ms ?? FLOW_TIMEOUTS.close_timeout_ms);
  }

  dialectEvents(): Record<string, number> | null {
    return this.speechCutAtEnd > 0 ? { speech_cut_at_end: this.speechCutAtEnd } : null;
  }

  serverEventSeq(): ServerEventSeqFigures | null {
    if (this.seq.seen === 0) return null;
    const { seen, gaps, missing_events, not_rising } = this.seq;
    return { seen, gaps, missing_events, not_rising };
  }
}

/** Python's `round` (half to even), as the SDK rounds the played ms: a position exactly half a ms in goes to the even ms. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * Opens a connection only to read the server's `session.created`, then closes it. A probe uses it
 * before a run to learn the server's input unit (vLLM-Omni `chunk_period_ms`).
 */
export async function readSessionCreated(
  url: string,
  options: { connect_timeout_ms?: number; headers?: Record<string, string>; clock?: FlowOptions['clock']; timers?: ConnectOptions['timers'] } = {},
): Promise<Record<string, unknown>> {
  const timeout_ms = options.connect_timeout_ms ?? FLOW_TIMEOUTS.handshake_timeout_ms;
  let conn: Connection | null = null;
  // A full server is retried as a session's opening is: sglang-omni's client's 3 retries 0.25 s apart.
  return admitted(
    async () => {
      const c = WsConnection.open(url, { ...options, session_id: 'greeting' });
      conn = c;
      try {
        const created = waitForSessionCreated(c, timeout_ms);
        await Promise.all([c.opened, created]);
        return (await created).frame.event();
      } finally {
        await c.close(1000);
      }
    },
    { policy: NATIVE_ADMISSION, url, session_id: 'greeting', timers: () => (conn as Connection).timers },
  );
}
