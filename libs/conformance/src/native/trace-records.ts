/**
 * The records of a trace, read by the oracle's schema (oracle_models.py, pydantic strict mode):
 * the `{direction, time_s, event}` line, an admission diagnostic, a wire event and its nested
 * models, and a PCM payload. Each reader throws RecordError where the oracle's replay would raise.
 */
import { StrictFields } from './strict-fields';
import { describe, isObject, strictBase64Bytes, type Int, type JsonObject } from './python-values';

/** A record the oracle's replay abandons part-way: its schema, payload or unit id did not hold. */
export class RecordError extends Error {}

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

export interface WireEvent {
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

const DIRECTIONS = ['send', 'receive', 'error', 'admission'] as const;

function throwIfAny(problems: readonly string[]): void {
  if (problems.length > 0) throw new RecordError(problems.join('; '));
}

export function readTraceRecord(raw: unknown): TraceRecord {
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

export function readAdmission(event: JsonObject): { attempt: number } {
  const problems: string[] = [];
  const fields = new StrictFields(event, 'admission ', problems);
  fields.onlyKeys(['type', 'http_status', 'attempt']);
  fields.literal('type', ['connection_denied']);
  fields.literal('http_status', [503]);
  const attempt = fields.int('attempt', 'required', 1);
  throwIfAny(problems);
  return { attempt: Number(attempt) };
}

export function readWireEvent(event: JsonObject): WireEvent {
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

/** Bytes of PCM16 in a base64 payload; throws where the oracle's pcm_bytes raises. */
export function pcmByteLength(payload: string | null, field: string): number {
  if (payload === null) throw new RecordError(`missing PCM payload in ${field}`);
  const bytes = strictBase64Bytes(payload);
  if (bytes === null) throw new RecordError(`${field} is not valid base64`);
  if (bytes === 0 || bytes % 2 !== 0) throw new RecordError(`PCM16 payload in ${field} must contain whole nonempty samples, got ${bytes} bytes`);
  return bytes;
}
