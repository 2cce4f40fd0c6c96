import { NativeEvent, type NativeAudioFormat } from './native';

/** The capability set a native server grants in `session.updated.session.sglang.granted`. */
export interface NativeGrant {
  native_full_duplex: boolean;
  input_audio_format: NativeAudioFormat;
  output_audio_format: NativeAudioFormat;
  native_unit_ms: number;
  tail_policy: 'pad' | 'drop';
  interaction: string;
  client_commit: boolean;
  proactive_output: boolean;
  pressure_policy: string;
  strict_order: boolean;
  supports_server_interrupt: boolean;
  supports_resume: boolean;
  supports_truncate: boolean;
  output_modalities: string[];
  limits: Record<string, number>;
}

export function defaultNativeGrant(input_sample_rate: number, output_sample_rate: number, unit_ms: number): NativeGrant {
  return {
    native_full_duplex: true,
    input_audio_format: { type: 'pcm16', sample_rate: input_sample_rate, channels: 1 },
    output_audio_format: { type: 'pcm16', sample_rate: output_sample_rate, channels: 1 },
    native_unit_ms: unit_ms,
    tail_policy: 'pad',
    interaction: 'full_duplex',
    client_commit: false,
    proactive_output: true,
    pressure_policy: 'queue',
    strict_order: true,
    supports_server_interrupt: false,
    supports_resume: false,
    supports_truncate: false,
    output_modalities: ['audio', 'text'],
    limits: { max_session_s: 3600 },
  };
}

// Server events, for mocks and test servers. Small ones use JSON.stringify; the per-unit ones are
// templates whose constant parts are built once.

export function nativeSessionCreated(session_id: string): string {
  return JSON.stringify({ type: NativeEvent.sessionCreated, event_id: `${session_id}_created`, session: { id: session_id } });
}

export function nativeSessionUpdated(session_id: string, grant: NativeGrant): string {
  return JSON.stringify({ type: NativeEvent.sessionUpdated, session: { id: session_id, sglang: { granted: grant } } });
}

export function nativeAccepted(seq: number, accepted_end_ms: number, client_event_id: string): string {
  return `{"type":"${NativeEvent.accepted}","seq":${seq},"accepted_end_ms":${accepted_end_ms},"client_event_id":${JSON.stringify(client_event_id)}}`;
}

export function nativeResponseCreated(response_id: string): string {
  return JSON.stringify({ type: NativeEvent.responseCreated, response: { id: response_id, status: 'in_progress' } });
}

/** Audio delta frames with a fixed payload: only the unit numbers change per frame. */
export class NativeAudioDeltaTemplate {
  private readonly head: string;
  private readonly payloadHead: string;
  constructor(response_id: string, item_id: string, payload_b64: string) {
    this.head = `{"type":"${NativeEvent.audioDelta}","response_id":"${response_id}","item_id":"${item_id}","output_index":0,"content_index":0,"delta":"`;
    this.payloadHead = this.head + payload_b64 + '","sglang":{"unit_id":';
  }
  encode(unit_id: number, chunk_seq: number, t_start_ms: number, duration_ms: number): string {
    return (
      this.payloadHead +
      unit_id +
      ',"chunk_seq":' +
      chunk_seq +
      ',"media_time":{"t_start_ms":' +
      t_start_ms +
      ',"duration_ms":' +
      duration_ms +
      '}}}'
    );
  }
}

export function nativeTextDelta(response_id: string, item_id: string, text: string): string {
  return JSON.stringify({ type: NativeEvent.textDelta, response_id, item_id, output_index: 0, content_index: 0, delta: text });
}

export function nativeUnitDone(unit_id: number, t_start_ms: number, duration_ms: number): string {
  return `{"type":"${NativeEvent.unitDone}","unit_id":${unit_id},"sglang":{"unit_id":${unit_id},"media_time":{"t_start_ms":${t_start_ms},"duration_ms":${duration_ms}}}}`;
}

export function nativeInputEnded(client_event_id: string, accepted_end_ms: number): string {
  return JSON.stringify({ type: NativeEvent.inputEnded, client_event_id, accepted_end_ms });
}

export function nativeAudioDone(response_id: string, item_id: string): string {
  return JSON.stringify({ type: NativeEvent.audioDone, response_id, item_id, output_index: 0, content_index: 0 });
}

export function nativeResponseDone(response_id: string): string {
  return JSON.stringify({ type: NativeEvent.responseDone, response: { id: response_id, status: 'completed' } });
}

export interface NativeDrainFigures {
  accepted_end_ms: number;
  consumed_ms: number;
  discarded_ms: number;
  padding_ms: number;
}

export function nativeDrained(client_event_id: string, figures: NativeDrainFigures): string {
  return JSON.stringify({ type: NativeEvent.drained, client_event_id, ...figures });
}

export function nativeSessionClosed(client_event_id: string): string {
  return JSON.stringify({ type: NativeEvent.sessionClosed, client_event_id });
}

export function nativeError(code: string, message: string, fatal: boolean, event_id?: string): string {
  return JSON.stringify({ type: NativeEvent.error, error: { type: 'server_error', code, message, event_id }, sglang: { fatal } });
}
