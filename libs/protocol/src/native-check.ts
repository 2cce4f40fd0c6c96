/**
 * Grades one session's native (sglang-omni duplex) trace the way the sglang-omni trace oracle does
 * (`benchmarks/duplex/oracle.py` and `oracle_models.py`, commit 1035e3ff): a trace passes here
 * exactly when it passes there, with the same statuses. The rules are the oracle's; this code and
 * its wording are ours. Rule phrases are kept close to the oracle's so the two reports read alike.
 *
 * Agreement reaches into details that look fussy: the oracle validates records with pydantic in
 * strict mode, so `seq: true`, `seq: 0.0` and `native_unit_ms: 80.0` all fail, and it replays a
 * record until the first exception, so the partial state a bad record leaves is the same here.
 */
import { NATIVE_INPUT_BYTES_PER_MS, NATIVE_INPUT_SAMPLE_RATE, nativeProfileOf, type NativeProfile } from './native-profiles';

export interface NativeCheckMetrics {
  input_audio_s: number;
  output_audio_s: number;
  admission_denials: number;
  first_audio_packet_s: number | null;
  audio_packet_gap_max_s: number | null;
  input_output_overlap: boolean;
  drain_after_eos_s: number | null;
  close_ack_s: number | null;
}

export interface NativeCheckResult {
  status: 'pass' | 'fail' | 'not_exercised';
  violations: string[];
  coverage: { input_output_overlap: boolean };
  metrics: NativeCheckMetrics;
}

export interface NativeCheckOptions {
  /** Lines of the trace file that could not be read (`parseTraceLines().errors`); each fails the trace. */
  line_errors?: readonly string[];
}

/** Grades one session's trace records (parsed JSON lines, in file order) against the native contract of `profile`. */
export function checkNativeTrace(records: readonly unknown[], profile: NativeProfile, options: NativeCheckOptions = {}): NativeCheckResult {
  const replay = new NativeReplay(profile);
  replay.violations.push(...(options.line_errors ?? []));
  records.forEach((record, index) => replay.record(record, index));
  return replay.finish();
}

/** The profile a trace's session.updated grant states (native_unit_ms + output_audio_format.rate), if it matches one. */
export function grantedProfile(records: readonly unknown[]): NativeProfile | undefined {
  for (const record of records) {
    const event = isObject(record) && pyGet(record, 'direction') === 'receive' ? pyGet(record, 'event') : null;
    if (!isObject(event) || pyGet(event, 'type') !== 'session.updated') continue;
    const granted = dig(event, 'session', 'sglang', 'granted');
    if (!isObject(granted)) return undefined;
    return nativeProfileOf(pyGet(granted, 'native_unit_ms'), dig(granted, 'output_audio_format', 'rate'));
  }
  return undefined;
}

// ---- reading trace files ----

export interface ParsedTraceLines {
  /** One value per JSON line, in file order. */
  records: unknown[];
  /** One message per line that is not JSON, naming its 1-based line number. */
  errors: string[];
}

/**
 * Splits a JSONL trace into records. Lines are read as Python's `json.loads` reads them, because
 * that is what the oracle sees: NaN and Infinity are accepted (the checker then rejects them), and
 * an integer written as a float (`0.0`, `1e2`) is remembered as a float, which JSON.parse forgets.
 * Blank lines are skipped.
 */
export function parseTraceLines(text: string): ParsedTraceLines {
  const records: unknown[] = [];
  const errors: string[] = [];
  text.split('\n').forEach((rawLine, index) => {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (JSON_BLANK.test(line)) return;
    try {
      records.push(new PythonJsonReader(line).read());
    } catch (error) {
      errors.push(`line ${index + 1} is not JSON: ${(error as Error).message}`);
    }
  });
  return { records, errors };
}

/**
 * Integral numbers that the trace wrote as floats (`80.0`), by the object and key that hold them.
 * The marks belong to the objects parseTraceLines returns; a copy of a record loses them.
 */
const floatLiterals = new WeakMap<object, ReadonlySet<string>>();

function writtenAsFloat(holder: object, key: string): boolean {
  return floatLiterals.get(holder)?.has(key) ?? false;
}

const JSON_BLANK = /^[ \t\r]*$/;
const JSON_SPACE = /[ \t\n\r]*/y;
const JSON_NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
/** A run of string characters that need no attention: anything but `"`, `\` and U+0000-U+001F. */
const JSON_PLAIN = /[ !#-[\]-\uffff]*/y;
const JSON_HEX4 = /[0-9a-fA-F]{4}/y;
const JSON_LITERALS: ReadonlyArray<readonly [string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
];
const JSON_ESCAPES: ReadonlyMap<string, string> = new Map([
  ['"', '"'],
  ['\\', '\\'],
  ['/', '/'],
  ['b', '\b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
]);

/**
 * One JSON document, read with Python's json module's grammar and number types: an integer past
 * the double range stays an exact bigint (Python keeps it an int, where JSON.parse would make it
 * Infinity), and integral floats are recorded in `floatLiterals`.
 */
class PythonJsonReader {
  private at = 0;

  constructor(private readonly text: string) {}

  read(): unknown {
    const value = this.value();
    this.skipSpace();
    if (this.at < this.text.length) throw this.error('extra data after the value');
    return value;
  }

  private value(): unknown {
    this.skipSpace();
    const next = this.text[this.at];
    if (next === '{') return this.object();
    if (next === '[') return this.array();
    if (next === '"') return this.string();
    for (const [word, value] of JSON_LITERALS) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    return this.number();
  }

  private object(): Record<string, unknown> {
    this.at++;
    const entries = new Map<string, unknown>();
    const floats = new Set<string>();
    this.skipSpace();
    if (this.text[this.at] === '}') {
      this.at++;
      return {};
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.at] !== '"') throw this.error('expected a property name in double quotes');
      const key = this.string();
      this.skipSpace();
      this.expect(':');
      const start = this.at;
      const value = this.value();
      // A repeated key keeps its first position and takes the last value, as in a Python dict.
      entries.set(key, value);
      if (typeof value === 'number' && Number.isInteger(value) && /[.eE]/.test(this.text.slice(start, this.at))) floats.add(key);
      else floats.delete(key);
      this.skipSpace();
      if (this.text[this.at] !== ',') break;
      this.at++;
    }
    this.expect('}');
    // fromEntries defines own properties, so a "__proto__" key stays data.
    const object = Object.fromEntries(entries);
    if (floats.size > 0) floatLiterals.set(object, floats);
    return object;
  }

  private array(): unknown[] {
    this.at++;
    const items: unknown[] = [];
    this.skipSpace();
    if (this.text[this.at] === ']') {
      this.at++;
      return items;
    }
    for (;;) {
      items.push(this.value());
      this.skipSpace();
      if (this.text[this.at] !== ',') break;
      this.at++;
    }
    this.expect(']');
    return items;
  }

  private string(): string {
    this.at++;
    let out = '';
    for (;;) {
      JSON_PLAIN.lastIndex = this.at;
      JSON_PLAIN.test(this.text);
      out += this.text.slice(this.at, JSON_PLAIN.lastIndex);
      this.at = JSON_PLAIN.lastIndex;
      const next = this.text[this.at];
      if (next === '"') {
        this.at++;
        return out;
      }
      if (next !== '\\') throw this.error(next === undefined ? 'unterminated string' : 'control character in a string');
      out += this.escape();
    }
  }

  private escape(): string {
    const code = this.text[this.at + 1];
    if (code === 'u') {
      JSON_HEX4.lastIndex = this.at + 2;
      if (!JSON_HEX4.test(this.text)) throw this.error('invalid \\u escape');
      this.at += 6;
      // Lone surrogates are kept and adjacent halves join, as Python's json does.
      return String.fromCharCode(parseInt(this.text.slice(this.at - 4, this.at), 16));
    }
    const char = code === undefined ? undefined : JSON_ESCAPES.get(code);
    if (char === undefined) throw this.error('invalid escape');
    this.at += 2;
    return char;
  }

  private number(): number | bigint {
    JSON_NUMBER.lastIndex = this.at;
    const match = JSON_NUMBER.exec(this.text);
    if (match === null) throw this.error('expected a value');
    this.at = JSON_NUMBER.lastIndex;
    const value = Number(match[0]);
    const isFloat = match[1] !== undefined || match[2] !== undefined;
    return isFloat || Number.isFinite(value) ? value : BigInt(match[0]);
  }

  private skipSpace(): void {
    JSON_SPACE.lastIndex = this.at;
    JSON_SPACE.test(this.text);
    this.at = JSON_SPACE.lastIndex;
  }

  private expect(char: string): void {
    if (this.text[this.at] !== char) throw this.error(`expected '${char}'`);
    this.at++;
  }

  private error(what: string): SyntaxError {
    return new SyntaxError(`${what} at column ${this.at + 1}`);
  }
}

// ---- JSON values as Python sees them ----

type JsonObject = Record<string, unknown>;
/** A Python int: a double while it is exact enough, a bigint past the double range. */
type Int = number | bigint;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `dict.get`: null (Python's None) for an absent key. */
function pyGet(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? (object[key] ?? null) : null;
}

function dig(object: JsonObject, ...path: string[]): unknown {
  let value: unknown = object;
  for (const key of path) value = isObject(value) ? pyGet(value, key) : null;
  return value;
}

function isPyInt(value: unknown, asFloat: boolean): value is Int {
  return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value) && !asFloat);
}

/** Python's `type(value).__name__` for a JSON value. */
function pyType(value: unknown, asFloat = false): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number' || typeof value === 'bigint') return isPyInt(value, asFloat) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  return Array.isArray(value) ? 'list' : 'dict';
}

/** Python's `==` on JSON values: numbers by value across int, float and bool, containers element by element. */
function pyEqual(a: unknown, b: unknown): boolean {
  const numeric = (value: unknown) => (typeof value === 'boolean' ? Number(value) : value);
  const x = numeric(a);
  const y = numeric(b);
  if ((typeof x === 'number' || typeof x === 'bigint') && (typeof y === 'number' || typeof y === 'bigint')) return x == y;
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((item, i) => pyEqual(item, y[i]));
  if (isObject(x) && isObject(y)) {
    const keys = Object.keys(x);
    return keys.length === Object.keys(y).length && keys.every((key) => Object.hasOwn(y, key) && pyEqual(x[key], y[key]));
  }
  return x === y;
}

/** A value as a message shows it, floats with their point so `80.0` is told from `80`. */
function describe(value: unknown, asFloat = false): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' && asFloat && Number.isInteger(value)) return `${value}.0`;
  if (typeof value !== 'object' || value === null) return String(value);
  const text = JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? String(item) : item));
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** A name or message from the trace, as the oracle prints Python's None. */
function show(value: unknown): string {
  return value === null || value === undefined ? 'none' : typeof value === 'string' ? value : describe(value);
}

// ---- the records' schema (oracle_models.py, pydantic strict mode) ----

/** A record the oracle's replay abandons part-way: its schema, payload or unit id did not hold. */
class RecordError extends Error {}

interface TraceRecord {
  direction: 'send' | 'receive' | 'error' | 'admission';
  time_s: number;
  event: JsonObject;
}

interface MediaTime {
  t_start_ms: number;
  duration_ms: number;
}

interface Metadata {
  seq: Int | null;
  t_start_ms: number | null;
  media_time: MediaTime | null;
  fatal: boolean | null;
}

interface WireResponse {
  id: string;
  status: string;
  /** `status_details.reason`; null when there are no status details. */
  reason: string | null;
}

interface WireEvent {
  type: string;
  event_id: string;
  sglang: Metadata;
  session: JsonObject | null;
  response: WireResponse | null;
  response_id: string | null;
  item_id: string | null;
  unit_id: string | null;
  content_index: Int | null;
  output_index: Int | null;
  audio: string | null;
  delta: string | null;
  tail_policy: string | null;
  client_event_id: string | null;
  seq: Int | null;
  accepted_end_ms: number | null;
  consumed_ms: number | null;
  discarded_ms: number | null;
  padding_ms: number | null;
  reason: string | null;
  error: JsonObject | null;
}

/** required: absent or null is a misfit; optional: both read as null; defaulted: absent reads as null, null is a misfit. */
type Presence = 'required' | 'optional' | 'defaulted';

/** Reads one JSON object's fields by pydantic's strict rules, noting every misfit. */
class StrictFields {
  constructor(
    private readonly object: JsonObject,
    private readonly path: string,
    private readonly problems: string[],
  ) {}

  /** `extra="forbid"`. */
  onlyKeys(allowed: readonly string[]): void {
    for (const key of Object.keys(this.object)) {
      if (this.object[key] !== undefined && !allowed.includes(key)) this.problems.push(`${this.path}${key} is not an allowed field`);
    }
  }

  text(key: string, presence: Presence = 'optional', nonEmpty = false): string | null {
    const fits = (value: unknown) => typeof value === 'string' && (!nonEmpty || value.length > 0);
    return this.field(key, presence, nonEmpty ? 'a nonempty string' : 'a string', fits) as string | null;
  }

  /** An identifier: a nonempty string. */
  id(key: string, presence: Presence = 'optional'): string | null {
    return this.text(key, presence, true);
  }

  int(key: string, presence: Presence = 'optional', min = -Infinity, max = Infinity): Int | null {
    const asFloat = writtenAsFloat(this.object, key);
    const fits = (value: unknown) => isPyInt(value, asFloat) && value >= min && value <= max;
    const range = min === -Infinity ? '' : max === Infinity ? ` of at least ${min}` : ` from ${min} to ${max}`;
    return this.field(key, presence, `an integer${range}`, fits) as Int | null;
  }

  /**
   * A nonnegative float; an int is taken as a float, a bool or an int past the double range is not.
   * Finite everywhere: the oracle's models differ on infinities, but its records already refuse them.
   */
  nonnegative(key: string, presence: Presence = 'optional'): number | null {
    const fits = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
    return this.field(key, presence, 'a finite nonnegative number', fits) as number | null;
  }

  bool(key: string): boolean | null {
    return this.field(key, 'optional', 'a boolean', (value) => typeof value === 'boolean') as boolean | null;
  }

  literal<T>(key: string, allowed: readonly T[]): T | null {
    const fits = (value: unknown) => allowed.some((option) => option === value);
    const expected = () => (allowed.length === 1 ? describe(allowed[0]) : `one of ${allowed.map((option) => describe(option)).join(', ')}`);
    return this.field(key, 'required', expected, fits) as T | null;
  }

  dict(key: string, presence: Presence = 'optional'): JsonObject | null {
    return this.field(key, presence, 'an object', isObject) as JsonObject | null;
  }

  /** The fields of a nested model, or null when it is absent, null or not an object. */
  nested(key: string, presence: Presence = 'optional'): StrictFields | null {
    const object = this.dict(key, presence);
    return object === null ? null : new StrictFields(object, `${this.path}${key}.`, this.problems);
  }

  private field(key: string, presence: Presence, expected: string | (() => string), fits: (value: unknown) => boolean): unknown {
    const value = Object.hasOwn(this.object, key) ? this.object[key] : undefined;
    if (value === undefined) {
      if (presence === 'required') this.problems.push(`${this.path}${key} is required`);
      return null;
    }
    if (value === null && presence === 'optional') return null;
    if (!fits(value)) {
      const wanted = typeof expected === 'string' ? expected : expected();
      this.problems.push(`${this.path}${key} must be ${wanted}, got ${describe(value, writtenAsFloat(this.object, key))}`);
      return null;
    }
    return value;
  }
}

const DIRECTIONS = ['send', 'receive', 'error', 'admission'] as const;
const MAX_ADMISSION_ATTEMPTS = 3;

function throwIfAny(problems: readonly string[]): void {
  if (problems.length > 0) throw new RecordError(problems.join('; '));
}

function readTraceRecord(raw: unknown): TraceRecord {
  if (!isObject(raw)) throw new RecordError(`a trace record must be a JSON object, got ${describe(raw)}`);
  const problems: string[] = [];
  const fields = new StrictFields(raw, '', problems);
  fields.onlyKeys(['direction', 'time_s', 'event']);
  const direction = fields.literal('direction', DIRECTIONS);
  const time_s = fields.nonnegative('time_s', 'required');
  const event = fields.dict('event', 'required');
  // The oracle's records forbid NaN and infinities anywhere, the event's every field included.
  const unfit = event === null ? null : firstUnfitValue(event, 'event');
  if (unfit !== null) problems.push(unfit);
  throwIfAny(problems);
  return { direction, time_s, event } as TraceRecord;
}

/** The first NaN, infinity or non-JSON value within `value`, as a problem; null when there is none. */
function firstUnfitValue(value: unknown, path: string): string | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'bigint':
      return null;
    case 'number':
      return Number.isFinite(value) ? null : `${path} must be a finite number, got ${value}`;
    case 'object':
      if (value === null) return null;
      if (Array.isArray(value)) {
        for (const [index, item] of value.entries()) {
          const unfit = firstUnfitValue(item, `${path}.${index}`);
          if (unfit !== null) return unfit;
        }
        return null;
      }
      for (const [key, item] of Object.entries(value)) {
        const unfit = item === undefined ? null : firstUnfitValue(item, `${path}.${key}`);
        if (unfit !== null) return unfit;
      }
      return null;
    default:
      return `${path} is not a JSON value`;
  }
}

function readAdmission(event: JsonObject): { attempt: number } {
  const problems: string[] = [];
  const fields = new StrictFields(event, 'admission ', problems);
  fields.onlyKeys(['type', 'http_status', 'attempt']);
  fields.literal('type', ['connection_denied']);
  fields.literal('http_status', [503]);
  const attempt = fields.int('attempt', 'required', 1, MAX_ADMISSION_ATTEMPTS);
  throwIfAny(problems);
  return { attempt: Number(attempt) };
}

function readWireEvent(event: JsonObject): WireEvent {
  const problems: string[] = [];
  const fields = new StrictFields(event, 'event.', problems);
  const wire: WireEvent = {
    type: fields.id('type', 'required') ?? '',
    event_id: fields.id('event_id', 'required') ?? '',
    sglang: readMetadata(fields.nested('sglang', 'defaulted')),
    session: fields.dict('session'),
    response: readResponse(fields.nested('response')),
    response_id: fields.id('response_id'),
    item_id: fields.id('item_id'),
    unit_id: fields.id('unit_id'),
    content_index: fields.int('content_index'),
    output_index: fields.int('output_index'),
    audio: fields.text('audio'),
    delta: fields.text('delta'),
    tail_policy: fields.text('tail_policy'),
    client_event_id: fields.id('client_event_id'),
    seq: fields.int('seq'),
    accepted_end_ms: fields.nonnegative('accepted_end_ms'),
    consumed_ms: fields.nonnegative('consumed_ms'),
    discarded_ms: fields.nonnegative('discarded_ms'),
    padding_ms: fields.nonnegative('padding_ms'),
    reason: fields.text('reason'),
    error: fields.dict('error'),
  };
  throwIfAny(problems);
  return wire;
}

function readMetadata(fields: StrictFields | null): Metadata {
  const media = fields?.nested('media_time');
  return {
    seq: fields?.int('seq', 'optional', 0) ?? null,
    t_start_ms: fields?.nonnegative('t_start_ms') ?? null,
    media_time: media ? readMediaTime(media) : null,
    fatal: fields?.bool('fatal') ?? null,
  };
}

function readMediaTime(fields: StrictFields): MediaTime {
  return { t_start_ms: fields.nonnegative('t_start_ms', 'required') ?? 0, duration_ms: fields.nonnegative('duration_ms', 'required') ?? 0 };
}

function readResponse(fields: StrictFields | null): WireResponse | null {
  if (fields === null) return null;
  const id = fields.id('id', 'required') ?? '';
  const status = fields.text('status', 'required') ?? '';
  const reason = fields.nested('status_details')?.id('reason', 'required') ?? null;
  return { id, status, reason };
}

// ---- payloads ----

const BASE64_ALPHABET_RUN = /[A-Za-z0-9+/]*/y;
const ONLY_PADDING = /^=*$/;

/**
 * Bytes a base64 payload decodes to under Python 3.11-3.12's `b64decode(validate=True)`, or null
 * where it raises: the standard alphabet only, then padding that completes the last quad. After a
 * whole quad, stray '=' are ignored, except in a payload that is nothing but '='.
 */
function strictBase64Bytes(payload: string): number | null {
  BASE64_ALPHABET_RUN.lastIndex = 0;
  BASE64_ALPHABET_RUN.test(payload);
  const data = BASE64_ALPHABET_RUN.lastIndex;
  const padding = payload.slice(data);
  if (!ONLY_PADDING.test(padding)) return null;
  const partial = data % 4;
  const padded = partial === 0 ? data > 0 || padding === '' : partial === 2 ? padding === '==' : partial === 3 && padding === '=';
  return padded ? ((data - partial) / 4) * 3 + Math.max(0, partial - 1) : null;
}

/** Bytes of PCM16 in a base64 payload; throws where the oracle's pcm_bytes raises. */
function pcmByteLength(payload: string | null, field: string): number {
  if (payload === null) throw new RecordError(`missing PCM payload in ${field}`);
  const bytes = strictBase64Bytes(payload);
  if (bytes === null) throw new RecordError(`${field} is not valid base64`);
  if (bytes === 0 || bytes % 2 !== 0) throw new RecordError(`PCM16 payload in ${field} must contain whole nonempty samples, got ${bytes} bytes`);
  return bytes;
}

// ---- native unit ids ----

const DECIMAL_DIGIT = /^\p{Nd}$/u;
const DECIMAL_DIGITS = /^\p{Nd}+$/u;

/**
 * The number in `unit_N`, or null when N is not all decimal digits. Python's isdigit() and int()
 * take any Unicode decimal digit (`unit_٣` is unit 3 to the oracle), and its ints have no ceiling.
 */
function unitNumber(digits: string): bigint | null {
  if (!DECIMAL_DIGITS.test(digits)) return null;
  let ascii = '';
  for (const char of digits) ascii += decimalDigitValue(char.codePointAt(0) as number);
  return BigInt(ascii);
}

/** Unicode encodes every set of decimal digits as ten consecutive code points, zero first. */
function decimalDigitValue(codePoint: number): number {
  let zero = codePoint;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
  return (codePoint - zero) % 10;
}

// ---- the replay ----

const INPUT_BYTES_PER_S = NATIVE_INPUT_BYTES_PER_MS * 1000;

/** Capabilities every native grant must state, compared by Python type and value. */
const REQUIRED_CAPABILITIES: ReadonlyArray<readonly [string, unknown]> = [
  ['interaction', 'native'],
  ['native_full_duplex', true],
  ['input_audio_format', { type: 'audio/pcm', rate: NATIVE_INPUT_SAMPLE_RATE }],
  ['tail_policy', 'pad'],
  ['microturn_ms', null],
  ['client_commit', false],
  ['proactive_output', false],
  ['pressure_policy', 'reject'],
  ['strict_order', true],
  ['supports_server_interrupt', false],
  ['supports_resume', false],
  ['supports_truncate', false],
];

/** Server receipts and the client command each acknowledges. */
const ACKNOWLEDGES: ReadonlyMap<string, string> = new Map([
  ['session.updated', 'session.update'],
  ['sglang.input_audio.accepted', 'input_audio_buffer.append'],
  ['sglang.input_audio.ended', 'sglang.input_audio.end'],
  ['sglang.input_audio.drained', 'sglang.input_audio.end'],
  ['session.closed', 'session.close'],
]);

/** The response terminals a native session may show: their status and the client command behind them. */
const TERMINAL_REASONS: ReadonlyMap<string, { status: string; command: string }> = new Map([
  ['stop', { status: 'completed', command: 'sglang.input_audio.end' }],
  ['client_closed', { status: 'cancelled', command: 'session.close' }],
]);

const MEDIA_DELTAS: ReadonlySet<string> = new Set([
  'response.output_audio.delta',
  'response.output_audio_transcript.delta',
  'response.output_text.delta',
]);

/** Steps a complete session shows exactly once: direction and event type. */
const ONCE_EACH: ReadonlyArray<readonly ['send' | 'receive', string]> = [
  ['receive', 'session.created'],
  ['send', 'session.update'],
  ['receive', 'session.updated'],
  ['send', 'sglang.input_audio.end'],
  ['receive', 'sglang.input_audio.ended'],
  ['receive', 'sglang.input_audio.drained'],
  ['send', 'session.close'],
  ['receive', 'session.closed'],
];

interface SentCommand {
  event: WireEvent;
  time_s: number;
  /** Input media accepted so far, in ms, when the command was sent. */
  input_end_ms: number;
}

interface ResponseState {
  /** The status of its response.done; null until then. */
  terminal: string | null;
  reason: string | null;
  audioDone: boolean;
  audioSeen: boolean;
  itemId: string | null;
}

/** One session's trace replayed record by record, as the oracle's loop keeps its state. */
class NativeReplay {
  readonly violations: string[] = [];
  private readonly counts = new Map<string, number>();
  private readonly eventIds = { send: new Set<string>(), receive: new Set<string>() };
  private readonly sent = new Map<string, SentCommand>();
  private readonly acknowledged = new Set<string>();
  private readonly responses = new Map<string, ResponseState>();
  private readonly inputTimes: number[] = [];
  private readonly audioTimes: number[] = [];
  private readonly units: Array<{ index: bigint; duration_ms: number }> = [];
  private inputBytes = 0;
  private outputBytes = 0;
  private nextSeq = 0;
  private admissions = 0;
  /** session.created's `session.id`, any JSON value; null is Python's None. */
  private sessionId: unknown = null;
  private updated = false;
  private ended = false;
  private drained = false;
  private closed = false;
  private previousTime = -Infinity;
  private drainAfterEos: number | null = null;
  private closeAck: number | null = null;

  constructor(private readonly profile: NativeProfile) {}

  private get unitMs(): number {
    return this.profile.native_unit_ms;
  }

  private get inputBytesPerUnit(): number {
    return Math.floor((NATIVE_INPUT_SAMPLE_RATE * this.unitMs) / 1000) * 2;
  }

  private get inputMs(): number {
    return this.inputBytes / NATIVE_INPUT_BYTES_PER_MS;
  }

  private check(ok: boolean, message: string): void {
    if (!ok) this.violations.push(message);
  }

  private count(direction: 'send' | 'receive', type: string): number {
    return this.counts.get(`${direction} ${type}`) ?? 0;
  }

  record(raw: unknown, index: number): void {
    try {
      const record = readTraceRecord(raw);
      this.check(record.time_s >= this.previousTime, `record ${index}: clock regressed from ${this.previousTime} s to ${record.time_s} s`);
      this.previousTime = record.time_s;
      if (record.direction === 'admission') this.admission(record.event);
      else if (record.direction === 'error') this.violations.push(`client error: ${show(pyGet(record.event, 'message'))}`);
      else this.wireEvent(record.direction, readWireEvent(record.event), record.time_s);
    } catch (error) {
      if (!(error instanceof RecordError)) throw error;
      this.violations.push(`record ${index}: ${error.message}`);
    }
  }

  private admission(event: JsonObject): void {
    const { attempt } = readAdmission(event);
    this.check(this.eventIds.send.size === 0 && this.eventIds.receive.size === 0, 'admission diagnostic after the session started');
    this.check(attempt === this.admissions + 1, `admission attempts are not contiguous from one: attempt ${attempt} after ${this.admissions}`);
    this.admissions++;
  }

  private wireEvent(direction: 'send' | 'receive', event: WireEvent, time_s: number): void {
    const ids = this.eventIds[direction];
    this.check(!ids.has(event.event_id), `duplicate ${direction} event_id: ${event.event_id}`);
    ids.add(event.event_id);
    this.counts.set(`${direction} ${event.type}`, this.count(direction, event.type) + 1);
    this.check(!this.closed, `${event.type} after session.closed`);
    if (direction === 'send') this.clientCommand(event, time_s);
    else this.serverEvent(event, time_s);
  }

  // ---- client commands ----

  private clientCommand(event: WireEvent, time_s: number): void {
    switch (event.type) {
      case 'session.update':
        this.check(this.sessionId !== null, 'session.update before session.created');
        break;
      case 'input_audio_buffer.append':
        this.append(event, time_s);
        break;
      case 'sglang.input_audio.end':
        this.check(this.updated, 'EOS before session.updated');
        break;
      case 'session.close':
        this.check(this.drained, 'session.close before input drained');
        break;
      default:
        this.violations.push(`client command outside this scenario: ${event.type}`);
    }
    // An append with a bad payload never gets here: the oracle does not know it as sent.
    this.sent.set(event.event_id, { event, time_s, input_end_ms: this.inputMs });
  }

  private append(event: WireEvent, time_s: number): void {
    const { seq, t_start_ms } = event.sglang;
    this.check(this.updated, 'audio input before session.updated');
    this.check(this.count('send', 'sglang.input_audio.end') === 0, 'input after EOS');
    this.check(seq === this.nextSeq, `input sequence is not contiguous: seq ${show(seq)}, expected ${this.nextSeq}`);
    const expectedStart = this.inputMs;
    this.check(
      t_start_ms === null || t_start_ms === expectedStart || Math.abs(t_start_ms - expectedStart) <= 1e-7,
      `input media time is not sample-contiguous: t_start_ms ${t_start_ms}, expected ${expectedStart}`,
    );
    this.inputBytes += pcmByteLength(event.audio, 'audio');
    this.nextSeq++;
    this.inputTimes.push(time_s);
  }

  // ---- server events ----

  private serverEvent(event: WireEvent, time_s: number): void {
    const command = event.client_event_id === null ? undefined : this.sent.get(event.client_event_id);
    this.acknowledgement(event, command);
    switch (event.type) {
      case 'session.created':
        return this.sessionCreated(event);
      case 'session.updated':
        return this.sessionUpdated(event);
      case 'sglang.input_audio.accepted':
        return this.inputAccepted(event, command);
      case 'sglang.input_audio.ended':
        return this.inputEnded(event);
      case 'sglang.input_audio.drained':
        return this.inputDrained(event, time_s, command);
      case 'sglang.unit.done':
        return this.unitDone(event);
      case 'response.created':
        return this.responseCreated(event);
      case 'session.closed':
        return this.sessionClosed(event, time_s, command);
      case 'error':
        return this.serverError(event);
    }
    if (event.type.startsWith('response.')) this.responseEvent(event, time_s);
    else this.violations.push(`unsupported server event: ${event.type}`);
  }

  private acknowledgement(event: WireEvent, command: SentCommand | undefined): void {
    const acknowledges = ACKNOWLEDGES.get(event.type);
    if (acknowledges === undefined) return;
    this.check(
      command?.event.type === acknowledges,
      `${event.type}: missing matching prior client event (client_event_id ${show(event.client_event_id)})`,
    );
    const key = JSON.stringify([event.type, event.client_event_id]);
    this.check(!this.acknowledged.has(key), `duplicate ${event.type}`);
    this.acknowledged.add(key);
  }

  private sessionCreated(event: WireEvent): void {
    this.check(this.sessionId === null, 'duplicate session.created');
    this.sessionId = pyGet(event.session ?? {}, 'id');
    this.check(typeof this.sessionId === 'string' && this.sessionId.length > 0, 'missing session ID');
  }

  private sessionUpdated(event: WireEvent): void {
    const session = event.session ?? {};
    this.check(this.sessionId !== null && pyEqual(pyGet(session, 'id'), this.sessionId), 'session ID changed');
    const granted = dig(session, 'sglang', 'granted');
    this.check(isObject(granted), 'missing granted capabilities');
    if (isObject(granted)) this.checkGrant(granted);
    this.updated = true;
  }

  private checkGrant(granted: JsonObject): void {
    const required: ReadonlyArray<readonly [string, unknown]> = [
      ...REQUIRED_CAPABILITIES,
      ['native_unit_ms', this.unitMs],
      ['output_audio_format', { type: 'audio/pcm', rate: this.profile.output_sample_rate }],
    ];
    for (const [name, value] of required) {
      const asFloat = writtenAsFloat(granted, name);
      const actual = pyGet(granted, name);
      this.check(
        pyType(actual, asFloat) === pyType(value) && pyEqual(actual, value),
        `unsupported capability: ${name} (granted ${describe(actual, asFloat)}, required ${describe(value)})`,
      );
    }
    const modalities = pyGet(granted, 'output_modalities');
    this.check(
      Array.isArray(modalities) &&
        modalities.every((item) => typeof item === 'string') &&
        this.profile.output_modalities.every((item) => modalities.includes(item)),
      `unsupported capability: output_modalities (required ${this.profile.output_modalities.join(', ')})`,
    );
  }

  private inputAccepted(event: WireEvent, command: SentCommand | undefined): void {
    if (command === undefined) return;
    this.check(
      pyEqual(event.seq, command.event.sglang.seq),
      `accepted input sequence mismatch: seq ${show(event.seq)} for append seq ${show(command.event.sglang.seq)}`,
    );
    this.check(
      pyEqual(event.accepted_end_ms, command.input_end_ms),
      `accepted input duration mismatch: accepted_end_ms ${show(event.accepted_end_ms)}, sent ${command.input_end_ms}`,
    );
  }

  private inputEnded(event: WireEvent): void {
    this.check(
      pyEqual(event.accepted_end_ms, this.inputMs),
      `ended input duration mismatch: accepted_end_ms ${show(event.accepted_end_ms)}, sent ${this.inputMs}`,
    );
    this.check(event.tail_policy === 'pad', `ended tail policy mismatch: ${show(event.tail_policy)}`);
    this.ended = true;
  }

  private inputDrained(event: WireEvent, time_s: number, command: SentCommand | undefined): void {
    this.check(this.ended, 'input drained before ended receipt');
    const sentMs = this.inputMs;
    this.check(
      pyEqual(event.accepted_end_ms, sentMs),
      `drained input duration mismatch: accepted_end_ms ${show(event.accepted_end_ms)}, sent ${sentMs}`,
    );
    this.check(pyEqual(event.consumed_ms, sentMs), `drained consumed duration mismatch: consumed_ms ${show(event.consumed_ms)}, sent ${sentMs}`);
    this.check(pyEqual(event.discarded_ms, 0), `accepted input was discarded: discarded_ms ${show(event.discarded_ms)}`);
    const padding = Math.ceil(sentMs / this.unitMs) * this.unitMs - sentMs;
    this.check(pyEqual(event.padding_ms, padding), `drained padding mismatch: padding_ms ${show(event.padding_ms)}, expected ${padding}`);
    this.drained = true;
    if (command !== undefined) this.drainAfterEos = time_s - command.time_s;
  }

  private unitDone(event: WireEvent): void {
    const unitId = event.unit_id ?? '';
    const underscore = unitId.indexOf('_');
    const prefix = underscore < 0 ? unitId : unitId.slice(0, underscore);
    const index = underscore < 0 ? null : unitNumber(unitId.slice(underscore + 1));
    const media = event.sglang.media_time;
    if (prefix !== 'unit' || index === null) {
      this.violations.push(`invalid native unit ID: ${show(event.unit_id)}`);
      return;
    }
    if (media === null) {
      this.violations.push(`unit receipt missing media time (${unitId})`);
      return;
    }
    const last = this.units.at(-1);
    this.check(last === undefined || index > last.index, `native unit receipts are not increasing: ${unitId} after unit_${last?.index}`);
    const start = media.t_start_ms;
    this.check(
      Number.isInteger(start) && BigInt(start) === index * BigInt(this.unitMs),
      `native unit media time is not unit-aligned: ${unitId} starts at ${start} ms`,
    );
    this.units.push({ index, duration_ms: media.duration_ms });
  }

  private responseCreated(event: WireEvent): void {
    this.check(this.updated, 'response before session.updated');
    if (event.response === null) {
      this.violations.push('response.created missing response');
      return;
    }
    const { id, status } = event.response;
    this.check(!this.responses.has(id), `duplicate response.created: ${id}`);
    this.check(status === 'in_progress', `invalid created response status: ${status}`);
    this.responses.set(id, { terminal: null, reason: null, audioDone: false, audioSeen: false, itemId: null });
  }

  private responseEvent(event: WireEvent, time_s: number): void {
    const { type } = event;
    const closeRequested = this.count('send', 'session.close') > 0;
    this.check(!this.drained || (!MEDIA_DELTAS.has(type) && closeRequested), `${type} after drain`);
    const responseId = event.response !== null ? event.response.id : event.response_id;
    const state = responseId === null ? undefined : this.responses.get(responseId);
    this.check(state !== undefined, `${type}: unknown response ${show(responseId)}`);
    if (state === undefined) return;
    this.check(state.terminal === null, `${type}: output after response terminal`);
    switch (type) {
      case 'response.done':
        return this.responseDone(event, state);
      case 'response.output_audio.delta':
        return this.audioDelta(event, state, time_s);
      case 'response.output_audio.done':
        this.check(!state.audioDone, 'duplicate output_audio.done');
        state.audioDone = true;
        return;
      case 'response.output_audio_transcript.delta':
      case 'response.output_text.delta':
        return this.check(event.delta !== null, `${type}: text delta missing content`);
      case 'response.output_audio_transcript.done':
      case 'response.output_text.done':
        return;
      default:
        this.violations.push(`unsupported server event: ${type}`);
    }
  }

  private responseDone(event: WireEvent, state: ResponseState): void {
    const status = event.response?.status ?? null;
    const reason = event.response?.reason ?? null;
    const terminal = reason === null ? undefined : TERMINAL_REASONS.get(reason);
    this.check(terminal !== undefined, `unsupported response terminal reason: ${show(reason)}`);
    if (terminal !== undefined) {
      this.check(status === terminal.status, `terminal status ${show(status)} contradicts reason ${reason}`);
      // Only a profile whose response spans the session needs EOS before `stop`.
      if (reason !== 'stop' || this.profile.stop_requires_eos) {
        this.check(this.count('send', terminal.command) > 0, `terminal reason ${reason} without its client command`);
      }
    }
    // The server finishes its response on EOS before it reports the input drained.
    this.check(reason !== 'stop' || !this.drained, 'native completed terminal after the drain receipt');
    this.check(!state.audioSeen || state.audioDone, 'missing output_audio.done');
    state.terminal = status;
    state.reason = reason;
  }

  private audioDelta(event: WireEvent, state: ResponseState, time_s: number): void {
    this.check(!state.audioDone, 'audio after output_audio.done');
    this.check(event.item_id !== null, 'audio missing item ID');
    this.check(state.itemId === null || state.itemId === event.item_id, `audio item ID changed: ${show(event.item_id)} after ${state.itemId}`);
    this.check(
      pyEqual(event.content_index, 0) && pyEqual(event.output_index, 0),
      `invalid audio indexes: content_index ${show(event.content_index)}, output_index ${show(event.output_index)}`,
    );
    this.outputBytes += pcmByteLength(event.delta, 'delta');
    this.audioTimes.push(time_s);
    state.audioSeen = true;
    state.itemId = event.item_id;
  }

  private sessionClosed(event: WireEvent, time_s: number, command: SentCommand | undefined): void {
    this.check(this.drained, 'session.closed before input drained');
    this.check(event.reason === 'client_closed', `unexpected session close reason: ${show(event.reason)}`);
    this.closed = true;
    if (command !== undefined) this.closeAck = time_s - command.time_s;
  }

  private serverError(event: WireEvent): void {
    const error = event.error ?? {};
    const fatal = event.sglang.fatal;
    this.violations.push(`server error: code=${show(pyGet(error, 'code'))} fatal=${show(fatal)}: ${show(pyGet(error, 'message'))}`);
  }

  // ---- end of trace ----

  finish(): NativeCheckResult {
    for (const [direction, type] of ONCE_EACH) {
      const seen = this.count(direction, type);
      this.check(seen === 1, `expected exactly one ${direction} ${type}, saw ${seen}`);
    }
    this.check(this.inputTimes.length > 0, 'missing audio input');
    this.checkUnits();
    this.checkEndings();
    const overlap = this.inputOutputOverlap();
    const failed = this.violations.length > 0;
    return {
      status: failed ? 'fail' : !this.profile.continuous_output || overlap ? 'pass' : 'not_exercised',
      violations: this.violations,
      coverage: { input_output_overlap: overlap },
      metrics: this.metrics(overlap),
    };
  }

  private checkUnits(): void {
    const expectedUnits = Math.ceil(this.inputBytes / this.inputBytesPerUnit);
    const nonempty = this.units.filter((unit) => unit.duration_ms !== 0).length;
    this.check(
      this.units.every((unit, position) => unit.index === BigInt(position)),
      'native unit receipts are not contiguous from zero',
    );
    this.check(nonempty === expectedUnits, `expected ${expectedUnits} nonempty native units, observed ${nonempty}`);
    // Only input that ends on a unit boundary leaves the server an empty unit to report at EOS.
    const emptyEosUnit = this.units.length === nonempty + 1 && this.units.at(-1)?.duration_ms === 0 && this.inputBytes % this.inputBytesPerUnit === 0;
    this.check(this.units.length === nonempty || emptyEosUnit, 'an empty EOS unit requires exactly unit-aligned input');
    const unitMs = this.units.reduce((sum, unit) => sum + unit.duration_ms, 0);
    this.check(unitMs === this.inputMs, `native unit durations do not account for the accepted input: ${unitMs} of ${this.inputMs} ms`);
    if (this.profile.continuous_output) {
      const expectedBytes = Math.floor((expectedUnits * this.profile.output_sample_rate * this.unitMs) / 1000) * 2;
      this.check(
        this.outputBytes === expectedBytes,
        `output audio is not conserved: ${this.outputBytes} of ${expectedBytes} bytes for ${expectedUnits} units`,
      );
    }
  }

  private checkEndings(): void {
    for (const [eventId, command] of this.sent) {
      if (command.event.type !== 'input_audio_buffer.append') continue;
      this.check(this.acknowledged.has(JSON.stringify(['sglang.input_audio.accepted', eventId])), `missing input acceptance receipt for ${eventId}`);
    }
    for (const [id, state] of this.responses) {
      this.check(
        state.terminal === 'completed' && state.reason === 'stop',
        `response ${id} ended ${show(state.terminal)}/${show(state.reason)}, expected completed/stop`,
      );
    }
  }

  private inputOutputOverlap(): boolean {
    const first = this.audioTimes[0];
    const last = this.audioTimes.at(-1);
    return first !== undefined && last !== undefined && this.inputTimes.some((time) => first < time && time < last);
  }

  private metrics(overlap: boolean): NativeCheckMetrics {
    const audio = this.audioTimes;
    let gapMax: number | null = null;
    for (let i = 1; i < audio.length; i++) gapMax = Math.max(gapMax ?? -Infinity, audio[i] - audio[i - 1]);
    return {
      input_audio_s: this.inputBytes / INPUT_BYTES_PER_S,
      output_audio_s: this.outputBytes / (this.profile.output_sample_rate * 2),
      admission_denials: this.admissions,
      first_audio_packet_s: audio.length > 0 && this.inputTimes.length > 0 ? audio[0] - this.inputTimes[0] : null,
      audio_packet_gap_max_s: gapMax,
      input_output_overlap: overlap,
      drain_after_eos_s: this.drainAfterEos,
      close_ack_s: this.closeAck,
    };
  }
}
