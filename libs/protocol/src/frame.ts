import { ProtocolError } from './errors';

/** A received frame: its text as it arrived, its type read without decoding any payload. */
export class DecodedFrame {
  /** An audio delta's figures, read once however many readers ask (see `audioDeltaInfo`). */
  deltaInfo: AudioDeltaInfo | undefined = undefined;

  constructor(
    readonly type: string,
    readonly text: string,
    private parsed?: Record<string, unknown>,
  ) {}

  /** The parsed event. Large frames are parsed only when this is called. */
  event(): Record<string, unknown> {
    return (this.parsed ??= parseObject(this.text));
  }
}

/** Frames at or above this size have their type read from the text; smaller ones are parsed at once. */
const PEEK_FROM_CHARS = 512;
const LEADING_TYPE = /^\{\s*"type"\s*:\s*"([^"\\]+)"/;

/** A malformed frame is quoted up to this many characters, as sglang-omni's client quotes it. */
const EXCERPT_CHARS = 200;

function malformed(text: string, why: string): ProtocolError {
  const excerpt = text.slice(0, EXCERPT_CHARS);
  return new ProtocolError('MALFORMED_FRAME', `malformed server frame '${excerpt}': ${why}`, { excerpt });
}

/** A number too large for a double (`1e999`) parses to Infinity; no finite JSON value holds one. */
const HUGE_EXPONENT = /\d[eE]\+?\d{3}/;

function hasNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  for (const v of Object.values(value)) if (hasNonFinite(v)) return true;
  return false;
}

function parseObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw malformed(text, `not JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw malformed(text, 'not a JSON object');
  if (HUGE_EXPONENT.test(text) && hasNonFinite(value)) throw malformed(text, 'a number is not finite');
  return value as Record<string, unknown>;
}

/**
 * Reads a text frame's `type`. An audio delta is kilobytes of base64; when `type` leads the object
 * (as every server we know writes it) it is read with one anchored match, and the payload is
 * neither parsed nor decoded unless someone asks for `event()`.
 */
export function decodeFrame(text: string): DecodedFrame {
  if (text.length >= PEEK_FROM_CHARS && text.charCodeAt(text.length - 1) === 0x7d /* } */) {
    const match = LEADING_TYPE.exec(text);
    if (match) return new DecodedFrame(match[1], text);
  }
  const parsed = parseObject(text);
  const type = parsed.type;
  if (typeof type !== 'string' || type.length === 0) {
    throw malformed(text, 'no string "type"');
  }
  return new DecodedFrame(type, text, parsed);
}

/** Bytes carried by a base64 string, without decoding it. */
export function base64ByteLength(b64: string): number {
  const n = b64.length;
  if (n === 0) return 0;
  const padding = b64.charCodeAt(n - 1) === 0x3d ? (b64.charCodeAt(n - 2) === 0x3d ? 2 : 1) : 0;
  return Math.floor((n * 3) / 4) - padding;
}

const RESPONSE_ID = /"response_id"\s*:\s*"([^"\\]*)"/;
const DELTA_KEY = '"delta":"';
const RATE = /"sample_rate_hz"\s*:\s*(\d+)/;

export interface AudioDeltaInfo {
  response_id: string;
  bytes: number;
  /** The delta's own `sample_rate_hz`, when it states one (vLLM-Omni). */
  sample_rate_hz?: number;
  /** `metadata.audio_duration_ms`: the response's audio so far, cumulative, as the server counts it (vLLM-Omni). */
  audio_duration_ms?: number;
  /** Stage 0 of `metadata.vllm_omni.stage_metrics`: the engine's own TPOT and output tokens, when reported. */
  stage_tpot_ms?: number;
  stage_tokens_out?: number;
}

function positive(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}

/**
 * The keys a server writes after the payload (vLLM-Omni: `format`, `sample_rate_hz`, a `metadata`
 * object that can pass 1 KiB, `server_event_seq`), read from the frame's tail only: the payload is
 * never scanned or parsed, whatever its size.
 */
function readTail(info: AudioDeltaInfo, tail: string): void {
  if (!tail.includes('"metadata"')) {
    const m = RATE.exec(tail);
    if (m && Number(m[1]) > 0) info.sample_rate_hz = Number(m[1]);
    return;
  }
  let rest: Record<string, unknown>;
  try {
    rest = JSON.parse(`{${tail.slice(1)}`) as Record<string, unknown>;
  } catch {
    return;
  }
  const rate = positive(rest.sample_rate_hz);
  if (rate) info.sample_rate_hz = rate;
  const metadata = (rest.metadata ?? {}) as { audio_duration_ms?: unknown; vllm_omni?: { stage_metrics?: Record<string, unknown> } };
  const duration = positive(metadata.audio_duration_ms);
  if (duration) info.audio_duration_ms = duration;
  const stage0 = metadata.vllm_omni?.stage_metrics?.['0'] as { vllm_tpot_ms?: unknown; num_tokens_out?: unknown } | undefined;
  const tpot = positive(stage0?.vllm_tpot_ms);
  if (tpot) info.stage_tpot_ms = tpot;
  const tokens = positive(stage0?.num_tokens_out);
  if (tokens) info.stage_tokens_out = tokens;
}

/**
 * An audio delta's response id, audio byte count, and what the server states beside the payload
 * (its rate, the response's cumulative duration, engine stage metrics), read without parsing or
 * decoding the payload when the frame is laid out as servers write it; parsed otherwise.
 */
export function audioDeltaInfo(frame: DecodedFrame): AudioDeltaInfo {
  // A session's flow and its response metrics both read each delta: its tail is parsed once. The
  // figures stay on the frame: a WeakMap entry per delta cost more than reading them.
  return (frame.deltaInfo ??= readDeltaInfo(frame));
}

function readDeltaInfo(frame: DecodedFrame): AudioDeltaInfo {
  const text = frame.text;
  const at = text.indexOf(DELTA_KEY);
  const end = at >= 0 ? text.indexOf('"', at + DELTA_KEY.length) : -1;
  if (end > 0) {
    const head = text.slice(0, at);
    const id = RESPONSE_ID.exec(head);
    if (id) {
      const info: AudioDeltaInfo = { response_id: id[1], bytes: base64ByteLength(text.slice(at + DELTA_KEY.length, end)) };
      const rate = RATE.exec(head);
      if (rate && Number(rate[1]) > 0) info.sample_rate_hz = Number(rate[1]);
      if (end + 2 < text.length) readTail(info, text.slice(end + 1));
      return info;
    }
  }
  const event = frame.event();
  const info: AudioDeltaInfo = { response_id: String(event.response_id ?? ''), bytes: typeof event.delta === 'string' ? base64ByteLength(event.delta) : 0 };
  const rest = { ...event };
  delete rest.delta;
  readTail(info, `,${JSON.stringify(rest).slice(1)}`);
  return info;
}

/** Frames at or above this size are searched for a key only near their ends (see `mentions`). */
const SCAN_WHOLE_BELOW_CHARS = 2048;

/**
 * Whether a frame's text contains `key`. An audio delta is kilobytes of base64, and a key a server
 * adds beside it (`server_event_seq`, `metadata`) sits before or after the payload, so a large frame
 * is searched only in its first 512 and last 1,024 characters: scanning every delta whole was the
 * most expensive function of a 512-session openai run's first second (11 ms of 86 ms busy).
 */
export function mentions(frame: DecodedFrame, key: string): boolean {
  const text = frame.text;
  if (text.length < SCAN_WHOLE_BELOW_CHARS) return text.includes(key);
  // Forward searches only: lastIndexOf of a key from position 512 took 1 µs of a delta's 2.
  return text.slice(0, 512 + key.length).includes(key) || text.includes(key, text.length - 1024);
}
