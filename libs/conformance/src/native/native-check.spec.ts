import { grantedProfile, parseTraceLines } from './native-check';
import type { NativeProfile } from '@duplex-bench/protocol';
import { NEMOTRON, MINICPMO, base64Samples, outputUnit, nativeTrace, check, eventsOf, eventOf, objectAt, grantOf, byTime, toJsonl, checkText, type TraceRecord } from './native-trace.spec-helpers';

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
});
