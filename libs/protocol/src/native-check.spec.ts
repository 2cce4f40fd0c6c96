import { checkNativeTrace, grantedProfile, parseTraceLines, type NativeCheckResult } from './native-check';
import { NATIVE_INPUT_BYTES_PER_MS, NATIVE_PROFILES, type NativeProfile } from './native-profiles';

// The known-good trace and the mutations below follow the sglang-omni oracle's own tests
// (tests/unit_test/benchmarks/test_duplex_oracle.py at 1035e3ff), so both tools are held to the
// same cases.

type Json = null | boolean | number | string | Json[] | JsonObject;
interface JsonObject {
  [key: string]: Json;
}
interface TraceRecord {
  direction: string;
  time_s: number;
  event: JsonObject;
}

const NEMOTRON = NATIVE_PROFILES.nemotron;
const MINICPMO = NATIVE_PROFILES.minicpmo;

function base64Samples(sample: [number, number], count: number): string {
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
function outputUnit(profile: NativeProfile): string {
  return base64Samples([1, 0], (profile.output_sample_rate * profile.native_unit_ms) / 1000);
}

/**
 * A healthy session: two units of input, one response whose audio overlaps the input, EOS, an
 * empty EOS unit (the input is unit-aligned), drain and close. Times are 100 s plus the offset.
 */
function nativeTrace(profile: NativeProfile = NEMOTRON): TraceRecord[] {
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

const check = (trace: readonly unknown[], profile: NativeProfile = NEMOTRON) => checkNativeTrace(trace, profile);

function eventsOf(trace: TraceRecord[], type: string): JsonObject[] {
  return trace.filter((record) => record.event.type === type).map((record) => record.event);
}

function eventOf(trace: TraceRecord[], type: string): JsonObject {
  const [event] = eventsOf(trace, type);
  if (event === undefined) throw new Error(`no ${type} in the trace`);
  return event;
}

function indexOf(trace: TraceRecord[], type: string): number {
  return trace.findIndex((record) => record.event.type === type);
}

/** The object at `path` below `object`, for mutating nested fields. */
function objectAt(object: JsonObject, ...path: string[]): JsonObject {
  return path.reduce((inner, key) => inner[key] as JsonObject, object);
}

function grantOf(trace: TraceRecord[]): JsonObject {
  return objectAt(eventOf(trace, 'session.updated'), 'session', 'sglang', 'granted');
}

const byTime = (trace: TraceRecord[]) => trace.sort((a, b) => a.time_s - b.time_s);

function expectFailure(result: NativeCheckResult, violation: string): void {
  expect(result.status).toBe('fail');
  expect(result.violations).toEqual(expect.arrayContaining([expect.stringContaining(violation)]));
}

function toJsonl(trace: readonly unknown[]): string {
  return trace.map((record) => JSON.stringify(record)).join('\n') + '\n';
}

const LITERAL = '<literal>';

/** The trace as JSONL, with the field that `place` sets to LITERAL written as `literal` verbatim (`0.0`, `NaN`). */
function jsonlWith(place: (trace: TraceRecord[]) => void, literal: string, trace = nativeTrace()): string {
  place(trace);
  return toJsonl(trace).replace(JSON.stringify(LITERAL), literal);
}

function checkText(text: string, profile: NativeProfile = NEMOTRON): NativeCheckResult {
  const { records, errors } = parseTraceLines(text);
  return checkNativeTrace(records, profile, { line_errors: errors });
}

function admission(attempt: number, http_status = 503): TraceRecord {
  return { direction: 'admission', time_s: 99 + attempt / 100, event: { type: 'connection_denied', http_status, attempt } };
}

// ---- the known-good trace ----

describe('checkNativeTrace: the known-good trace', () => {
  it('passes with the hand-computed metrics', () => {
    const result = check(nativeTrace());
    expect(result.violations).toEqual([]);
    expect(result.status).toBe('pass');
    expect(result.coverage).toEqual({ input_output_overlap: true });
    const { metrics } = result;
    expect(metrics.input_audio_s).toBeCloseTo(0.16, 9); // 2 × 2,560 bytes at 32,000 bytes/s
    expect(metrics.output_audio_s).toBeCloseTo(0.16, 9); // 2 × 3,528 bytes at 44,100 bytes/s
    expect(metrics.admission_denials).toBe(0);
    expect(metrics.first_audio_packet_s).toBeCloseTo(0.03, 9); // first delta 100.13 − first append 100.10
    expect(metrics.audio_packet_gap_max_s).toBeCloseTo(0.07, 9); // 100.20 − 100.13
    expect(metrics.input_output_overlap).toBe(true);
    expect(metrics.drain_after_eos_s).toBeCloseTo(0.04, 9); // drained 100.27 − EOS 100.23
    expect(metrics.close_ack_s).toBeCloseTo(0.01, 9); // closed 100.29 − close 100.28
  });

  it('keeps its status, coverage and metrics when the client clock is translated', () => {
    const before = check(nativeTrace());
    const later = nativeTrace();
    for (const record of later) record.time_s += 5000;
    const after = check(later);
    expect(after.status).toBe(before.status);
    expect(after.coverage).toEqual(before.coverage);
    for (const [name, value] of Object.entries(before.metrics)) {
      const translated = after.metrics[name as keyof typeof after.metrics];
      if (typeof value === 'number') expect(translated).toBeCloseTo(value, 9);
      else expect(translated).toBe(value);
    }
  });

  it('passes an unaligned tail whose padding and last unit account for it, with one more unit of output', () => {
    const trace = nativeTrace();
    eventOf(trace, 'sglang.input_audio.ended').accepted_end_ms = 200;
    Object.assign(eventOf(trace, 'sglang.input_audio.drained'), { accepted_end_ms: 200, consumed_ms: 200, padding_ms: 40 });
    objectAt(eventsOf(trace, 'sglang.unit.done')[2], 'sglang', 'media_time').duration_ms = 40;
    trace.push(
      {
        direction: 'send',
        time_s: 100.22,
        event: { type: 'input_audio_buffer.append', event_id: 'input2', audio: base64Samples([0, 0], 640), sglang: { seq: 2, t_start_ms: 160 } },
      },
      {
        direction: 'receive',
        time_s: 100.221,
        event: { type: 'sglang.input_audio.accepted', event_id: 'accept2', seq: 2, accepted_end_ms: 200, client_event_id: 'input2' },
      },
      {
        direction: 'receive',
        time_s: 100.222,
        event: {
          type: 'response.output_audio.delta',
          event_id: 'delta2',
          response_id: 'response0',
          item_id: 'item0',
          output_index: 0,
          content_index: 0,
          delta: outputUnit(NEMOTRON),
        },
      },
    );
    const result = check(byTime(trace));
    expect(result.violations).toEqual([]);
    expect(result.status).toBe('pass');
    expect(result.metrics.input_audio_s).toBeCloseTo(0.2, 9);
    expect(result.metrics.output_audio_s).toBeCloseTo(0.24, 9);
  });

  it('is not_exercised when no input is sent while output audio flows', () => {
    const trace = nativeTrace();
    const second = trace.find((record) => record.event.type === 'input_audio_buffer.append' && record.time_s > 100.15) as TraceRecord;
    second.time_s = 100.105;
    const result = check(byTime(trace));
    expect(result.status).toBe('not_exercised');
    expect(result.violations).toEqual([]);
    expect(result.coverage.input_output_overlap).toBe(false);
  });

  it('fails an empty trace', () => {
    const result = check([]);
    expect(result.status).toBe('fail');
    expect(result.violations).toEqual(expect.arrayContaining(['missing audio input', 'expected exactly one receive session.created, saw 0']));
  });
});

// ---- wire mutations ----

describe('checkNativeTrace: one field of one event changed', () => {
  it.each<[string, string, Json, string]>([
    ['session.updated', 'client_event_id', 'unknown', 'session.updated: missing matching prior client event'],
    ['input_audio_buffer.append', 'sglang', { seq: 1 }, 'input sequence is not contiguous'],
    ['input_audio_buffer.append', 'sglang', { seq: true }, 'event.sglang.seq must be an integer'],
    ['input_audio_buffer.append', 'sglang', { seq: 0, t_start_ms: 80 }, 'input media time is not sample-contiguous'],
    ['input_audio_buffer.append', 'audio', '?!', 'audio is not valid base64'],
    ['input_audio_buffer.append', 'audio', 'AA==', 'whole nonempty samples'],
    ['response.output_audio.delta', 'delta', '', 'whole nonempty samples'],
    ['response.output_audio.delta', 'item_id', null, 'audio missing item ID'],
    ['response.output_audio.delta', 'response_id', 'foreign', 'unknown response'],
    ['response.output_audio.delta', 'content_index', true, 'event.content_index must be an integer'],
    ['sglang.input_audio.accepted', 'seq', 9, 'accepted input sequence mismatch'],
    ['sglang.input_audio.accepted', 'accepted_end_ms', 81, 'accepted input duration mismatch'],
    ['sglang.input_audio.ended', 'accepted_end_ms', 159, 'ended input duration mismatch'],
    ['sglang.input_audio.drained', 'consumed_ms', 80, 'drained consumed duration mismatch'],
    ['sglang.input_audio.drained', 'discarded_ms', 1, 'accepted input was discarded'],
    ['sglang.input_audio.drained', 'padding_ms', 80, 'drained padding mismatch'],
    ['sglang.unit.done', 'unit_id', 'bogus', 'invalid native unit ID: bogus'],
    ['session.closed', 'reason', 'disconnect', 'unexpected session close reason'],
    ['session.closed', 'reason', null, 'unexpected session close reason'],
    ['session.closed', 'client_event_id', 'unknown', 'session.closed: missing matching prior client event'],
  ])('%s with %s = %j fails: %s', (type, key, value, violation) => {
    const trace = nativeTrace();
    eventOf(trace, type)[key] = value;
    expectFailure(check(trace), violation);
  });

  it.each([
    ['unit_9', 'native unit receipts are not contiguous from zero'],
    ['unit_0', 'native unit receipts are not increasing'],
  ])('the last unit receipt as %s fails: %s', (unitId, violation) => {
    const trace = nativeTrace();
    eventsOf(trace, 'sglang.unit.done')[2].unit_id = unitId;
    expectFailure(check(trace), violation);
  });
});

describe('checkNativeTrace: steps missing or repeated', () => {
  it.each([
    ['session.created', 'expected exactly one receive session.created, saw 0'],
    ['session.updated', 'expected exactly one receive session.updated, saw 0'],
    ['sglang.input_audio.ended', 'expected exactly one receive sglang.input_audio.ended, saw 0'],
    ['sglang.input_audio.drained', 'expected exactly one receive sglang.input_audio.drained, saw 0'],
    ['session.close', 'expected exactly one send session.close, saw 0'],
    ['session.closed', 'expected exactly one receive session.closed, saw 0'],
    ['response.done', 'response response0 ended none/none, expected completed/stop'],
    ['response.output_audio.done', 'missing output_audio.done'],
    ['sglang.input_audio.accepted', 'missing input acceptance receipt for input0'],
  ])('without %s fails: %s', (type, violation) => {
    expectFailure(
      check(nativeTrace().filter((record) => record.event.type !== type)),
      violation,
    );
  });

  it.each([
    ['response.done', 'response.done: output after response terminal'],
    ['response.output_audio.done', 'duplicate output_audio.done'],
    ['session.updated', 'duplicate session.updated'],
    ['sglang.input_audio.accepted', 'duplicate sglang.input_audio.accepted'],
  ])('a second %s under a new event_id fails: %s', (type, violation) => {
    const trace = nativeTrace();
    const index = indexOf(trace, type);
    const copy = structuredClone(trace[index]);
    copy.event.event_id = 'duplicate_semantics';
    trace.splice(index, 0, copy);
    expectFailure(check(trace), violation);
  });
});

// ---- the grant ----

describe('checkNativeTrace: the granted capabilities', () => {
  it.each<Json>([false, 1, 'true'])('fails native_full_duplex = %j: only the boolean true will do', (value) => {
    const trace = nativeTrace();
    grantOf(trace).native_full_duplex = value;
    expectFailure(check(trace), 'unsupported capability: native_full_duplex');
  });

  it.each<[string, Json]>([
    ['supports_resume', true],
    ['supports_truncate', true],
    ['supports_server_interrupt', true],
    ['output_modalities', ['text']],
    ['output_audio_format', { type: 'audio/pcm', rate: 16000 }],
  ])('fails %s = %j, which the measured profile does not allow', (key, value) => {
    const trace = nativeTrace();
    grantOf(trace)[key] = value;
    expectFailure(check(trace), `unsupported capability: ${key}`);
  });

  it('fails a grant for the other profile', () => {
    expectFailure(check(nativeTrace(MINICPMO), NEMOTRON), 'unsupported capability: native_unit_ms (granted 1000, required 80)');
  });

  it('passes a missing microturn_ms, which reads as the null it must be', () => {
    const trace = nativeTrace();
    delete grantOf(trace).microturn_ms;
    expect(check(trace).status).toBe('pass');
  });
});

// ---- bad records and errors ----

describe('checkNativeTrace: malformed records and reported errors', () => {
  const cases: Array<[string, (trace: TraceRecord[]) => void, string]> = [
    ['a repeated event_id', (trace) => (trace[2].event.event_id = trace[0].event.event_id), 'duplicate receive event_id: event_0'],
    ['a missing event_id', (trace) => delete trace[0].event.event_id, 'record 0: event.event_id is required'],
    ['an event that is not an object', (trace) => ((trace[0] as { event: unknown }).event = []), 'record 0: event must be an object'],
    ['a NaN time', (trace) => (trace[0].time_s = NaN), 'record 0: time_s must be a finite nonnegative number, got NaN'],
    ['a clock that goes back', (trace) => (trace[2].time_s = 99), 'record 2: clock regressed'],
    ['an extra record field', (trace) => Object.assign(trace[1], { note: 'x' }), 'record 1: note is not an allowed field'],
    ['an unknown direction', (trace) => (trace[1].direction = 'sent'), 'record 1: direction must be one of'],
    [
      'a client error',
      (trace) => trace.unshift({ direction: 'error', time_s: 99, event: { message: 'timeout' } }),
      'client error: timeout',
    ],
    [
      'a server error',
      (trace) =>
        trace.unshift({
          direction: 'receive',
          time_s: 99,
          event: { type: 'error', event_id: 'failure', sglang: { fatal: true }, error: { message: 'rejected' } },
        }),
      'server error: code=none fatal=true: rejected',
    ],
    [
      'a removed cancel command',
      (trace) => trace.splice(3, 0, { direction: 'send', time_s: 100.05, event: { type: 'response.cancel', event_id: 'obsolete_cancel' } }),
      'client command outside this scenario: response.cancel',
    ],
    [
      'a removed cancel receipt',
      (trace) =>
        trace.splice(3, 0, { direction: 'receive', time_s: 100.05, event: { type: 'sglang.response.cancelled', event_id: 'obsolete_cancel' } }),
      'unsupported server event: sglang.response.cancelled',
    ],
  ];

  it.each(cases)('fails %s', (_name, mutate, violation) => {
    const trace = nativeTrace();
    mutate(trace);
    expectFailure(check(trace), violation);
  });

  it('fails a record that is not an object, and goes on with the next', () => {
    const result = check(['oops', ...nativeTrace()]);
    expect(result.violations).toEqual(['record 0: a trace record must be a JSON object, got "oops"']);
  });
});

// ---- response lifecycle ----

describe('checkNativeTrace: the response lifecycle', () => {
  it.each(['response.output_audio.delta', 'response.done'])('fails %s after the response terminal', (type) => {
    const trace = nativeTrace();
    const late = structuredClone(trace[indexOf(trace, type)]);
    late.event.event_id = 'late_output';
    late.time_s = 100.265;
    trace.splice(indexOf(trace, 'sglang.input_audio.drained'), 0, late);
    expectFailure(check(trace), 'output after response terminal');
  });

  it('fails an audio delta after drain', () => {
    const trace = nativeTrace();
    const late = structuredClone(trace[indexOf(trace, 'response.output_audio.delta')]);
    late.event.event_id = 'late_audio';
    late.time_s = 100.275;
    trace.splice(indexOf(trace, 'session.close'), 0, late);
    expectFailure(check(trace), 'response.output_audio.delta after drain');
  });

  it('fails a completed terminal after the drain receipt', () => {
    const trace = nativeTrace();
    trace[indexOf(trace, 'response.done')].time_s = 100.285;
    expectFailure(check(byTime(trace)), 'native completed terminal after the drain receipt');
  });

  it('fails a terminal after drain when the client has not asked to close', () => {
    const trace = nativeTrace();
    trace[indexOf(trace, 'response.done')].time_s = 100.275;
    expectFailure(check(byTime(trace)), 'response.done after drain');
  });

  it('fails a response cancelled at close: cleanup is not a native completion', () => {
    const trace = nativeTrace();
    trace[indexOf(trace, 'response.output_audio.done')].time_s = 100.285;
    const done = trace[indexOf(trace, 'response.done')];
    done.time_s = 100.286;
    Object.assign(objectAt(done.event, 'response'), { status: 'cancelled', status_details: { reason: 'client_closed' } });
    expectFailure(check(byTime(trace)), 'response response0 ended cancelled/client_closed, expected completed/stop');
  });

  it.each([
    ['completed', 'client_closed', 'terminal status completed contradicts reason client_closed'],
    ['cancelled', 'stop', 'terminal status cancelled contradicts reason stop'],
    ['completed', 'disconnect', 'unsupported response terminal reason: disconnect'],
    ['cancelled', 'client_cancelled', 'unsupported response terminal reason: client_cancelled'],
  ])('fails a %s response.done for reason %s', (status, reason, violation) => {
    const trace = nativeTrace();
    Object.assign(objectAt(eventOf(trace, 'response.done'), 'response'), { status, status_details: { reason } });
    expectFailure(check(trace), violation);
  });

  it('fails a response.done without a reason', () => {
    const trace = nativeTrace();
    delete objectAt(eventOf(trace, 'response.done'), 'response').status_details;
    expectFailure(check(trace), 'unsupported response terminal reason: none');
  });

  /** The response completes at 100.155 s, before the second append and EOS. */
  function completedBeforeInputEnds(profile: NativeProfile): TraceRecord[] {
    const trace = nativeTrace(profile).filter((record) => !(record.event.type === 'response.output_audio.delta' && record.time_s > 100.15));
    trace[indexOf(trace, 'response.output_audio.done')].time_s = 100.15;
    trace[indexOf(trace, 'response.done')].time_s = 100.155;
    return byTime(trace);
  }

  it('fails, for nemotron, a response that completes before the end of input', () => {
    expectFailure(check(completedBeforeInputEnds(NEMOTRON), NEMOTRON), 'terminal reason stop without its client command');
  });

  it('passes, for minicpmo, a response that completes before the end of input', () => {
    const result = check(completedBeforeInputEnds(MINICPMO), MINICPMO);
    expect(result.violations).toEqual([]);
    // minicpmo answers in turns, so a pass needs no overlap of input and output.
    expect(result.coverage.input_output_overlap).toBe(false);
    expect(result.status).toBe('pass');
  });
});

// ---- units and output audio ----

describe('checkNativeTrace: native units and output conservation', () => {
  it.each([0, 1])('fails when output delta %d is missing', (dropped) => {
    const trace = nativeTrace();
    trace.splice(trace.indexOf(trace.filter((record) => record.event.type === 'response.output_audio.delta')[dropped]), 1);
    expectFailure(check(trace), 'output audio is not conserved: 3528 of 7056 bytes for 2 units');
  });

  it('fails output frames shorter than a unit', () => {
    const trace = nativeTrace();
    for (const event of eventsOf(trace, 'response.output_audio.delta')) event.delta = base64Samples([1, 0], 320);
    expectFailure(check(trace), 'output audio is not conserved: 1280 of 7056 bytes for 2 units');
  });

  const unitCases: Array<[string, (receipts: TraceRecord[], trace: TraceRecord[]) => void, string]> = [
    ['no receipts', (receipts, trace) => receipts.forEach((receipt) => trace.splice(trace.indexOf(receipt), 1)), 'expected 2 nonempty native units, observed 0'],
    ['no first receipt', (receipts, trace) => trace.splice(trace.indexOf(receipts[0]), 1), 'not contiguous from zero'],
    ['an empty unit for unaligned input', (receipts) => (mediaTime(receipts[1]).duration_ms = 0), 'an empty EOS unit requires exactly unit-aligned input'],
    ['a short unit', (receipts) => (mediaTime(receipts[1]).duration_ms = 40), 'native unit durations do not account for the accepted input'],
    ['a misaligned unit start', (receipts) => (mediaTime(receipts[1]).t_start_ms = 240), 'native unit media time is not unit-aligned'],
    ['a receipt without media time', (receipts) => delete objectAt(receipts[1].event, 'sglang').media_time, 'unit receipt missing media time'],
  ];

  function mediaTime(receipt: TraceRecord): JsonObject {
    return objectAt(receipt.event, 'sglang', 'media_time');
  }

  it.each(unitCases)('fails %s', (_name, mutate, violation) => {
    const trace = nativeTrace();
    mutate(
      trace.filter((record) => record.event.type === 'sglang.unit.done'),
      trace,
    );
    expectFailure(check(trace), violation);
  });

  it('reads unit numbers in any Unicode decimal digits, as Python does', () => {
    const trace = nativeTrace();
    eventsOf(trace, 'sglang.unit.done').forEach((event, index) => (event.unit_id = `unit_${String.fromCodePoint(0x660 + index)}`));
    expect(check(trace).status).toBe('pass');
    eventsOf(trace, 'sglang.unit.done')[2].unit_id = 'unit_²';
    expectFailure(check(trace), 'invalid native unit ID: unit_²');
  });
});

// ---- admission ----

describe('checkNativeTrace: admission diagnostics', () => {
  it('passes denials before the session and counts them', () => {
    const result = check([admission(1), admission(2), admission(3), ...nativeTrace()]);
    expect(result.violations).toEqual([]);
    expect(result.status).toBe('pass');
    expect(result.metrics.admission_denials).toBe(3);
  });

  it.each<[string, TraceRecord[], string]>([
    ['a skipped attempt', [admission(1), admission(3)], 'admission attempts are not contiguous from one'],
    ['a first attempt of 2', [admission(2)], 'admission attempts are not contiguous from one'],
    ['a fourth attempt', [admission(1), admission(2), admission(3), admission(4)], 'admission attempt must be an integer from 1 to 3, got 4'],
    ['HTTP 500', [admission(1, 500)], 'admission http_status must be 503, got 500'],
  ])('fails %s', (_name, records, violation) => {
    expectFailure(check([...records, ...nativeTrace()]), violation);
  });

  it('fails a denial after the session started', () => {
    const trace = nativeTrace();
    trace.splice(3, 0, { ...admission(1), time_s: 100.05 });
    expectFailure(check(trace), 'admission diagnostic after the session started');
  });

  it('fails a denial with fields beyond type, http_status and attempt', () => {
    const denial = admission(1);
    denial.event.reason = 'capacity';
    expectFailure(check([denial, ...nativeTrace()]), 'admission reason is not an allowed field');
  });

  it('fails a session that was never admitted', () => {
    const result = check([
      admission(1),
      admission(2),
      admission(3),
      { direction: 'error', time_s: 99.5, event: { message: 'admission denied after 3 attempts' } },
    ]);
    expectFailure(result, 'client error: admission denied after 3 attempts');
    expect(result.violations).toContain('missing audio input');
  });
});

// ---- profiles ----

describe('grantedProfile', () => {
  it('names the profile the grant states', () => {
    expect(grantedProfile(nativeTrace(NEMOTRON))).toBe(NEMOTRON);
    expect(grantedProfile(nativeTrace(MINICPMO))).toBe(MINICPMO);
  });

  it('is undefined for a grant of no known profile, or no grant', () => {
    const trace = nativeTrace();
    grantOf(trace).output_audio_format = { type: 'audio/pcm', rate: 16000 };
    expect(grantedProfile(trace)).toBeUndefined();
    expect(grantedProfile(nativeTrace().filter((record) => record.event.type !== 'session.updated'))).toBeUndefined();
  });

  it('picks a minicpmo trace that then passes against minicpmo', () => {
    const trace = nativeTrace(MINICPMO);
    expect(check(trace, grantedProfile(trace) as NativeProfile).status).toBe('pass');
  });
});

// ---- trace files ----

describe('parseTraceLines', () => {
  it('reads a JSONL trace, skipping blank lines and CRs, to the same verdict as the records', () => {
    const text = toJsonl(nativeTrace()).replace(/\n/g, '\r\n') + '\n  \n';
    const { records, errors } = parseTraceLines(text);
    expect(errors).toEqual([]);
    expect(records).toEqual(nativeTrace());
    expect(checkText(text).status).toBe('pass');
  });

  it('names a line that is not JSON, and the check fails on it', () => {
    const lines = toJsonl(nativeTrace()).split('\n');
    lines.splice(2, 0, '{"direction": "send",');
    const text = lines.join('\n');
    expect(parseTraceLines(text).errors).toEqual(['line 3 is not JSON: expected a property name in double quotes at column 22']);
    const result = checkText(text);
    expect(result.status).toBe('fail');
    expect(result.violations[0]).toBe('line 3 is not JSON: expected a property name in double quotes at column 22');
  });

  it('reads JSON the way Python does: NaN and Infinity literals, exact big integers, integral floats', () => {
    const huge = '1' + '0'.repeat(400);
    const { records, errors } = parseTraceLines(`[NaN, Infinity, -Infinity, 1e999, ${huge}, 12345678901234567890, 80.0, -0]\n{"__proto__": 1}`);
    expect(errors).toEqual([]);
    // Past the double range an integer stays exact; within it, a double is as exact as any rule needs.
    expect(records[0]).toEqual([NaN, Infinity, -Infinity, Infinity, BigInt(huge), Number('12345678901234567890'), 80, -0]);
    expect(Object.keys(records[1] as object)).toEqual(['__proto__']);
  });

  it('rejects what Python rejects', () => {
    for (const line of ['{"a": 1,}', "{'a': 1}", '[01]', '"a\tb"', '"\\x"', '[1] [2]', '+1', '.5', '-NaN'])
      expect(parseTraceLines(line).errors).toHaveLength(1);
  });
});

describe('checkNativeTrace: numbers as the oracle types them', () => {
  const HUGE = '1' + '0'.repeat(400); // past the double range
  const firstTime = (trace: TraceRecord[]) => Object.assign(trace[0], { time_s: LITERAL });
  const appendSeq = (trace: TraceRecord[]) => (objectAt(eventOf(trace, 'input_audio_buffer.append'), 'sglang').seq = LITERAL);
  const receiptSeq = (trace: TraceRecord[]) => (eventOf(trace, 'sglang.input_audio.accepted').seq = LITERAL);
  const contentIndex = (trace: TraceRecord[]) => (eventOf(trace, 'response.output_audio.delta').content_index = LITERAL);
  const unitMs = (trace: TraceRecord[]) => (grantOf(trace).native_unit_ms = LITERAL);
  const note = (trace: TraceRecord[]) => (trace[0].event.note = LITERAL);

  it.each<[string, (trace: TraceRecord[]) => void, string, string]>([
    ['a NaN time', firstTime, 'NaN', 'record 0: time_s must be a finite nonnegative number, got NaN'],
    ['an Infinity time', firstTime, 'Infinity', 'record 0: time_s must be a finite nonnegative number'],
    ['a 1e999 time', firstTime, '1e999', 'record 0: time_s must be a finite nonnegative number'],
    ['a time past the double range', firstTime, HUGE, 'record 0: time_s must be a finite nonnegative number'],
    ['NaN in a field no rule reads', note, 'NaN', 'record 0: event.note must be a finite number, got NaN'],
    ['-Infinity deep in the grant', (trace) => (grantOf(trace).limits = [LITERAL]), '-Infinity', 'event.session.sglang.granted.limits.0 must be a finite number'],
    ['seq written as 0.0', appendSeq, '0.0', 'event.sglang.seq must be an integer of at least 0, got 0.0'],
    ['a receipt seq written as 0e0', receiptSeq, '0e0', 'event.seq must be an integer, got 0.0'],
    ['content_index written as 0.0', contentIndex, '0.0', 'event.content_index must be an integer, got 0.0'],
    ['native_unit_ms written as 80.0', unitMs, '80.0', 'unsupported capability: native_unit_ms (granted 80.0, required 80)'],
    ['a seq past the double range', appendSeq, HUGE, 'input sequence is not contiguous'],
  ])('fails %s', (_name, place, literal, violation) => {
    expectFailure(checkText(jsonlWith(place, literal)), violation);
  });

  it('fails an admission attempt written as 1.0', () => {
    const text = toJsonl([admission(1)]).replace('"attempt":1', '"attempt":1.0') + toJsonl(nativeTrace());
    expectFailure(checkText(text), 'admission attempt must be an integer from 1 to 3, got 1.0');
  });

  it.each<[string, (trace: TraceRecord[]) => void, string]>([
    ['times written as floats', firstTime, '100.0'],
    ['a float field written as an integral float', (trace) => (eventOf(trace, 'sglang.input_audio.accepted').accepted_end_ms = LITERAL), '80.0'],
    ['a rate inside the output format written as a float', (trace) => (objectAt(grantOf(trace), 'output_audio_format').rate = LITERAL), '22050.0'],
    ['an integer past the double range in a field no rule reads', note, HUGE],
  ])('passes %s, as the oracle does', (_name, place, literal) => {
    expect(checkText(jsonlWith(place, literal)).violations).toEqual([]);
  });

  it('passes http_status written as 503.0 (the oracle compares the literal by value)', () => {
    const text = toJsonl([admission(1)]).replace('"http_status":503', '"http_status":503.0') + toJsonl(nativeTrace());
    expect(checkText(text).status).toBe('pass');
  });

  it('fails 1e999 in records that JSON.parse read, and callers of JSON.parse must report the NaN lines it refuses', () => {
    const records = jsonlWith(firstTime, '1e999')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expectFailure(check(records), 'record 0: time_s must be a finite nonnegative number, got Infinity');
    expect(() => JSON.parse('{"time_s": NaN}')).toThrow(SyntaxError);
  });
});

describe('checkNativeTrace: base64 as Python 3.11-3.12 validates it', () => {
  const withDelta = (delta: string) => {
    const trace = nativeTrace();
    eventOf(trace, 'response.output_audio.delta').delta = delta;
    return check(trace);
  };
  const output = outputUnit(NEMOTRON); // 3,528 bytes: whole quads, no padding

  it('passes stray padding after a whole quad, which b64decode(validate=True) ignores', () => {
    expect(withDelta(output + '==').status).toBe('pass');
  });

  it.each([
    ['a line break', `${output.slice(0, 8)}\n${output.slice(8)}`],
    ['the URL-safe alphabet', output.slice(0, -4) + '-_AA'],
    ['data after padding', output.slice(0, -4) + 'AA==AAAA'],
    ['leading padding', '=' + output],
    ['missing padding', output + 'AA'],
    ['non-ASCII text', output.slice(0, -4) + 'AAé='],
  ])('fails %s', (_name, delta) => {
    expectFailure(withDelta(delta), 'delta is not valid base64');
  });
});
