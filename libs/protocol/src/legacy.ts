import { nativeAppend } from './native';

/**
 * sglang-omni's turn-based conversation protocol (the server's `LegacyRealtimeFacade`): an OpenAI
 * Realtime beta session where the server finds the turns. Facts from the public sglang-omni
 * repository: `benchmarks/duplex/client.py`, `oracle.py` (`evaluate_legacy_trace`) and
 * `profiles.py` at 3d801fa0, the facade's stand-in in `tests/unit_test/benchmarks/test_duplex_legacy.py`
 * (7d89c7ef), and the conversation session it serves (`sglang_omni/serve/realtime/session.py`,
 * `events.py` at 0b4c9e8b; `turn_detector.py` at 3cab782f).
 */
export const LegacyEvent = {
  sessionCreated: 'session.created',
  sessionUpdate: 'session.update',
  sessionUpdated: 'session.updated',
  append: 'input_audio_buffer.append',
  speechStarted: 'input_audio_buffer.speech_started',
  speechStopped: 'input_audio_buffer.speech_stopped',
  committed: 'input_audio_buffer.committed',
  /** The server dropped buffered input: the oracle fails a session that shows it. */
  inputCleared: 'input_audio_buffer.cleared',
  transcriptionDelta: 'conversation.item.input_audio_transcription.delta',
  transcriptionCompleted: 'conversation.item.input_audio_transcription.completed',
  itemTruncated: 'conversation.item.truncated',
  /** A response's audio was cut because the user spoke over it. */
  outputCleared: 'output_audio_buffer.cleared',
  responseCreated: 'response.created',
  audioDelta: 'response.audio.delta',
  audioDone: 'response.audio.done',
  textDelta: 'response.text.delta',
  textDone: 'response.text.done',
  responseDone: 'response.done',
  error: 'error',
} as const;

const KNOWN_TYPES: ReadonlySet<string> = new Set(Object.values(LegacyEvent));

/** Whether a received type is one the legacy protocol defines (others are counted, not refused). */
export function isKnownLegacyType(type: string): boolean {
  return KNOWN_TYPES.has(type);
}

/** Who finds the user's turns: the energy VAD (`server_vad`) or a turn model (`semantic_vad`); their client takes only these two. */
export type LegacyTurnDetection = 'server_vad' | 'semantic_vad';

export type LegacyProfileName = 'qwen3-omni-half-duplex';

/** A model served over the legacy protocol, as profiles.py states it, with what their client fixes for every profile. */
export interface LegacyProfile {
  name: LegacyProfileName;
  /** The model's unit (`native_unit_ms`); neither their client nor their oracle reads it on the legacy path. */
  native_unit_ms: number;
  /** Output PCM16 rate: the oracle counts output seconds at it. */
  output_sample_rate: number;
  /** Their client's input: 16 kHz PCM16 (`SAMPLE_RATE`), in 80 ms packets (`PACKET_MS`) whatever the profile. */
  input_sample_rate: number;
  packet_ms: number;
  /** Silence after the input's end before the liveness probe (`LEGACY_TAIL_S`). */
  tail_ms: number;
}

export const LEGACY_PROFILES: Readonly<Record<LegacyProfileName, LegacyProfile>> = {
  'qwen3-omni-half-duplex': { name: 'qwen3-omni-half-duplex', native_unit_ms: 20, output_sample_rate: 24000, input_sample_rate: 16000, packet_ms: 80, tail_ms: 1000 },
};

/**
 * Once the probe is answered their client waits this long for its receive loop to end
 * (`POST_CLOSE_SECONDS`), tracing what still arrives, and then closes the socket: the facade never
 * closes it first, so the wait always runs out.
 */
export const LEGACY_POST_CLOSE_MS = 200;

// ---- client events: each built once, as the string that goes to the socket ----

/**
 * The opening `session.update`: text and audio out, and who finds the turns. Their client sends
 * nothing else; the server validates the rest of the session.
 */
export function legacyConfigure(event_id: string, turn_detection: LegacyTurnDetection): string {
  return `{"type":"session.update","event_id":"${event_id}","session":{"modalities":["text","audio"],"turn_detection":{"type":"${turn_detection}"}}}`;
}

/**
 * The liveness probe: a no-op `session.update` (an empty session). The facade acknowledges no other
 * client event after the input, so its `session.updated` is the proof the session is alive.
 */
export function legacyProbe(event_id: string): string {
  return `{"type":"session.update","event_id":"${event_id}","session":{}}`;
}

/**
 * One append: the same frame as the native dialect's (`sglang: {seq, t_start_ms}` included), as
 * their client sends it on both paths; the oracle holds `seq` contiguous from 0. No receipt comes.
 */
export function legacyAppend(event_id: string, seq: number, t_start_ms: number, audio_b64: Uint8Array): Buffer {
  return nativeAppend(event_id, seq, t_start_ms, audio_b64);
}

// ---- reading server events ----

/** `session.turn_detection.type` of a `session.updated` / `session.created` event, or null when it states none. */
export function legacyTurnDetectionOf(event: Record<string, unknown>): unknown {
  const session = event.session;
  if (session === null || typeof session !== 'object' || Array.isArray(session)) return null;
  const turn = (session as { turn_detection?: unknown }).turn_detection;
  if (turn === null || typeof turn !== 'object' || Array.isArray(turn)) return null;
  return (turn as { type?: unknown }).type ?? null;
}

/** The response a `response.*` event is about: `response.id` when it carries a response, else `response_id`. */
export function legacyResponseId(event: Record<string, unknown>): string | null {
  const response = event.response;
  if (response !== null && typeof response === 'object' && !Array.isArray(response)) {
    const id = (response as { id?: unknown }).id;
    return typeof id === 'string' ? id : null;
  }
  return typeof event.response_id === 'string' ? event.response_id : null;
}

/** `response.done`'s `status` and `status_details.reason`, null where absent. */
export function legacyTerminal(event: Record<string, unknown>): { status: string | null; reason: string | null } {
  const response = (event.response ?? {}) as { status?: unknown; status_details?: { reason?: unknown } | null };
  const reason = response.status_details?.reason;
  return { status: typeof response.status === 'string' ? response.status : null, reason: typeof reason === 'string' ? reason : null };
}
