import { BehaviourRecorder, behaviourSummary, overlapMs, sessionTurns, wilson95, type PlayedStep, type SpeechSpan } from './behaviour';

const O = { max_stop_s: 3, takeover_min_ms: 500, listen_max_s: () => 15 };

describe('sessionTurns', () => {
  // The default script's shape, played: times in seconds, the session's first packet at 10 s.
  const steps: PlayedStep[] = [
    { pass: 0, step: 0, kind: 'say', start_s: 10, end_s: 12, speech_start_s: 10.05, speech_end_s: 11.9 },
    { pass: 0, step: 1, kind: 'listen', start_s: 12, end_s: 16 },
    { pass: 0, step: 2, kind: 'say', expect: 'stop', start_s: 16, end_s: 18, speech_start_s: 16.02, speech_end_s: 17.9 },
    { pass: 0, step: 3, kind: 'silence', expect: 'hold', start_s: 18, end_s: 19.2 },
    { pass: 0, step: 4, kind: 'say', expect: 'continue', start_s: 21, end_s: 21.6, speech_start_s: 21.05, speech_end_s: 21.5 },
    { pass: 0, step: 5, kind: 'silence', expect: 'hold', start_s: 22, end_s: 22.4 },
    { pass: 0, step: 6, kind: 'say', start_s: 23, end_s: null, cut: true },
  ];
  const spans: SpeechSpan[] = [
    { start_s: 12.3, end_s: 16.22 }, // the answer, stopped 200 ms into the barge-in
    { start_s: 18.8, end_s: 19.1 }, // 300 ms in the pause: under the takeover bar
    { start_s: 20, end_s: 21.4 }, // playing at the backchannel, ends 100 ms before its end: a yield
  ];

  it('reads each behaviour by its definition, with times from the first packet', () => {
    const turns = sessionTurns('s0', steps, spans, [{ t_s: 16.1, status: 'cancelled' }], 10, O);
    expect(turns.map((t) => [t.kind, t.outcome, t.latency_ms ?? null])).toEqual([
      ['response', 'answered', 400],
      ['stop', 'stopped', 200],
      ['pause', 'held', null],
      ['backchannel', 'yielded', null],
      ['pause', 'held', null],
    ]);
    expect(turns[0]).toMatchObject({ user_start_ms: 50, user_end_ms: 1900, model_start_ms: 2300, model_end_ms: 6220 });
    expect(turns[1]).toMatchObject({ cancel_latency_ms: 80, cancel_status: 'cancelled' });
  });

  it('judges no stop or backchannel that the end of the input may have decided', () => {
    const tail: PlayedStep[] = [
      { pass: 0, step: 2, kind: 'say', expect: 'stop', start_s: 16, end_s: 18, speech_start_s: 16.02, speech_end_s: 17.9 },
      { pass: 0, step: 4, kind: 'say', expect: 'continue', start_s: 21, end_s: 21.6, speech_start_s: 21.05, speech_end_s: 21.5 },
      { pass: 0, step: 5, kind: 'listen', start_s: 21.6, end_s: 22, ended_by: 'session_end' },
    ];
    // The input ends at 22 s: the answer playing at the backchannel ends at 21.4 s, but a second
    // span could have started until 22.4 s, past the end; the stop's span ends after the end.
    const late: SpeechSpan[] = [
      { start_s: 15, end_s: 16.2 },
      { start_s: 20, end_s: 21.4 },
    ];
    expect(sessionTurns('s0', tail, late, [], 10, O).map((t) => [t.kind, t.outcome])).toEqual([['stop', 'stopped']]);
    expect(sessionTurns('s0', tail, [{ start_s: 15, end_s: 22.3 }], [], 10, O)).toEqual([]);
    // With a longer input both are judged.
    const longer = tail.map((t) => (t.step === 5 ? { ...t, end_s: 24 } : t));
    expect(sessionTurns('s0', longer, late, [], 10, O).map((t) => [t.kind, t.outcome])).toEqual([
      ['stop', 'stopped'],
      ['backchannel', 'yielded'],
    ]);
  });

  it('says nothing of an utterance whose listen the session cut before any answer', () => {
    const cut: PlayedStep[] = [
      { pass: 0, step: 0, kind: 'say', start_s: 10, end_s: 12, speech_start_s: 10.05, speech_end_s: 11.9 },
      { pass: 0, step: 1, kind: 'listen', start_s: 12, end_s: 13, cut: true },
    ];
    expect(sessionTurns('s0', cut, [], [], 10, O)).toEqual([]);
    expect(sessionTurns('s0', cut, [{ start_s: 12.4, end_s: 13 }], [], 10, O).map((t) => t.outcome)).toEqual(['answered']);
  });

  it('calls a long span in a pause a takeover, a stop past the bound no_stop, a span that goes on continued, none no_response', () => {
    const more: SpeechSpan[] = [
      { start_s: 12.3, end_s: 19.5 }, // never stops within 3 s of the barge-in, and takes the pause
      { start_s: 20, end_s: 23 },
    ];
    const turns = sessionTurns('s0', steps, more, [], 10, O);
    expect(turns.map((t) => [t.kind, t.outcome])).toEqual([
      ['response', 'answered'],
      ['stop', 'no_stop'],
      ['pause', 'held'], // the span started before the pause: not taken in it
      ['backchannel', 'continued'],
      ['pause', 'held'],
    ]);
    expect(sessionTurns('s0', steps, [{ start_s: 18.3, end_s: 19 }], [], 10, O).map((t) => [t.kind, t.outcome])).toEqual([
      ['response', 'no_response'],
      ['stop', 'not_speaking'],
      ['pause', 'took_over'],
      ['backchannel', 'not_speaking'],
      ['pause', 'held'],
    ]);
  });
});

describe('BehaviourRecorder', () => {
  it('pools latencies in HDR histograms and rates with their Wilson interval, and merges parts as one', () => {
    const a = new BehaviourRecorder({ response_latency_ms: 'test' });
    const b = new BehaviourRecorder({ response_latency_ms: 'test' });
    const turn = (kind: 'response' | 'pause', outcome: 'answered' | 'held' | 'took_over', latency_ms?: number) => ({ session: 's', pass: 0, step: 0, kind, outcome, user_start_ms: 0, user_end_ms: 1, ...(latency_ms ? { latency_ms } : {}) });
    a.add([turn('response', 'answered', 400), turn('pause', 'held')], 120);
    b.add([turn('response', 'answered', 600), turn('pause', 'took_over')], 80);
    const s = behaviourSummary([a.parts(), b.parts()], { response_latency_ms: 'test' });
    // 3 significant digits: within 0.5 ms at these values.
    expect(s.response_latency_ms.count).toBe(2);
    expect(s.response_latency_ms.p50).toBeCloseTo(400, 0);
    expect(s.response_latency_ms.max).toBeCloseTo(600, 0);
    expect(s.pause_takeover_rate).toEqual({ rate: 0.5, count: 2, ci95: wilson95(1, 2) });
    expect(s.outcomes).toEqual({ answered: 2, held: 1, took_over: 1 });
    expect(s.overlap_ms.count).toBe(2);
    expect(a.summary().pause_takeover_rate).toEqual({ rate: 0, count: 1, ci95: wilson95(0, 1) });
  });

  it('wilson95: the textbook values', () => {
    expect(wilson95(0, 10)).toEqual([0, 0.2775]);
    expect(wilson95(5, 10)).toEqual([0.2366, 0.7634]);
    expect(wilson95(0, 0)).toBeNull();
  });
});

describe('overlapMs', () => {
  it('adds up user speech under model speech', () => {
    const steps: PlayedStep[] = [{ pass: 0, step: 0, kind: 'say', start_s: 0, end_s: 2, speech_start_s: 0.5, speech_end_s: 1.5 }];
    expect(overlapMs(steps, [{ start_s: 1, end_s: 3 }])).toBe(500);
  });
});
