import { mentions, METRICS_KEY, spliceFrame, unsignedField, type DecodedFrame } from './frame';

/**
 * vLLM-Omni's extensions of the OpenAI dialect (`/v1/realtime`). Each is read when present and
 * ignored when not, so a plain OpenAI-style server is measured the same way.
 */

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** `session.created.session.capabilities.chunk_period_ms` (or `capabilities` beside `session`): the server's input unit. */
export function chunkPeriodMs(sessionCreated: Record<string, unknown>): number | undefined {
  const capabilities = record(record(sessionCreated.session)?.capabilities) ?? record(sessionCreated.capabilities);
  const value = capabilities?.chunk_period_ms;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

const SEQ_KEY = '"server_event_seq":';

/**
 * `server_event_seq` of a frame, read from its text without parsing it (audio deltas are large):
 * the key is looked for near the frame's ends (`mentions`).
 */
export function serverEventSeq(frame: DecodedFrame): number | undefined {
  return unsignedField(frame, SEQ_KEY);
}

/** Per-response timing a server measured itself, from its own request start. */
export interface ServerRequestMetrics {
  ttft_ms?: number;
  ttfp_ms?: number;
  /** What the server says its figures run from and to, when it says. */
  measurement_origin?: Record<string, string>;
  source?: string;
}

/**
 * `response_request_metrics` of an event: under `metadata.vllm_omni` (deltas), under
 * `response.metadata.duplex_event` or at the top (response.created). Frames that do not mention
 * the key near their ends are not parsed.
 */
export function responseRequestMetrics(frame: DecodedFrame): ServerRequestMetrics | undefined {
  if (!mentions(frame, METRICS_KEY)) return undefined;
  const event = frame.event();
  const metadata = record(event.metadata);
  const response = record(event.response);
  const raw =
    record(record(metadata?.vllm_omni)?.response_request_metrics) ??
    record(record(record(response?.metadata)?.duplex_event)?.response_request_metrics) ??
    record(response?.response_request_metrics) ??
    record(event.response_request_metrics);
  if (!raw) return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  const origin = record(raw.measurement_origin);
  const out: ServerRequestMetrics = { ttft_ms: num(raw.ttft_ms), ttfp_ms: num(raw.ttfp_ms) };
  if (origin) out.measurement_origin = Object.fromEntries(Object.entries(origin).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
  if (typeof raw.source === 'string') out.source = raw.source;
  return out.ttft_ms === undefined && out.ttfp_ms === undefined ? undefined : out;
}

/**
 * Counts gaps in a session's `server_event_seq`: a number more than one above the last one means
 * events were lost or never sent. Numbers that do not rise are counted apart.
 */
export class ServerEventSeqTracker {
  private last: number | undefined;
  /** Frames that carried a number. */
  seen = 0;
  gaps = 0;
  missing_events = 0;
  not_rising = 0;

  add(seq: number | undefined): void {
    if (seq === undefined) return;
    this.seen++;
    if (this.last !== undefined) {
      if (seq > this.last + 1) {
        this.gaps++;
        this.missing_events += seq - this.last - 1;
      } else if (seq <= this.last) this.not_rising++;
    }
    if (this.last === undefined || seq > this.last) this.last = seq;
  }
}

// ---- vLLM-Omni's own duplex flow (`--protocol vllm-omni`): what its client sends ----
// Facts from vllm-project/vllm-omni: the client vllm_omni/clients/duplex.py (SessionConfig,
// build_realtime_url, acknowledge_collected_playback), the engine's session runner and playback
// ledger under vllm_omni/engine/duplex/, and the eval runner that acks playback every 0.25 s.

/** Events of vLLM-Omni's duplex flow beyond the OpenAI Realtime names. */
export const VllmEvent = {
  responseListen: 'response.listen',
  responseSpeak: 'response.speak',
  playbackAck: 'playback.ack',
  playbackAcknowledged: 'playback.acknowledged',
  eventAck: 'session.event_ack',
  sessionClose: 'session.close',
  sessionClosed: 'session.closed',
  sessionExpired: 'session.expired',
  resyncRequired: 'session.resync_required',
  sessionResumed: 'session.resumed',
  sessionReplaced: 'session.replaced',
  heartbeat: 'session.heartbeat',
  heartbeatAck: 'session.heartbeat_ack',
  overlapDecision: 'overlap.decision',
  audioBufferCleared: 'output_audio_buffer.cleared',
  turnEvent: 'turn.event',
} as const;

const VLLM_TYPES: ReadonlySet<string> = new Set([
  ...Object.values(VllmEvent),
  'conversation.item.retrieved',
  'conversation.item.input_audio_transcription.completed',
]);

/** Whether a type is one of vLLM-Omni's own (the OpenAI names are known through `isKnownOpenAIType`). */
export function isKnownVllmType(type: string): boolean {
  return VLLM_TYPES.has(type) || type.startsWith('duplex.');
}

/**
 * The realtime URL as vLLM-Omni's client connects: `duplex=1` and `model` added unless the URL has
 * them, and `autostart=0` always, even over a user's `autostart=1` (their client forces it: with
 * autostart the server opens a bare default session before the client's `session.update`, which
 * drops the reference voice and `extra_body`).
 */
export function vllmRealtimeUrl(url: string, model?: string): string {
  const u = new URL(url);
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/v1/realtime';
  if (!u.searchParams.has('duplex')) u.searchParams.set('duplex', '1');
  if (model !== undefined && !u.searchParams.has('model')) u.searchParams.set('model', model);
  u.searchParams.set('autostart', '0');
  return u.toString();
}

export interface VllmSessionRequest {
  model?: string;
  input_sample_rate: number;
  output_sample_rate: number;
  /**
   * `server_vad`: the server's VAD cuts the user's speech into turns and commits each, so the
   * model must not start responses of its own (`auto_response: false`); `none`: the model decides
   * its turns (`auto_response: true`) and the client commits.
   */
  turn_detection: 'server_vad' | 'none';
  /** The assistant's reference voice as a data URL (`data:audio/wav;base64,…`); MiniCPM-o 4.5 refuses audio sessions without one. */
  ref_audio?: string;
  /** Raw fields merged into the session object last (objects merged key by key, `extra_body` included). */
  extra?: Record<string, unknown>;
}

/** `base` with `extra` laid over it: objects are merged key by key, anything else replaced. */
export function mergeFields(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const under = record(out[key]);
    const over = record(value);
    out[key] = under && over ? mergeFields(under, over) : value;
  }
  return out;
}

/**
 * The first `session.update`, shaped as vLLM-Omni's client builds it for MiniCPM-o 4.5
 * (`SessionConfig.to_session_payload` with the model's preset, `clients/minicpmo_4_5.py`
 * `create_duplex_session_config`, the one their API docs give for that model):
 * - the flat beta keys (`input_audio_format`, `sample_rate_hz` for the input) and the `audio` block
 *   holding both rates, `turn_detection` always present, `ref_audio` when given;
 * - `overlap_policy` `listen_only` and `playback_commit_policy` `ack_only`, the preset's. Under
 *   `server_vad`, `barge_in_on_speech`, as their duplex benchmarks' client asks when the server's
 *   VAD cuts the turns (`experimental/fullduplex/client.py` `configure`). Left out, the server
 *   takes its own default (`auto`: short remarks acknowledged, overlap deferred or barged in);
 * - `extra_body` with `native_duplex` (the preset's: without it MiniCPM-o's session runs the
 *   chat-fallback lane, not the model-native duplex one; its plugin's `is_enabled`),
 *   `force_listen_count: 0` (the preset's), `auto_response`, and `return_stage_metrics` (the
 *   engine's stage figures on each response, as their benchmarks ask). `auto_response` is false
 *   under `server_vad`, as their duplex benchmarks send it (`auto_response=not server_turns`,
 *   benchmarks/duplex/omni_duplex_eval_runner.py): the server's turns, not the model's, start the
 *   responses.
 */
export function vllmSessionUpdate(event_id: string, r: VllmSessionRequest): string {
  const session: Record<string, unknown> = {
    ...(r.model !== undefined ? { model: r.model } : {}),
    modalities: ['audio', 'text'],
    input_audio_format: 'pcm16',
    output_audio_format: 'pcm16',
    sample_rate_hz: r.input_sample_rate,
    audio: { input: { sample_rate_hz: r.input_sample_rate }, output: { sample_rate_hz: r.output_sample_rate } },
    turn_detection: r.turn_detection === 'server_vad' ? { type: 'server_vad' } : null,
    overlap_policy: r.turn_detection === 'server_vad' ? 'barge_in_on_speech' : 'listen_only',
    playback_commit_policy: 'ack_only',
    ...(r.ref_audio !== undefined ? { ref_audio: r.ref_audio } : {}),
    extra_body: { native_duplex: true, force_listen_count: 0, auto_response: r.turn_detection !== 'server_vad', return_stage_metrics: true },
  };
  return JSON.stringify({ type: 'session.update', session: r.extra ? mergeFields(session, r.extra) : session, event_id });
}

/** A WAV file's bytes as the data URL their client sends for `ref_audio` (`audio_data_url`). */
export function wavDataUrl(wav: Uint8Array): string {
  return `data:audio/wav;base64,${Buffer.from(wav).toString('base64')}`;
}

/** One append as their client sends it, as bytes (`spliceFrame`; `event_id` must pass `assertSafeId`). */
export function vllmAppend(event_id: string, audio_b64: Uint8Array, sample_rate_hz: number, duration_ms: number, audio_end_ms: number): Buffer {
  const tail = `","format":"pcm16","sample_rate_hz":${sample_rate_hz},"duration_ms":${Math.round(duration_ms)},"audio_end_ms":${Math.round(audio_end_ms)},"event_id":"${event_id}"}`;
  return spliceFrame('{"type":"input_audio_buffer.append","audio":"', audio_b64, tail);
}

/**
 * An append carrying camera frames (base64 JPEGs) in `video_frames`, as their client attaches a
 * unit's frame to its audio (`stream_av_units`): a buffer of its own, sent about once a second.
 */
export function vllmAppendWithFrames(event_id: string, audio_b64: Uint8Array, sample_rate_hz: number, duration_ms: number, audio_end_ms: number, frames: Uint8Array[]): Buffer {
  const parts: Uint8Array[] = [Buffer.from('{"type":"input_audio_buffer.append","audio":"', 'latin1'), audio_b64];
  parts.push(Buffer.from(`","format":"pcm16","sample_rate_hz":${sample_rate_hz},"duration_ms":${Math.round(duration_ms)},"audio_end_ms":${Math.round(audio_end_ms)},"video_frames":[`, 'latin1'));
  frames.forEach((f, i) => parts.push(Buffer.from(i === 0 ? '"' : ',"', 'latin1'), f, Buffer.from('"', 'latin1')));
  parts.push(Buffer.from(`],"event_id":"${event_id}"}`, 'latin1'));
  return Buffer.concat(parts);
}

/** A camera frame as a user `input_image` item (`conversation.item.create`), as their image window sends it (duplex_session_inputs.py `ImageItemWindow`). */
export function vllmImageItem(event_id: string, item_id: string, image_b64: Uint8Array): Buffer {
  const head = `{"type":"conversation.item.create","item":{"id":"${item_id}","type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/jpeg;base64,`;
  return Buffer.concat([Buffer.from(head, 'latin1'), image_b64, Buffer.from(`"}]},"event_id":"${event_id}"}`, 'latin1')]);
}

/** The oldest live image item deleted before a new one, once the window is full. */
export function vllmItemDelete(event_id: string, item_id: string): string {
  return `{"type":"conversation.item.delete","item_id":"${item_id}","event_id":"${event_id}"}`;
}

/** How camera frames reach a vLLM-Omni session: on the appends, or as image items. */
export type VllmFrameTransport = 'append' | 'image_items';

/** Their image window: at most 8 live `input_image` items and 4 MiB of them (engine/duplex/session/control.py). */
export const VLLM_IMAGE_WINDOW = { max_items: 8, max_bytes: 4 * 1024 * 1024 };

/**
 * Frames on one append: at most 2 (a unit's frame and, optionally, its stacked composite), each at
 * most 4,000,000 base64 characters; more, or a larger one, and the whole append, audio included,
 * is refused as `invalid_video_frames` (`validate_realtime_video_frames`,
 * vllm_omni/protocol/realtime/items.py@576bce30, run by protocol/realtime/audio_input.py@23b8f670).
 */
export const VLLM_APPEND_FRAMES = { max_frames: 2, max_base64_chars: 4_000_000 };

/**
 * How frames travel, from the capabilities of `session.created` (`select_frame_transport`,
 * duplex_session_inputs.py@0df9048e): on the appends (`video_frames`) when the session states no
 * input-modality contract (`required_input_modalities` / `optional_input_modalities`) or lists
 * `video`; as `input_image` items when it says `supports_image_input`; else null (neither).
 */
export function vllmFrameTransport(capabilities: Record<string, unknown> | undefined): VllmFrameTransport | null {
  const keys = ['required_input_modalities', 'optional_input_modalities'];
  if (!capabilities || !keys.some((k) => k in capabilities)) return 'append';
  const accepted = new Set<string>();
  for (const k of keys) {
    const v = capabilities[k];
    if (typeof v === 'string') accepted.add(v);
    else if (Array.isArray(v)) for (const m of v) accepted.add(String(m));
  }
  if (accepted.has('video')) return 'append';
  if (capabilities.supports_image_input) return 'image_items';
  return null;
}

/** The commit their client sends (`final: true`); with `auto_response` the server starts the response itself. */
export function vllmCommit(event_id: string): string {
  return `{"type":"input_audio_buffer.commit","final":true,"event_id":"${event_id}"}`;
}

/** Playback of `played_ms` of a response acknowledged (committed as played: their client's `committed_ms` defaults to `played_ms`). */
export function vllmPlaybackAck(event_id: string, response_id: string, played_ms: number): string {
  const ms = Math.floor(played_ms);
  return JSON.stringify({ type: VllmEvent.playbackAck, played_ms: ms, committed_ms: ms, response_id, item_id: `item_${response_id}`, event_id });
}

/** The answer to each journaled event: the server trims its journal up to `server_event_seq` (their client sends it bare, with no `event_id`). */
export function vllmEventAck(server_event_seq: number): string {
  return `{"type":"${VllmEvent.eventAck}","server_event_seq":${server_event_seq}}`;
}

export function vllmSessionClose(event_id: string): string {
  return `{"type":"${VllmEvent.sessionClose}","event_id":"${event_id}"}`;
}

/** The lease keepalive their client sends every 30 s (`session.heartbeat`). */
export function vllmHeartbeat(event_id: string): string {
  return `{"type":"${VllmEvent.heartbeat}","event_id":"${event_id}"}`;
}

/**
 * Error codes with which the server refuses something our client did: the client broke the
 * contract (engine/duplex/events.py, the playback ledger, entrypoints/duplex/serving.py).
 * `playback_ack_too_late` is not among them: see VLLM_ACK_RACE_CODE.
 */
export const VLLM_CLIENT_PROTOCOL_CODES: ReadonlySet<string> = new Set([
  'playback_item_mismatch',
  'playback_item_not_found',
  'invalid_event_ack',
  'unknown_event',
  'input_audio_buffer_empty',
  'bad_event',
]);

/**
 * The ledger's refusal of a response's first playback ack that a later commit overtook (the
 * response was created before the commit, its `response.created` arrived after the client sent
 * it). vLLM-Omni's own runner ignores it: "an ACK racing a later commit is harmless"
 * (benchmarks/duplex/omni_duplex_eval_runner.py); it is counted, never a session's failure.
 */
export const VLLM_ACK_RACE_CODE = 'playback_ack_too_late';

/**
 * The ledger's answer to an ack of a response it holds no assistant item for. The server ends a
 * response that produced no assistant text by discarding its history placeholder and keeping no
 * snapshot (engine/duplex/session/engine_session.py `end_response`), so from then on
 * `has_assistant_response_item` is false for it. A first (0 ms) ack the client sent as the
 * response's `response.created` arrived, before its end did, races that end: refused, harmless (the
 * response has nothing to play). Any other `playback_item_not_found` is the client's fault.
 */
export const VLLM_ACK_AFTER_END_CODE = 'playback_item_not_found';

/** The response a `playback_item_not_found` names ("No assistant response item is registered for R."), or null. */
export function vllmNotFoundResponseId(message: string): string | null {
  const m = /registered for (\S+?)\.?$/.exec(message);
  return m ? m[1] : null;
}

/**
 * The response an event belongs to, as their clients read it (`DuplexEvent.response_id`,
 * clients/duplex.py): the top-level `response_id` (newer servers put it on `response.created` and
 * `response.done` too), else the nested `response.id`. Empty when neither is a non-empty string.
 */
export function vllmResponseId(event: Record<string, unknown>): string {
  if (typeof event.response_id === 'string' && event.response_id) return event.response_id;
  const nested = record(event.response)?.id;
  return typeof nested === 'string' ? nested : '';
}

/**
 * Under `server_vad`, the silence their benchmark appends after the input (`SERVER_VAD_TAIL_S`,
 * duplex_session_inputs.py@0df9048e): longer than the VAD's 500 ms, so the server closes a turn
 * spoken at the very end, with no commit from the client.
 */
export const VLLM_SERVER_VAD_TAIL_MS = 1500;

/**
 * Under `server_vad`, how long the turns must be quiet (no `input_audio_buffer.*` or `response.*`
 * event, no speech or response open) before the session closes (`_SERVER_TURN_SETTLE_S`, the eval
 * runner's `_wait_for_server_turns`).
 */
export const VLLM_TURN_SETTLE_MS = 2000;

/** The refusal of a full server: `resource_exhausted` (`rate_limit_error`, retryable by their docs). */
export const VLLM_CAPACITY_CODE = 'resource_exhausted';

/**
 * The rates a vLLM-Omni session object states: `audio.input|output.sample_rate_hz` (what its client
 * sent, echoed), else the GA `format.rate`, else the flat `sample_rate_hz` (input).
 */
export function vllmSessionRates(session: Record<string, unknown>): { input?: number; output?: number } {
  const audio = record(session.audio);
  const rate = (side: 'input' | 'output') => {
    const block = record(audio?.[side]);
    const v = block?.sample_rate_hz ?? record(block?.format)?.rate;
    return typeof v === 'number' && v > 0 ? v : undefined;
  };
  const flat = typeof session.sample_rate_hz === 'number' && session.sample_rate_hz > 0 ? session.sample_rate_hz : undefined;
  return { input: rate('input') ?? flat, output: rate('output') };
}
