import { sessionSpeech } from './session-speech';

describe('sessionSpeech', () => {
  it("puts the steps, the model's spans and the response events on the clock of turns.jsonl, events in order", () => {
    const steps = [
      { pass: 0, step: 0, kind: 'say' as const, start_s: 100, end_s: 102, speech_start_s: 100.0125, speech_end_s: 101.9 },
      { pass: 0, step: 1, kind: 'listen' as const, start_s: 102, end_s: 105.2, ended_by: 'trigger' as const },
      { pass: 0, step: 2, kind: 'silence' as const, expect: 'hold' as const, start_s: 105.2, end_s: null, cut: true },
    ];
    const s = sessionSpeech('s3', steps, [{ start_s: 102.4, end_s: 104.6 }], { starts: [{ t_s: 102.3 }], ends: [{ t_s: 104.7, status: 'cancelled' }, { t_s: 102.1 }] }, 100, 'vad');
    expect(s).toEqual({
      session: 's3',
      model_speech: 'vad',
      steps: [
        { pass: 0, step: 0, kind: 'say', start_ms: 0, end_ms: 2000, speech_start_ms: 12.5, speech_end_ms: 1900 },
        { pass: 0, step: 1, kind: 'listen', start_ms: 2000, end_ms: 5200, ended_by: 'trigger' },
        { pass: 0, step: 2, kind: 'silence', expect: 'hold', start_ms: 5200, end_ms: null, cut: true },
      ],
      model: [[2400, 4600]],
      events: [
        { t_ms: 2100, event: 'done' },
        { t_ms: 2300, event: 'created' },
        { t_ms: 4700, event: 'done', status: 'cancelled' },
      ],
    });
  });
});
