import type { LeadingSilence } from './leading-silence';
import type WebSocket from 'ws';
import {
  base64ByteLength,
  decodeFrameBytes,
  NATIVE_INPUT_BYTES_PER_MS,
  NATIVE_INPUT_SAMPLE_RATE,
  NativeAudioDeltaTemplate,
  nativeAccepted,
  nativeAudioDone,
  nativeDrained,
  nativeError,
  NativeEvent,
  nativeInputEnded,
  nativeResponseCreated,
  nativeResponseDone,
  nativeSessionClosed,
  nativeSessionCreated,
  nativeSessionUpdated,
  nativeTranscriptDelta,
  nativeUnitDone,
  type DecodedFrame,
  type NativeGrant,
} from '@duplex-bench/protocol';
import { BehaviourSession, type BehaviourSettings } from './behaviour-session';
import { ModelSession, type ModelOptions } from './model-session';
import { NativeTurnFrames } from './turn-frames';
import { injectFault, type MockFault } from './mock-fault';
import type { MockHost } from './openai-mock-session';
import type { ArrivalOffsets } from './arrival-offsets';

export interface NativeMockOptions {
  grant: NativeGrant;
  /** append-echo: events per input unit, an audio delta, transcript deltas and `sglang.unit.done` (at least 2). */
  replies_per_unit: number;
  /**
   * nemotron and minicpmo: how the model answers (nemotron, one response for the session; minicpmo,
   * turns every `turn_every_s`). Null: append-echo, each whole unit answered at once.
   */
  model: ModelOptions | null;
  /**
   * Behaviour mode (with a model profile): the input is decoded and heard by energy, and each
   * output unit carries the answer where one plays, silence elsewhere (BehaviourSession).
   */
  behaviour: BehaviourSettings | null;
  /** Without behaviour: each response's units, silence then a tone (`--leading-silence-ms`); null: silence. */
  leading?: LeadingSilence | null;
  /** Compute each camera frame adds to its unit, ms (grown with the load); 0: none. */
  frame_cost_ms?: number;
}

/** The client waits for `session.closed` and closes; one that does not is dropped after this. */
const CLOSE_GRACE_MS = 5000;
const ECHO_RESPONSE = 'resp_0';
const ECHO_ITEM = 'item_resp_0';

/**
 * One session of the native mock, as an sglang-omni duplex server speaks: `session.created` on
 * connect, the grant on `session.update`, a receipt per append, `sglang.unit.done` per input unit
 * (the last one holds the remainder; unit-aligned input ends with an empty unit), and on end of
 * input `ended`, the response's end and `drained`. Input audio is measured by its base64 length,
 * never decoded (but in behaviour mode); output frames come from templates.
 */
export class NativeMockSession {
  private readonly unit_ms: number;
  private readonly unit_bytes: number;
  private readonly model: ModelSession | null;
  private readonly behaviour: BehaviourSession | null;
  private readonly echo: NativeAudioDeltaTemplate;
  private events = 0;
  private closed = false;
  private silent = false;
  private refusing = false;
  private appends = 0;
  private accepted_bytes = 0;
  /** Input beyond the last whole unit. */
  private pending_bytes = 0;
  private units = 0;
  private echoOpen = false;
  private readonly arrivals: ArrivalOffsets;
  private cancelCloseTimer: (() => void) | null = null;
  private inputEnded = false;
  /** Camera frames bound to each unit not yet cut. */
  private readonly unitFrames = new Map<number, number>();
  /** Camera frames taken and refused, and the bytes taken. */
  readonly frames = { accepted: 0, refused: 0, bytes: 0 };

  constructor(
    private readonly ws: WebSocket,
    private readonly host: MockHost,
    private readonly id: string,
    private readonly options: NativeMockOptions,
    payload_b64: string,
    private readonly fault: MockFault | null,
  ) {
    this.unit_ms = options.grant.native_unit_ms;
    this.unit_bytes = NATIVE_INPUT_BYTES_PER_MS * this.unit_ms;
    this.arrivals = host.arrivals();
    this.echo = new NativeAudioDeltaTemplate(ECHO_RESPONSE, ECHO_ITEM, payload_b64);
    const frames = new NativeTurnFrames(payload_b64, () => this.nextEventId());
    const b = options.model && options.behaviour ? options.behaviour : null;
    this.behaviour = b ? new BehaviourSession(b, NATIVE_INPUT_SAMPLE_RATE, host.clock, host.behaviourLog(id), null) : null;
    const behaviour = this.behaviour;
    // One output unit of samples, as the silence payload holds.
    const unit_samples = b ? Math.floor((b.answer.rate * this.unit_ms) / 1000) : 0;
    const leading = options.leading;
    const voice = behaviour ? () => behaviour.pullUnit(unit_samples)?.toString('base64') : leading ? (i: number) => leading.payload(i) : undefined;
    this.model = options.model ? new ModelSession(options.model, this.unit_ms, frames, host.clock, (frame) => this.send(frame), voice) : null;
  }

  start(): void {
    this.send(nativeSessionCreated(this.nextEventId(), this.id));
  }

  dispose(): void {
    this.host.arrivalsDone(this.arrivals);
    this.cancelCloseTimer?.();
    this.model?.dispose();
    this.behaviour?.close();
  }

  private nextEventId(): string {
    return `${this.id}_e${this.events++}`;
  }

  private send(frame: string): void {
    // After session.closed, and once the server stopped answering, nothing more goes out.
    if (this.closed || this.silent) return;
    this.host.send(this.ws, frame);
  }

  onMessage(data: Buffer, isBinary: boolean, arrived_s: number): void {
    if (this.silent || this.closed) return;
    if (isBinary) {
      this.send(nativeError(this.nextEventId(), 'binary_frame', 'text frames only', false));
      return;
    }
    let frame: DecodedFrame;
    try {
      frame = decodeFrameBytes(data);
      // A server parses every frame whole: a malformed one is refused here, whatever its size.
      frame.event();
    } catch {
      this.send(nativeError(this.nextEventId(), 'malformed_frame', 'frame is not a JSON event', false));
      return;
    }
    const client_event_id = String(frame.event().event_id ?? '');
    switch (frame.type) {
      case NativeEvent.append:
        this.onAppend(frame, client_event_id, arrived_s);
        break;
      case NativeEvent.sessionUpdate:
        this.onSessionUpdate(client_event_id, frame.event().session);
        break;
      case NativeEvent.inputEnd:
        this.onInputEnd(client_event_id);
        break;
      case NativeEvent.sessionClose:
        this.onSessionClose(client_event_id);
        break;
      case NativeEvent.imageAppend:
        this.onImage(frame.event(), client_event_id);
        break;
      default:
        this.send(nativeError(this.nextEventId(), 'unknown_event', `event type ${JSON.stringify(frame.type)} is not supported`, false, client_event_id));
        break;
    }
  }

  private onSessionUpdate(client_event_id: string, asked: unknown): void {
    if (this.fault?.action === 'close_in_handshake') {
      this.ws.close(1011, 'injected fault');
      return;
    }
    this.send(nativeSessionUpdated(this.nextEventId(), client_event_id, this.id, this.options.grant, asked && typeof asked === 'object' ? (asked as Record<string, unknown>) : {}));
    if (this.fault && this.fault.after_appends === 0) this.applyFault(this.fault, client_event_id);
  }

  private onAppend(frame: DecodedFrame, client_event_id: string, arrived_s: number): void {
    const event = frame.event();
    const sglang = (event.sglang ?? {}) as { seq?: unknown; t_start_ms?: unknown };
    const seq = typeof sglang.seq === 'number' ? sglang.seq : this.appends;
    const t_start_ms = typeof sglang.t_start_ms === 'number' ? sglang.t_start_ms : this.accepted_bytes / NATIVE_INPUT_BYTES_PER_MS;
    this.arrivals.add(arrived_s * 1000 - t_start_ms);
    this.appends++;
    if (this.fault && this.fault.after_appends > 0 && this.appends >= this.fault.after_appends && this.applyFault(this.fault, client_event_id)) return;
    if (this.refusing) {
      this.send(nativeError(this.nextEventId(), 'input_rejected', 'append refused', false, client_event_id));
      return;
    }
    const incoming = typeof event.audio === 'string' ? base64ByteLength(event.audio) : 0;
    if (this.model && this.pending_bytes + this.model.backlog_ms() * NATIVE_INPUT_BYTES_PER_MS + incoming > this.options.grant.limits.max_input_bytes) {
      // sglang-omni's runtime bounds the input it holds unprocessed: a server this far behind refuses the append, not fatally.
      this.send(nativeError(this.nextEventId(), 'buffer_overflow', 'input budget exhausted; retry this seq', false, client_event_id));
      return;
    }
    let bytes = 0;
    if (typeof event.audio === 'string') {
      if (this.behaviour) {
        const pcm = Buffer.from(event.audio, 'base64');
        bytes = pcm.length;
        this.behaviour.onInput(pcm, arrived_s);
      } else bytes = base64ByteLength(event.audio);
    }
    this.accepted_bytes += bytes;
    this.pending_bytes += bytes;
    this.send(nativeAccepted(this.nextEventId(), client_event_id, seq, this.accepted_bytes / NATIVE_INPUT_BYTES_PER_MS));
    if (this.fault?.action === 'duplicate_seq' && this.appends === Math.max(1, this.fault.after_appends)) this.send(nativeAccepted(this.nextEventId(), client_event_id, seq, this.accepted_bytes / NATIVE_INPUT_BYTES_PER_MS));
    if (!this.model && !this.echoOpen) {
      this.echoOpen = true;
      this.send(nativeResponseCreated(this.nextEventId(), ECHO_RESPONSE));
    }
    while (this.pending_bytes >= this.unit_bytes) {
      this.pending_bytes -= this.unit_bytes;
      const index = this.units++;
      const cost_ms = (this.unitFrames.get(index) ?? 0) * (this.options.frame_cost_ms ?? 0);
      this.unitFrames.delete(index);
      if (this.model) this.model.onInputUnit(index, cost_ms);
      else if (cost_ms > 0) this.host.clock.arm(cost_ms, () => this.echoUnit(index, this.unit_ms));
      else this.echoUnit(index, this.unit_ms);
    }
  }

  /** append-echo: one input unit's answer, at once. */
  private echoUnit(index: number, duration_ms: number): void {
    const t_start_ms = index * this.unit_ms;
    this.send(this.echo.encode(this.nextEventId(), index, 0, t_start_ms, duration_ms));
    for (let i = 2; i < this.options.replies_per_unit; i++) this.send(nativeTranscriptDelta(this.nextEventId(), ECHO_RESPONSE, ECHO_ITEM, ' '));
    this.send(nativeUnitDone(this.nextEventId(), index, t_start_ms, duration_ms));
  }

  /**
   * A camera frame, as sglang-omni's session takes it (`append_image`): refused (non-fatal) when the
   * grant has no image input, after the input ended, over `max_bytes`, not a JPEG or PNG, for a unit
   * already cut, or past the unit's frame count; else bound to the unit its `t_ms` falls in and
   * answered `sglang.input_image.accepted {unit_id, client_event_id}`.
   */
  private onImage(event: Record<string, unknown>, client_event_id: string): void {
    const format = this.options.grant.input_image_format;
    const refuse = (code: string, message: string) => {
      this.frames.refused++;
      this.send(nativeError(this.nextEventId(), code, message, false, client_event_id));
    };
    const image = typeof event.image === 'string' ? Buffer.from(event.image, 'base64') : Buffer.alloc(0);
    const t_ms = Number((event.sglang as { t_ms?: unknown } | undefined)?.t_ms);
    if (!format || !this.options.grant.input_modalities.includes('image')) return refuse('not_supported', 'image input is not granted');
    if (this.inputEnded) return refuse('invalid_state', 'input has ended');
    if (image.length > format.max_bytes) return refuse('buffer_overflow', 'image exceeds input budget');
    const jpeg = image.length > 2 && image[0] === 0xff && image[1] === 0xd8;
    const png = image.subarray(0, 4).toString('latin1') === '\x89PNG';
    if (!jpeg && !png) return refuse('invalid_request', 'image must be JPEG or PNG');
    if (!Number.isFinite(t_ms)) return refuse('invalid_request', 'sglang.t_ms must be a number');
    const unit = Math.floor(t_ms / this.unit_ms);
    if (unit < this.units) return refuse('invalid_state', 'frame unit already cut');
    const held = this.unitFrames.get(unit) ?? 0;
    if (held >= format.max_frames_per_unit) return refuse('buffer_overflow', 'unit frame count exceeds limit');
    this.unitFrames.set(unit, held + 1);
    this.frames.accepted++;
    this.frames.bytes += image.length;
    this.send(JSON.stringify({ type: NativeEvent.imageAccepted, event_id: this.nextEventId(), unit_id: `unit_${unit}`, client_event_id }));
  }

  private onInputEnd(client_event_id: string): void {
    this.inputEnded = true;
    const accepted_end_ms = this.accepted_bytes / NATIVE_INPUT_BYTES_PER_MS;
    this.send(nativeInputEnded(this.nextEventId(), client_event_id, accepted_end_ms));
    // The tail is padded to a whole unit (`tail_policy: "pad"`): a whole unit of output, a unit that reports the remainder.
    const tail_ms = this.pending_bytes / NATIVE_INPUT_BYTES_PER_MS;
    this.pending_bytes = 0;
    const padding_ms = Math.ceil(accepted_end_ms / this.unit_ms) * this.unit_ms - accepted_end_ms;
    const padded = this.fault?.action === 'padded_tail';
    const finish = () => {
      // Unit-aligned input ends with an empty unit, as the server's end-of-stream unit.
      if (tail_ms === 0) this.send(nativeUnitDone(this.nextEventId(), this.units, this.units * this.unit_ms, 0));
      const consumed_ms = padded ? accepted_end_ms + padding_ms : accepted_end_ms;
      this.send(nativeDrained(this.nextEventId(), client_event_id, { accepted_end_ms, consumed_ms, discarded_ms: 0, padding_ms }));
    };
    const tailIndex = tail_ms > 0 ? this.units++ : -1;
    if (this.model) {
      this.model.onInputEnd(tail_ms, finish);
      return;
    }
    if (tailIndex >= 0) this.echoUnit(tailIndex, padded ? this.unit_ms : tail_ms);
    if (this.fault?.action === 'drained_first') finish();
    this.endEcho('stop');
    if (this.fault?.action !== 'drained_first') finish();
  }

  private endEcho(end: 'stop' | 'client_closed'): void {
    if (!this.echoOpen) return;
    this.echoOpen = false;
    this.send(nativeAudioDone(this.nextEventId(), ECHO_RESPONSE, ECHO_ITEM));
    this.send(nativeResponseDone(this.nextEventId(), ECHO_RESPONSE, end));
  }

  private onSessionClose(client_event_id: string): void {
    // Responses still open end cancelled: the client closed before they finished.
    this.behaviour?.close();
    if (this.model) this.model.cancel();
    else this.endEcho('client_closed');
    if (this.fault?.action === 'no_session_closed') {
      // Neither session.closed nor a close: the client must end the socket on its own, within its bound.
      this.closed = true;
      return;
    }
    this.send(nativeSessionClosed(this.nextEventId(), client_event_id));
    this.closed = true;
    this.host.completed();
    if (this.fault?.action === 'linger') {
      // Neither close nor read: the client must end the socket on its own, within its bound.
      (this.ws as unknown as { _socket?: { pause(): void } })._socket?.pause();
      return;
    }
    this.cancelCloseTimer = this.host.clock.arm(CLOSE_GRACE_MS, () => this.ws.terminate(), { background: true });
  }

  /** Returns true when the append must not be answered. */
  private applyFault(f: MockFault, client_event_id: string): boolean {
    const shared = injectFault(
      f,
      {
        ws: this.ws,
        raw: (frame) => this.host.send(this.ws, frame),
        malformed: '{"type":"sglang.input_audio.accepted","seq":',
        unknown: () => `{"type":"vendor.keepalive","event_id":"${this.nextEventId()}"}`,
        fatal: () => {
          // A fatal error ends the session on the server's side: it says so and closes.
          this.send(nativeError(this.nextEventId(), 'injected_fault', 'the test server gave up', true, client_event_id));
          this.send(nativeSessionClosed(this.nextEventId(), null, 'error'));
          this.closed = true;
        },
        silence: () => {
          this.silent = true;
          this.model?.dispose();
        },
        nonFinite: () => this.host.send(this.ws, `{"type":"sglang.input_audio.accepted","event_id":"${this.nextEventId()}","seq":0,"accepted_end_ms":1e999,"client_event_id":"${client_event_id}"}`),
      },
      this.appends === f.after_appends,
    );
    if (shared !== 'dialect') return shared === 'skip';
    switch (f.action) {
      case 'refuse_appends':
        this.refusing = true;
        return false;
      // Applied where they happen: the handshake, the receipt, the tail, the close.
      case 'linger':
      case 'close_in_handshake':
      case 'padded_tail':
      case 'drained_first':
      case 'no_session_closed':
      case 'duplicate_seq':
      case 'skip_event_seq':
        return false;
      default:
        throw new RangeError(`fault ${f.action} is not defined for the native dialect`);
    }
  }
}
