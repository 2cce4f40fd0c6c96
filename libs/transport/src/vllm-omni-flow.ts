import { every } from '@duplex-bench/pacer';
import type { Subscription } from 'rxjs';
import * as protocol from '@duplex-bench/protocol';
import type { DecodedFrame } from '@duplex-bench/protocol';
import type { WsConnection } from './connection';
import { waitForEvent } from './wait-for';
import { waitForQuiet } from './wait-quiet';
import { FLOW_TIMEOUTS, sendTraced, type EndReport, type FlowOptions, type ServerEventSeqFigures, type SessionFlow, type SessionGrant, type VllmOmniFlowConfig } from './flow';

// Bound once at load: under tsx a call through an imported name costs about 40 ns more
// (tools/bench/import-binding.ts), and these run for every frame or packet.
const { audioDeltaInfo, base64ByteLength, chunkPeriodMs, gaEventName, isKnownOpenAIType, isKnownVllmType, OpenAIEvent, serverError, ServerEventSeqTracker, serverEventSeq, VllmEvent, vllmAppend, vllmCommit, vllmEventAck, vllmPlaybackAck, vllmSessionClose, vllmSessionRates, vllmSessionUpdate } = protocol;



interface Playback {
  /** Output audio received for the response, ms at its stated rate. */
  received_ms: number;
  acked_ms: number;
  done: boolean;
}

/**
 * vLLM-Omni's duplex flow, as its own client drives it (vllm_omni/clients/duplex.py): the client
 * speaks first with `session.update` and takes the `session.updated` that follows
 * `session.created`; every journaled event is answered with `session.event_ack`; playback is
 * acknowledged every 0.25 s with the audio received (the server holds a response open until its
 * audio is acknowledged: "ack only"); the session ends with the last commit, the responses
 * finished, a last acknowledgement, `session.close` and `session.closed`.
 *
 * Errors carry no fatal flag: one before `session.updated` ends the session, later ones are
 * counted (the server closes the socket when an error ends its session).
 */
export class VllmOmniFlow implements SessionFlow {
  readonly protocol = 'vllm-omni';
  private readonly seq = new ServerEventSeqTracker();
  private lastAcked = 0;
  private readonly playback = new Map<string, Playback>();
  private readonly open = new Set<string>();
  private options: FlowOptions = {};
  private conn: WsConnection | null = null;
  private ready = false;
  private closeSent = false;
  private output_rate = 24000;
  private input_rate = 16000;
  private sent_ms = 0;
  private uncommitted = 0;
  private commits = 0;
  private sends = 0;
  /** A commit sent and not yet answered with `input_audio_buffer.committed` (or an error). */
  private awaitingCommit = false;
  /**
   * Responses that existed when the last commit went: the server refuses an acknowledgement of
   * them after it (`playback_ack_too_late`, "arrived after a later user input was committed").
   */
  private beforeLastCommit: ReadonlySet<string> = new Set();
  private created: Record<string, unknown> | null = null;
  /** Counted events of vLLM-Omni's own that say something about the session. */
  private readonly counts = { listen: 0, resync_required: 0, expired: 0, playback_acknowledged: 0 };

  constructor(
    private readonly session_id: string,
    private readonly config: VllmOmniFlowConfig,
  ) {}

  private nextId(kind: string): string {
    return `${this.session_id}_${kind}${this.sends++}`;
  }

  private send(frame: string): void {
    const conn = this.conn;
    if (!conn || !conn.isOpen) return;
    sendTraced(conn, frame, this.options);
  }

  attach(conn: WsConnection): Subscription {
    this.conn = conn;
    const sub = conn.events$.subscribe({ next: (e) => this.observe(conn, e.frame), error: () => undefined });
    if (!this.config.no_playback_ack) {
      const period_ms = this.config.ack_every_ms ?? 250;
      sub.add(every(conn.timers, period_ms, { background: true }).subscribe(() => this.ackPlayback()));
    }
    return sub;
  }

  isKnownType(type: string): boolean {
    return isKnownOpenAIType(type) || isKnownVllmType(type);
  }

  private observe(conn: WsConnection, frame: DecodedFrame): void {
    const n = serverEventSeq(frame);
    this.seq.add(n);
    const type = gaEventName(frame.type);
    switch (type) {
      case OpenAIEvent.sessionCreated:
        this.created = frame.event();
        break;
      case OpenAIEvent.responseCreated: {
        const id = String((frame.event().response as { id?: unknown } | undefined)?.id ?? '');
        this.open.add(id);
        break;
      }
      case OpenAIEvent.audioDelta: {
        const info = audioDeltaInfo(frame);
        const p = this.playbackOf(info.response_id);
        p.received_ms += (info.bytes / ((info.sample_rate_hz ?? this.output_rate) * 2)) * 1000;
        break;
      }
      case OpenAIEvent.responseDone: {
        const id = String((frame.event().response as { id?: unknown } | undefined)?.id ?? '');
        this.finish(id);
        break;
      }
      case VllmEvent.responseListen: {
        this.counts.listen++;
        // With a response id, the model decided to listen instead of speaking: that response ends.
        const id = frame.event().response_id;
        if (typeof id === 'string' && id) this.finish(id);
        break;
      }
      case OpenAIEvent.committed:
        this.awaitingCommit = false;
        break;
      case VllmEvent.playbackAcknowledged:
        this.counts.playback_acknowledged++;
        break;
      case VllmEvent.resyncRequired:
        this.counts.resync_required++;
        break;
      case VllmEvent.sessionExpired:
        this.counts.expired++;
        break;
      case OpenAIEvent.error: {
        this.awaitingCommit = false;
        if (!this.ready) conn.fail(serverError(frame));
        break;
      }
      default:
        break;
    }
    // Every journaled event is acknowledged, as their client does after dispatching it.
    if (n !== undefined && n > this.lastAcked) {
      this.lastAcked = n;
      this.send(vllmEventAck(this.nextId('k'), n));
    }
  }

  private playbackOf(response_id: string): Playback {
    let p = this.playback.get(response_id);
    if (!p) {
      p = { received_ms: 0, acked_ms: 0, done: false };
      this.playback.set(response_id, p);
    }
    return p;
  }

  private finish(response_id: string): void {
    this.open.delete(response_id);
    const p = this.playback.get(response_id);
    if (p) p.done = true;
  }

  /** Acknowledges, per response, the audio received and not yet acknowledged; forgets finished, acknowledged ones. */
  private ackPlayback(): void {
    if (!this.ready || this.closeSent || this.config.no_playback_ack) return;
    for (const [id, p] of this.playback) {
      if (this.beforeLastCommit.has(id)) continue;
      if (Math.floor(p.received_ms) > Math.floor(p.acked_ms)) {
        p.acked_ms = p.received_ms;
        this.send(vllmPlaybackAck(this.nextId('p'), id, p.received_ms));
      }
      if (p.done && p.acked_ms >= p.received_ms) this.playback.delete(id);
    }
  }

  async handshake(conn: WsConnection, input_sample_rate: number, options: FlowOptions): Promise<SessionGrant> {
    this.options = options;
    this.input_rate = input_sample_rate;
    const timeout_ms = options.handshake_timeout_ms ?? FLOW_TIMEOUTS.handshake_timeout_ms;
    // The client speaks first; the answer is session.created, then session.updated, often in one
    // read from the socket: both waits start before the update goes, so neither event is missed.
    const created = waitForEvent(conn, OpenAIEvent.sessionCreated, timeout_ms, 'handshake_timeout');
    const answered = waitForEvent(conn, OpenAIEvent.sessionUpdated, timeout_ms, 'handshake_timeout');
    // One promise holds both waits, so an open that fails leaves neither rejecting unhandled.
    const answers = Promise.all([created, answered]);
    answers.catch(() => undefined);
    await conn.opened;
    const request = { model: this.config.model, input_sample_rate, output_sample_rate: this.config.output_sample_rate ?? 24000, turn_detection: this.config.turn_detection };
    this.send(vllmSessionUpdate(this.nextId('u'), request));
    const [, updated] = await answers;
    this.ready = true;
    const session = (updated.frame.event().session ?? {}) as Record<string, unknown>;
    const grant: SessionGrant = {};
    const output = vllmSessionRates(session).output;
    if (output) {
      grant.output_sample_rate = output;
      this.output_rate = output;
    }
    const chunk = chunkPeriodMs(updated.frame.event()) ?? (this.created ? chunkPeriodMs(this.created) : undefined);
    if (chunk) grant.chunk_period_ms = chunk;
    return grant;
  }

  append(event_id: string, _seq: number, _t_start_ms: number, audio_b64: Uint8Array): Buffer {
    const ms = base64ByteLength(audio_b64) / ((this.input_rate * 2) / 1000);
    this.sent_ms += ms;
    this.uncommitted++;
    return vllmAppend(event_id, audio_b64, this.input_rate, ms, this.sent_ms);
  }

  afterAppend(): string[] | null {
    if (this.config.turn_detection !== 'none' || this.uncommitted < this.config.commit_every_packets) return null;
    return [this.commitFrame()];
  }

  private commitFrame(): string {
    this.uncommitted = 0;
    this.awaitingCommit = true;
    return vllmCommit(`${this.session_id}_c${this.commits++}`);
  }

  endsOn(): boolean {
    return false;
  }

  private idle(): boolean {
    return this.open.size === 0 && !this.awaitingCommit;
  }

  /**
   * Acknowledge what was received, commit the last input, wait (bounded) until its answer is done
   * and the server quiet, acknowledge the responses that began after the commit (earlier ones
   * would be refused as too late), then `session.close` → `session.closed` and close the socket.
   */
  async end(conn: WsConnection, options: FlowOptions): Promise<EndReport> {
    const drain_ms = options.drain_timeout_ms ?? FLOW_TIMEOUTS.drain_timeout_ms;
    const close_ms = options.close_timeout_ms ?? FLOW_TIMEOUTS.close_timeout_ms;
    this.ackPlayback();
    if (this.uncommitted > 0) {
      this.send(this.commitFrame());
      this.beforeLastCommit = new Set([...this.playback.keys(), ...this.open]);
    }
    await waitForQuiet(conn, {
      idle: () => this.idle(),
      busy: () => `${this.open.size} responses open${this.awaitingCommit ? ', last commit unanswered' : ''}`,
      quiet_ms: this.config.end_quiet_ms ?? 200,
      drain_ms,
      session_id: this.session_id,
    });
    this.ackPlayback();
    await this.close(conn, close_ms);
    return {};
  }

  /** `session.close`, then (bounded) `session.closed`, then the socket closes with a close frame. */
  private async close(conn: WsConnection, close_ms: number): Promise<void> {
    const closed = waitForEvent(conn, VllmEvent.sessionClosed, close_ms, 'close_timeout');
    this.send(vllmSessionClose(this.nextId('x')));
    this.closeSent = true;
    await closed;
    await conn.close(close_ms);
  }

  /** Any failure with the socket open still ends with `session.close`: a plain disconnect holds the server's slot for its grace (30 s). */
  closesOnFailure(): boolean {
    return true;
  }

  async abort(conn: WsConnection, _error: unknown, options: FlowOptions): Promise<void> {
    await this.close(conn, options.close_timeout_ms ?? FLOW_TIMEOUTS.close_timeout_ms);
  }

  dialectEvents(): Record<string, number> {
    return { ...this.counts };
  }

  serverEventSeq(): ServerEventSeqFigures | null {
    if (this.seq.seen === 0) return null;
    const { seen, gaps, missing_events, not_rising } = this.seq;
    return { seen, gaps, missing_events, not_rising };
  }
}
