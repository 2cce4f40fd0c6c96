import { isAscii } from 'node:buffer';
import { ProtocolError } from './errors';
import { checkJsonObject, isJsonSpace, skipJsonSpace } from './json-check';

/**
 * A received frame: its type, read without decoding any payload, and its bytes or text as it
 * arrived. A frame decoded from bytes becomes a string only when someone reads `text`: an audio
 * delta's kilobytes of base64 are read in place (`audioDeltaInfo`, `mentions`) and never copied.
 */
export class DecodedFrame {
  /** An audio delta's figures, read once however many readers ask (see `audioDeltaInfo`). */
  deltaInfo: AudioDeltaInfo | undefined = undefined;
  /**
   * Where an audio delta's base64 payload lies in `bytes` (`[deltaStart, deltaEnd)`, no quote or
   * backslash in it), once `audioDeltaInfo` found it there; -1 until then (and for a payload with
   * an escape). Its readers after that (`audioDeltaBase64`, `mentions`) take it from here instead
   * of searching the frame again.
   */
  deltaStart = -1;
  deltaEnd = -1;
  /**
   * The keys of `SCANNED_KEYS` that a scan of the whole frame (an audio delta's head and tail, a
   * text delta whole) looked for, a bit each, and of those the ones it found: `mentions` answers
   * for them from here instead of searching the frame again. 0 until a scan ran.
   */
  keysScanned = 0;
  keysSeen = 0;
  private decoded: string | undefined;

  constructor(
    readonly type: string,
    text: string | undefined,
    private parsed?: Record<string, unknown>,
    /** The frame's bytes, when it was decoded from them (`decodeFrameBytes`). */
    readonly bytes?: Buffer,
  ) {
    this.decoded = text;
  }

  /** The frame's text (decoded from its bytes on first use). */
  get text(): string {
    return (this.decoded ??= textOf(this.bytes as Buffer));
  }

  /** Whether the text was never asked for: the frame is read from its bytes. */
  get undecoded(): boolean {
    return this.decoded === undefined;
  }

  /** The parsed event. Large frames are parsed only when this is called. */
  event(): Record<string, unknown> {
    return (this.parsed ??= parseObject(this.text));
  }
}

/**
 * Bytes as text. Frames are ASCII almost always (JSON with base64 payloads); for those a byte-for-byte
 * copy gives the same string as UTF-8 decoding, faster (0.46–0.56 µs against 0.64–0.70 for a 3.4 KB
 * append, tools/bench/text-decode.ts).
 */
function textOf(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
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
export function decodeFrame(text: string, bytes?: Buffer): DecodedFrame {
  if (text.length >= PEEK_FROM_CHARS && text.charCodeAt(text.length - 1) === 0x7d /* } */) {
    const match = LEADING_TYPE.exec(text);
    if (match) return new DecodedFrame(match[1], text, undefined, bytes);
  }
  const parsed = parseObject(text);
  const type = parsed.type;
  if (typeof type !== 'string' || type.length === 0) {
    throw malformed(text, 'no string "type"');
  }
  return new DecodedFrame(type, text, parsed, bytes);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const TYPE_NAME = Buffer.from('"type"');
/** A leading type longer than this is left to the parser. */
const MAX_TYPE_BYTES = 128;

/** The leading `"type"` of an object's bytes when it is plain ASCII without escapes, else undefined. */
function leadingType(b: Buffer): string | undefined {
  let i = skipJsonSpace(b, 1);
  for (let k = 0; k < TYPE_NAME.length; k++) if (b[i++] !== TYPE_NAME[k]) return undefined;
  i = skipJsonSpace(b, i);
  if (b[i++] !== 0x3a /* : */) return undefined;
  i = skipJsonSpace(b, i);
  if (b[i++] !== QUOTE) return undefined;
  const start = i;
  const stop = Math.min(b.length, start + MAX_TYPE_BYTES);
  // The type's bytes hashed as they are read, for `typeOf`.
  let hash = 0;
  for (; i < stop; i++) {
    const c = b[i];
    if (c === QUOTE) return i > start ? typeOf(b, start, i, (hash + i - start) | 0) : undefined;
    if (c === BACKSLASH || c < 0x20 || c >= 0x80) return undefined;
    hash = (Math.imul(hash, 31) + c) | 0;
  }
  return undefined;
}

/** Types read before, by a hash of their bytes: a server sends a few types over and over. */
const TYPES_SEEN = new Map<number, string>();
/** The most types kept: a server that sends a new type with every frame costs a string a frame, no more. */
const TYPES_SEEN_MAX = 256;

/** The ASCII type in `b[start, end)`, whose bytes hash to `hash`: the string made for it before when there was one, so a frame's type makes no string. */
function typeOf(b: Buffer, start: number, end: number, hash: number): string {
  const seen = TYPES_SEEN.get(hash);
  if (seen !== undefined && seen.length === end - start) {
    let same = true;
    for (let k = 0; same && k < seen.length; k++) same = seen.charCodeAt(k) === b[start + k];
    if (same) return seen;
  }
  const type = b.toString('latin1', start, end);
  if (TYPES_SEEN.size < TYPES_SEEN_MAX) TYPES_SEEN.set(hash, type);
  return type;
}

/**
 * `decodeFrame` on a frame's bytes as they came off the socket, none of it turned into a string or
 * an object until someone reads it. A large frame whose type leads is checked as `decodeFrame`
 * checks it (the type, the closing brace); a smaller one is checked whole (`checkJsonObject`) and
 * parsed only when read, so an acknowledgement nobody reads costs no object. Anything else (a type
 * that does not lead or has an escape, a number that may not fit a double) takes `decodeFrame`'s
 * path, with its errors.
 */
export function decodeFrameBytes(bytes: Buffer): DecodedFrame {
  const n = bytes.length;
  if (bytes[0] === 0x7b /* { */) {
    if (n >= PEEK_FROM_CHARS) {
      if (bytes[n - 1] === 0x7d /* } */) {
        const type = leadingType(bytes);
        if (type !== undefined) return new DecodedFrame(type, undefined, undefined, bytes);
      }
    } else {
      const type = leadingType(bytes);
      if (type !== undefined && checkJsonObject(bytes) === 'valid') return new DecodedFrame(type, undefined, undefined, bytes);
    }
  }
  return decodeFrame(textOf(bytes), bytes);
}

/**
 * The buffer the next append is spliced into: the last frame's, once its sender said the socket
 * holds none of it (`frameSent`). Each thread has its own (module state), and one send finishes
 * before the next frame is built, so a paced run that the kernel keeps up with splices every
 * append of every session into one buffer and leaves no ArrayBuffer per packet for the collector.
 */
let spare: Buffer | null = null;
/** The buffer of the frame spliced last: only it can be handed back. */
let last: Buffer | null = null;
/** Room for the ids and counters of the frames that follow to grow, without a new buffer each time one does. */
const SLACK = 64;
/**
 * Room before each spliced frame for its WebSocket client header (RFC 6455 §5.2: 2 bytes, up to 8
 * of extended length, 4 of masking key): `clientFrame` writes it there, so the frame goes to the
 * socket as one buffer, never copied.
 */
const HEADER_ROOM = 14;

/**
 * An append as the bytes that go to the socket: an ASCII head, the packet's base64 payload (bytes
 * shared by every session sending that packet) copied in once, and an ASCII tail. No string of the
 * frame is ever built, so nothing flattens, measures or re-encodes kilobytes of base64 per send.
 * Head and tail must be ASCII (ids pass `assertSafeId`). The frame is written over by a later
 * splice only if it is handed back with `frameSent`; a frame never handed back is the caller's.
 */
export function spliceFrame(head: string, payload: Uint8Array, tail: string): Buffer {
  const n = head.length + payload.length + tail.length;
  const buf = spare !== null && spare.length >= HEADER_ROOM + n ? spare : Buffer.allocUnsafeSlow(HEADER_ROOM + n + SLACK);
  spare = null;
  last = buf;
  buf.write(head, HEADER_ROOM, 'latin1');
  buf.set(payload, HEADER_ROOM + head.length);
  buf.write(tail, HEADER_ROOM + head.length + payload.length, 'latin1');
  return buf.subarray(HEADER_ROOM, HEADER_ROOM + n);
}

/**
 * The frame spliced last as a whole WebSocket client frame: text, final, masked with the zero key
 * (so its payload goes as it is; see `zeroMask` in transport), the header written into the room
 * left before it. Null for any other frame (an older one, or one not spliced): the caller frames
 * it some other way.
 */
export function clientFrame(frame: Uint8Array): Buffer | null {
  const buf = last;
  if (buf === null || frame.buffer !== buf.buffer || frame.byteOffset !== buf.byteOffset + HEADER_ROOM) return null;
  const n = frame.length;
  const header = n < 126 ? 6 : n < 65_536 ? 8 : 14;
  let at = HEADER_ROOM - header;
  const start = at;
  buf[at++] = 0x81; // FIN, text
  if (n < 126) buf[at++] = 0x80 | n;
  else if (n < 65_536) {
    buf[at++] = 0x80 | 126;
    buf.writeUInt16BE(n, at);
    at += 2;
  } else {
    buf[at++] = 0x80 | 127;
    buf.writeUInt32BE(Math.floor(n / 2 ** 32), at);
    buf.writeUInt32BE(n >>> 0, at + 4);
    at += 8;
  }
  buf.writeUInt32BE(0, at); // the masking key: zero, so the payload is its own masked form
  return buf.subarray(start, HEADER_ROOM + n);
}

/**
 * Hands back a frame of `spliceFrame` whose bytes nothing needs once the caller is done with it
 * this turn: the socket passed them all to the kernel (`bufferedAmount` 0 after the send). The
 * next splice writes over it. Any other frame (an older one, or one the socket still queues) is
 * left alone.
 */
export function frameSent(frame: Uint8Array): void {
  if (last !== null && frame.buffer === last.buffer) spare = last;
}

/** Bytes carried by base64 text (a string, or its ASCII bytes), without decoding it. */
export function base64ByteLength(b64: string | Uint8Array): number {
  const n = b64.length;
  if (n === 0) return 0;
  const last = typeof b64 === 'string' ? b64.charCodeAt(n - 1) : b64[n - 1];
  const before = typeof b64 === 'string' ? b64.charCodeAt(n - 2) : b64[n - 2];
  const padding = last === 0x3d ? (before === 0x3d ? 2 : 1) : 0;
  return Math.floor((n * 3) / 4) - padding;
}

const RESPONSE_ID = /"response_id"\s*:\s*"([^"\\]*)"/;
const DELTA_NAME = '"delta":';
const RATE = /"sample_rate_hz"\s*:\s*(\d+)/;
const ITEM_ID = /"item_id"\s*:\s*"([^"\\]*)"/;
const CONTENT_INDEX = /"content_index"\s*:\s*(\d+)/;

export interface AudioDeltaInfo {
  response_id: string;
  bytes: number;
  /** The delta's `item_id` and `content_index`, when it states them (OpenAI: the item a barge-in truncates). */
  item_id?: string;
  content_index?: number;
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
  const info = frame.bytes && frame.undecoded ? deltaInfoFromBytes(frame, frame.bytes) : deltaInfoFromText(frame.text);
  if (info) return info;
  const event = frame.event();
  const parsed: AudioDeltaInfo = { response_id: String(event.response_id ?? ''), bytes: typeof event.delta === 'string' ? base64ByteLength(event.delta) : 0 };
  if (typeof event.item_id === 'string') parsed.item_id = event.item_id;
  if (typeof event.content_index === 'number') parsed.content_index = event.content_index;
  const rest = { ...event };
  delete rest.delta;
  readTail(parsed, `,${JSON.stringify(rest).slice(1)}`);
  return parsed;
}

/** The figures read beside the payload once its place is known: the head before `"delta"`, the tail after the payload. */
function deltaFigures(head: string, bytes: number, tail: string | null): AudioDeltaInfo | undefined {
  const id = RESPONSE_ID.exec(head);
  if (!id) return undefined;
  const info: AudioDeltaInfo = { response_id: id[1], bytes };
  const rate = RATE.exec(head);
  if (rate && Number(rate[1]) > 0) info.sample_rate_hz = Number(rate[1]);
  // Servers write the item before the payload; one that writes it after has it read from the tail.
  const item = ITEM_ID.exec(head) ?? (tail !== null ? ITEM_ID.exec(tail) : null);
  if (item) info.item_id = item[1];
  const index = CONTENT_INDEX.exec(head) ?? (tail !== null ? CONTENT_INDEX.exec(tail) : null);
  if (index) info.content_index = Number(index[1]);
  if (tail !== null) readTail(info, tail);
  return info;
}

/** From the text: `"delta"`, its string (no escapes in it), and the keys around it; undefined when laid out otherwise. */
function deltaInfoFromText(text: string): AudioDeltaInfo | undefined {
  const key = text.indexOf(DELTA_NAME);
  if (key < 0) return undefined;
  let i = key + DELTA_NAME.length;
  while (isJsonSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== QUOTE) return undefined;
  const start = i + 1;
  const end = text.indexOf('"', start);
  if (end < 0) return undefined;
  const escape = text.indexOf('\\', start);
  if (escape >= 0 && escape < end) return undefined;
  return deltaFigures(text.slice(0, key), base64ByteLength(text.slice(start, end)), end + 2 < text.length ? text.slice(end + 1) : null);
}

const DELTA_BYTES = Buffer.from(DELTA_NAME);
const RESPONSE_ID_BYTES = Buffer.from('"response_id"');
const RATE_BYTES = Buffer.from('"sample_rate_hz"');
const ITEM_ID_BYTES = Buffer.from('"item_id"');
const CONTENT_INDEX_BYTES = Buffer.from('"content_index"');
const METADATA_BYTES = Buffer.from('"metadata"');

/**
 * Where `key` (its first byte a quote) first starts in `b` at or after `from` and at or before
 * `last_start`, -1 when it does not: `Buffer.indexOf` read in JavaScript, for a region of a hundred
 * bytes or so (about 2.5 ns a byte here, against 150 ns a call of `indexOf`, and 270 ns when the key
 * is missing and the search runs on through an audio delta's payload; tools/bench/delta-read.ts).
 */
function keyAt(b: Buffer, key: Buffer, from: number, last_start: number): number {
  const last = Math.min(last_start, b.length - key.length);
  if (key.length < 2) {
    const at = b.indexOf(key, from);
    return at <= last ? at : -1;
  }
  const second = key[1];
  for (let i = from; i <= last; i++) {
    if (b[i] !== QUOTE || b[i + 1] !== second) continue;
    let j = 2;
    while (j < key.length && b[i + j] === key[j]) j++;
    if (j === key.length) return i;
  }
  return -1;
}

const TOKENS_KEY = '"num_tokens"';
/** vLLM-Omni's request metrics (`responseRequestMetrics`): looked for on every delta. */
export const METRICS_KEY = '"response_request_metrics"';

/**
 * The keys a delta's figures are read from, by index, each beginning with a quote: the frame
 * scans (`scanKeys`) find them all in one pass, and `mentions` answers for them from a scan.
 */
const SCANNED_KEYS = [DELTA_BYTES, RESPONSE_ID_BYTES, RATE_BYTES, ITEM_ID_BYTES, CONTENT_INDEX_BYTES, METADATA_BYTES, Buffer.from(TOKENS_KEY), Buffer.from(METRICS_KEY)];
const K_DELTA = 0;
const K_RESPONSE_ID = 1;
const K_RATE = 2;
const K_ITEM_ID = 3;
const K_CONTENT_INDEX = 4;
const K_METADATA = 5;
const K_TOKENS = 6;
const K_METRICS = 7;
/** Each key of `SCANNED_KEYS` by its text, for `mentions`. */
const SCANNED_KEY_INDEX = new Map(SCANNED_KEYS.map((key, k) => [key.toString('latin1'), k]));
/** The first key a letter after a quote may begin, -1 for none (`SCANNED_KEYS`'s second bytes)... */
const KEY_BY_LETTER = new Int8Array(128).fill(-1);
/** ...and the next key after key k that begins with the same letter, -1 for none. */
const NEXT_KEY_OF_LETTER = new Int8Array(SCANNED_KEYS.length).fill(-1);
for (let k = SCANNED_KEYS.length - 1; k >= 0; k--) {
  const letter = SCANNED_KEYS[k][1];
  NEXT_KEY_OF_LETTER[k] = KEY_BY_LETTER[letter];
  KEY_BY_LETTER[letter] = k;
}
/** Where each key of `SCANNED_KEYS` first starts in the region `scanKeys` read last, -1 where it does not: a scratch, so a scan makes no object. */
const keyStarts = new Int32Array(SCANNED_KEYS.length);

/** The keys of `wanted` (a bit each) that the last `scanKeys` found. */
function keysFound(wanted: number): number {
  let found = 0;
  for (let k = 0; k < SCANNED_KEYS.length; k++) if ((wanted & (1 << k)) !== 0 && keyStarts[k] >= 0) found |= 1 << k;
  return found;
}

/**
 * One pass over `b[from, to)` for the first start of each key of `SCANNED_KEYS` in `wanted` (a bit
 * per key) that ends within the region, as `Buffer.indexOf` of each would find it, into `keyStarts`;
 * it stops at the first `stop` key. Returns where that key starts, -1 when it is not there.
 */
function scanKeys(b: Buffer, from: number, to: number, wanted: number, stop: number): number {
  keyStarts.fill(-1);
  for (let i = from; i < to; i++) {
    if (b[i] !== QUOTE || b[i + 1] >= 0x80) continue;
    for (let k = KEY_BY_LETTER[b[i + 1]]; k >= 0; k = NEXT_KEY_OF_LETTER[k]) {
      if ((wanted & (1 << k)) === 0 || keyStarts[k] >= 0) continue;
      const key = SCANNED_KEYS[k];
      if (i + key.length > to) continue;
      let j = 2;
      while (j < key.length && b[i + j] === key[j]) j++;
      if (j < key.length) continue;
      keyStarts[k] = i;
      if (k === stop) return i;
      break;
    }
  }
  return -1;
}

/** The keys `mentions` is asked for about a delta, looked for in all of it (both sides of an audio delta's payload). */
const WHOLE_FRAME_KEYS = (1 << K_TOKENS) | (1 << K_METRICS);
/** The keys a text delta is scanned for, all of it. */
const TEXT_DELTA_KEYS = (1 << K_DELTA) | (1 << K_RESPONSE_ID) | WHOLE_FRAME_KEYS;
/** The keys an audio delta's head is scanned for, up to `"delta":`. */
const HEAD_KEYS = (1 << K_DELTA) | (1 << K_RESPONSE_ID) | (1 << K_RATE) | (1 << K_ITEM_ID) | (1 << K_CONTENT_INDEX) | WHOLE_FRAME_KEYS;

/**
 * The same from the bytes, the payload never copied: its size is where its closing quote is. The
 * head is read in one pass up to `"delta":`, the payload passed over by two byte searches (its
 * closing quote, any backslash), and the tail read in one pass; the payload's place stays on the
 * frame for the readers after this one.
 */
function deltaInfoFromBytes(frame: DecodedFrame, b: Buffer): AudioDeltaInfo | undefined {
  const key = scanKeys(b, 1, b.length, HEAD_KEYS, K_DELTA);
  if (key < 0) return undefined;
  const head_found = keysFound(HEAD_KEYS);
  const start = skipJsonSpace(b, key + DELTA_BYTES.length) + 1;
  if (b[start - 1] !== QUOTE) return undefined;
  const end = b.indexOf(QUOTE, start);
  if (end < 0) return undefined;
  const escape = b.indexOf(BACKSLASH, start);
  if (escape >= 0 && escape < end) return undefined;
  frame.deltaStart = start;
  frame.deltaEnd = end;
  const n = end - start;
  const size = n === 0 ? 0 : Math.floor((n * 3) / 4) - (b[end - 1] === 0x3d ? (b[end - 2] === 0x3d ? 2 : 1) : 0);
  return deltaFiguresFromBytes(frame, head_found, b, key, end + 1, size) ?? deltaFigures(b.toString('utf8', 0, key), size, end + 2 < b.length ? b.toString('utf8', end + 1) : null);
}

/** Where the value of the key at `at` (`length` bytes) starts: past the key, spaces, the colon and spaces; -1 for a key not there or with no colon after it. */
function valueOf(b: Buffer, at: number, length: number): number {
  if (at < 0) return -1;
  const i = skipJsonSpace(b, at + length);
  if (b[i] !== 0x3a) return -1;
  return skipJsonSpace(b, i + 1);
}

/**
 * `deltaFigures` read from the bytes before the payload (`[0, head_end)`, its keys found by the
 * scan that found `"delta":`; one that ran into that key has no colon after it, so no value) and
 * after it (from `tail_start`, one more scan), no string made but the ids: a delta's head and tail
 * as text, and four regular expressions over them, were 4 % of a 256-session run's busy loop.
 * Undefined when the frame is not laid out plainly (an id with an escape, a key the head lacks,
 * vLLM-Omni's metadata in the tail): the text path reads those.
 */
function deltaFiguresFromBytes(frame: DecodedFrame, head_found: number, b: Buffer, head_end: number, tail_start: number, bytes: number): AudioDeltaInfo | undefined {
  const response_id = stringFrom(b, valueOf(b, keyStarts[K_RESPONSE_ID], RESPONSE_ID_BYTES.length), head_end);
  if (response_id === undefined || response_id === null) return undefined;
  const head_rate = digitsFrom(b, valueOf(b, keyStarts[K_RATE], RATE_BYTES.length));
  const head_item = stringFrom(b, valueOf(b, keyStarts[K_ITEM_ID], ITEM_ID_BYTES.length), head_end);
  const head_index = digitsFrom(b, valueOf(b, keyStarts[K_CONTENT_INDEX], CONTENT_INDEX_BYTES.length));
  const end = b.length;
  const tail_keys = (1 << K_METADATA) | (1 << K_RATE) | WHOLE_FRAME_KEYS | (head_item === undefined ? 1 << K_ITEM_ID : 0) | (head_index === undefined ? 1 << K_CONTENT_INDEX : 0);
  scanKeys(b, tail_start, end, tail_keys, -1);
  if (keyStarts[K_METADATA] >= 0) return undefined;
  // Head and tail both looked for these; the payload between them holds no quote, so no key.
  frame.keysScanned = WHOLE_FRAME_KEYS;
  frame.keysSeen = (head_found | keysFound(tail_keys)) & WHOLE_FRAME_KEYS;
  const info: AudioDeltaInfo = { response_id, bytes };
  // A rate in the tail wins over one in the head, as the text path reads them.
  const tail_rate = digitsFrom(b, valueOf(b, keyStarts[K_RATE], RATE_BYTES.length));
  if (head_rate === null || tail_rate === null) return undefined;
  const rate = tail_rate !== undefined && tail_rate > 0 ? tail_rate : head_rate;
  if (rate !== undefined && rate > 0) info.sample_rate_hz = rate;
  const item = head_item === undefined ? stringFrom(b, valueOf(b, keyStarts[K_ITEM_ID], ITEM_ID_BYTES.length), end) : head_item;
  if (item === null) return undefined;
  if (item !== undefined) info.item_id = item;
  const index = head_index === undefined ? digitsFrom(b, valueOf(b, keyStarts[K_CONTENT_INDEX], CONTENT_INDEX_BYTES.length)) : head_index;
  if (index === null) return undefined;
  if (index !== undefined) info.content_index = index;
  return info;
}

/**
 * The plain string whose opening quote is at `i` and which closes before `to`: undefined for no
 * value (`i` < 0), null for a value that is not such a string. Read in one pass; an ASCII string is
 * the one made for the same bytes before when it is still kept (`STRINGS_SEEN`), so a server's ids,
 * the same on every delta of a response, make no string a frame.
 */
function stringFrom(b: Buffer, i: number, to: number): string | null | undefined {
  if (i < 0) return undefined;
  if (b[i] !== QUOTE) return null;
  const stop = Math.min(to, b.length - 1);
  let ascii = true;
  let hash = 0;
  let end = i + 1;
  for (; end <= stop; end++) {
    const c = b[end];
    if (c === QUOTE) break;
    if (c === BACKSLASH) return null;
    if (c > 0x7f) ascii = false;
    hash = (Math.imul(hash, 31) + c) | 0;
  }
  if (end > stop) return null;
  if (!ascii) return b.toString('utf8', i + 1, end);
  const slot = (hash ^ (hash >>> 9)) & (STRINGS_SEEN_SLOTS - 1);
  const seen = STRINGS_SEEN[slot];
  if (seen !== undefined && seen.length === end - i - 1) {
    let k = 0;
    while (k < seen.length && seen.charCodeAt(k) === b[i + 1 + k]) k++;
    if (k === seen.length) return seen;
  }
  const made = b.toString('latin1', i + 1, end);
  STRINGS_SEEN[slot] = made;
  return made;
}

/** Slots of `STRINGS_SEEN`, a power of two. */
const STRINGS_SEEN_SLOTS = 256;
/**
 * ASCII strings read from frames lately, each in the slot of its bytes' hash: a new string takes its
 * slot from the one there, so a run that sees a new id with every response keeps at most this many.
 */
const STRINGS_SEEN: Array<string | undefined> = new Array<string | undefined>(STRINGS_SEEN_SLOTS).fill(undefined);

/** The unsigned integer written from `i`: undefined for no value (`i` < 0), null when it is not plain digits. */
function digitsFrom(b: Buffer, i: number): number | null | undefined {
  if (i < 0) return undefined;
  const value = digitsIn(b, i);
  const next = b[digitsEnd];
  // Digits then the value's end: a fraction, an exponent or a sign goes to the text path.
  return value >= 0 && (next === 0x2c || next === 0x7d || isJsonSpace(next)) ? value : null;
}

/** The byte or UTF-16 code at `i` (undefined or NaN past the end). */
function codeAt(src: Buffer | string, i: number): number {
  return typeof src === 'string' ? src.charCodeAt(i) : src[i];
}

/** Where the digits `digitsIn` read last ended (a scratch, so that a read makes no object). */
let digitsEnd = 0;

/** The unsigned integer written in `src` from `i` (bytes or text), -1 when no digit is there; `digitsEnd` is where its digits end. */
function digitsIn(src: Buffer | string, i: number): number {
  let value = 0;
  let j = i;
  for (let c = codeAt(src, j); c >= 0x30 && c <= 0x39; c = codeAt(src, ++j)) value = value * 10 + (c - 0x30);
  digitsEnd = j;
  return j > i ? value : -1;
}

/**
 * The base64 text an audio delta carries, as bytes: a view into the frame's bytes when it was read
 * from them (nothing copied or decoded), else the delta string's bytes. Only a conversation reads it.
 */
export function audioDeltaBase64(frame: DecodedFrame): Buffer {
  const b = frame.bytes;
  if (b && frame.undecoded) {
    if (frame.deltaEnd >= 0) return b.subarray(frame.deltaStart, frame.deltaEnd);
    const key = b.indexOf(DELTA_BYTES);
    if (key >= 0) {
      const start = skipJsonSpace(b, key + DELTA_BYTES.length) + 1;
      const end = b[start - 1] === QUOTE ? b.indexOf(QUOTE, start) : -1;
      if (end >= 0) return b.subarray(start, end);
    }
  }
  const delta = frame.event().delta;
  return Buffer.from(typeof delta === 'string' ? delta : '', 'latin1');
}

/** What a text or transcript delta says: its response, its length in UTF-16 units, the tokens a server counts for it. */
export interface TextDeltaInfo {
  response_id: string;
  chars: number;
  /** `sglang.num_tokens`, when the server states it. */
  tokens?: number;
}

/**
 * A text delta's response id and length, read from its bytes when it has a plain ASCII delta (no
 * escape) and no token count; parsed otherwise. A transcript delta comes with every packet a
 * native server answers, and parsing each only for these two figures cost an object a frame. Its
 * keys are found in one pass over the frame (`scanKeys`; a key's quotes cannot stand unescaped
 * inside a string), which also answers `mentions` for the keys every delta is asked about.
 */
export function textDeltaInfo(frame: DecodedFrame): TextDeltaInfo {
  const b = frame.bytes;
  if (b && frame.undecoded) {
    scanKeys(b, 1, b.length, TEXT_DELTA_KEYS, -1);
    frame.keysScanned = WHOLE_FRAME_KEYS;
    frame.keysSeen = keysFound(WHOLE_FRAME_KEYS);
    const key = keyStarts[K_DELTA];
    if (key >= 0 && keyStarts[K_TOKENS] < 0) {
      const start = skipJsonSpace(b, key + DELTA_BYTES.length) + 1;
      let end = start;
      for (; end < b.length; end++) {
        const c = b[end];
        if (c === QUOTE || c === BACKSLASH || c >= 0x80) break;
      }
      if (b[start - 1] === QUOTE && b[end] === QUOTE) {
        // The id read from its bytes, before the text or after it: no string of the frame's head or tail.
        const id = stringFrom(b, valueOf(b, keyStarts[K_RESPONSE_ID], RESPONSE_ID_BYTES.length), b.length);
        if (typeof id === 'string') return { response_id: id, chars: end - start };
      }
    }
  }
  const e = frame.event();
  const tokens = (e.sglang as { num_tokens?: unknown } | undefined)?.num_tokens;
  const info: TextDeltaInfo = { response_id: String(e.response_id ?? ''), chars: typeof e.delta === 'string' ? e.delta.length : 0 };
  if (typeof tokens === 'number') info.tokens = tokens;
  return info;
}

/** Frames at or above this size are searched for a key only near their ends (see `mentions`). */
const SCAN_WHOLE_BELOW_CHARS = 2048;

const KEY_BYTES = new Map<string, Buffer>();

/**
 * Whether a frame's text contains `key`. An audio delta is kilobytes of base64, and a key a server
 * adds beside it (`server_event_seq`, `metadata`) sits before or after the payload, so a large frame
 * is searched only in its first 512 and last 1,024 characters: scanning every delta whole was the
 * most expensive function of a 512-session openai run's first second (11 ms of 86 ms busy). A frame
 * still in bytes is searched whole, but for an audio delta whose payload `audioDeltaInfo` found: a
 * key that starts with a quote (as every key does) is searched for in its head and its tail, and
 * the payload passed over (a missing key's search through it cost 270 ns a frame,
 * tools/bench/delta-read.ts).
 */
export function mentions(frame: DecodedFrame, key: string): boolean {
  const b = frame.bytes;
  if (b && frame.undecoded) {
    // A key the frame was scanned for whole (`textDeltaInfo`, `audioDeltaInfo`): answered from the scan.
    if (frame.keysScanned !== 0) {
      const k = SCANNED_KEY_INDEX.get(key);
      if (k !== undefined && (frame.keysScanned & (1 << k)) !== 0) return (frame.keysSeen & (1 << k)) !== 0;
    }
    const bytes = keyBytes(key);
    // An audio delta whose payload was found: a key that starts with a quote is looked for from the
    // head up to the payload's opening quote, then from its closing quote on (it cannot start
    // inside a payload that holds no quote). Any other key is looked for in the whole frame.
    if (frame.deltaEnd >= 0 && bytes[0] === QUOTE) return keyAt(b, bytes, 0, frame.deltaStart - 1) >= 0 || b.indexOf(bytes, frame.deltaEnd) >= 0;
    return b.indexOf(bytes) >= 0;
  }
  const text = frame.text;
  if (text.length < SCAN_WHOLE_BELOW_CHARS) return text.includes(key);
  // Forward searches only: lastIndexOf of a key from position 512 took 1 µs of a delta's 2.
  return text.slice(0, 512 + key.length).includes(key) || text.includes(key, text.length - 1024);
}

/**
 * The unsigned integer after `key` (`"name":`, its last occurrence) in a frame, read from its bytes
 * or text without parsing it; undefined when the key is not there (`mentions`) or no digit follows.
 */
export function unsignedField(frame: DecodedFrame, key: string): number | undefined {
  // From bytes (but for an audio delta's, whose payload `mentions` passes over) the last
  // occurrence is looked for at once: a search first for whether there is one found it twice.
  const bytes = frame.bytes && frame.undecoded && frame.deltaEnd < 0;
  if (!bytes && !mentions(frame, key)) return undefined;
  const src = frame.bytes && frame.undecoded ? frame.bytes : frame.text;
  const at = typeof src === 'string' ? src.lastIndexOf(key) : lastKeyAt(src, keyBytes(key));
  if (at < 0) return undefined;
  let i = at + key.length;
  while (codeAt(src, i) === 0x20) i++;
  const value = digitsIn(src, i);
  return value < 0 ? undefined : value;
}

/**
 * Where `key` last starts in `b`, or -1: `Buffer.lastIndexOf` in a loop here, as the frames read
 * this way (an ack, an event of a few hundred bytes) take less to scan than the native search
 * takes to be called (0.3 µs a frame in a 256-session run's profile, issue 49).
 */
function lastKeyAt(b: Buffer, key: Buffer): number {
  const n = key.length;
  if (n === 0) return b.length;
  const first = key[0];
  for (let i = b.length - n; i >= 0; i--) {
    if (b[i] !== first) continue;
    let j = 1;
    while (j < n && b[i + j] === key[j]) j++;
    if (j === n) return i;
  }
  return -1;
}

/** `key` as bytes, made once per key. */
export function keyBytes(key: string): Buffer {
  let bytes = KEY_BYTES.get(key);
  if (!bytes) KEY_BYTES.set(key, (bytes = Buffer.from(key)));
  return bytes;
}
