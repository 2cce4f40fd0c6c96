import { CONVERSATION_ONCE_ORIGIN, conversationOnceFigures, withConversationOnce } from './conversation-once';
import { MEASUREMENT_ORIGIN, type RunSummary } from './summary';

describe('conversationOnceFigures', () => {
  it("takes the longest input any session streamed, and the mean of those that played the script to its end, in seconds of packets sent", () => {
    const once = conversationOnceFigures(
      [
        { completed: true, packets_sent: 400 }, // 32 s
        { completed: true, packets_sent: 500 }, // 40 s
        { completed: false, packets_sent: 600 }, // 48 s, cut (an interrupt, a server error): still the longest input streamed
        { completed: false, packets_sent: 0 },
      ],
      80,
      70.4,
    );
    expect(once).toEqual({ bound_s: 70.4, completed: 2, mean_input_s: 36, longest_input_s: 48 });
  });

  it('says null for the mean when no session played the script to its end, and 0 s when none streamed', () => {
    expect(conversationOnceFigures([{ completed: false, packets_sent: 3 }], 40, 10)).toEqual({ bound_s: 10, completed: 0, mean_input_s: null, longest_input_s: 0.12 });
    expect(conversationOnceFigures([], 80, 10)).toEqual({ bound_s: 10, completed: 0, mean_input_s: null, longest_input_s: 0 });
  });
});

describe('withConversationOnce', () => {
  it("makes the summary's duration_s the longest input, with the block and its origin beside it, and leaves the shared origins alone", () => {
    const summary = { duration_s: 70.4, packet_ms: 80, measurement_origin: MEASUREMENT_ORIGIN } as unknown as RunSummary;
    withConversationOnce(summary, [{ completed: true, packets_sent: 300 }, { completed: true, packets_sent: 250 }], 80, 70.4);
    expect(summary.duration_s).toBe(24);
    expect(summary.conversation_once).toEqual({ bound_s: 70.4, completed: 2, mean_input_s: 22, longest_input_s: 24 });
    expect(summary.measurement_origin.duration_s).toBe(CONVERSATION_ONCE_ORIGIN);
    expect(summary.measurement_origin.pacing_deviation_ms).toBe(MEASUREMENT_ORIGIN.pacing_deviation_ms);
    expect(MEASUREMENT_ORIGIN).not.toHaveProperty('duration_s');
  });
});
