import type { NativeProfile } from '@duplex-bench/protocol';
import { NEMOTRON, MINICPMO, base64Samples, nativeTrace, check, eventsOf, eventOf, indexOf, objectAt, grantOf, byTime, expectFailure, type Json, type JsonObject, type TraceRecord } from './native-trace.spec-helpers';

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
