import { behaviourDelays } from './behaviour-log';

describe('behaviourDelays', () => {
  it("reads each answer's delay after the turn end it answered and each stop's after its barge-in, ignoring takeovers and other ends", () => {
    const delays = behaviourDelays([
      {
        events: [
          { kind: 'speech_end', t_ms: 1000, input_ms: 1000, utterance: 0, means: 'turn_end' },
          { kind: 'answer_start', t_ms: 1400, answer: 0, why: 'turn_end', due_ms: 1400 },
          { kind: 'barge_in', t_ms: 2000, answer: 0, stop_at_ms: 2200 },
          { kind: 'answer_end', t_ms: 2210, answer: 0, silent_ms: 2210, why: 'barge_in' },
          { kind: 'speech_end', t_ms: 3000, input_ms: 3000, utterance: 1, means: 'pause' },
          { kind: 'answer_start', t_ms: 3800, answer: 1, why: 'takeover', due_ms: 3800 },
          { kind: 'answer_end', t_ms: 4800, answer: 1, silent_ms: 4800, why: 'done' },
        ],
      },
      { events: [{ kind: 'answer_end', t_ms: 10, answer: 0, silent_ms: 10, why: 'barge_in' }] },
    ]);
    expect(delays).toEqual({ response_ms: [400], stop_ms: [210] });
  });
});
