import { spliceFrame } from './frame';

/**
 * The OpenAI Realtime dialect (`session.type: "realtime"`, GA event names). Clients send GA names;
 * on receive the beta names of the output events are accepted too and read as their GA twins.
 */
export const OpenAIEvent = {
  sessionCreated: 'session.created',
  sessionUpdate: 'session.update',
  sessionUpdated: 'session.updated',
  append: 'input_audio_buffer.append',
  commit: 'input_audio_buffer.commit',
  clear: 'input_audio_buffer.clear',
  committed: 'input_audio_buffer.committed',
  cleared: 'input_audio_buffer.cleared',
  speechStarted: 'input_audio_buffer.speech_started',
  speechStopped: 'input_audio_buffer.speech_stopped',
  responseCreate: 'response.create',
  responseCancel: 'response.cancel',
  itemTruncate: 'conversation.item.truncate',
  itemTruncated: 'conversation.item.truncated',
  responseCreated: 'response.created',
  outputItemAdded: 'response.output_item.added',
  outputItemDone: 'response.output_item.done',
  contentPartAdded: 'response.content_part.added',
  contentPartDone: 'response.content_part.done',
  audioDelta: 'response.output_audio.delta',
  audioDone: 'response.output_audio.done',
  transcriptDelta: 'response.output_audio_transcript.delta',
  transcriptDone: 'response.output_audio_transcript.done',
  textDelta: 'response.output_text.delta',
  textDone: 'response.output_text.done',
  responseDone: 'response.done',
  conversationCreated: 'conversation.created',
  itemAdded: 'conversation.item.added',
  itemCreated: 'conversation.item.created',
  itemDone: 'conversation.item.done',
  rateLimitsUpdated: 'rate_limits.updated',
  error: 'error',
} as const;

/** Beta names of output events and the GA names they stand for. */
export const OPENAI_BETA_NAMES: Readonly<Record<string, string>> = {
  'response.audio.delta': OpenAIEvent.audioDelta,
  'response.audio.done': OpenAIEvent.audioDone,
  'response.audio_transcript.delta': OpenAIEvent.transcriptDelta,
  'response.audio_transcript.done': OpenAIEvent.transcriptDone,
  'response.text.delta': OpenAIEvent.textDelta,
  'response.text.done': OpenAIEvent.textDone,
};

/** The GA name of a received type (beta names mapped, anything else unchanged). */
export function gaEventName(type: string): string {
  return OPENAI_BETA_NAMES[type] ?? type;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set([
  ...Object.values(OpenAIEvent),
  ...Object.keys(OPENAI_BETA_NAMES),
  'input_audio_buffer.timeout_triggered',
  'conversation.item.input_audio_transcription.delta',
  'conversation.item.input_audio_transcription.completed',
  'conversation.item.input_audio_transcription.failed',
  'conversation.item.deleted',
  'output_audio_buffer.started',
  'output_audio_buffer.stopped',
  'output_audio_buffer.cleared',
]);

/** Whether a received type is one this dialect defines, by GA or beta name (others are counted, not refused). */
export function isKnownOpenAIType(type: string): boolean {
  return KNOWN_TYPES.has(type);
}

/**
 * Who finds the user's turns: the server by voice activity (`server_vad`), the server by a turn
 * model (`semantic_vad`: GA `session.audio.input.turn_detection: {type: "semantic_vad"}`, openai
 * package 6.49 `RealtimeAudioInputTurnDetection.SemanticVad`), or the client (`none`: `null`).
 */
export type TurnDetection = 'server_vad' | 'semantic_vad' | 'none';

/** OpenAI takes `audio/pcm` at this rate only (openai 6.49 `RealtimeAudioFormats.AudioPCM.rate: 24000`). */
export const OPENAI_PCM_RATE = 24000;

/** The `turn_detection` value of a session object: `null` turns it off. */
function turnDetectionField(detection: TurnDetection): { type: 'server_vad' | 'semantic_vad' } | null {
  return detection === 'none' ? null : { type: detection };
}

/** What the client asks for in `session.update`. */
export interface OpenAISessionRequest {
  /** Input PCM16 rate: OpenAI takes 24,000 Hz only; many duplex servers take 16,000. */
  input_sample_rate: number;
  /** Output PCM16 rate to ask for; left to the server when not given. */
  output_sample_rate?: number;
  /** `server_vad` or `semantic_vad`: the server finds turns; `none`: the client commits and asks for each response. */
  turn_detection: TurnDetection;
  output_modalities?: string[];
}

// ---- client events: each built once, as the string that goes to the socket ----

export function openaiSessionUpdate(event_id: string, request: OpenAISessionRequest): string {
  return JSON.stringify({
    type: OpenAIEvent.sessionUpdate,
    event_id,
    session: {
      type: 'realtime',
      output_modalities: request.output_modalities ?? ['audio'],
      audio: {
        input: {
          format: { type: 'audio/pcm', rate: request.input_sample_rate },
          turn_detection: turnDetectionField(request.turn_detection),
        },
        ...(request.output_sample_rate ? { output: { format: { type: 'audio/pcm', rate: request.output_sample_rate } } } : {}),
      },
    },
  });
}

/** One append frame as bytes (`spliceFrame`); `event_id` must pass `assertSafeId`. */
export function openaiAppend(event_id: string, audio_b64: Uint8Array): Buffer {
  return spliceFrame('{"type":"input_audio_buffer.append","event_id":"' + event_id + '","audio":"', audio_b64, '"}');
}

export function openaiCommit(event_id: string): string {
  return `{"type":"${OpenAIEvent.commit}","event_id":"${event_id}"}`;
}

export function openaiResponseCreate(event_id: string): string {
  return `{"type":"${OpenAIEvent.responseCreate}","event_id":"${event_id}"}`;
}

/** `response.cancel` of the response in progress: the OpenAI Agents SDK's barge-in names no `response_id`. */
export function openaiResponseCancel(event_id: string): string {
  return `{"type":"${OpenAIEvent.responseCancel}","event_id":"${event_id}"}`;
}

/** `conversation.item.truncate`: the assistant item's audio cut at `audio_end_ms` (whole ms), what the user heard of it. */
export function openaiItemTruncate(event_id: string, item_id: string, content_index: number, audio_end_ms: number): string {
  return JSON.stringify({ type: OpenAIEvent.itemTruncate, event_id, item_id, content_index, audio_end_ms });
}

// ---- reading server events ----

/** A PCM format's rate from a GA `{type, rate}` object or a beta string (`pcm16` is 24 kHz). */
function rateOf(format: unknown): number | undefined {
  if (format === 'pcm16') return 24000;
  if (format && typeof format === 'object') {
    const f = format as { type?: unknown; rate?: unknown };
    if (typeof f.rate === 'number' && f.rate > 0) return f.rate;
    if (f.type === 'audio/pcm') return 24000;
  }
  return undefined;
}

/** The audio rates a `session.created` / `session.updated` session object states, GA or beta layout. */
export function openaiSessionRates(session: Record<string, unknown>): { input?: number; output?: number } {
  const audio = (session.audio ?? {}) as { input?: { format?: unknown }; output?: { format?: unknown } };
  return {
    input: rateOf(audio.input?.format) ?? rateOf(session.input_audio_format),
    output: rateOf(audio.output?.format) ?? rateOf(session.output_audio_format),
  };
}

/** The turn detection a session object states: `null` is none, an object is the server's (semantic when its type says so). */
export function openaiSessionTurnDetection(session: Record<string, unknown>): TurnDetection | undefined {
  const audio = (session.audio ?? {}) as { input?: Record<string, unknown> };
  const input = audio.input ?? {};
  const value = 'turn_detection' in input ? input.turn_detection : session.turn_detection;
  if (value === undefined) return undefined;
  if (value === null) return 'none';
  return (value as { type?: unknown }).type === 'semantic_vad' ? 'semantic_vad' : 'server_vad';
}

/**
 * Whether a session object says the server interrupts a response itself when the user starts
 * speaking: GA `audio.input.turn_detection.interrupt_response === true`, read as the OpenAI Agents
 * SDK reads it (`automatic_response_cancellation_enabled` in openai_realtime.py, on the session of
 * `session.created` / `session.updated`); anything else, the beta layout included, is false.
 */
export function openaiInterruptsResponse(session: Record<string, unknown>): boolean {
  const input = ((session.audio ?? {}) as { input?: { turn_detection?: unknown } }).input;
  const detection = input?.turn_detection;
  return detection !== null && typeof detection === 'object' && (detection as { interrupt_response?: unknown }).interrupt_response === true;
}
