import { NATIVE_INPUT_BYTES_PER_MS, NATIVE_PROFILES, type NativeProfile } from '@duplex-bench/protocol';
import { checkNativeTrace, parseTraceLines } from './native-check';
import type { NativeCheckResult } from './native-replay';

// The known-good trace, shared by the oracle's specs, and the mutations in them follow the
// sglang-omni oracle's own tests (tests/unit_test/benchmarks/test_duplex_oracle.py at 1035e3ff), so
// both tools are held to the same cases.

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}
export interface TraceRecord {
  direction: string;
  time_s: number;
  event: JsonObject;
}

export const NEMOTRON = NATIVE_PROFILES.nemotron;
export const MINICPMO = NATIVE_PROFILES.minicpmo;

export function base64Samples(sample: [number, number], count: number): string {
  return Buffer.alloc(count * 2, Buffer.from(sample)).toString('base64');
}

function grant(profile: NativeProfile): JsonObject {
  return {
    interaction: 'native',
    native_full_duplex: true,
    proactive_output: false,
    turn_control: [null],
    client_commit: false,
    input_modalities: ['audio'],
    output_modalities: ['audio'],
    input_audio_format: { type: 'audio/pcm', rate: 16000 },
    output_audio_format: { type: 'audio/pcm', rate: profile.output_sample_rate },
    native_unit_ms: profile.native_unit_ms,
    first_unit_ms: profile.native_unit_ms,
    microturn_ms: null,
    tail_policy: 'pad',
    supports_server_interrupt: false,
    supports_truncate: false,
    supports_resume: false,
    partial_style: 'append_only',
    pressure_policy: 'reject',
    strict_order: true,
    limits: { max_input_bytes: 1920000, max_input_chunks: 128, max_output_bytes: 4194304, max_responses: 128, session_timeout_s: 240 },
    rejections: [],
  };
}

/** One unit of output audio, as one delta, for each unit of input. */
export function outputUnit(profile: NativeProfile): string {
  return base64Samples([1, 0], (profile.output_sample_rate * profile.native_unit_ms) / 1000);
}

/**
 * A healthy session: two units of input, one response whose audio overlaps the input, EOS, an
 * empty EOS unit (the input is unit-aligned), drain and close. Times are 100 s plus the offset.
 */
export function nativeTrace(profile: NativeProfile = NEMOTRON): TraceRecord[] {
  const unitMs = profile.native_unit_ms;
  const pcm = base64Samples([0, 0], (NATIVE_INPUT_BYTES_PER_MS * unitMs) / 2);
  const output = outputUnit(profile);
  const records: TraceRecord[] = [];
  const add = (offset_s: number, direction: string, type: string, fields: JsonObject = {}) =>
    records.push({ direction, time_s: 100 + offset_s, event: { type, event_id: `event_${records.length}`, ...fields } });
  const unitDone = (offset_s: number, index: number, duration_ms: number) =>
    add(offset_s, 'receive', 'sglang.unit.done', {
      unit_id: `unit_${index}`,
      sglang: { unit_id: `unit_${index}`, chunk_seq: 0, media_time: { t_start_ms: index * unitMs, duration_ms } },
    });
  const delta = { response_id: 'response0', item_id: 'item0', output_index: 0, content_index: 0, delta: output };

  add(0.0, 'receive', 'session.created', { session: { id: 'session_A', sglang: { granted: null } } });
  add(0.01, 'send', 'session.update', { event_id: 'configure', session: { output_modalities: ['audio'] } });
  add(0.02, 'receive', 'session.updated', { client_event_id: 'configure', session: { id: 'session_A', sglang: { granted: grant(profile) } } });
  add(0.1, 'send', 'input_audio_buffer.append', { event_id: 'input0', audio: pcm, sglang: { seq: 0, t_start_ms: 0 } });
  add(0.11, 'receive', 'sglang.input_audio.accepted', { seq: 0, accepted_end_ms: unitMs, client_event_id: 'input0' });
  add(0.12, 'receive', 'response.created', { response: { id: 'response0', status: 'in_progress' } });
  add(0.13, 'receive', 'response.output_audio.delta', delta);
  unitDone(0.135, 0, unitMs);
  add(0.18, 'send', 'input_audio_buffer.append', { event_id: 'input1', audio: pcm, sglang: { seq: 1, t_start_ms: unitMs } });
  add(0.19, 'receive', 'sglang.input_audio.accepted', { seq: 1, accepted_end_ms: 2 * unitMs, client_event_id: 'input1' });
  add(0.2, 'receive', 'response.output_audio.delta', delta);
  unitDone(0.21, 1, unitMs);
  add(0.23, 'send', 'sglang.input_audio.end', { event_id: 'end' });
  add(0.24, 'receive', 'sglang.input_audio.ended', { accepted_end_ms: 2 * unitMs, tail_policy: 'pad', client_event_id: 'end' });
  add(0.25, 'receive', 'response.output_audio.done', { response_id: 'response0' });
  add(0.26, 'receive', 'response.done', { response: { id: 'response0', status: 'completed', status_details: { reason: 'stop' } } });
  unitDone(0.264, 2, 0);
  add(0.27, 'receive', 'sglang.input_audio.drained', {
    accepted_end_ms: 2 * unitMs,
    consumed_ms: 2 * unitMs,
    discarded_ms: 0,
    padding_ms: 0,
    client_event_id: 'end',
  });
  add(0.28, 'send', 'session.close', { event_id: 'close' });
  add(0.29, 'receive', 'session.closed', { client_event_id: 'close', reason: 'client_closed' });
  return records;
}

// ---- helpers for mutating traces ----

export const check = (trace: readonly unknown[], profile: NativeProfile = NEMOTRON) => checkNativeTrace(trace, profile);

export function eventsOf(trace: TraceRecord[], type: string): JsonObject[] {
  return trace.filter((record) => record.event.type === type).map((record) => record.event);
}

export function eventOf(trace: TraceRecord[], type: string): JsonObject {
  const [event] = eventsOf(trace, type);
  if (event === undefined) throw new Error(`no ${type} in the trace`);
  return event;
}

export function indexOf(trace: TraceRecord[], type: string): number {
  return trace.findIndex((record) => record.event.type === type);
}

/** The object at `path` below `object`, for mutating nested fields. */
export function objectAt(object: JsonObject, ...path: string[]): JsonObject {
  return path.reduce((inner, key) => inner[key] as JsonObject, object);
}

export function grantOf(trace: TraceRecord[]): JsonObject {
  return objectAt(eventOf(trace, 'session.updated'), 'session', 'sglang', 'granted');
}

export const byTime = (trace: TraceRecord[]) => trace.sort((a, b) => a.time_s - b.time_s);

export function expectFailure(result: NativeCheckResult, violation: string): void {
  expect(result.status).toBe('fail');
  expect(result.violations).toEqual(expect.arrayContaining([expect.stringContaining(violation)]));
}

export function toJsonl(trace: readonly unknown[]): string {
  return trace.map((record) => JSON.stringify(record)).join('\n') + '\n';
}

export const LITERAL = '<literal>';

/** The trace as JSONL, with the field that `place` sets to LITERAL written as `literal` verbatim (`0.0`, `NaN`). */
export function jsonlWith(place: (trace: TraceRecord[]) => void, literal: string, trace = nativeTrace()): string {
  place(trace);
  return toJsonl(trace).replace(JSON.stringify(LITERAL), literal);
}

export function checkText(text: string, profile: NativeProfile = NEMOTRON): NativeCheckResult {
  const { records, errors } = parseTraceLines(text);
  return checkNativeTrace(records, profile, { line_errors: errors });
}

export function admission(attempt: number, http_status = 503): TraceRecord {
  return { direction: 'admission', time_s: 99 + attempt / 100, event: { type: 'connection_denied', http_status, attempt } };
}
