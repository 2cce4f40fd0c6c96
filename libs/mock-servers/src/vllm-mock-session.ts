import type { LeadingSilence } from './leading-silence';
import type WebSocket from 'ws';
import { base64ByteLength, decodeFrameBytes, type DecodedFrame } from '@duplex-bench/protocol';
import type { MockHost } from './openai-mock-session';
import type { ArrivalOffsets } from './arrival-offsets';
import { injectFault, type MockFault } from './mock-fault';
import { BehaviourSession, type AnswerSink, type BehaviourSettings } from './behaviour-session';
import { videoFramesError } from './vllm-frames';

/**
 * vLLM-Omni's duplex endpoint as a mock (`--protocol openai --flavor vllm-omni`). Facts from
 * vllm-project/vllm-omni (entrypoints/duplex/serving.py, engine/duplex/ session runner, realtime
 * events and playback ledger, clients/duplex.py):
 * - the client speaks first: the server waits for `session.update` (an `error` `config_timeout`
 *   and a close after 10 s), then answers `session.created` and `session.updated`;
 * - appends get no receipt; speech is found by energy (RMS of the PCM16 samples ≥ 0.003), and
 *   silence never starts a turn; the model decides its turns (`auto_response`);
 * - playback is "ack only": a response whose audio was sent and not acknowledged by
 *   `playback.ack` keeps the session busy, and the next turn waits for the acknowledgement;
 * - every event but `session.created` ends with `server_event_seq`; `session.event_ack` trims the
 *   journal, which past `journal_max_bytes` unacknowledged asks `session.resync_required`;
 * - `session.close` → `session.closed` (numbered; an active response gets no `response.done`) →
 *   close 1000; a plain disconnect holds the session's slot for the disconnect grace; a full server
 *   answers the opening `session.update` with `error resource_exhausted` (`rate_limit_error`) and
 *   closes;
 * - with `require_ref_audio` (MiniCPM-o 4.5), an opening that asks for audio output without a
 *   reference voice (`session.ref_audio`, or `extra_body.ref_audio` / `tts_ref_audio`) is refused
 *   with `ref_audio_required` (no `server_event_seq`) and the socket closes;
 * - the playback ledger (engine/duplex/session/playback_ledger.py): an ack whose item is not
 *   `item_<response_id>` is `playback_item_mismatch`, one for no such response
 *   `playback_item_not_found`, and one for a response never acked before, once a user input was
 *   committed after the one it answers, `playback_ack_too_late` (a response that starts while the
 *   user speaks answers the next commit); these are numbered, with no `event_id`;
 * - an unknown client event is `unknown_event` and a bad `session.event_ack` `invalid_event_ack`
 *   (neither numbered); an empty commit is `input_audio_buffer_empty`; `session.heartbeat` is
 *   answered with `session.heartbeat_ack`; stage metrics ride the deltas only when the opening
 *   asked (`extra_body.return_stage_metrics`).
 */
export interface VllmMockOptions {
  output_sample_rate: number;
  /** `session.capabilities.chunk_period_ms`, and the size of an output delta. */
  unit_ms: number;
  /** First audio of a response, after its turn starts. */
  ttfp_ms: number;
  /** Each further unit of output takes unit_ms × rtf. */
  rtf: number;
  /** Silence after speech that ends the user's turn. */
  silence_ms: number;
  /** Every Kth turn the model keeps listening (`response.listen`); 0 never. */
  listen_every: number;
  config_timeout_ms: number;
  journal_max_bytes: number;
  /** Refuse an audio session that carries no reference voice (`ref_audio_required`), as MiniCPM-o 4.5 does. */
  require_ref_audio?: boolean;
  /**
   * A turn-based model (Qwen3-Omni) instead of a model-native duplex one: it answers only committed
   * turns. Under server VAD the server hears the speech, commits each turn when its silence passes
   * (`input_audio_buffer.committed`, turn_detection.py's `should_commit`) and answers it; without
   * it, only the client's commits are answered and no speech events go out. What their benchmark
   * must not do with such a model is counted per session (`protocol_violations`): `auto_response`
   * left true under server VAD, a client commit under server VAD, and `session.close` while speech
   * or a response is still open.
   */
  turn_based?: boolean;
  /**
   * Every frame (and the close) leaves this many ms after the session produced it, in order: a
   * server whose outbound queue lags, or a slow network. A client commit can then reach the server
   * after it began a response and before the client saw its `response.created`: the client's first
   * (0 ms) ack of it comes after a later commit and is refused as `playback_ack_too_late`, the race
   * vLLM-Omni's runner ignores. 0 or absent: none.
   */
  send_lag_ms?: number;
  /** Each response's units, silence then a tone (`--leading-silence-ms`); null or absent: silence. */
  leading?: LeadingSilence | null;
  /**
   * A model that takes camera frames as `input_image` conversation items, not on the appends: the
   * capabilities state an input-modality contract without video and `supports_image_input`, so a
   * client that follows them (their `select_frame_transport`) sends items. Without it the
   * capabilities state no contract and frames ride the appends (`video_frames`).
   */
  image_items?: boolean;
  /**
   * Behaviour mode: the user is heard by the behaviour's energy VAD instead of the RMS rule, and the
   * model answers, stops, takes pauses and meets backchannels by BehaviourSession's rules; each
   * answer is one response (still held until its playback is acknowledged), a stopped one ends
   * `cancelled` as vLLM-Omni's barge-in ends it (reason `turn_detected` under server VAD, else
   * `barge_in`) and holds the turn no longer. Null: as without it.
   */
  behaviour?: BehaviourSettings | null;
}

/** Speech when the RMS of the samples (as a fraction of full scale) reaches this (vLLM-Omni's overlap_silence_rms). */
const SPEECH_RMS = 0.003;

interface Response {
  id: string;
  units: number;
  sent_ms: number;
  acked_ms: number;
  /** `response.created` went out: with its first audio, as the server begins a response (model_channel.py). */
  announced: boolean;
  /** The conversation item before this response's, when it began. */
  previous_item_id?: string | null;
  done: boolean;
  timer: (() => void) | null;
  /** Server clock at the turn's start, for its own request metrics. */
  started_s: number;
  /** The user input commit the response answers (the ledger's `input_commit_seq`). */
  commit_seq: number;
  /** Began while the user spoke: it answers the next commit. */
  awaits_commit: boolean;
  /** Acknowledged at least once: its place is kept, and later acks are never too late. */
  acked: boolean;
  /** Behaviour mode: the answer it carries. */
  answer?: number;
  /** Transcript deltas sent, joined. */
  transcript: string;
}

/** What a session needs of its server beyond MockHost: the slot it holds. */
export interface VllmSlot {
  /** The opening `session.update` asks for a slot: false when the server is full (the session is refused). */
  take(): boolean;
  /** The server's limit, for the refusal's message. */
  readonly limit: number | undefined;
  /** The session ended without `session.close`: its slot stays held for the disconnect grace. */
  disconnected(): void;
  /** The session closed with `session.close` or was refused: its slot is free at once. */
  released(): void;
}

export class VllmMockSession {
  private n = 0;
  private seq = 0;
  private opened = false;
  /** A fault stopped the session's output (stop_answering, stop_reading, oversized_frame). */
  private silent = false;
  private appends = 0;
  private closed = false;
  private configTimer: (() => void) | null;
  private unacked_bytes = 0;
  private resyncSent = false;
  private output_rate: number;
  private in_rate = 16000;
  private speech_ms = 0;
  private silence_ms = 0;
  private speaking = false;
  private items = 0;
  private turns = 0;
  private pendingTurn = false;
  private readonly responses = new Map<string, Response>();
  /** Finished, fully played responses: their items are in history. */
  private readonly forgotten = new Map<string, Response>();
  private commits = 0;
  /** The conversation's last item (a committed user turn, an assistant response): the next one's `previous_item_id`. */
  private lastItem: string | null = null;
  /** Input appended since the last commit, bytes: an empty commit is refused. */
  private uncommitted_bytes = 0;
  private stageMetrics = false;
  /** The session asked for server VAD (`turn_detection.type: "server_vad"`): a barge-in is the detector's `turn_detected`. */
  private serverVad = false;
  /** Bumped by each barge-in, as the session's epoch. */
  private epoch = 0;
  private readonly arrivals: ArrivalOffsets;
  private bytes_in = 0;
  /** Turns that had to wait for a playback acknowledgement. */
  blocked_turns = 0;
  /** Turn-based model: what the client did that their benchmark does not do, counted by kind. */
  readonly violations: Record<string, number> = {};
  /** Camera frames taken (on appends or as items) and refused, and the bytes taken. */
  readonly frames = { accepted: 0, refused: 0, bytes: 0 };
  /** Live `input_image` items by id, each its image URLs. */
  private readonly imageItems = new Map<string, string[]>();
  /** Behaviour mode: made with the first append, at the input rate the session states. */
  private behaviour: BehaviourSession | null = null;
  private readonly answers = new Map<number, Response>();
  /** Frames and the close on their way out, `send_lag_ms` behind (`put` delivers each). */
  private readonly lagged: Array<{ at_s: number; frame?: string; close?: [number, string] }> = [];
  private lagTimer: (() => void) | null = null;

  constructor(
    private readonly ws: WebSocket,
    private readonly host: MockHost,
    private readonly id: string,
    private readonly options: VllmMockOptions,
    private readonly slot: VllmSlot,
    private readonly fault: MockFault | null = null,
  ) {
    this.output_rate = options.output_sample_rate;
    this.arrivals = host.arrivals();
    this.configTimer = host.clock.arm(options.config_timeout_ms, () => {
      this.sendUnjournaled(this.error('config_timeout', 'invalid_request_error', 'Timeout waiting for session.update'));
      this.closeSocket(1000, 'config_timeout');
    });
  }

  /** Refuses the opening: the server holds its limit of sessions. */
  private refuse(limit: number | undefined): void {
    this.sendUnjournaled(this.error('resource_exhausted', 'rate_limit_error', `duplex_session_capacity_exhausted: limit=${limit ?? 0}`));
    this.closed = true;
    this.closeSocket(1000, 'resource_exhausted');
  }

  /** The socket closed: a session that was not closed with `session.close` keeps its slot for the grace. */
  onSocketClose(): void {
    this.lagTimer?.();
    this.lagTimer = null;
    this.host.arrivalsDone(this.arrivals);
    this.clearConfig();
    this.behaviour?.close();
    for (const r of this.responses.values()) r.timer?.();
    if (this.closed) return;
    this.closed = true;
    // A socket that never opened a session holds no slot.
    if (this.opened) this.slot.disconnected();
  }

  private clearConfig(): void {
    this.configTimer?.();
    this.configTimer = null;
  }

  private eventId(): string {
    return `event_${this.id}_${this.n++}`;
  }

  /** An unnumbered error in the Realtime envelope (the client event's id, when it had one, under `error.event_id`). */
  private error(code: string, type: string, message: string, client_event_id?: string, param?: string): string {
    return JSON.stringify({ type: 'error', error: { type, code, message, ...(client_event_id ? { event_id: client_event_id } : {}), ...(param ? { param } : {}) } });
  }

  /**
   * A numbered error of the session runner (the playback ledger, an empty commit): an `ErrorEvent`
   * (engine/duplex/events.py), so the server's own `event_id` as every session event has, and the
   * client event's id under `error.event_id` only where the runner passes one (the ledger does not).
   */
  private journaledError(code: string, message: string, client_event_id?: string): void {
    this.send({ type: 'error', error: { type: 'invalid_request_error', code, message, ...(client_event_id ? { event_id: client_event_id } : {}) } });
  }

  private sendUnjournaled(frame: string): void {
    if (this.silent) return;
    // Without a lag, straight out: no object per frame on the mock's busiest path.
    if (!this.options.send_lag_ms) this.putFrame(frame);
    else this.deliver({ frame });
  }

  private closeSocket(code: number, reason: string): void {
    this.deliver({ close: [code, reason] });
  }

  /** A frame or the close, now or `send_lag_ms` behind, after everything before it. */
  private deliver(out: { frame?: string; close?: [number, string] }): void {
    const lag_ms = this.options.send_lag_ms ?? 0;
    if (lag_ms <= 0) return this.put(out);
    this.lagged.push({ at_s: this.host.clock.now_s() + lag_ms / 1000, ...out });
    if (!this.lagTimer) this.armLag();
  }

  private armLag(): void {
    const head = this.lagged[0];
    this.lagTimer = this.host.clock.arm(Math.max(0, (head.at_s - this.host.clock.now_s()) * 1000), () => {
      this.lagTimer = null;
      const now_s = this.host.clock.now_s();
      while (this.lagged.length > 0 && this.lagged[0].at_s <= now_s + 1e-9) this.put(this.lagged.shift() as { frame?: string; close?: [number, string] });
      if (this.lagged.length > 0) this.armLag();
    });
  }

  private put(out: { frame?: string; close?: [number, string] }): void {
    if (out.frame !== undefined) this.putFrame(out.frame);
    else if (out.close) this.ws.close(...out.close);
  }

  private putFrame(frame: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.host.send(this.ws, frame);
  }

  /** A journaled event: `server_event_seq` goes last; unacknowledged bytes past the bound ask for a resync. */
  private send(fields: Record<string, unknown>): void {
    if (this.closed) return;
    const head = JSON.stringify({ type: fields.type, event_id: this.eventId(), ...fields });
    if (this.resyncSent) {
      this.sendUnjournaled(head);
      return;
    }
    const frame = `${head.slice(0, -1)},"server_event_seq":${++this.seq}}`;
    this.unacked_bytes += frame.length;
    this.sendUnjournaled(frame);
    if (this.unacked_bytes > this.options.journal_max_bytes) {
      this.resyncSent = true;
      this.sendUnjournaled(JSON.stringify({ type: 'session.resync_required', event_id: this.eventId(), session_id: this.id, reason: 'journal_overflow' }));
    }
  }

  onMessage(data: Buffer, isBinary: boolean, arrived_s: number): void {
    if (this.closed) return;
    let frame: DecodedFrame;
    try {
      if (isBinary) throw new Error('binary');
      frame = decodeFrameBytes(data);
      // A server parses every frame whole: a malformed one is refused here, whatever its size.
      frame.event();
    } catch {
      this.sendUnjournaled(this.error('invalid_json', 'invalid_request_error', 'frame is not a JSON event'));
      return;
    }
    const event = frame.event();
    const client_event_id = typeof event.event_id === 'string' ? event.event_id : undefined;
    if (!this.opened) {
      this.open(frame.type === 'session.update' ? ((event.session ?? {}) as Record<string, unknown>) : {}, client_event_id);
      if (!this.opened) return;
    }
    switch (frame.type) {
      case 'session.update':
        break;
      case 'input_audio_buffer.append':
        this.onAppend(event, arrived_s, client_event_id);
        break;
      case 'input_audio_buffer.commit':
        this.onCommit(client_event_id);
        break;
      case 'playback.ack':
        this.onPlaybackAck(event);
        break;
      case 'conversation.item.create':
        this.onItemCreate(event, client_event_id);
        break;
      case 'conversation.item.delete': {
        const item_id = typeof event.item_id === 'string' ? event.item_id : null;
        const deleted = item_id !== null && this.imageItems.delete(item_id);
        this.send({ type: 'conversation.item.deleted', session_id: this.id, item_id, deleted });
        break;
      }
      case 'session.event_ack': {
        const n = event.server_event_seq;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > this.seq) {
          this.sendUnjournaled(this.error('invalid_event_ack', 'invalid_request_error', `session.event_ack server_event_seq must be an integer up to ${this.seq}`, client_event_id));
          break;
        }
        // The journal up to this number is trimmed.
        this.unacked_bytes = 0;
        break;
      }
      case 'session.heartbeat':
        this.send({ type: 'session.heartbeat_ack', session_id: this.id });
        break;
      case 'session.close':
        this.onClose();
        break;
      default:
        this.sendUnjournaled(this.error('unknown_event', 'invalid_request_error', `Unknown event type: ${frame.type}`, client_event_id));
        break;
    }
  }

  /** The first client event opens the session: refused when the server is full or a required voice is missing. */
  private open(session: Record<string, unknown>, client_event_id?: string): void {
    this.clearConfig();
    const extra_body = (session.extra_body ?? {}) as Record<string, unknown>;
    const modalities = Array.isArray(session.modalities) ? session.modalities : ['audio', 'text'];
    const voice = typeof session.ref_audio === 'string' || typeof extra_body.ref_audio === 'string' || typeof extra_body.tts_ref_audio === 'string';
    if (this.options.require_ref_audio && !voice && modalities.some((m) => String(m).toLowerCase() === 'audio')) {
      this.sendUnjournaled(this.error('ref_audio_required', 'invalid_request_error', 'Native duplex audio output requires ref_audio', client_event_id, 'ref_audio'));
      this.closed = true;
      this.closeSocket(1000, 'ref_audio_required');
      return;
    }
    if (!this.slot.take()) {
      this.refuse(this.slot.limit);
      return;
    }
    this.opened = true;
    this.stageMetrics = extra_body.return_stage_metrics === true;
    this.serverVad = ((session.turn_detection ?? null) as { type?: unknown } | null)?.type === 'server_vad';
    if (this.options.turn_based && this.serverVad && extra_body.auto_response !== false) this.violation('auto_response_under_server_vad');
    const audio = (session.audio ?? {}) as { input?: { sample_rate_hz?: unknown }; output?: { sample_rate_hz?: unknown } };
    const asked = audio.output?.sample_rate_hz;
    // This model speaks at its own rate whatever the client asks; each delta states it.
    const input = audio.input?.sample_rate_hz ?? session.sample_rate_hz;
    if (typeof input === 'number' && input > 0) this.in_rate = input;
    const payload = {
      id: this.id,
      object: 'realtime.session',
      type: 'realtime',
      model: session.model ?? 'duplex-bench-mock',
      modalities: ['audio', 'text'],
      playback_commit_policy: 'ack_only',
      capabilities: this.options.image_items
        ? { chunk_period_ms: this.options.unit_ms, required_input_modalities: ['audio'], optional_input_modalities: ['image'], supports_image_input: true }
        : // DuplexCapabilities' defaults (engine/duplex/config.py), as an audio-primary model states them: video rides the appends.
          { chunk_period_ms: this.options.unit_ms, required_input_modalities: ['audio'], optional_input_modalities: ['video'], supports_image_input: false },
      audio: { input: { sample_rate_hz: this.in_rate }, output: { sample_rate_hz: typeof asked === 'number' ? asked : this.output_rate } },
      turn_detection: session.turn_detection ?? null,
    };
    this.sendUnjournaled(JSON.stringify({ type: 'session.created', event_id: this.eventId(), session: payload }));
    this.send({ type: 'session.updated', session: payload });
  }

  /**
   * An `input_image` item, as vLLM-Omni's session control takes it (engine/duplex/session/control.py):
   * a user message only (`invalid_image`), a model that says `supports_image_input` only
   * (`unsupported`), a JPEG or PNG data URL only (`invalid_image`), and at most 8 live images and
   * 4 MiB of their URLs (`input_backpressure`: delete old items first); taken, it is
   * `conversation.item.created`.
   */
  private onItemCreate(event: Record<string, unknown>, client_event_id?: string): void {
    const item = (event.item ?? {}) as { id?: unknown; role?: unknown; content?: unknown };
    const parts = Array.isArray(item.content) ? (item.content as Array<Record<string, unknown>>) : [];
    const images = parts.filter((p) => p && p.type === 'input_image').map((p) => p.image_url);
    if (images.length > 0) {
      const refuse = (code: string, message: string) => {
        this.frames.refused += images.length;
        this.journaledError(code, message, client_event_id);
      };
      if (item.role !== 'user') return refuse('invalid_image', 'input_image is supported only in user messages');
      if (!this.options.image_items) return refuse('unsupported', 'This model does not support input_image conversation items');
      if (!images.every((u) => typeof u === 'string' && /^data:image\/(jpeg|png);base64,/.test(u))) return refuse('invalid_image', 'input_image requires a JPEG or PNG base64 data URL');
      const urls = images as string[];
      const bad = urls.map((u) => videoFramesError([u.slice(u.indexOf(',') + 1)], null)).find((e) => e !== null);
      if (bad) return refuse('invalid_image', bad);
      const live = [...this.imageItems.values()].flat();
      if (live.length + urls.length > 8 || [...live, ...urls].reduce((n, u) => n + u.length, 0) > 4 * 1024 * 1024) {
        return refuse('input_backpressure', 'Image context exceeds 8 images or 4 MiB; delete old items');
      }
      if (typeof item.id === 'string') this.imageItems.set(item.id, urls);
      this.frames.accepted += urls.length;
      this.frames.bytes += urls.reduce((n, u) => n + base64ByteLength(u.slice(u.indexOf(',') + 1)), 0);
    }
    if (typeof item.id === 'string' && item.id) this.lastItem = item.id;
    this.send({ type: 'conversation.item.created', session_id: this.id, item: event.item, created: true });
  }

  private onAppend(event: Record<string, unknown>, arrived_s: number, client_event_id?: string): void {
    // As their endpoint: frames checked while the append is decoded, then against the model's
    // input modalities; either refusal drops the whole append, audio included (vllm-frames.ts).
    if (event.video_frames !== undefined && event.video_frames !== null) {
      const error = videoFramesError(event.video_frames, event.max_slice_nums);
      const refused = Array.isArray(event.video_frames) ? event.video_frames.length : 1;
      if (error) {
        this.frames.refused += refused;
        return this.journaledError('invalid_video_frames', error, client_event_id);
      }
      if (this.options.image_items && refused > 0) {
        this.frames.refused += refused;
        return this.journaledError('invalid_input_modality', 'This duplex model does not accept video_frames', client_event_id);
      }
    }
    const frames = Array.isArray(event.video_frames) ? (event.video_frames as unknown[]).filter((f) => typeof f === 'string') : [];
    if (frames.length > 0) {
      this.frames.accepted += frames.length;
      this.frames.bytes += frames.reduce((n: number, f) => n + base64ByteLength(f as string), 0);
    }
    const audio = typeof event.audio === 'string' ? event.audio : '';
    const pcm = Buffer.from(audio, 'base64');
    this.arrivals.add(arrived_s * 1000 - (this.bytes_in / (this.in_rate * 2)) * 1000);
    this.bytes_in += pcm.length;
    this.uncommitted_bytes += pcm.length;
    this.appends++;
    if (this.fault && this.appends >= this.fault.after_appends && this.applyFault(this.fault)) return;
    if (this.options.behaviour) {
      if (!this.behaviour) this.behaviour = new BehaviourSession(this.options.behaviour, this.in_rate, this.host.clock, this.host.behaviourLog(this.id), { sink: this.answerSink(), unit_ms: this.options.unit_ms });
      this.behaviour.onInput(pcm, arrived_s);
      return;
    }
    const ms = (pcm.length / (this.in_rate * 2)) * 1000;
    if (rms(pcm) >= SPEECH_RMS) {
      if (!this.speaking) {
        this.speaking = true;
        if (this.hearsSpeech) this.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: Math.round((this.bytes_in / (this.in_rate * 2)) * 1000 - ms), item_id: `item_in_${this.items}` });
      }
      this.speech_ms += ms;
      this.silence_ms = 0;
    } else if (this.speaking) {
      this.silence_ms += ms;
      if (this.silence_ms >= this.options.silence_ms) this.endSpeech();
    }
  }

  /** Behaviour mode: VAD events where the behaviour heard the user; each answer one response, held until its playback is acknowledged. */
  private answerSink(): AnswerSink {
    return {
      speech: (edge, input_ms) => {
        this.speaking = edge === 'start';
        if (edge === 'start') this.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: Math.round(input_ms), item_id: `item_in_${this.items}` });
        else this.send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: Math.round(input_ms), item_id: `item_in_${this.items++}` });
      },
      canStart: () => {
        const busy = this.busy();
        if (busy && !this.pendingTurn) this.blocked_turns++;
        this.pendingTurn = busy;
        return !busy;
      },
      start: (n) => {
        const id = `resp_${this.id}_${this.turns++}`;
        const r: Response = { id, units: 0, sent_ms: 0, acked_ms: 0, announced: false, done: false, timer: null, started_s: this.host.clock.now_s(), commit_seq: this.commits, awaits_commit: this.speaking, acked: false, answer: n, transcript: '' };
        this.responses.set(id, r);
        this.answers.set(n, r);
        // Announced with its first audio (emitAudio).
      },
      audio: (n, pcm) => {
        const r = this.answers.get(n);
        if (r) this.emitAudio(r, r.units++, pcm.toString('base64'), (pcm.length / (this.output_rate * 2)) * 1000, false);
      },
      end: (n, how) => {
        const r = this.answers.get(n);
        this.answers.delete(n);
        if (!r) return;
        if (how === 'completed') {
          this.finish(r);
          return;
        }
        this.cancelled(r);
      },
    };
  }

  /**
   * A barge-in, as vLLM-Omni's runner ends it (session/runner.py `_barge_in_for_overlap` →
   * `_cancel_active_response`, its `audio.cancelled` projected by realtime_events.py): the item is
   * cut at the playback the client acknowledged (`committed_ms`), the playback cursor is cleared
   * (the response holds the turn no longer), and the response's terminal events go out: audio and
   * transcript done, content part, output item (`cancelled`) and conversation item done,
   * `response.done` `cancelled` with `status_details.reason` the overlap decision's cancel reason
   * (`turn_detected` when server VAD heard the speech start, else `barge_in`; overlap_policy.py),
   * and `rate_limits.updated`.
   */
  private cancelled(r: Response): void {
    r.done = true;
    const reason = this.serverVad ? 'turn_detected' : 'barge_in';
    const committed_ms = Math.floor(r.acked_ms);
    const playback = { generated_ms: r.sent_ms, sent_ms: r.sent_ms, played_ms: r.acked_ms, committed_ms: r.acked_ms };
    r.acked_ms = r.sent_ms;
    // A barge-in starts a new epoch (helpers.advance_barge_in_epoch): later output carries it.
    const cancelled_epoch = this.epoch++;
    const metadata = { type: 'audio.cancelled', session_id: this.id, response_id: r.id, reason, cancelled_epoch, epoch: this.epoch, committed_ms, playback };
    this.terminal(r, 'cancelled', reason, committed_ms, metadata);
    this.maybeForget(r);
  }

  /** Speech events go out: a model-native duplex session always, a turn-based model's only under server VAD. */
  private get hearsSpeech(): boolean {
    return !this.options.turn_based || this.serverVad;
  }

  private violation(kind: string): void {
    this.violations[kind] = (this.violations[kind] ?? 0) + 1;
  }

  /**
   * The user stopped speaking: the model takes a turn (or waits for the playback acknowledgement
   * it needs). A turn-based model takes one only when the turn is committed: by the server under
   * server VAD, here; by the client otherwise.
   */
  private endSpeech(): void {
    this.speaking = false;
    this.silence_ms = 0;
    if (!this.hearsSpeech) return;
    this.send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: Math.round((this.bytes_in / (this.in_rate * 2)) * 1000), item_id: this.options.turn_based ? `item_in_${this.items}` : `item_in_${this.items++}` });
    if (this.options.turn_based) this.commitTurn();
    else this.takeTurn();
  }

  private busy(): boolean {
    for (const r of this.responses.values()) if (!r.done || r.acked_ms < r.sent_ms) return true;
    return false;
  }

  private takeTurn(): void {
    if (this.speech_ms <= 0) return;
    if (this.busy()) {
      if (!this.pendingTurn) this.blocked_turns++;
      this.pendingTurn = true;
      return;
    }
    this.pendingTurn = false;
    const units = Math.max(1, Math.round(this.speech_ms / this.options.unit_ms));
    this.speech_ms = 0;
    const turn = this.turns++;
    if (this.options.listen_every > 0 && turn % this.options.listen_every === this.options.listen_every - 1) {
      // The model keeps listening with no response begun: a listen of its own, no response at all (model_channel.py `_on_model_listen`).
      this.listen('model_listen', true);
      return;
    }
    const id = `resp_${this.id}_${turn}`;
    const r: Response = { id, units, sent_ms: 0, acked_ms: 0, announced: false, done: false, timer: null, started_s: this.host.clock.now_s(), commit_seq: this.commits, awaits_commit: this.speaking, acked: false, transcript: '' };
    this.responses.set(id, r);
    r.timer = this.host.clock.arm(this.options.ttfp_ms, () => this.emit(r, 0));
  }

  /**
   * `response.listen` with no response (none is active): the details under `response.metadata`,
   * as the server's Listen event renders them (engine/duplex/events.py).
   */
  private listen(reason: string, model_listen?: boolean): void {
    const details = { type: 'response.listen', session_id: this.id, epoch: this.epoch, reason, ...(model_listen === undefined ? {} : { model_listen }) };
    this.send({ type: 'response.listen', session_id: this.id, epoch: this.epoch, response: { object: 'realtime.response', status: 'listening', metadata: details } });
  }

  /**
   * A response begins with its first output, as the server begins one (model_channel.py
   * `_send_one_model_output_event`: `begin_response` only when text or audio arrives), so
   * `response.created` comes with the first audio, `ttfp_ms` after the turn, and the response is
   * bound to the commits the session has then (a commit that reaches it later, before the client
   * saw the response begin, makes the client's first ack too late: `send_lag_ms` makes that
   * race). The events as realtime_events.py projects them: the
   * response (its internal event, request metrics and all, as `metadata.duplex_event`), its
   * assistant item added and created, the output item, the audio content part, then
   * `response.speak`.
   */
  private announce(r: Response, request_metrics: Record<string, unknown>): void {
    r.announced = true;
    // The ledger binds a response to the user's input at begin_response (engine_session.py): the
    // commits so far, or the next one when the user is speaking as it begins.
    r.commit_seq = this.commits;
    r.awaits_commit = this.speaking;
    const item_id = `item_${r.id}`;
    const modalities = ['audio', 'text'];
    const duplex_event = { type: 'response.created', session_id: this.id, response_id: r.id, epoch: this.epoch, modalities, response_request_metrics: request_metrics };
    this.send({ type: 'response.created', response_id: r.id, response: { id: r.id, object: 'realtime.response', status: 'in_progress', status_details: null, output: [], modalities, metadata: { duplex_event } } });
    const item = { id: item_id, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    const previous_item_id = this.lastItem;
    r.previous_item_id = previous_item_id;
    this.lastItem = item_id;
    this.send({ type: 'conversation.item.added', previous_item_id, item });
    this.send({ type: 'conversation.item.created', previous_item_id, item });
    this.send({ type: 'response.output_item.added', response_id: r.id, output_index: 0, item });
    this.send({ type: 'response.content_part.added', response_id: r.id, item_id, output_index: 0, content_index: 0, part: { type: 'audio', transcript: '' } });
    this.send({ type: 'response.speak', response_id: r.id, item_id, output_index: 0, content_index: 0, metadata: { session_id: this.id, epoch: this.epoch, model_speak: true, vllm_omni: { runtime_impl: 'duplex-bench-mock', response_request_metrics: request_metrics } } });
  }

  private emit(r: Response, unit: number): void {
    r.timer = null;
    if (this.closed) return;
    const bytes = Math.floor((this.output_rate * this.options.unit_ms) / 1000) * 2;
    this.emitAudio(r, unit, this.options.leading?.payload(unit) ?? silence(bytes), this.options.unit_ms, unit === r.units - 1);
    if (unit + 1 < r.units) r.timer = this.host.clock.arm(this.options.unit_ms * this.options.rtf, () => this.emit(r, unit + 1));
    else this.finish(r);
  }

  /** One audio delta of response `r` (and its transcript delta): `ms` of audio, `delta` in base64. */
  private emitAudio(r: Response, unit: number, delta: string, ms: number, end_of_turn: boolean): void {
    r.sent_ms += ms;
    const vllm_omni: Record<string, unknown> = { runtime_impl: 'duplex-bench-mock' };
    if (this.stageMetrics) vllm_omni.stage_metrics = { '0': { num_tokens_out: (unit + 1) * 4, vllm_tpot_ms: 20 } };
    if (!r.announced) {
      const ms = Math.round((this.host.clock.now_s() - r.started_s) * 1e6) / 1000;
      const request_metrics = { source: 'server_monotonic_request_start', ttfp_ms: ms, ttft_ms: ms };
      this.announce(r, request_metrics);
      vllm_omni.response_request_metrics = request_metrics;
    }
    const metadata = { session_id: this.id, epoch: this.epoch, model_speak: true, end_of_turn, playback: { generated_ms: r.sent_ms, sent_ms: r.sent_ms, played_ms: r.acked_ms, committed_ms: r.acked_ms }, vllm_omni, audio_duration_ms: r.sent_ms };
    this.send({ type: 'response.output_audio.delta', response_id: r.id, item_id: `item_${r.id}`, output_index: 0, content_index: 0, delta, format: 'pcm16', sample_rate_hz: this.output_rate, metadata });
    this.send({ type: 'response.output_audio_transcript.delta', response_id: r.id, item_id: `item_${r.id}`, output_index: 0, content_index: 0, delta: 'word ' });
    r.transcript += 'word ';
  }

  private finish(r: Response): void {
    r.done = true;
    this.terminal(r, 'completed', 'stop', r.sent_ms, { session_id: this.id, response_id: r.id });
    this.maybeForget(r);
  }

  /**
   * A response's terminal events, completed or cancelled alike, as realtime_events.py projects
   * them (`_realtime_audio_done_events`, `_realtime_response_terminal_events`): audio done and
   * transcript done (when it sent audio or a transcript), its audio content part done, the output
   * item and the conversation item done with the response's status, `response.done` holding that
   * item, and `rate_limits.updated`.
   */
  private terminal(r: Response, status: 'completed' | 'cancelled', reason: string, audio_ms: number, metadata: Record<string, unknown>): void {
    // A response stopped before its first output never began on the wire: nothing to end.
    if (!r.announced) return;
    const where = { response_id: r.id, item_id: `item_${r.id}`, output_index: 0, content_index: 0 };
    const item = { id: `item_${r.id}`, object: 'realtime.item', type: 'message', role: 'assistant', status, content: [{ type: 'output_audio', transcript: r.transcript, audio_duration_ms: audio_ms }] };
    if (r.sent_ms > 0 || r.transcript) {
      this.send({ type: 'response.output_audio.done', ...where });
      if (r.transcript) this.send({ type: 'response.output_audio_transcript.done', ...where, transcript: r.transcript });
    }
    this.send({ type: 'response.content_part.done', ...where, part: { type: 'audio', transcript: r.transcript } });
    this.send({ type: 'response.output_item.done', response_id: r.id, output_index: 0, item });
    this.send({ type: 'conversation.item.done', previous_item_id: r.previous_item_id ?? null, item });
    this.send({ type: 'response.done', response_id: r.id, response: { id: r.id, object: 'realtime.response', status, status_details: { type: status, reason }, output: [item], metadata } });
    this.send({ type: 'rate_limits.updated', rate_limits: [] });
  }

  private maybeForget(r: Response): void {
    if (r.done && r.acked_ms >= r.sent_ms) {
      this.responses.delete(r.id);
      // A response with assistant text keeps its item (or snapshot) in history: later acks of it are
      // answered. One that ended with none (a barge-in before its first transcript) leaves nothing:
      // end_response discards its placeholder, so an ack of it from now on is playback_item_not_found
      // (engine_session.py).
      if (r.transcript) this.forgotten.set(r.id, r);
    }
    if (this.pendingTurn && !this.busy()) {
      if (this.behaviour) {
        this.pendingTurn = false;
        this.behaviour.ready();
      } else this.takeTurn();
    }
  }

  /**
   * The playback ledger's rules (engine/duplex/session/playback_ledger.py `apply_playback_ack`):
   * `played_ms` must be a number (realtime_commands.py refuses the wire event without one before
   * the ledger sees it); an ack that names
   * neither response nor item is taken for the one response awaiting its playback, else the active
   * one, else for no response (acknowledged, naming the history's one assistant item when it holds
   * just one); then the item, the response and the too-late rule. Its errors carry no client event
   * id (the ledger raises them without one).
   */
  private onPlaybackAck(event: Record<string, unknown>): void {
    const played = event.played_ms;
    if (typeof played !== 'number') {
      this.journaledError('bad_event', 'playback.ack requires played_ms');
      return;
    }
    const committed = Math.trunc(typeof event.committed_ms === 'number' ? event.committed_ms : played);
    const named = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
    let item = named(event.item_id);
    let id = named(event.response_id);
    if (item === undefined && id !== undefined) item = `item_${id}`;
    else if (item !== undefined && id === undefined && item.startsWith('item_')) id = item.slice(5);
    if (item === undefined && id === undefined) id = this.implicitAckTarget();
    if (id === undefined) {
      if (item !== undefined) this.journaledError('playback_item_not_found', 'playback.ack requires a response-owned assistant item.');
      else this.acknowledged(this.onlyAssistantItem(), played, committed, { generated_ms: 0, sent_ms: 0, played_ms: 0, committed_ms: 0 });
      return;
    }
    if (item !== undefined && item !== `item_${id}`) {
      this.journaledError('playback_item_mismatch', 'playback.ack item_id must match item_<response_id>.');
      return;
    }
    const r = this.responses.get(id) ?? this.forgotten.get(id);
    if (!r || !r.announced) {
      this.journaledError('playback_item_not_found', `No assistant response item is registered for ${id}.`);
      return;
    }
    if (!r.acked && this.commits > r.commit_seq) {
      this.journaledError('playback_ack_too_late', 'playback.ack arrived after a later user input was committed.');
      return;
    }
    r.acked = true;
    r.acked_ms = Math.max(r.acked_ms, Math.min(committed, r.sent_ms));
    if (r.answer !== undefined) this.behaviour?.acked(r.answer, played);
    this.acknowledged(`item_${id}`, played, committed, { generated_ms: r.sent_ms, sent_ms: r.sent_ms, played_ms: Math.trunc(played), committed_ms: r.acked_ms });
    this.maybeForget(r);
  }

  /** The response an ack that names none is for: the one begun response awaiting its playback, else the active one. */
  private implicitAckTarget(): string | undefined {
    const begun = [...this.responses.values()].filter((r) => r.announced);
    const awaiting = begun.filter((r) => r.done && r.acked_ms < r.sent_ms);
    if (awaiting.length === 1) return awaiting[0].id;
    return begun.find((r) => !r.done)?.id;
  }

  /** The history's assistant item when it holds just one (the ledger's last fallback, `last_assistant_full_message`), else null. */
  private onlyAssistantItem(): string | null {
    const kept = [...this.forgotten.values()];
    return kept.length === 1 ? `item_${kept[0].id}` : null;
  }

  /**
   * `playback.acknowledged`: the ledger's internal event, as the server sends it whole (its
   * `history_committed` is left out: the engine's history decides it, which this mock does not keep).
   */
  private acknowledged(item_id: string | null, played: number, committed: number, playback: Record<string, number>): void {
    this.send({ type: 'playback.acknowledged', event: { type: 'playback.acknowledged', session_id: this.id, epoch: this.epoch, item_id, played_ms: Math.trunc(played), committed_ms: committed, truncate: false, playback } });
  }

  private onCommit(client_event_id?: string): void {
    if (this.options.turn_based && this.serverVad) this.violation('commit_under_server_vad');
    if (this.uncommitted_bytes === 0) {
      this.journaledError('input_audio_buffer_empty', 'input_audio_buffer.commit requires a non-empty input audio buffer.', client_event_id);
      return;
    }
    if (this.speaking) {
      this.speaking = false;
      if (this.hearsSpeech) this.send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: Math.round((this.bytes_in / (this.in_rate * 2)) * 1000), item_id: `item_in_${this.items}` });
    }
    this.commitTurn();
  }

  /** The input buffer committed (by the client, or by server VAD for a turn-based model), and its turn answered when it held speech. */
  private commitTurn(): void {
    this.uncommitted_bytes = 0;
    const item = `item_in_${this.items++}`;
    this.commits++;
    // A response that began while the user spoke answers this commit.
    for (const r of this.responses.values()) {
      if (r.awaits_commit) {
        r.commit_seq = this.commits;
        r.awaits_commit = false;
      }
    }
    const previous_item_id = this.lastItem;
    this.lastItem = item;
    this.send({ type: 'input_audio_buffer.committed', previous_item_id, item_id: item, event: { type: 'input.committed', session_id: this.id } });
    // Behaviour mode: the behaviour decides the turns; a commit only commits.
    if (this.behaviour) return;
    if (this.speech_ms > 0) this.takeTurn();
    // A silent buffer: the model keeps listening.
    // The runner's own payload for it: type, session, epoch and reason, no model_listen.
    else this.listen('silence_or_noise');
  }

  /** `session.close`: the responses stop where they are (no `response.done`), then `session.closed`. */
  private onClose(): void {
    if (this.options.turn_based && (this.speaking || [...this.responses.values()].some((r) => !r.done))) this.violation('closed_with_open_turn');
    this.behaviour?.close();
    for (const r of this.responses.values()) r.timer?.();
    if (this.fault?.action === 'no_session_closed') {
      // Neither session.closed nor a close: the client must end the socket on its own, within its bound.
      this.closed = true;
      this.slot.released();
      return;
    }
    this.send({ type: 'session.closed', session_id: this.id, reason: 'client_close', event: {} });
    this.closed = true;
    this.host.completed();
    this.slot.released();
    this.closeSocket(1000, 'client_close');
  }

  /** Returns true when the append must not be answered. */
  private applyFault(f: MockFault): boolean {
    const first = this.appends === f.after_appends;
    const shared = injectFault(
      f,
      {
        ws: this.ws,
        raw: (frame) => this.host.send(this.ws, frame),
        malformed: '{"type":"response.output_audio.delta","delta":',
        unknown: () => `{"type":"vendor.keepalive","event_id":"${this.eventId()}","server_event_seq":${++this.seq}}`,
        // The session runner's end on a model error: a numbered error, then session.closed.
        fatal: () => {
          this.send({ type: 'error', error: { type: 'server_error', code: 'injected_fault', message: 'the test server gave up' } });
          this.send({ type: 'session.closed', session_id: this.id, reason: 'error', event: {} });
          this.closed = true;
          this.slot.released();
        },
        silence: () => {
          this.silent = true;
          this.behaviour?.close();
          for (const r of this.responses.values()) r.timer?.();
        },
        nonFinite: () => this.host.send(this.ws, `{"type":"input_audio_buffer.speech_started","event_id":"${this.eventId()}","audio_start_ms":1e999,"item_id":"item_in_${this.items}","server_event_seq":${++this.seq}}`),
      },
      first,
    );
    if (shared !== 'dialect') return shared === 'skip';
    switch (f.action) {
      case 'duplicate_seq':
        if (first) this.seq--;
        return false;
      case 'skip_event_seq':
        if (first) this.seq++;
        return false;
      case 'no_session_closed':
        return false;
      default:
        throw new RangeError(`fault ${f.action} is not defined for the vllm-omni dialect`);
    }
  }
}

/** RMS of PCM16 samples as a fraction of full scale, from every 4th sample: enough to tell speech from silence. */
function rms(pcm: Buffer): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i + 1 < pcm.length; i += 8) {
    const v = pcm.readInt16LE(i) / 32768;
    sum += v * v;
    n++;
  }
  return n > 0 ? Math.sqrt(sum / n) : 0;
}

const silences = new Map<number, string>();
function silence(bytes: number): string {
  let s = silences.get(bytes);
  if (!s) {
    s = Buffer.alloc(bytes).toString('base64');
    silences.set(bytes, s);
  }
  return s;
}
