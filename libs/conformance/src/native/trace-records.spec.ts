import { checkNativeTrace } from './native-check';
import { nativeTrace, check, expectFailure, admission, NEMOTRON, type TraceRecord } from './native-trace.spec-helpers';

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
    ['HTTP 500', [admission(1, 500)], 'admission http_status must be 503, got 500'],
  ])('fails %s', (_name, records, violation) => {
    expectFailure(check([...records, ...nativeTrace()]), violation);
  });

  it("holds the attempts to the run's recorded limit, when one is given (oracle.py@3d801fa0)", () => {
    const four = [admission(1), admission(2), admission(3), admission(4), ...nativeTrace()];
    expect(check(four).violations).toEqual([]);
    expect(checkNativeTrace(four, NEMOTRON, { max_admission_attempts: 4 }).violations).toEqual([]);
    expectFailure(checkNativeTrace(four, NEMOTRON, { max_admission_attempts: 3 }), 'admission attempt 4 exceeds the recorded limit 3');
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
