import { every, monotonicClock } from '@duplex-bench/pacer';
import type { Subscription } from 'rxjs';
import { audioDeltaInfo, base64ByteLength, chunkPeriodMs, gaEventName, isKnownOpenAIType, isKnownVllmType, OpenAIEvent, serverError, ServerEventSeqTracker, serverEventSeq, VLLM_ACK_RACE_CODE, VLLM_ACK_AFTER_END_CODE, vllmNotFoundResponseId, VLLM_CLIENT_PROTOCOL_CODES, VllmEvent, vllmAppend, vllmCommit, vllmEventAck, vllmHeartbeat, vllmPlaybackAck, vllmSessionClose, vllmResponseId, vllmSessionRates, vllmSessionUpdate, VLLM_TURN_SETTLE_MS, vllmAppendWithFrames, vllmFrameTransport, vllmImageItem, vllmItemDelete, VLLM_APPEND_FRAMES, VLLM_IMAGE_WINDOW, type VllmFrameTransport, type DecodedFrame } from '@duplex-bench/protocol';
import type { Connection } from './connection';
import { waitForEvent } from './wait-for';
import { waitForQuiet } from './wait-quiet';
import { TransportError } from './errors';
import { ItemPlayout } from './item-playout';
import { FrameTimes, framePeriodMs, VLLM_UNITS, vllmUnitClosesAt } from './camera';
import { sendTraced, type CameraFrames, type EndReport, type FlowOptions, type ServerEventSeqFigures, type SessionFlow, type SessionGrant, type VllmOmniFlowConfig, vllmDrainTimeoutMs, VLLM_TIMEOUTS } from './flow';

interface Playback {
  /** Output audio received for the response, ms at the rate each delta states. */
  received_ms: number;
  /** The played ms last acknowledged. */
  acked_ms: number;
  /** Acknowledged at least once: the server then keeps the response's place, and later acks are never too late. */
  acked: boolean;
  /** Commits sent before the response was created. */
  commits_before: number;
  /** The ledger refused its first ack as too late: it has no place, and is never acked again. */
  refused: boolean;
  done: boolean;
}

/** Their client's lease heartbeat (`heartbeat_interval_s` 30). */
const HEARTBEAT_MS = 30_000;

/**
 * How a session sends `video`'s frames given its capabilities (`vllmFrameTransport`): on the
 * appends, one a model unit (1 s) unless `fps` says otherwise, at most 2 a unit; or as image items, each within its share of
 * the window's 4 MiB (their client shrinks a larger frame; we ask for smaller ones). Checked at the
 * handshake, before any packet.
 */
export function vllmFramePlan(video: CameraFrames, capabilities: Record<string, unknown> | undefined): { transport: VllmFrameTransport; times: FrameTimes } {
  const transport = vllmFrameTransport(capabilities);
  if (!transport) throw new TransportError('input_not_granted', `--video: the session takes neither video_frames on appends nor input_image items (capabilities: ${JSON.stringify(capabilities ?? null)})`);
  // Past the clip's last frame their client holds it (`DuplexClient.stream_pcm`: `min(frames_sent, len(frames) - 1)`).
  const times = new FrameTimes(video, framePeriodMs(video, VLLM_UNITS.unit_ms), 'hold');
  // One frame a unit rides its closing append, and their client adds at most the unit's composite:
  // more frames a unit than an append takes would queue behind the units for ever.
  const per_unit = Math.ceil(VLLM_UNITS.unit_ms / times.period_ms - 1e-9);
  if (transport === 'append' && per_unit > VLLM_APPEND_FRAMES.max_frames) {
    throw new TransportError('input_not_granted', `--video-fps ${video.fps}: ${per_unit} frames per ${VLLM_UNITS.unit_ms} ms unit; an append takes at most ${VLLM_APPEND_FRAMES.max_frames} video_frames`);
  }
  const share = Math.floor(VLLM_IMAGE_WINDOW.max_bytes / (VLLM_IMAGE_WINDOW.max_items + 1));
  const b64 = Math.ceil((times.largest() * 4) / 3);
  if (transport === 'image_items' && b64 > share) {
    throw new TransportError('input_not_granted', `--video: a frame of ${times.largest()} bytes (${b64} in base64) is over its share of the image window (${share} of 4 MiB over 8 items); give smaller frames`);
  }
  if (transport === 'append' && b64 > VLLM_APPEND_FRAMES.max_base64_chars) {
    throw new TransportError('input_not_granted', `--video: a frame of ${times.largest()} bytes (${b64} in base64) is over the ${VLLM_APPEND_FRAMES.max_base64_chars} base64 characters the server takes of one video_frames entry; give smaller frames`);
  }
  return { transport, times };
}

/**
 * vLLM-Omni's duplex flow, as its own client drives it (vllm_omni/clients/duplex.py): the client
 * speaks first with `session.update` and takes `session.created`; every journaled event is
 * answered with `session.event_ack`; a heartbeat every 30 s; playback acknowledged every 0.25 s
 * (the server holds a response open until its audio is acknowledged: "ack only"); the session
 * ends with the last commit, the responses finished, a last acknowledgement, `session.close` and
 * `session.closed`.
 *
 * An ack's `played_ms` (and `committed_ms`, their client's default) is the response's audio played
 * on the session's playout clock by then, not the audio received: their ledger "reports how much
 * of a response it has actually played" and truncates the assistant item in history at it
 * (engine/duplex/session/playback_ledger.py@2e9bf1cb), and their client's `ResponseHandle.played_ms`
 * is what the application took for playback (clients/duplex.py@040aa6bd). Only their probe
 * shorthand `acknowledge_collected_playback` acks all audio received. So the server holds the next
 * turn until the audio has played, as it would for a user's speaker, and a barge-in's history keeps
 * what the user heard.
 *
 * The playback ledger (engine/duplex/session/playback_ledger.py) refuses an ack of a response
 * never acked before once a later user input was committed (`playback_ack_too_late`); an ack of
 * 0 ms keeps the response's place. So each response is acked at once when it is created, as
 * their `acknowledge_collected_playback` acks a response with no audio yet, and one that was never
 * acked is not acked after a later commit. That 0 ms ack can still race a commit that reaches
 * the server after it began the response (with its first output, binding it to the commits it
 * had) and before the response's `response.created` reached us (a server or network that lags):
 * the refusal is counted (`playback_ack_too_late`), the response is not acked again, and the
 * session goes on, as their runner ignores exactly this error. The server answers acks in order,
 * so the refused one is the oldest first ack not yet answered by `playback.acknowledged`. The 0 ms
 * ack can also race the response's end, on a server that begins a response before its first
 * output: a response it ends with no assistant text (a listen) leaves no item, and an ack taken
 * after that is `playback_item_not_found` naming it. When the response ended with no audio
 * received and that was its first ack, it is that race: counted (`playback_ack_after_end`), not
 * the client's fault.
 *
 * Errors carry no fatal flag: one before the session opened ends it; one that refuses what this
 * client sent (`playback_*` but the races above, `invalid_event_ack`, `unknown_event`, `input_audio_buffer_empty`)
 * means the client broke the contract and ends the session as `client_protocol_error`; others are
 * counted (the server closes the socket when an error ends its session). A session that fails
 * with its socket open says `session.close` before the close frame: a plain disconnect holds the
 * server's slot for its disconnect grace.
 */
/** Acks held for one write to the kernel at most (about 15 KB). */
const ACKS_PER_WRITE = 256;

export class VllmOmniFlow implements SessionFlow {
  readonly protocol = 'vllm-omni';
  private readonly seq = new ServerEventSeqTracker();
  private lastAcked = 0;
  /** Whether the socket is corked for the acks of the read being dispatched, and how many went since. */
  private corked = false;
  private corkedAcks = 0;
  /** Sends what the read's acks left corked: one function for the session, not one per read. */
  private readonly uncorkAcks = (): void => {
    this.corked = false;
    this.corkedAcks = 0;
    this.conn?.uncork?.();
  };
  private readonly playback = new Map<string, Playback>();
  /** Each response's audio on the session's playout clock. */
  private readonly playout = new ItemPlayout();
  private readonly open = new Set<string>();
  private options: FlowOptions = {};
  private conn: Connection | null = null;
  private ready = false;
  private closeSent = false;
  /** Whether any frame came since the end of input began: a server silent for the whole drain is not waited on for 20 s more. */
  private heardDuringEnd = true;
  /** `session.closed` arrived: the session is over, nothing more is sent. */
  private closedByServer = false;
  /** The server answered the opening with an error: there is no session to close. */
  private refused = false;
  private output_rate = 24000;
  private input_rate = 16000;
  private sent_ms = 0;
  private uncommitted = 0;
  private commits = 0;
  private sends = 0;
  /** A commit sent and not yet answered with `input_audio_buffer.committed` (or an error). */
  private awaitingCommit = false;
  /** Server VAD: the server heard speech start and not yet stop (`speech_started` without its `speech_stopped`). */
  private speaking = false;
  /** Output audio deltas by the rate each states (`sample_rate_hz`), for run.json. */
  private readonly deltaRates = new Map<number, number>();
  /** Counted events of vLLM-Omni's own that say something about the session. */
  private readonly counts = { listen: 0, resync_required: 0, expired: 0, playback_acknowledged: 0, playback_ack_too_late: 0, playback_ack_after_end: 0 };
  /** Responses whose first ack went and is not yet answered, oldest first. */
  private readonly firstAcks: string[] = [];
  /** With camera frames: how they travel, their schedule, and the live image items (oldest first). */
  private camera: { transport: VllmFrameTransport; times: FrameTimes; live: string[]; items: number; deleted: number; held: Uint8Array[] } | null = null;

  constructor(
    private readonly session_id: string,
    private readonly config: VllmOmniFlowConfig,
  ) {}

  private nextId(kind: string): string {
    return `${this.session_id}_${kind}${this.sends++}`;
  }

  private send(frame: string): void {
    const conn = this.conn;
    if (!conn || !conn.isOpen || this.closedByServer) return;
    sendTraced(conn, frame, this.options);
  }

  attach(conn: Connection): Subscription {
    this.conn = conn;
    conn.setFarewell(() => this.farewell());
    const sub = conn.events$.subscribe({ next: (e) => this.observe(conn, e.frame, e.received_s), error: () => undefined });
    if (!this.config.no_playback_ack) {
      const period_ms = this.config.ack_every_ms ?? 250;
      sub.add(every(conn.timers, period_ms, { background: true }).subscribe(() => this.ackPlayback()));
    }
    sub.add(
      every(conn.timers, this.config.heartbeat_every_ms ?? HEARTBEAT_MS, { background: true }).subscribe(() => {
        if (this.ready && !this.closeSent) this.send(vllmHeartbeat(this.nextId('h')));
      }),
    );
    return sub;
  }

  /** The last frame before a failed session's close frame: `session.close`, unless it went already. */
  private farewell(): string | null {
    // A session the server refused at its opening (an error before session.created) never existed.
    if (this.closeSent || this.refused) return null;
    this.closeSent = true;
    const frame = vllmSessionClose(this.nextId('x'));
    this.options.onSend?.(frame, (this.options.clock ?? monotonicClock).now_s());
    return frame;
  }

  isKnownType(type: string): boolean {
    return isKnownOpenAIType(type) || isKnownVllmType(type);
  }

  private observe(conn: Connection, frame: DecodedFrame, received_s: number): void {
    this.heardDuringEnd = true;
    const n = serverEventSeq(frame);
    this.seq.add(n);
    const type = gaEventName(frame.type);
    switch (type) {
      case OpenAIEvent.responseCreated: {
        const id = vllmResponseId(frame.event());
        this.open.add(id);
        const p = this.playbackOf(id);
        // A 0 ms ack keeps the response's place before any later commit can make its acks too late.
        if (!this.config.no_playback_ack) this.ackOne(id, p);
        break;
      }
      case OpenAIEvent.audioDelta: {
        const info = audioDeltaInfo(frame);
        const rate = info.sample_rate_hz ?? this.output_rate;
        this.deltaRates.set(rate, (this.deltaRates.get(rate) ?? 0) + 1);
        const p = this.playbackOf(info.response_id);
        p.received_ms += (info.bytes / (rate * 2)) * 1000;
        this.playout.add(received_s, info.response_id, 0, info.bytes, rate);
        break;
      }
      case OpenAIEvent.responseDone: {
        const id = vllmResponseId(frame.event());
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
        // Under server VAD the server commits each turn itself: a response created before it is
        // acked too late from then on, as after a commit of ours.
        if (this.serverVad) this.commits++;
        break;
      case OpenAIEvent.speechStarted:
        this.speaking = true;
        break;
      case OpenAIEvent.speechStopped:
        this.speaking = false;
        break;
      case VllmEvent.playbackAcknowledged: {
        this.counts.playback_acknowledged++;
        // The ledger's own event, wrapped as `event` (entrypoints/duplex/serving.py) or flat.
        const e = frame.event();
        const item = ((e.event ?? e) as { item_id?: unknown }).item_id;
        const at = typeof item === 'string' ? this.firstAcks.indexOf(item.replace(/^item_/, '')) : -1;
        if (at >= 0) this.firstAcks.splice(at, 1);
        break;
      }
      case VllmEvent.resyncRequired:
        this.counts.resync_required++;
        break;
      case VllmEvent.sessionExpired:
        this.counts.expired++;
        break;
      case OpenAIEvent.error: {
        this.awaitingCommit = false;
        const error = serverError(frame);
        const code = error.info.server_code;
        if (!this.ready) {
          this.refused = true;
          conn.fail(error);
        }
        else if (code === VLLM_ACK_RACE_CODE) this.ackRefused();
        else if (code === VLLM_ACK_AFTER_END_CODE && this.ackAfterEnd(error.message)) break;
        else if (code !== undefined && VLLM_CLIENT_PROTOCOL_CODES.has(code)) {
          conn.fail(new TransportError('client_protocol_error', `server refused what the client sent (${code}): ${error.message}`, { url: conn.url, session_id: this.session_id, server_code: code }));
        }
        break;
      }
      default:
        break;
    }
    // Every journaled event is acknowledged, as their client does after dispatching it; nothing
    // is sent after session.closed (their client is closed by it, and does not ack it).
    if (type === VllmEvent.sessionClosed) this.closedByServer = true;
    if (n !== undefined && n > this.lastAcked && !this.closedByServer) {
      this.lastAcked = n;
      // The acks of one socket read go to the kernel in one write: the socket is corked until the
      // read's frames are dispatched (the frame reader hands them on in one go). Each event still gets its own ack,
      // in order, as their client sends them; a flood of 20,000 numbered events made 20,000 writes.
      // At most ACKS_PER_WRITE at a time: corked bytes count as queued, against --max-send-buffer-bytes.
      if (!this.corked) {
        this.corked = true;
        conn.cork?.();
        queueMicrotask(this.uncorkAcks);
      } else if (++this.corkedAcks % ACKS_PER_WRITE === 0) {
        conn.uncork?.();
        conn.cork?.();
      }
      this.send(vllmEventAck(n));
    }
  }

  private playbackOf(response_id: string): Playback {
    let p = this.playback.get(response_id);
    if (!p) {
      p = { received_ms: 0, acked_ms: 0, acked: false, commits_before: this.commits, refused: false, done: false };
      this.playback.set(response_id, p);
    }
    return p;
  }

  private finish(response_id: string): void {
    this.open.delete(response_id);
    const p = this.playback.get(response_id);
    if (p) p.done = true;
  }

  /** A first ack refused as too late: counted, and its response loses its place for good. */
  private ackRefused(): void {
    this.counts.playback_ack_too_late++;
    const id = this.firstAcks.shift();
    const p = id === undefined ? undefined : this.playback.get(id);
    if (p) p.refused = true;
  }

  /**
   * A `playback_item_not_found` of a response's first ack that its end overtook: the server ended it
   * with nothing to play (no audio reached the client) before it took the 0 ms ack sent as its
   * `response.created` arrived, and keeps no item for it. Counted, never acked again; true when it
   * was that race, false when the refusal is the client's fault.
   */
  private ackAfterEnd(message: string): boolean {
    const id = vllmNotFoundResponseId(message);
    const p = id === null ? undefined : this.playback.get(id);
    const at = id === null ? -1 : this.firstAcks.indexOf(id);
    if (!p || !p.done || p.received_ms > 0 || at < 0) return false;
    this.firstAcks.splice(at, 1);
    p.refused = true;
    this.counts.playback_ack_after_end++;
    return true;
  }

  /** Response `id`'s audio played by now on the playout clock, ms (all of it once it has played out). */
  private playedMs(id: string): number {
    const now_s = this.conn?.timers.now_s() ?? (this.options.clock ?? monotonicClock).now_s();
    return this.playout.played(id, now_s).played_ms;
  }

  /** Acks one response's audio played so far (0 ms before any), unless the ledger would refuse it. */
  private ackOne(id: string, p: Playback, played_ms = this.playedMs(id)): void {
    if (!this.ready || this.closeSent || p.refused) return;
    // Never acked, and a commit went since it was created: the ledger would answer playback_ack_too_late.
    if (!p.acked && this.commits > p.commits_before) return;
    if (!p.acked) this.firstAcks.push(id);
    p.acked = true;
    p.acked_ms = played_ms;
    this.send(vllmPlaybackAck(this.nextId('p'), id, played_ms));
  }

  /** Acknowledges, per response, the audio played and not yet acknowledged; forgets finished ones acknowledged to their end. */
  private ackPlayback(): void {
    if (!this.ready || this.closeSent || this.config.no_playback_ack) return;
    for (const [id, p] of this.playback) {
      const played_ms = this.playedMs(id);
      if (!p.acked ? !(p.done && p.received_ms === 0) : Math.floor(played_ms) > Math.floor(p.acked_ms)) this.ackOne(id, p, played_ms);
      // A first ack not answered yet keeps its response: its refusal, if it comes, is judged by it.
      if (p.done && (p.refused || (p.acked ? p.acked_ms >= p.received_ms : p.received_ms === 0 || this.commits > p.commits_before)) && !this.firstAcks.includes(id)) {
        this.playback.delete(id);
        this.playout.forget(id);
      }
    }
  }

  async handshake(conn: Connection, input_sample_rate: number, options: FlowOptions): Promise<SessionGrant> {
    this.options = options;
    this.input_rate = input_sample_rate;
    const timeout_ms = options.handshake_timeout_ms ?? VLLM_TIMEOUTS.handshake_timeout_ms;
    // The client speaks first; the answer is session.created (then session.updated): the wait
    // starts before the update goes, so the answer is not missed.
    const created = waitForEvent(conn, OpenAIEvent.sessionCreated, timeout_ms, 'handshake_timeout');
    created.catch(() => undefined);
    await conn.opened;
    const request = {
      model: this.config.model,
      input_sample_rate,
      output_sample_rate: this.config.output_sample_rate ?? 24000,
      turn_detection: this.config.turn_detection,
      ...(this.config.ref_audio !== undefined ? { ref_audio: this.config.ref_audio } : {}),
      ...(this.config.session_extra !== undefined ? { extra: this.config.session_extra } : {}),
    };
    this.send(vllmSessionUpdate(this.nextId('u'), request));
    const answer = (await created).frame.event();
    this.ready = true;
    const session = (answer.session ?? {}) as Record<string, unknown>;
    const grant: SessionGrant = {};
    const output = vllmSessionRates(session).output;
    if (output) {
      grant.output_sample_rate = output;
      this.output_rate = output;
    }
    const chunk = chunkPeriodMs(answer);
    if (chunk) grant.chunk_period_ms = chunk;
    if (this.config.video) this.camera = { ...vllmFramePlan(this.config.video, session.capabilities as Record<string, unknown> | undefined), live: [], items: 0, deleted: 0, held: [] };
    return grant;
  }

  /**
   * The append of a packet. Camera frames go with it: in its `video_frames` when it closes their
   * model unit (at most 2 an append, the rest on the next ones), or before it as `input_image` items
   * when its audio reaches their time, the oldest deleted first once 8 are live. Frames are sent and counted, not traced.
   */
  append(event_id: string, _seq: number, _t_start_ms: number, audio_b64: Uint8Array): Buffer {
    const ms = base64ByteLength(audio_b64) / ((this.input_rate * 2) / 1000);
    this.sent_ms += ms;
    this.uncommitted++;
    const camera = this.camera;
    if (camera) {
      if (camera.transport === 'append') {
        // A frame rides the append that closes its model unit (their client's stream_pcm: frame k on
        // the append that reaches 1030 + k × 1000 ms of audio), so the server binds it to that unit's
        // audio. At most 2 ride one append (more and the server refuses the append whole): frames due
        // beyond them (an append longer than a unit) go on the next appends, in order.
        const due = camera.times.closedBy(this.sent_ms, vllmUnitClosesAt);
        camera.held.push(...due.map((f) => f.image));
        const frames = camera.held.splice(0, VLLM_APPEND_FRAMES.max_frames);
        if (frames.length > 0) return vllmAppendWithFrames(event_id, audio_b64, this.input_rate, ms, this.sent_ms, frames);
      } else for (const f of camera.times.upTo(this.sent_ms)) this.sendImageItem(camera, f.image);
    }
    return vllmAppend(event_id, audio_b64, this.input_rate, ms, this.sent_ms);
  }

  /** One frame as an `input_image` item in the window of at most 8: the oldest goes first when it is full. */
  private sendImageItem(camera: NonNullable<VllmOmniFlow['camera']>, image: Uint8Array): void {
    const conn = this.conn;
    if (!conn || !conn.isOpen || this.closedByServer) return;
    while (camera.live.length >= VLLM_IMAGE_WINDOW.max_items) {
      conn.send(vllmItemDelete(this.nextId('d'), camera.live.shift() as string));
      camera.deleted++;
    }
    const item_id = `${this.session_id}_frame_${camera.items++}`;
    conn.send(vllmImageItem(this.nextId('i'), item_id, image));
    camera.live.push(item_id);
  }

  private get serverVad(): boolean {
    return this.config.turn_detection === 'server_vad';
  }

  afterAppend(): string[] | null {
    if (this.serverVad || this.uncommitted < this.config.commit_every_packets) return null;
    return [this.commitFrame()];
  }

  private commitFrame(): string {
    this.uncommitted = 0;
    this.awaitingCommit = true;
    this.commits++;
    return vllmCommit(`${this.session_id}_c${this.commits - 1}`);
  }

  endsOn(): boolean {
    return false;
  }

  private idle(): boolean {
    return this.open.size === 0 && !this.awaitingCommit;
  }

  /**
   * Acknowledge what was received, commit the last input (when any went since the last commit:
   * an empty commit is refused), wait (bounded) until its answer is done and the server quiet,
   * acknowledge again, then `session.close` → `session.closed` and close the socket.
   *
   * Under server VAD the server cuts and commits the turns, so nothing is committed: the input
   * ended with the trailing silence (`trailingSilenceMs`), and the session waits, as their eval
   * runner's `_wait_for_server_turns` does, until no speech and no response is open and no
   * `input_audio_buffer.*` or `response.*` event came for 2 s (playback answers do not count);
   * past the drain bound it ends as `turns_unsettled`. The drain bound, unless given, is their eval
   * runner's: the input sent plus 20 s, at least 20 s (`vllmDrainTimeoutMs`).
   */
  async end(conn: Connection, options: FlowOptions): Promise<EndReport> {
    const drain_ms = options.drain_timeout_ms ?? vllmDrainTimeoutMs(this.sent_ms);
    const close_ms = options.close_timeout_ms ?? VLLM_TIMEOUTS.close_timeout_ms;
    this.ackPlayback();
    this.heardDuringEnd = false;
    if (this.serverVad) {
      await waitForQuiet(conn, {
        idle: () => !this.speaking && this.open.size === 0,
        busy: () => `${this.speaking ? 'speech open, ' : ''}${this.open.size} responses open`,
        moving: (type) => type.startsWith('input_audio_buffer.') || type.startsWith('response.'),
        quiet_ms: this.config.end_quiet_ms ?? VLLM_TURN_SETTLE_MS,
        drain_ms,
        session_id: this.session_id,
        reason: 'turns_unsettled',
      });
      this.ackPlayback();
      await this.close(conn, close_ms);
      return {};
    }
    if (this.uncommitted > 0) this.send(this.commitFrame());
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
  private async close(conn: Connection, close_ms: number): Promise<void> {
    if (this.closeSent) return;
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

  /**
   * `session.close` after a failure, and `session.closed` waited on as their client waits (20 s).
   * A server that sent nothing at all through the whole drain bound (it stopped reading, or hangs)
   * is sent `session.close` (its slot) and not waited on: 20 s more of silence tell nothing, and
   * the session's reason is already its drain bound's. The socket then closes as any failed one.
   */
  async abort(conn: Connection, error: unknown, options: FlowOptions): Promise<void> {
    const silent = !this.heardDuringEnd && error instanceof TransportError && (error.reason === 'drain_timeout' || error.reason === 'turns_unsettled');
    if (silent) {
      if (!this.closeSent) this.send(vllmSessionClose(this.nextId('x')));
      this.closeSent = true;
      return;
    }
    await this.close(conn, options.close_timeout_ms ?? VLLM_TIMEOUTS.close_timeout_ms);
  }

  dialectEvents(): Record<string, number> {
    const camera = this.camera;
    if (!camera) return { ...this.counts };
    // Frames held for an append that never came were not sent.
    const held_bytes = camera.held.reduce((n, f) => n + base64ByteLength(f), 0);
    return { ...this.counts, frames_sent: camera.times.sent - camera.held.length, frame_bytes: camera.times.bytes - held_bytes, image_items_deleted: camera.deleted };
  }

  /** Output audio deltas counted by the rate each stated (`sample_rate_hz`), when any came. */
  deltaSampleRates(): Record<string, number> | null {
    if (this.deltaRates.size === 0) return null;
    return Object.fromEntries([...this.deltaRates].map(([rate, n]) => [String(rate), n]));
  }

  serverEventSeq(): ServerEventSeqFigures | null {
    if (this.seq.seen === 0) return null;
    const { seen, gaps, missing_events, not_rising } = this.seq;
    return { seen, gaps, missing_events, not_rising };
  }
}
