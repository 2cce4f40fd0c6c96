import { ProtocolError } from './errors';

/** A received frame: its text as it arrived, its type read without decoding any payload. */
export class DecodedFrame {
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

/** The `sample_rate_hz` an audio delta states (vLLM-Omni does), looked for near the frame's ends. */
function statedRate(frame: DecodedFrame): number | undefined {
  const text = frame.text;
  if (!mentions(frame, '"sample_rate_hz"')) return undefined;
  const m = RATE.exec(text.length < 2048 ? text : text.slice(0, 512)) ?? RATE.exec(text.slice(-1024));
  const rate = m ? Number(m[1]) : 0;
  return rate > 0 ? rate : undefined;
}

export interface AudioDeltaInfo {
  response_id: string;
  bytes: number;
  /** The delta's own `sample_rate_hz`, when it states one. */
  sample_rate_hz?: number;
}

/**
 * The response id, audio byte count and stated rate of an audio delta, read from the text without
 * parsing or decoding the payload when the frame is laid out as servers write it; parsed otherwise.
 */
export function audioDeltaInfo(frame: DecodedFrame): AudioDeltaInfo {
  const text = frame.text;
  const id = RESPONSE_ID.exec(text.length > 400 ? text.slice(0, 400) : text);
  const at = text.indexOf(DELTA_KEY);
  const sample_rate_hz = statedRate(frame);
  const info = (response_id: string, bytes: number): AudioDeltaInfo => (sample_rate_hz ? { response_id, bytes, sample_rate_hz } : { response_id, bytes });
  if (id && at >= 0) {
    const end = text.indexOf('"', at + DELTA_KEY.length);
    if (end > 0) return info(id[1], base64ByteLength(text.slice(at + DELTA_KEY.length, end)));
  }
  const event = frame.event();
  return info(String(event.response_id ?? ''), typeof event.delta === 'string' ? base64ByteLength(event.delta) : 0);
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
  return text.lastIndexOf(key, 512) >= 0 || text.includes(key, text.length - 1024);
}
