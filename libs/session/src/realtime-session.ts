import { BehaviorSubject, merge, Subject, Subscription, takeWhile, type Observable } from 'rxjs';
import { ConversationPlayer, pcm16BytesPerMs, type PacketSource, type VoiceSession } from '@duplex-bench/audio';
import { ticks, timersOn, type Clock, type DeadlineScheduler, type TimerHost } from '@duplex-bench/pacer';
import { ProtocolError, VLLM_CAPACITY_CODE, type ResponseEvent } from '@duplex-bench/protocol';
import {
  createSessionFlow,
  lockstepAppends,
  sendAppends,
  sendCommits,
  TransportError,
  WsConnection,
  type Connect,
  type Connection,
  type DialectConfig,
  type IncompleteReason,
  type NativeDrainReport,
  type ServerEventSeqFigures,
  type SessionFlow,
  type SendReceipt,
  type SessionGrant,
} from '@duplex-bench/transport';
import { traceReceipts, traceReceived, TraceWriteError, type SessionTraceSink } from '@duplex-bench/tracer';
import { countUnknownTypes } from './receive/count-unknown';
import { hearModel } from './receive/hear-model';
import { readFrames } from './receive/read-frames';
import { trackResponses } from './receive/track-responses';
import { trackUnits } from './receive/track-units';
import { watchServerErrors } from './receive/watch-server-errors';
import { afterSend } from './send/after-send';
import { countInputSent, type InputSent } from './send/count-input';
import { countPackets } from './send/count-packets';
import { markStreamStart } from './send/mark-stream-start';
import {
  overlapMs,
  recordPacing,
  ResponseTracker,
  sessionSpeech,
  sessionTurns,
  type BehaviourOptions,
  type SessionSpeech,
  type TurnRecord,
  type PacingRecorder,
  type ResponseRecord,
  type SampleStore,
  type SessionResponseMetrics,
  type SessionUnits,
  type UnitLagRecorder,
} from '@duplex-bench/metrics';

/** Everything sessions of one process share. */
export interface SessionContext {
  url: string;
  dialect: DialectConfig;
  /** Upgrade request headers (a bearer key); never traced or written. */
  headers?: Record<string, string>;
  clock: Clock;
  /** The timers of every bound and backoff on the session's connections (default: real ones reading `clock`); tests fire them by hand. */
  timers?: TimerHost;
  /** Opens each attempt's connection (default: a WebSocket, `WsConnection.open`); specs pass a fake server's. */
  connect?: Connect;
  scheduler: DeadlineScheduler;
  packets: PacketSource;
  pacing: PacingRecorder;
  samples: SampleStore;
  connect_timeout_ms: number;
  /** Bound on the dialect's handshake (their clients': native 10 s, vllm-omni 30 s). */
  handshake_timeout_ms?: number;
  drain_timeout_ms: number;
  /** Bound on the dialect's close (`session.closed`; vllm-omni's client: 20 s). */
  close_timeout_ms?: number;
  /** A refused admission (HTTP 503; vLLM-Omni `resource_exhausted`) is retried this often, with a doubling backoff. */
  admission?: AdmissionPolicy;
  /** Rate of the server's output audio, for durations computed from bytes, until a server grants one. */
  output_sample_rate: number;
  /** The user gave `output_sample_rate` (`--output-sample-rate`): it overrides what a server grants. */
  output_sample_rate_given?: boolean;
  /** Told of each session's grant (run.json records it; a flag that disagrees is warned about). */
  onGrant?(grant: SessionGrant): void;
  /** Emits once to stop sending on every session (SIGINT); replays to sessions that start later. */
  stop$: Observable<void>;
  /** Received event types that the dialect does not define, counted by type. */
  unknownEvents: Map<string, number>;
  onStreamStart(): void;
  onStreamEnd(): void;
  /** Told of each session's final result (live telemetry counts them as they end). */
  onSessionEnd?(result: SessionResult): void;
  /** Told of each model response as it finishes (live telemetry's latency histograms). */
  onResponse?(response: ResponseRecord): void;
  /** When set, input ends are held until every session of the run has sent its last packet. */
  allSent?: SendBarrier;
  /** Native servers: each unit's lag (input complete → its `sglang.unit.done`), pooled over the process's sessions. */
  units?: UnitLagRecorder;
  /**
   * Lockstep pacing (native): each unit's input is sent once the server reported the previous unit
   * done, bounded per unit; no realtime schedule, so no pacing deviation. Absent: realtime pacing.
   */
  lockstep?: { unit_timeout_ms: number };
  /** With a conversation: the bounds its behaviour figures are read with. */
  behaviour?: BehaviourOptions;
  /** With a conversation: each session's model audio to the voice activity thread, whose spans the figures read. */
  voice?: (session_id: string) => VoiceSession;
}

/** How a session waits for a slot on a full server: `retries` more attempts, `backoff_ms` doubling up to `max_backoff_ms`. */
export interface AdmissionPolicy {
  retries: number;
  backoff_ms: number;
  max_backoff_ms: number;
}

/** sglang-omni's client: 3 retries 0.25 s apart. */
export const NATIVE_ADMISSION: AdmissionPolicy = { retries: 3, backoff_ms: 250, max_backoff_ms: 250 };

/** The wait before retry `attempt` (from 1). */
export function admissionBackoffMs(policy: AdmissionPolicy, attempt: number): number {
  return Math.min(policy.max_backoff_ms, policy.backoff_ms * 2 ** (attempt - 1));
}

/** The refusal of a full server, when `err` is one: HTTP 503 at the upgrade, or vLLM-Omni's `resource_exhausted` error. */
export function admissionRefusal(err: unknown): { http_status?: number; code?: string } | null {
  if (err instanceof TransportError && (err.reason === 'connect_failed' || err.reason === 'admission_refused') && err.info.status === 503) return { http_status: 503 };
  if (err instanceof ProtocolError && err.info.server_code === VLLM_CAPACITY_CODE) return { code: VLLM_CAPACITY_CODE };
  return null;
}

export interface SessionResult {
  id: string;
  completed: boolean;
  reason?: IncompleteReason;
  message?: string;
  violation: boolean;
  packets_sent: number;
  late: number;
  server_errors: number;
  /** Received server `error` events by their code (`error.code`, else `error.type`). */
  server_error_codes?: Record<string, number>;
  /** The server error that ended the session, when one did. */
  server_error?: { code?: string; fatal: boolean; message: string };
  drain?: NativeDrainReport;
  /** vLLM-Omni's own events, counted: listen decisions, resyncs asked, expiries, playback acknowledgements. */
  dialect_events?: Record<string, number>;
  /** The server's own event numbering (vLLM-Omni `server_event_seq`), when it numbers its events. */
  server_event_seq?: ServerEventSeqFigures;
  /** The input unit the server announced (vLLM-Omni `chunk_period_ms`), when it did. */
  server_chunk_period_ms?: number;
  /** Output audio rate the figures used: the flag's when given, else the server's grant, else the run's assumption. */
  output_sample_rate?: number;
  /** Output audio deltas counted by the rate each stated (vLLM-Omni `sample_rate_hz`), when the deltas state one. */
  delta_sample_rates?: Record<string, number>;
  /** Admission refusals before the session got its slot (or before it gave up). */
  admission_refusals?: number;
  /** The native server's unit (`native_unit_ms` of its grant), when it granted one. */
  native_unit_ms?: number;
  /** Completed model turns and the session's response figures, when the server answered with responses. */
  responses?: ResponseRecord[];
  response_metrics?: SessionResponseMetrics;
  /** A conversation's behaviour events (turns.jsonl), and its user and model speech at once, ms. */
  turns?: TurnRecord[];
  overlap_ms?: number;
  /** A conversation's steps, model speech spans and response events (speech.jsonl), for its timeline. */
  speech?: SessionSpeech;
  /** A conversation: passes through the script, and steps played. */
  conversation?: { passes: number; steps: number; /** Where the model speech spans came from: the VAD, or the live energy estimate. */ speech_spans: 'vad' | 'energy' };
}

/**
 * Resolves once `count` sessions have each reported that they are done sending. Sessions send
 * `sglang.input_audio.end` only then: at 512 sessions the end flows of the first sessions to finish
 * (frames, socket closes, receipts) took the loop while the others' last packets were due, and made
 * them up to 80 ms late. Holding the ends moves the input end of an early session by at most the
 * start spread (one packet by default).
 */
export class SendBarrier {
  private left = Infinity;
  private release!: () => void;
  readonly passed = new Promise<void>((resolve) => (this.release = resolve));

  /** Sets how many sessions will report; call once, before streaming. */
  expect(count: number): void {
    this.left = count;
    if (count <= 0) this.release();
  }

  done(): void {
    if (--this.left <= 0) this.release();
  }
}

/** Maps any error a session can end with to its incomplete reason. */
export function reasonOf(err: unknown): { reason: IncompleteReason; message: string } {
  if (err instanceof TransportError) return { reason: err.reason, message: err.message };
  if (err instanceof ProtocolError) {
    return { reason: err.code === 'MALFORMED_FRAME' ? 'malformed_frame' : 'server_error', message: err.message };
  }
  if (err instanceof TraceWriteError) return { reason: 'trace_write_failed', message: err.message };
  return { reason: 'server_closed', message: err instanceof Error ? err.message : String(err) };
}

/**
 * One realtime session in the run's dialect: open and handshake (`open`), then stream packets from
 * `start_s` and end the flow (`stream`). Received frames are traced from the first one.
 */
export class RealtimeSession {
  private connection: Connection | null = null;
  private receiving: Subscription | null = null;
  private watching: Subscription | null = null;
  private flow: SessionFlow;
  private admission_refusals = 0;
  /** When the last attempt's connection opened and its handshake completed, clock seconds (an arrival's connect and handshake latency). */
  readonly opening: { connected_s: number | null; handshake_s: number | null } = { connected_s: null, handshake_s: null };
  private server_errors = 0;
  private readonly server_error_codes: Record<string, number> = {};
  /** The last server `error` event: a session the server closes after it ended for that error. */
  private lastServerError: ProtocolError | null = null;
  /** The server error that stops this session (the dialect's flow says which do). */
  private stoppedBy: ProtocolError | null = null;
  private readonly stopped$ = new Subject<void>();
  private native_unit_ms: number | undefined;
  /** Send start of packet 0 and the input sent since, for the end of input. */
  private origin_s: number | null = null;
  /** The packet source said its input ended before packet_count (`inputOverAt`): the stream is complete. */
  private inputOver = false;
  /** The input sent since packet 0. */
  private readonly input: InputSent = { bytes: 0 };
  private readonly responsesStarted = (): boolean => this.responses !== null;
  private readonly addResponse = (r: ResponseEvent): void => {
    this.responses?.add(r);
    if (r.kind === 'response_done') this.conversation?.responseEnded(r.t_s, r.status);
    else if (r.kind === 'response_created') this.conversation?.responseStarted(r.t_s);
  };
  /** The session's input when it follows a conversation (its packets are a ConversationPlayer). */
  private readonly conversation: ConversationPlayer | null;
  /** A conversation's model audio, to the voice activity thread. */
  private voice: VoiceSession | null = null;
  private chunk_period_ms: number | undefined;
  private broken: Error | null = null;
  /** Response metrics from the start of the input stream (packet 0's send). */
  private responses: ResponseTracker | null = null;
  /** The server's output rate: granted in session.updated, else the run's --output-sample-rate. */
  private output_sample_rate: number;
  /** Native: this session's units (lag of each `sglang.unit.done`), once the server granted its unit. */
  private units: SessionUnits | null = null;
  /** Lockstep: the count of `sglang.unit.done` received, for the sends that wait on it. */
  private unitsDone$: BehaviorSubject<number> | null = null;

  constructor(
    readonly id: string,
    private readonly ctx: SessionContext,
    private readonly sink: SessionTraceSink,
    /** This session's input; the run's shared packets when not given. */
    private readonly packets: PacketSource = ctx.packets,
  ) {
    this.output_sample_rate = ctx.output_sample_rate;
    this.flow = createSessionFlow(ctx.dialect, id);
    this.conversation = packets instanceof ConversationPlayer ? packets : null;
  }

  /** The session's connection; exists once `open()` was called. */
  get conn(): Connection {
    if (!this.connection) throw new Error(`session ${this.id} was never opened`);
    return this.connection;
  }

  /**
   * Connects and completes the handshake. Frames are traced from the first one. A full server's
   * refusal (HTTP 503, `resource_exhausted`) is an admission record, each one, and another attempt
   * after a backoff, up to the policy's retries; then the session fails as `admission_refused`.
   */
  async open(): Promise<void> {
    const policy = this.ctx.admission ?? NATIVE_ADMISSION;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.attempt();
        return;
      } catch (err) {
        const refusal = admissionRefusal(err);
        if (!refusal) throw err;
        this.admission_refusals = attempt;
        this.sink.admission(attempt, refusal, this.ctx.clock.now_s());
        const said = refusal.http_status ? `HTTP ${refusal.http_status}` : `${refusal.code}`;
        if (attempt > policy.retries) {
          throw new TransportError('admission_refused', `server refused the session with ${said} ${attempt} times`, { url: this.ctx.url, session_id: this.id, attempts: attempt, status: refusal.http_status, server_code: refusal.code });
        }
        this.forgetAttempt();
        await new Promise<void>((resolve) => this.conn.timers.arm(admissionBackoffMs(policy, attempt), resolve));
        this.flow = createSessionFlow(this.ctx.dialect, this.id);
      }
    }
  }

  /** A refused attempt leaves nothing behind: its connection, its receivers and its counts go. */
  private forgetAttempt(): void {
    this.receiving?.unsubscribe();
    this.watching?.unsubscribe();
    this.server_errors = 0;
    for (const code of Object.keys(this.server_error_codes)) delete this.server_error_codes[code];
    this.lastServerError = null;
    this.broken = null;
  }

  private async attempt(): Promise<void> {
    const { ctx, sink } = this;
    const conn = (ctx.connect ?? WsConnection.open)(ctx.url, {
      clock: ctx.clock,
      ...(ctx.timers ? { timers: ctx.timers } : {}),
      connect_timeout_ms: ctx.connect_timeout_ms,
      session_id: this.id,
      headers: ctx.headers,
      // Refusals are retried here, one policy for both kinds.
      retries_on_503: 0,
    });
    this.connection = conn;
    this.opening.connected_s = null;
    this.opening.handshake_s = null;
    conn.opened.then(
      () => (this.opening.connected_s = ctx.clock.now_s()),
      () => undefined, // a failed open is the handshake's error, raised below
    );
    // The path of one received frame: the socket (events$) → its trace line, as it arrived → what it
    // says of the model's responses → unit receipts (native) → server errors → unknown types counted
    // → with a conversation, the model's audio played out. With traces off nothing is written per
    // frame: the tracing operator is left out of the pipe.
    const traced$ = sink.tracesFrames ? conn.events$.pipe(traceReceived(sink)) : conn.events$;
    const stages = [
      trackResponses(this.responsesStarted, this.addResponse),
      trackUnits((received_s: number) => this.onUnitDone(received_s)),
      watchServerErrors((error: ProtocolError) => this.onServerError(error)),
      countUnknownTypes(() => this.flow, ctx.unknownEvents),
    ];
    if (this.conversation) {
      this.voice ??= ctx.voice?.(this.id) ?? null;
      stages.push(hearModel(this.conversation.playout, this.voice, () => this.output_sample_rate));
    }
    this.receiving = traced$
      .pipe(readFrames(...stages))
      .subscribe({
        error: (err: Error) => {
          this.broken = err;
        },
      });
    this.watching = this.flow.attach(conn);
    const grant = await this.flow.handshake(conn, this.packets.sample_rate, this.flowOptions());
    this.opening.handshake_s = ctx.clock.now_s();
    // The server's grant decides the output rate; a rate the user gave overrides it (the run warns when they differ).
    if (grant.output_sample_rate && !ctx.output_sample_rate_given) this.output_sample_rate = grant.output_sample_rate;
    this.chunk_period_ms = grant.chunk_period_ms;
    this.native_unit_ms = grant.native_unit_ms;
    ctx.onGrant?.(grant);
    if (grant.native_unit_ms && ctx.units) {
      this.units = ctx.units.session(grant.native_unit_ms, this.packets.total_bytes / pcm16BytesPerMs(this.packets.sample_rate));
      if (ctx.lockstep) this.unitsDone$ = new BehaviorSubject(0);
    } else if (ctx.lockstep) {
      throw new TransportError('server_error', 'lockstep pacing needs the native_unit_ms of the grant; the server granted none');
    }
  }

  private onUnitDone(received_s: number): void {
    const units = this.units;
    if (!units) return;
    units.unitDone(received_s);
    this.unitsDone$?.next(units.done);
  }

  private onServerError(error: ProtocolError): void {
    this.server_errors++;
    const code = error.info.server_code ?? error.info.server_type ?? 'unknown';
    this.server_error_codes[code] = (this.server_error_codes[code] ?? 0) + 1;
    this.lastServerError = error;
    if (!this.stoppedBy && this.flow.endsOn(error)) {
      this.stoppedBy = error;
      this.stopped$.next();
    }
  }

  /** The input unit the server announced in its handshake, if it did (after `open`). */
  get serverChunkPeriodMs(): number | undefined {
    return this.chunk_period_ms;
  }

  private sendControl(frame: string): void {
    const sent_s = this.ctx.clock.now_s();
    this.conn.send(frame);
    this.sink.sent(frame, sent_s);
  }

  private flowOptions() {
    return {
      clock: this.ctx.clock,
      onSend: (frame: string, sent_s: number) => this.sink.sent(frame, sent_s),
      handshake_timeout_ms: this.ctx.handshake_timeout_ms ?? this.ctx.connect_timeout_ms,
      drain_timeout_ms: this.ctx.drain_timeout_ms,
      ...(this.ctx.close_timeout_ms !== undefined ? { close_timeout_ms: this.ctx.close_timeout_ms } : {}),
    };
  }

  /** Throws what ended the session while it streamed or waited: a broken socket or a server error. */
  private throwIfEnded(): void {
    if (this.broken) throw this.broken;
    if (this.stoppedBy) throw this.stoppedBy;
  }

  /** Resolves when `until` does, or at once when a server error stops the session. */
  private unlessStopped(until: Promise<void>): Promise<void> {
    if (this.stoppedBy) return Promise.resolve();
    let sub: Subscription | undefined;
    const stopped = new Promise<void>((resolve) => (sub = this.stopped$.subscribe(() => resolve())));
    return Promise.race([until, stopped]).finally(() => sub?.unsubscribe());
  }

  /** When the input sent has played out in real time from packet 0's send start; null before packet 0. */
  private inputPlayedAt_s(): number | null {
    if (this.origin_s === null) return null;
    return this.origin_s + this.input.bytes / pcm16BytesPerMs(this.packets.sample_rate) / 1000;
  }

  /**
   * The end of input goes no earlier than packet 0's send start plus the input sent: the packets'
   * audio has then played out in real time, as sglang-omni's client waits.
   */
  private untilInputPlayed(): Promise<void> {
    const end_s = this.inputPlayedAt_s();
    if (end_s === null || this.ctx.clock.now_s() >= end_s) return Promise.resolve();
    return new Promise<void>((resolve) => this.ctx.scheduler.schedule(end_s, () => resolve()));
  }

  /**
   * Closes a session that ended early. Where the dialect's flow says so (native: after a server
   * error; vllm-omni: always) it closes the session in the dialect's way and waits (bounded) for
   * the server's `session.closed`; then the socket closes with a close frame, dropped only when
   * the server does not answer in time.
   */
  private async closeAfter(err: unknown): Promise<string | null> {
    let note: string | null = null;
    if (this.conn.isOpen && this.flow.closesOnFailure(err)) {
      try {
        await this.flow.abort(this.conn, err, this.flowOptions());
      } catch (closeErr) {
        note = reasonOf(closeErr).message;
      }
    }
    this.conn.fail(err instanceof Error ? err : new Error(String(err)));
    return note;
  }

  /** Streams every packet from `start_s`, ends the flow, and closes the trace. Never rejects. */
  async stream(start_s: number): Promise<SessionResult> {
    const result: SessionResult = { id: this.id, completed: false, violation: false, packets_sent: 0, late: 0, server_errors: 0 };
    try {
      try {
        // A server error between the handshake and the start ends the session before any packet.
        this.throwIfEnded();
        await this.sendAll(start_s, result);
      } finally {
        this.ctx.allSent?.done();
      }
      this.throwIfEnded();
      // Lockstep ends its input as soon as the last packet went, as their client does: there is no realtime play-out to wait for.
      if (this.ctx.allSent && !this.ctx.lockstep) {
        await this.unlessStopped(this.ctx.allSent.passed);
        // The barrier's wait past the real client's rule is the client's own: measured, and left out of the server's figures.
        const played_s = this.inputPlayedAt_s();
        if (played_s !== null) this.responses?.excludeInputEndHold(played_s, this.ctx.clock.now_s());
      }
      this.throwIfEnded();
      if (!this.ctx.lockstep) await this.unlessStopped(this.untilInputPlayed());
      this.throwIfEnded();
      const report = await this.flow.end(this.conn, this.flowOptions());
      if (report.drain) result.drain = report.drain;
      // A stream cut short (SIGINT) ends its session cleanly but is not a complete measurement.
      if (result.packets_sent < this.packets.packet_count && !this.inputOver) {
        Object.assign(result, { reason: 'interrupted', message: `stopped after ${result.packets_sent} of ${this.packets.packet_count} packets` });
      } else result.completed = true;
    } catch (err) {
      Object.assign(result, this.reasonWithServerError(err));
      const note = await this.closeAfter(err);
      if (note) result.message = `${result.message}; then ${note}`;
    }
    return this.finish(result);
  }

  /** Ends a session that never got to stream (its open failed). */
  async abandon(err: unknown): Promise<SessionResult> {
    const result: SessionResult = { id: this.id, completed: false, violation: false, packets_sent: 0, late: 0, server_errors: 0, ...this.reasonWithServerError(err) };
    if (this.connection) {
      const note = await this.closeAfter(err);
      if (note) result.message = `${result.message}; then ${note}`;
    }
    return this.finish(result);
  }

  /** A server that closes the session after an `error` event ended it for that error. */
  private reasonWithServerError(err: unknown): { reason: IncompleteReason; message: string } {
    const r = reasonOf(err);
    if (r.reason === 'server_closed' && this.lastServerError) return { reason: 'server_error', message: `${this.lastServerError.message}; then ${r.message}` };
    return r;
  }

  private async finish(result: SessionResult): Promise<SessionResult> {
    this.receiving?.unsubscribe();
    this.watching?.unsubscribe();
    this.units?.finish();
    result.server_errors = this.server_errors;
    if (this.server_errors > 0) result.server_error_codes = this.server_error_codes;
    const ended = this.stoppedBy ?? (result.reason === 'server_error' ? this.lastServerError : null);
    if (ended) result.server_error = { code: ended.info.server_code ?? ended.info.server_type, fatal: ended.info.fatal === true, message: ended.message };
    else if (result.reason === 'client_protocol_error' && this.lastServerError) {
      const e = this.lastServerError;
      result.server_error = { code: e.info.server_code ?? e.info.server_type, fatal: false, message: e.message };
    }
    if (this.admission_refusals > 0) result.admission_refusals = this.admission_refusals;
    const rates = this.flow.deltaSampleRates?.();
    if (rates) result.delta_sample_rates = rates;
    if (this.native_unit_ms !== undefined) result.native_unit_ms = this.native_unit_ms;
    if (this.conversation && this.origin_s !== null) await this.readTurns(result, this.conversation, this.origin_s);
    else this.voice?.end().catch(() => undefined); // a session that never streamed: its VAD state goes
    // What ended an incomplete session goes into its trace, in every trace mode.
    if (!result.completed) this.sink.error(`${result.reason ?? 'incomplete'}: ${result.message ?? ''}`, this.ctx.clock.now_s());
    const seq = this.flow.serverEventSeq();
    if (seq) result.server_event_seq = seq;
    const own = this.flow.dialectEvents();
    if (own) result.dialect_events = own;
    if (this.chunk_period_ms !== undefined) result.server_chunk_period_ms = this.chunk_period_ms;
    result.output_sample_rate = this.output_sample_rate;
    // A session the server answered keeps its stream figures even with no finished response:
    // dropping it would leave only the sessions that got that far (survivorship).
    if (this.responses?.answered) {
      result.responses = this.responses.done;
      result.response_metrics = this.responses.metrics();
    }
    try {
      await this.sink.close();
    } catch (err) {
      if (result.completed) {
        result.completed = false;
        Object.assign(result, reasonOf(err));
      }
    }
    this.ctx.onSessionEnd?.(result);
    return result;
  }

  /**
   * A conversation's behaviour events, read once the session is over: from what it played, the
   * model's speech on the playout clock (the VAD's spans; the live estimate's without a voice
   * thread, or when the VAD failed, said in `speech_spans`) and the dialect's response ends.
   */
  private async readTurns(result: SessionResult, player: ConversationPlayer, origin_s: number): Promise<void> {
    player.endSession(this.ctx.clock.now_s());
    let spans = player.playout.spans();
    let source: 'vad' | 'energy' = 'energy';
    if (this.voice) {
      try {
        spans = await this.voice.end();
        source = 'vad';
      } catch (err) {
        result.message = `${result.message ? `${result.message}; ` : ''}${(err as Error).message}: figures from the live energy estimate`;
      }
    }
    const options = this.ctx.behaviour ?? { max_stop_s: 3, takeover_min_ms: 500, listen_max_s: () => 15 };
    result.turns = sessionTurns(this.id, player.steps, spans, player.responseEnds, origin_s, options);
    result.overlap_ms = overlapMs(player.steps, spans);
    result.speech = sessionSpeech(this.id, player.steps, spans, { starts: player.responseStarts, ends: player.responseEnds }, origin_s, source);
    result.conversation = { passes: (player.steps.at(-1)?.pass ?? 0) + 1, steps: player.steps.length, speech_spans: source };
  }

  /** Packet 0 is going: the input stream starts, and with it the response figures. */
  private onStreamStart(origin_s: number): void {
    this.origin_s = origin_s;
    this.responses = new ResponseTracker({ output_sample_rate: this.output_sample_rate, onDone: this.ctx.onResponse }, origin_s);
    this.ctx.onStreamStart();
  }

  /**
   * The sends, packet to traced receipt: realtime, absolute-deadline ticks → each as the dialect's
   * append, sent (`sendAppends`) → receipts traced → pacing recorded; lockstep, each unit's packets
   * sent once the previous unit is done (`lockstepAppends`) → receipts traced, with no pacing to
   * record (no schedule). Chosen once per session: the realtime path is the same pipe as before.
   */
  private sends(start_s: number): Observable<SendReceipt & { late?: boolean }> {
    const { scheduler, pacing, clock, lockstep } = this.ctx;
    const { packets, flow } = this;
    const prefix = `${this.id}_a`;
    if (lockstep && this.units && this.unitsDone$) {
      const input_ms = packets.total_bytes / pcm16BytesPerMs(packets.sample_rate);
      const plan = {
        start_s,
        packet_count: packets.packet_count,
        inputEndMs: (seq: number) => Math.min((seq + 1) * packets.packet_ms, input_ms),
        unit_ms: this.units.unit_ms,
        unit_timeout_ms: lockstep.unit_timeout_ms,
      };
      return lockstepAppends(this.conn, flow, packets, prefix, clock, this.ctx.timers ?? timersOn(clock), this.unitsDone$, plan).pipe(traceReceipts(this.sink));
    }
    const due = ticks(scheduler, { start_s, period_ms: packets.packet_ms, count: packets.packet_count });
    // A source that ends as it plays (a conversation played once) ends the ticks where it says.
    const inputOverAt = packets.inputOverAt?.bind(packets);
    const input = inputOverAt
      ? due.pipe(
          takeWhile((tick) => {
            this.inputOver = inputOverAt(tick.seq);
            return !this.inputOver;
          }),
        )
      : due;
    return input.pipe(
      sendAppends(this.conn, flow, packets, prefix, clock),
      traceReceipts(this.sink),
      recordPacing(pacing, this.ctx.samples.open(this.id)),
    );
  }

  /**
   * The paced send pipeline, tick to receipt: absolute-deadline ticks → each as the dialect's append,
   * sent (`sendAppends`) → send receipts traced → pacing recorded; each append's turn commits follow
   * it. Resolves when every packet went (or a stop came), rejects when the socket broke.
   */
  private sendAll(start_s: number, result: SessionResult): Promise<void> {
    const { stop$ } = this.ctx;
    const { packets, flow } = this;
    return new Promise<void>((resolve, reject) => {
      let streaming = false;
      let ended = false;
      // A Subscription up front: end() may run before subscribe() returns (a stop that came first).
      const sub = new Subscription();
      const end = (err?: unknown) => {
        if (ended) return;
        ended = true;
        if (streaming) this.ctx.onStreamEnd();
        sub.unsubscribe();
        if (err) reject(err);
        else resolve();
      };
      // A session that breaks while streaming stops its ticks at once (one already broken, before the first);
      // a stop (SIGINT, a server error that ends the session) stops them after the packet in hand.
      sub.add(this.conn.ended$.subscribe({ error: (err) => end(err) }));
      sub.add(merge(stop$, this.stopped$).subscribe(() => end()));
      if (ended) return;
      // The path of one packet, after its send: the input stream's start → the input sent (unit
      // lag runs from it) → the turn commits that follow the append → the session's counts.
      sub.add(
        this.sends(start_s)
          .pipe(
            afterSend<SendReceipt & { late?: boolean }>(
              markStreamStart((start) => {
                streaming = true;
                this.onStreamStart(start);
              }),
              countInputSent(packets, this.input, (start, sent_ms, completed) => this.units?.inputSent(start, sent_ms, completed)),
              sendCommits(flow, (frame) => this.sendControl(frame)),
              countPackets(result),
            ),
          )
          .subscribe({ complete: () => end(), error: (err) => end(err) }),
      );
    });
  }
}
