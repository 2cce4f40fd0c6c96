import type { LeadingSilence } from './leading-silence';
import type WebSocket from 'ws';
import { pcm16BytesPerMs } from '@duplex-bench/audio';
import type { TimerHost } from '@duplex-bench/pacer';
import {
  base64ByteLength,
  decodeFrameBytes,
  OpenAIEvent,
  OpenAIServerEvents,
  openaiSessionRates,
  openaiSessionTurnDetection,
  type DecodedFrame,
  type OpenAINames,
  type TurnDetection,
} from '@duplex-bench/protocol';
import { BehaviourSession, type AnswerSink, type BehaviourSettings } from './behaviour-session';
import { ENERGY_VAD } from './energy-vad';
import { ModelSession, type ModelOptions } from './model-session';
import { OpenAITurnFrames } from './turn-frames';
import { injectFault, type MockFault } from './mock-fault';
import type { ArrivalOffsets } from './arrival-offsets';
import type { BehaviourLog } from './behaviour-log';

/** What the server lends each of its sessions: its clock and timers, its counters and its socket writes. */
export interface MockHost {
  clock: TimerHost;
  send(ws: WebSocket, frame: string): void;
  /** A session's arrival offsets, registered with the server's stats until `arrivalsDone`. */
  arrivals(): ArrivalOffsets;
  /** The session ended: its arrivals go into the server's figures for good. */
  arrivalsDone(arrivals: ArrivalOffsets): void;
  completed(): void;
  /** Behaviour mode: session `id`'s log, read out with the stats. */
  behaviourLog(id: string): BehaviourLog;
}

export interface OpenAIMockOptions {
  /** Names of the output events: GA (default) or beta. */
  names: OpenAINames;
  /** Each response's units, silence then a tone (`--leading-silence-ms`); null or absent: silence. */
  leading?: LeadingSilence | null;
  /** vLLM-Omni extensions: `capabilities.chunk_period_ms`, `server_event_seq`, `response_request_metrics`. */
  vllm: boolean;
  /** Input rate until the client's `session.update` states one (OpenAI's is 24,000 Hz). */
  input_sample_rate: number;
  output_sample_rate: number;
  /** One input unit owes one output unit; with `vllm` it is announced as `chunk_period_ms`. */
  unit_ms: number;
  model: ModelOptions;
  /** Server VAD: a turn also ends when no audio arrived for this long. */
  silence_ms: number;
  /**
   * Behaviour mode (under server or semantic VAD): the input is decoded and heard by energy, and
   * the model answers, stops, takes pauses and meets backchannels as BehaviourSession rules; each
   * answer is one response, its audio paced one unit per unit. Null: as without it.
   */
  behaviour?: BehaviourSettings | null;
}

/**
 * One session of the openai mock. With server VAD (the default) or semantic VAD, which it treats
 * the same, it finds turns on its own: every
 * `turn_every_s` of input, or a pause of `silence_ms`, ends one (`speech_stopped`, `committed`), and
 * each turn's response streams while input goes on, as the model profile does. With turn
 * detection off it answers `response.create` with a whole response for the audio committed.
 */
export class OpenAIMockSession {
  private readonly events: OpenAIServerEvents;
  private readonly model: ModelSession;
  private input_rate: number;
  private turn_detection: TurnDetection = 'server_vad';
  private seq = 0;
  private appends = 0;
  private bytes = 0;
  /** Bytes beyond the last whole unit (server VAD) or since the last commit (no turn detection). */
  private pending = 0;
  /** Bytes appended since the last commit (manual or by server VAD): what a manual commit commits. */
  private sinceCommit = 0;
  private units = 0;
  private committedUnits = 0;
  private turns = 0;
  private items = 0;
  private lastItem: string | null = null;
  private speechItem: string | null = null;
  private silence: (() => void) | null = null;
  private readonly arrivals: ArrivalOffsets;
  private silent = false;
  /** Behaviour mode: made with the first append, at the input rate then stated. */
  private behaviour: BehaviourSession | null = null;
  /** The client's `turn_detection.interrupt_response`, when its session.update gave one. */
  private interruptAsked: boolean | undefined;
  private transcripts = new Map<number, string>();

  constructor(
    private readonly ws: WebSocket,
    private readonly host: MockHost,
    private readonly id: string,
    private readonly options: OpenAIMockOptions,
    payload_b64: string,
    private readonly fault: MockFault | null,
  ) {
    this.events = new OpenAIServerEvents(id, options.names);
    this.input_rate = options.input_sample_rate;
    this.arrivals = host.arrivals();
    const frames = new OpenAITurnFrames(this.events, payload_b64, host.clock, options.vllm);
    const leading = options.leading;
    this.model = new ModelSession(options.model, options.unit_ms, frames, host.clock, (frame) => this.send(frame), leading ? (i) => leading.payload(i) : undefined);
  }

  start(): void {
    this.send(this.events.sessionCreated(this.session()));
  }

  dispose(): void {
    this.host.arrivalsDone(this.arrivals);
    this.silence?.();
    this.model.dispose();
    this.behaviour?.close();
  }

  private send(frame: string): void {
    // A server that stopped answering sends nothing more, timers and queued output included.
    if (this.silent) return;
    // vLLM-Omni numbers every server event; the number goes last, so large frames keep `type` first.
    if (this.options.vllm) frame = `${frame.slice(0, -1)},"server_event_seq":${++this.seq}}`;
    this.host.send(this.ws, frame);
  }

  /**
   * Whether this session stops an answer itself when the user speaks over it. Behaviour mode: as
   * OpenAI, unless the client's session.update says `interrupt_response: false` (OpenAI's default
   * is true); the model profiles never do (their responses stream while input goes on).
   */
  private get interrupts(): boolean {
    return this.options.behaviour ? (this.interruptAsked ?? true) : false;
  }

  private session(): Record<string, unknown> {
    // Semantic VAD states its own fields (openai 6.49 `RealtimeAudioInputTurnDetection.SemanticVad`); here it finds turns as server VAD does.
    const interrupt_response = this.interrupts;
    const vad =
      this.turn_detection === 'semantic_vad'
        ? { type: 'semantic_vad', eagerness: 'auto', create_response: true, interrupt_response }
        : this.options.behaviour
          ? // Behaviour mode hears speech end after the VAD's hangover.
            { type: 'server_vad', silence_duration_ms: ENERGY_VAD.hangover_ms, create_response: true, interrupt_response }
          : { type: 'server_vad', silence_duration_ms: this.options.silence_ms, create_response: true, interrupt_response };
    return {
      id: this.id,
      object: 'realtime.session',
      type: 'realtime',
      model: 'duplex-bench-mock',
      output_modalities: ['audio'],
      audio: {
        input: { format: { type: 'audio/pcm', rate: this.input_rate }, turn_detection: this.turn_detection === 'none' ? null : vad },
        output: { format: { type: 'audio/pcm', rate: this.options.output_sample_rate }, voice: 'alloy' },
      },
      ...(this.options.vllm ? { capabilities: { chunk_period_ms: this.options.unit_ms } } : {}),
    };
  }

  private get unitBytes(): number {
    return pcm16BytesPerMs(this.input_rate) * this.options.unit_ms;
  }

  onMessage(data: Buffer, isBinary: boolean, arrived_s: number): void {
    if (this.silent) return;
    if (isBinary) {
      this.send(this.events.error('binary_frame', 'text frames only'));
      return;
    }
    let frame: DecodedFrame;
    try {
      frame = decodeFrameBytes(data);
      // A server parses every frame whole: a malformed one is refused here, whatever its size.
      frame.event();
    } catch {
      this.send(this.events.error('invalid_json', 'frame is not a JSON event'));
      return;
    }
    const event_id = () => {
      const id = frame.event().event_id;
      return typeof id === 'string' ? id : undefined;
    };
    switch (frame.type) {
      case OpenAIEvent.append:
        this.onAppend(frame, arrived_s);
        break;
      case OpenAIEvent.sessionUpdate:
        this.onSessionUpdate(frame, event_id());
        break;
      case OpenAIEvent.commit:
        this.onCommit(event_id());
        break;
      case OpenAIEvent.clear:
        this.pending = 0;
        this.send(this.events.cleared());
        break;
      case OpenAIEvent.responseCreate:
        this.onResponseCreate();
        break;
      case OpenAIEvent.responseCancel:
        // Behaviour mode only; the other mocks ignore it, as before.
        if (this.behaviour) this.onResponseCancel(event_id());
        break;
      case OpenAIEvent.itemTruncate:
        this.onTruncate(frame, event_id());
        break;
      case 'session.close':
        // vLLM-Omni's endpoint closes a session on request; a plain OpenAI server has no such event.
        if (!this.options.vllm) break;
        this.send(this.events.sessionClosed('client_close'));
        this.ws.close(1000, 'client_close');
        break;
      default:
        break;
    }
  }

  /**
   * OpenAI answers a `response.create` sent while a response is in progress with an error that names
   * no event (openai/openai-agents-python#1466: code `conversation_already_has_active_response`,
   * `event_id: null`) and creates nothing; this mock does the same. vLLM-Omni's extensions keep
   * the mock's older, lenient answer.
   */
  private onResponseCreate(): void {
    if (this.behaviour && this.turn_detection !== 'none') {
      const open = this.behaviour.openAnswer;
      if (open !== null) {
        this.send(this.events.error('conversation_already_has_active_response', `Conversation already has an active response in progress: resp_${open}. Wait until the response is finished before creating a new one.`));
        return;
      }
      this.behaviour.respondNow();
      return;
    }
    const active = this.options.vllm ? null : this.model.activeResponse;
    if (active !== null) {
      this.send(this.events.error('conversation_already_has_active_response', `Conversation already has an active response in progress: ${active}. Wait until the response is finished before creating a new one.`));
      return;
    }
    this.model.respond(this.committedUnits);
    this.committedUnits = 0;
  }

  private onSessionUpdate(frame: DecodedFrame, client_event_id: string | undefined): void {
    const session = (frame.event().session ?? {}) as Record<string, unknown>;
    if (session.type !== undefined && session.type !== 'realtime') {
      this.send(this.events.error('invalid_session_type', `session.type must be "realtime", got ${JSON.stringify(session.type)}`, client_event_id));
      return;
    }
    const format = ((session.audio as { input?: { format?: { type?: unknown } } } | undefined)?.input?.format ?? {}) as { type?: unknown };
    if (format.type !== undefined && format.type !== 'audio/pcm') {
      this.send(this.events.error('unsupported_audio_format', `input format ${JSON.stringify(format.type)} is not supported; use audio/pcm`, client_event_id));
      return;
    }
    const rate = openaiSessionRates(session).input;
    if (rate) this.input_rate = rate;
    const detection = openaiSessionTurnDetection(session);
    if (detection) {
      if (detection === 'none' && this.model.inTurn) this.endSpeech();
      this.turn_detection = detection;
    }
    // A turn_detection object replaces the last one whole: one that leaves interrupt_response out takes the default again.
    const input = ((session.audio ?? {}) as { input?: Record<string, unknown> }).input ?? {};
    if ('turn_detection' in input) {
      const asked = ((input.turn_detection ?? {}) as { interrupt_response?: unknown }).interrupt_response;
      this.interruptAsked = typeof asked === 'boolean' ? asked : undefined;
    }
    if (this.behaviour) this.behaviour.interrupts = this.interrupts;
    this.send(this.events.sessionUpdated(this.session()));
  }

  private onAppend(frame: DecodedFrame, arrived_s: number): void {
    const audio = frame.event().audio;
    if (this.options.behaviour && this.turn_detection !== 'none') {
      this.onBehaviourAppend(typeof audio === 'string' ? audio : '', arrived_s, this.options.behaviour);
      return;
    }
    const bytes = typeof audio === 'string' ? base64ByteLength(audio) : 0;
    // Where this append sits in the stream says when it was due: its first byte's time.
    this.arrivals.add(arrived_s * 1000 - this.bytes / pcm16BytesPerMs(this.input_rate));
    this.appends++;
    this.bytes += bytes;
    this.pending += bytes;
    this.sinceCommit += bytes;
    if (this.fault && this.appends >= this.fault.after_appends && this.applyFault(this.fault)) return;
    if (this.turn_detection === 'none') return;
    while (this.pending >= this.unitBytes) {
      this.pending -= this.unitBytes;
      this.onSpeechUnit(this.units++);
    }
    this.silence?.();
    this.silence = this.host.clock.arm(this.options.silence_ms, () => this.onSilence());
  }

  /** Behaviour mode: the append is decoded and heard; the behaviour's VAD says when speech starts and stops. */
  private onBehaviourAppend(audio: string, arrived_s: number, settings: BehaviourSettings): void {
    const pcm = Buffer.from(audio, 'base64');
    this.arrivals.add(arrived_s * 1000 - this.bytes / pcm16BytesPerMs(this.input_rate));
    this.appends++;
    this.bytes += pcm.length;
    this.sinceCommit += pcm.length;
    if (this.fault && this.appends >= this.fault.after_appends && this.applyFault(this.fault)) return;
    if (!this.behaviour) {
      this.behaviour = new BehaviourSession(settings, this.input_rate, this.host.clock, this.host.behaviourLog(this.id), { sink: this.answerSink(), unit_ms: this.options.unit_ms });
      this.behaviour.interrupts = this.interrupts;
    }
    this.behaviour.onInput(pcm, arrived_s);
  }

  /** Behaviour mode: each answer is one response; server VAD events as the behaviour hears the user. */
  private answerSink(): AnswerSink {
    const rid = (n: number) => `resp_${n}`;
    const item = (n: number) => `item_resp_${n}`;
    return {
      speech: (edge, input_ms) => {
        if (edge === 'start') {
          this.speechItem = `item_in_${this.items++}`;
          this.send(this.events.speechStarted(this.speechItem, Math.round(input_ms)));
          return;
        }
        const id = this.speechItem ?? `item_in_${this.items++}`;
        this.send(this.events.speechStopped(id, Math.round(input_ms)));
        this.send(this.events.committed(id, this.lastItem));
        this.lastItem = id;
        this.speechItem = null;
        this.sinceCommit = 0;
      },
      start: (n) => {
        this.transcripts.set(n, '');
        for (const f of this.events.responseStarted(rid(n), item(n))) this.send(f);
      },
      audio: (n, pcm) => {
        this.send(this.events.audioDelta(rid(n), item(n), pcm.toString('base64')));
        const word = 'word ';
        this.transcripts.set(n, (this.transcripts.get(n) ?? '') + word);
        this.send(this.events.transcriptDelta(rid(n), item(n), word));
      },
      end: (n, how, cause) => {
        const transcript = this.transcripts.get(n) ?? '';
        this.transcripts.delete(n);
        const frames = how === 'completed' ? this.events.responseFinished(rid(n), item(n), transcript) : this.events.responseCancelled(rid(n), item(n), transcript, cause === 'client_cancel' ? 'client_cancelled' : 'turn_detected');
        for (const f of frames) this.send(f);
      },
    };
  }

  /** Behaviour mode: `response.cancel` stops the answer out at once (OpenAI: `response_cancel_not_active` when none is). */
  private onResponseCancel(client_event_id: string | undefined): void {
    if (!this.behaviour?.cancel()) this.send(this.events.error('response_cancel_not_active', 'Cancellation failed: no active response found', client_event_id));
  }

  /**
   * `conversation.item.truncate` is answered with `conversation.item.truncated`, as OpenAI does
   * (the audio already sent stays sent); in behaviour mode the truncate of an answer's item is
   * logged with what had played of it, and one that names no answer item is refused.
   */
  private onTruncate(frame: DecodedFrame, client_event_id: string | undefined): void {
    const e = frame.event();
    const item_id = typeof e.item_id === 'string' ? e.item_id : '';
    const audio_end_ms = typeof e.audio_end_ms === 'number' ? e.audio_end_ms : NaN;
    const content_index = typeof e.content_index === 'number' ? e.content_index : 0;
    if (!this.behaviour) {
      if (item_id && Number.isFinite(audio_end_ms)) this.send(this.events.itemTruncated(item_id, content_index, audio_end_ms));
      return;
    }
    const n = /^item_resp_(\d+)$/.exec(item_id);
    if (!n || !Number.isFinite(audio_end_ms) || audio_end_ms < 0) {
      this.send(this.events.error('invalid_value', `conversation.item.truncate: no assistant audio item ${JSON.stringify(item_id)}, or audio_end_ms not a number of ms`, client_event_id));
      return;
    }
    this.behaviour.truncated(Number(n[1]), audio_end_ms);
    this.send(this.events.itemTruncated(item_id, content_index, audio_end_ms));
  }

  /** A whole unit of input under server VAD: it belongs to the current turn, or starts one. */
  private onSpeechUnit(index: number): void {
    const turn_at = Math.floor((index * this.options.unit_ms) / (this.options.model.turn_every_s * 1000));
    if (this.model.inTurn && turn_at >= this.turns) this.endSpeech();
    if (!this.model.inTurn) {
      this.speechItem = `item_in_${this.items++}`;
      this.turns = Math.max(this.turns, turn_at) + 1;
      this.send(this.events.speechStarted(this.speechItem, index * this.options.unit_ms));
      this.model.startTurn();
    }
    this.model.enqueue();
  }

  private onSilence(): void {
    this.silence = null;
    if (this.turn_detection === 'none') return;
    if (this.pending > 0) {
      // The tail is padded to a whole unit, as the native dialect's `tail_policy: "pad"` does.
      this.pending = 0;
      this.onSpeechUnit(this.units++);
    }
    if (this.model.inTurn) this.endSpeech();
  }

  private endSpeech(): void {
    const item = this.speechItem ?? `item_in_${this.items++}`;
    this.send(this.events.speechStopped(item, this.bytes / pcm16BytesPerMs(this.input_rate)));
    this.send(this.events.committed(item, this.lastItem));
    this.lastItem = item;
    this.speechItem = null;
    this.sinceCommit = 0;
    this.model.closeTurn();
  }

  /**
   * A manual commit, with or without server VAD (OpenAI and vLLM-Omni both take one): it commits
   * what was appended since the last commit; under server VAD it also ends the turn in progress.
   */
  private onCommit(client_event_id: string | undefined): void {
    if (this.sinceCommit === 0) {
      this.send(this.events.error('input_audio_buffer_commit_empty', 'the input audio buffer is empty', client_event_id));
      return;
    }
    if (this.turn_detection !== 'none') {
      if (this.pending > 0) {
        this.pending = 0;
        this.onSpeechUnit(this.units++);
      }
      if (this.model.inTurn) {
        this.endSpeech();
        return;
      }
    }
    const item = `item_in_${this.items++}`;
    this.committedUnits += Math.ceil(this.pending / this.unitBytes);
    this.pending = 0;
    this.sinceCommit = 0;
    this.send(this.events.committed(item, this.lastItem));
    this.lastItem = item;
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
        // Numbered as the session's other events when vLLM-Omni's extensions are on.
        unknown: () => {
          const frame = `{"type":"vendor.keepalive","event_id":"${this.id}_k"}`;
          return this.options.vllm ? `${frame.slice(0, -1)},"server_event_seq":${++this.seq}}` : frame;
        },
        fatal: () => this.send(this.events.error('injected_fault', 'the test server gave up')),
        silence: () => {
          this.silent = true;
        },
        nonFinite: () => this.send(this.events.speechStarted(`item_in_${this.items}`, 0).replace('"audio_start_ms":0', '"audio_start_ms":1e999')),
      },
      first,
    );
    if (shared !== 'dialect') return shared === 'skip';
    switch (f.action) {
      case 'skip_event_seq':
        if (first) this.seq++;
        return false;
      case 'duplicate_seq':
        if (!this.options.vllm) throw new RangeError('fault duplicate_seq needs server_event_seq (vLLM-Omni extensions)');
        if (first) this.seq--;
        return false;
      default:
        throw new RangeError(`fault ${f.action} is not defined for the openai dialect`);
    }
  }
}
