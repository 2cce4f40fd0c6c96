import { NativeEvent } from './native';
import { NATIVE_INPUT_SAMPLE_RATE } from './native-profiles';

// Server events of the native dialect, for mocks and test servers, as the sglang-omni duplex server
// sends them (DESIGN.md, "Wire dialects"; facts from sglang-omni at commit 1035e3ff: the oracle,
// its models and the GRANTED fixture of its tests). Every server event carries its own `event_id`;
// acknowledgements echo the client command's id as `client_event_id`. Small events use
// JSON.stringify; the per-unit ones are templates whose constant parts are built once.

/** Audio as the native grant states it. */
export interface NativeAudioFormat {
  type: 'audio/pcm';
  rate: number;
}

/** The capability set of `session.updated.session.sglang.granted`, with the values a native server grants. */
export interface NativeGrant {
  interaction: 'native';
  native_full_duplex: true;
  proactive_output: false;
  turn_control: [null];
  client_commit: false;
  /** `['audio']`, or `['audio', 'image']` when the server takes camera frames (`sglang.input_image.append`). */
  input_modalities: string[];
  /** With image input: the frames it takes (their clients read `max_per_unit` or `max_frames_per_unit`, and `max_bytes`). */
  input_image_format?: { types: string[]; max_bytes: number; max_frames_per_unit: number; max_per_unit: number; max_slice_nums: number };
  output_modalities: ['audio'];
  input_audio_format: NativeAudioFormat;
  output_audio_format: NativeAudioFormat;
  native_unit_ms: number;
  first_unit_ms: number;
  microturn_ms: null;
  tail_policy: 'pad';
  supports_server_interrupt: false;
  supports_truncate: false;
  supports_resume: false;
  partial_style: 'append_only';
  pressure_policy: 'reject';
  strict_order: true;
  /** The sampling fields a session may set (`session.sglang.sampling`); none by default. */
  sampling_parameters: string[];
  supports_reference_audio: boolean;
  limits: NativeLimits;
  rejections: [];
}

/** The server's runtime limits as its grant states them (`RuntimeLimits`, sglang_omni/serve/realtime/types.py@dd3240eb). */
export interface NativeLimits {
  max_input_bytes: number;
  max_output_bytes: number;
  max_output_events: number;
  max_history_chars: number;
  cleanup_timeout_s: number;
}

/**
 * The grant of a server whose model takes `native_unit_ms` units and speaks at `output_sample_rate`.
 * `limits` are what the server states it enforces; a mock that enforces none states generous ones.
 */
export function nativeGrant(output_sample_rate: number, native_unit_ms: number, limits: NativeLimits): NativeGrant {
  return {
    interaction: 'native',
    native_full_duplex: true,
    proactive_output: false,
    turn_control: [null],
    client_commit: false,
    input_modalities: ['audio'],
    output_modalities: ['audio'],
    input_audio_format: { type: 'audio/pcm', rate: NATIVE_INPUT_SAMPLE_RATE },
    output_audio_format: { type: 'audio/pcm', rate: output_sample_rate },
    native_unit_ms,
    first_unit_ms: native_unit_ms,
    microturn_ms: null,
    tail_policy: 'pad',
    supports_server_interrupt: false,
    supports_truncate: false,
    supports_resume: false,
    partial_style: 'append_only',
    pressure_policy: 'reject',
    strict_order: true,
    sampling_parameters: [],
    supports_reference_audio: false,
    limits,
    rejections: [],
  };
}

/** `unit_N`: how the native dialect names input unit N (0-based). */
export function nativeUnitId(index: number): string {
  return `unit_${index}`;
}

export function nativeSessionCreated(event_id: string, session_id: string): string {
  return JSON.stringify({ type: NativeEvent.sessionCreated, event_id, session: { id: session_id, sglang: { granted: null } } });
}

/**
 * `session.updated`: the session as negotiated, echoed (what the client asked, its audio formats
 * filled in), with the id, the model, the type and the grant (projection.py@0d34b501 `Updated`).
 */
export function nativeSessionUpdated(event_id: string, client_event_id: string, session_id: string, grant: NativeGrant, asked: Record<string, unknown> = {}): string {
  const sglang = asked.sglang && typeof asked.sglang === 'object' ? (asked.sglang as Record<string, unknown>) : {};
  const audio = {
    input: { format: { type: 'audio/pcm', rate: grant.input_audio_format.rate } },
    output: { format: { type: 'audio/pcm', rate: grant.output_audio_format.rate } },
  };
  const session = { ...asked, audio, output_modalities: grant.output_modalities, id: session_id, object: 'realtime.session', model: 'duplex-bench-mock', type: 'realtime', sglang: { ...sglang, granted: grant } };
  return JSON.stringify({ type: NativeEvent.sessionUpdated, event_id, client_event_id, session });
}

/** The receipt of one append: `accepted_end_ms` is the input accepted so far, in ms. */
export function nativeAccepted(event_id: string, client_event_id: string, seq: number, accepted_end_ms: number): string {
  return `{"type":"${NativeEvent.accepted}","event_id":"${event_id}","seq":${seq},"accepted_end_ms":${accepted_end_ms},"client_event_id":${JSON.stringify(client_event_id)}}`;
}

export function nativeResponseCreated(event_id: string, response_id: string): string {
  return JSON.stringify({ type: NativeEvent.responseCreated, event_id, response: { id: response_id, status: 'in_progress' } });
}

/**
 * Audio delta frames of one response with a fixed payload: only the event id and the unit's numbers
 * change per frame. `event_id` goes after the payload so the payload part is built once.
 */
export class NativeAudioDeltaTemplate {
  private readonly payloadHead: string;
  constructor(response_id: string, item_id: string, payload_b64: string) {
    this.payloadHead = `{"type":"${NativeEvent.audioDelta}","response_id":"${response_id}","item_id":"${item_id}","output_index":0,"content_index":0,"delta":"${payload_b64}","sglang":{"unit_id":"unit_`;
  }
  encode(event_id: string, unit_index: number, chunk_seq: number, t_start_ms: number, duration_ms: number): string {
    return (
      this.payloadHead +
      unit_index +
      '","chunk_seq":' +
      chunk_seq +
      ',"media_time":{"t_start_ms":' +
      t_start_ms +
      ',"duration_ms":' +
      duration_ms +
      '}},"event_id":"' +
      event_id +
      '"}'
    );
  }
}

/**
 * A transcript delta; `num_tokens` (when given) is the step's token count, under `sglang`. Built by
 * concatenation: it goes out with every unit, and JSON.stringify of the whole event made the
 * append-echo mock's replies to a unit 4-6 times slower to build (2.0-2.9 µs against 0.3-0.6 µs).
 */
export function nativeTranscriptDelta(event_id: string, response_id: string, item_id: string, text: string, num_tokens?: number): string {
  return (
    `{"type":"${NativeEvent.transcriptDelta}","event_id":"${event_id}","response_id":"${response_id}","item_id":"${item_id}","output_index":0,"content_index":0,"delta":` +
    JSON.stringify(text) +
    (num_tokens ? `,"sglang":{"num_tokens":${num_tokens}}}` : '}')
  );
}

export function nativeTextDelta(event_id: string, response_id: string, item_id: string, text: string): string {
  return JSON.stringify({ type: NativeEvent.textDelta, event_id, response_id, item_id, output_index: 0, content_index: 0, delta: text });
}

/** Input unit `unit_index` is done; `duration_ms` is the input it held (the last unit holds the remainder). */
export function nativeUnitDone(event_id: string, unit_index: number, t_start_ms: number, duration_ms: number): string {
  const unit_id = nativeUnitId(unit_index);
  return `{"type":"${NativeEvent.unitDone}","event_id":"${event_id}","unit_id":"${unit_id}","sglang":{"unit_id":"${unit_id}","chunk_seq":0,"media_time":{"t_start_ms":${t_start_ms},"duration_ms":${duration_ms}}}}`;
}

export function nativeInputEnded(event_id: string, client_event_id: string, accepted_end_ms: number): string {
  return JSON.stringify({ type: NativeEvent.inputEnded, event_id, client_event_id, accepted_end_ms, tail_policy: 'pad' });
}

export function nativeAudioDone(event_id: string, response_id: string, item_id: string): string {
  return JSON.stringify({ type: NativeEvent.audioDone, event_id, response_id, item_id, output_index: 0, content_index: 0 });
}

/**
 * How a response ends: `completed`/`stop` when the model finished it, `cancelled`/`client_closed`
 * when the client closed the session first.
 */
export type NativeResponseEnd = 'stop' | 'client_closed';

export function nativeResponseDone(event_id: string, response_id: string, end: NativeResponseEnd, extra: Record<string, unknown> = {}): string {
  const status = end === 'stop' ? 'completed' : 'cancelled';
  return JSON.stringify({ type: NativeEvent.responseDone, event_id, response: { id: response_id, status, status_details: { reason: end }, ...extra } });
}

export interface NativeDrainFigures {
  accepted_end_ms: number;
  consumed_ms: number;
  discarded_ms: number;
  padding_ms: number;
}

export function nativeDrained(event_id: string, client_event_id: string, figures: NativeDrainFigures): string {
  return JSON.stringify({ type: NativeEvent.drained, event_id, client_event_id, ...figures });
}

export function nativeSessionClosed(event_id: string, client_event_id: string | null, reason = 'client_closed'): string {
  return JSON.stringify({ type: NativeEvent.sessionClosed, event_id, ...(client_event_id === null ? {} : { client_event_id }), reason });
}

/** An error event; `client_event_id` names the client command it refers to, when there is one. */
export function nativeError(event_id: string, code: string, message: string, fatal: boolean, client_event_id?: string): string {
  return JSON.stringify({
    type: NativeEvent.error,
    event_id,
    error: { type: fatal ? 'server_error' : 'invalid_request_error', code, message, ...(client_event_id ? { event_id: client_event_id } : {}) },
    sglang: { fatal },
  });
}
