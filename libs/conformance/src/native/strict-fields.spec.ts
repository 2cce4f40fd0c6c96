import { nativeTrace, check, eventOf, objectAt, grantOf, expectFailure, toJsonl, LITERAL, jsonlWith, checkText, admission, type TraceRecord } from './native-trace.spec-helpers';

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
    expectFailure(checkText(text), 'admission attempt must be an integer of at least 1, got 1.0');
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
