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
import { ModelSession, type ModelOptions } from './model-session';
import { OpenAITurnFrames } from './turn-frames';
import type { MockFault } from './mock-fault';
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
    this.model = new ModelSession(options.model, options.unit_ms, frames, host.clock, (frame) => this.send(frame));
  }

  start(): void {
    this.send(this.events.sessionCreated(this.session()));
  }

  dispose(): void {
    this.host.arrivalsDone(this.arrivals);
    this.silence?.();
    this.model.dispose();
  }

  private send(frame: string): void {
    // A server that stopped answering sends nothing more, timers and queued output included.
    if (this.silent) return;
    // vLLM-Omni numbers every server event; the number goes last, so large frames keep `type` first.
    if (this.options.vllm) frame = `${frame.slice(0, -1)},"server_event_seq":${++this.seq}}`;
    this.host.send(this.ws, frame);
  }

  private session(): Record<string, unknown> {
    // Semantic VAD states its own fields (openai 6.49 `RealtimeAudioInputTurnDetection.SemanticVad`); here it finds turns as server VAD does.
    const vad =
      this.turn_detection === 'semantic_vad'
        ? { type: 'semantic_vad', eagerness: 'auto', create_response: true, interrupt_response: false }
        : { type: 'server_vad', silence_duration_ms: this.options.silence_ms, create_response: true, interrupt_response: false };
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
    this.send(this.events.sessionUpdated(this.session()));
  }

  private onAppend(frame: DecodedFrame, arrived_s: number): void {
    const audio = frame.event().audio;
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
    switch (f.action) {
      case 'close':
        this.ws.close(1011, 'injected fault');
        return true;
      case 'malformed_frame':
        this.host.send(this.ws, '{"type":"response.output_audio.delta","delta":');
        return true;
      case 'fatal_error':
        this.send(this.events.error('injected_fault', 'the test server gave up'));
        this.ws.close(1011, 'injected fault');
        return true;
      case 'stop_answering':
        this.silent = true;
        return true;
      case 'skip_event_seq':
        if (this.appends === f.after_appends) this.seq++;
        return false;
      case 'unknown_event':
        if (this.appends === f.after_appends) this.send(`{"type":"vendor.keepalive","event_id":"${this.id}_k"}`);
        return false;
      case 'drop':
        this.ws.terminate();
        return true;
      case 'non_finite':
      case 'refuse_appends':
      case 'linger':
      case 'close_in_handshake':
      case 'padded_tail':
      case 'drained_first':
        throw new RangeError(`fault ${f.action} is defined for the native dialect only`);
      default: {
        const never: never = f.action;
        throw new Error(`unknown fault ${String(never)}`);
      }
    }
  }
}
