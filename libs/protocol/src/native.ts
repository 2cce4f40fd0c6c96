import { ProtocolError } from './errors';
import { spliceFrame, unsignedField, type DecodedFrame } from './frame';

/** Event types of the native realtime dialect (sglang-omni duplex, `ws://HOST/v1/realtime`). */
export const NativeEvent = {
  sessionCreated: 'session.created',
  sessionUpdate: 'session.update',
  sessionUpdated: 'session.updated',
  append: 'input_audio_buffer.append',
  accepted: 'sglang.input_audio.accepted',
  responseCreated: 'response.created',
  audioDelta: 'response.output_audio.delta',
  textDelta: 'response.output_text.delta',
  transcriptDelta: 'response.output_audio_transcript.delta',
  unitDone: 'sglang.unit.done',
  inputEnd: 'sglang.input_audio.end',
  inputEnded: 'sglang.input_audio.ended',
  audioDone: 'response.output_audio.done',
  responseDone: 'response.done',
  drained: 'sglang.input_audio.drained',
  sessionClose: 'session.close',
  sessionClosed: 'session.closed',
  /** A camera frame for the unit its `sglang.t_ms` falls in, sent before that unit's first audio, when the grant lists image input. */
  imageAppend: 'sglang.input_image.append',
  imageAccepted: 'sglang.input_image.accepted',
  error: 'error',
} as const;

const KNOWN_TYPES: ReadonlySet<string> = new Set(Object.values(NativeEvent));

/** Whether a received type is one this dialect defines (others are counted, not refused). */
export function isKnownNativeType(type: string): boolean {
  return KNOWN_TYPES.has(type);
}

const SAFE_ID = /^[A-Za-z0-9_.:-]+$/;

/** Ids are spliced into frames without escaping, so they are held to a safe alphabet. */
export function assertSafeId(id: string): string {
  if (!SAFE_ID.test(id)) throw new RangeError(`id ${JSON.stringify(id)} must match ${SAFE_ID}`);
  return id;
}

// ---- client events: each built once, as the string that goes to the socket ----

/**
 * The client's `session.update`: only the output modalities. The input format is the server's
 * (16 kHz PCM16), and sglang-omni's own client sends nothing else.
 */
export function nativeSessionUpdate(event_id: string): string {
  return `{"type":"${NativeEvent.sessionUpdate}","event_id":"${event_id}","session":{"output_modalities":["audio"]}}`;
}

/**
 * One append frame as bytes (`spliceFrame`): no object is built and the base64 payload (often one
 * shared buffer) is copied once, into the frame. `event_id` must pass `assertSafeId`.
 */
export function nativeAppend(event_id: string, seq: number, t_start_ms: number, audio_b64: Uint8Array): Buffer {
  return spliceFrame('{"type":"input_audio_buffer.append","event_id":"' + event_id + '","audio":"', audio_b64, '","sglang":{"seq":' + seq + ',"t_start_ms":' + t_start_ms + '}}');
}

export function nativeInputEnd(event_id: string): string {
  return `{"type":"${NativeEvent.inputEnd}","event_id":"${event_id}"}`;
}

export function nativeSessionClose(event_id: string): string {
  return `{"type":"${NativeEvent.sessionClose}","event_id":"${event_id}"}`;
}

// ---- reading server events ----

/** What a client takes from the grant in `session.updated`: output rate and native unit, when stated. */
export interface NativeGrantFigures {
  output_sample_rate?: number;
  native_unit_ms?: number;
  /** The grant's `input_modalities` (`["audio", "image"]` when it takes camera frames). */
  input_modalities?: string[];
  /**
   * The grant's `input_image_format`: frames per unit (`max_frames_per_unit`, or the older
   * `max_per_unit`) and the largest frame, bytes (`max_bytes`).
   */
  image_limits?: { max_per_unit?: number; max_bytes?: number };
}

export function readNativeGrant(sessionUpdated: Record<string, unknown>): NativeGrantFigures {
  const session = sessionUpdated.session as { sglang?: { granted?: Record<string, unknown> } } | undefined;
  const granted = session?.sglang?.granted ?? {};
  const rate = (granted.output_audio_format as { rate?: unknown } | undefined)?.rate;
  const unit = granted.native_unit_ms;
  const positive = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;
  const figures: NativeGrantFigures = { ...(positive(rate) ? { output_sample_rate: rate } : {}), ...(positive(unit) ? { native_unit_ms: unit } : {}) };
  if (Array.isArray(granted.input_modalities)) figures.input_modalities = granted.input_modalities.filter((m): m is string => typeof m === 'string');
  const format = granted.input_image_format as Record<string, unknown> | undefined;
  if (format && typeof format === 'object') {
    const per_unit = format.max_frames_per_unit ?? format.max_per_unit;
    figures.image_limits = { ...(positive(per_unit) ? { max_per_unit: per_unit } : {}), ...(positive(format.max_bytes) ? { max_bytes: format.max_bytes } : {}) };
  }
  return figures;
}

/**
 * A camera frame (base64 JPEG) for the unit media time `t_ms` falls in, as sglang-omni's clients
 * send it. A buffer of its own (not `spliceFrame`'s, which the next append may write over).
 */
export function nativeImageAppend(event_id: string, image_b64: Uint8Array, t_ms: number): Buffer {
  return Buffer.concat([Buffer.from(`{"type":"${NativeEvent.imageAppend}","event_id":"${event_id}","image":"`, 'latin1'), image_b64, Buffer.from(`","sglang":{"t_ms":${t_ms}}}`, 'latin1')]);
}

/** Turns a server `error` event into a typed error; `fatal` comes from `sglang.fatal`. */
export function serverError(frame: DecodedFrame): ProtocolError {
  const event = frame.event();
  // vLLM-Omni's handshake-stage errors are flat: `{type: "error", error: "message", code}`.
  const flat = typeof event.error === 'string';
  const error = (flat ? { message: event.error, code: event.code } : (event.error ?? {})) as Record<string, unknown>;
  const sglang = (event.sglang ?? {}) as Record<string, unknown>;
  const code = typeof error.code === 'string' ? error.code : undefined;
  const type = typeof error.type === 'string' ? error.type : undefined;
  const message = typeof error.message === 'string' ? error.message : 'no message';
  // Native servers say whether the error ends the session; the message keeps it.
  const fatality = sglang.fatal === true ? ' (fatal)' : sglang.fatal === false ? ' (non-fatal)' : '';
  return new ProtocolError('SERVER_ERROR', `server error ${code ?? type ?? ''}${fatality}: ${message}`.replace('  ', ' '), {
    event_type: NativeEvent.error,
    server_code: code,
    server_type: type,
    fatal: sglang.fatal === true,
  });
}

const RECEIPT_SEQ_KEY = '"seq":';

/**
 * The receipts' `seq` (`sglang.input_audio.accepted`) against the appends' order: sglang-omni's
 * runtime accepts appends only in contiguous order and answers each once, so a receipt that repeats
 * a seq or skips ahead is the server's fault. Read from the frame's bytes, never parsed.
 */
export class NativeReceiptSeq {
  private next = 0;
  /** Receipts for a seq already answered (or older). */
  repeated = 0;
  /** Seqs skipped over by a receipt ahead of the next one due. */
  skipped = 0;

  add(frame: DecodedFrame): void {
    const seq = unsignedField(frame, RECEIPT_SEQ_KEY);
    if (seq === undefined) return;
    if (seq < this.next) this.repeated++;
    else {
      this.skipped += seq - this.next;
      this.next = seq + 1;
    }
  }
}
