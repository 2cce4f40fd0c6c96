import { BUILT_IN_CONVERSATIONS } from '@duplex-bench/audio';
import { COMPARE_METRICS, DEFAULT_SLO, SLO_FIGURES } from '@duplex-bench/experiments';
import { DEFAULT_UNIT_TIMEOUT_MS, parseSessionDuration } from '@duplex-bench/run';
import { RECORD_FLAGS } from './record/record-flags';
import { ARRIVAL_FLAGS } from './run/arrival-flags';
import { CONVERSATION_FLAGS } from './run/conversation-flags';
import { DIALECT_FLAGS } from './run/dialect-flags';
import { RUN_FLAGS } from './run/run-flags';
import { COMPARE_FLAGS } from './sweep/compare-flags';
import { SWEEP_FLAGS } from './sweep/sweep-flags';

// The flag tables load no lib (so `--help` loads none), so what they state of a lib is written out:
// here it is held to the lib.
describe('what the flag tables state of the libs', () => {
  it("lists exactly the libs' figure names, and states their defaults", () => {
    expect(COMPARE_FLAGS.metric.help).toMatch(new RegExp(`: ${Object.keys(COMPARE_METRICS).join(', ')}$`));
    expect(SWEEP_FLAGS.slo.help).toMatch(new RegExp(`figures: ${Object.keys(SLO_FIGURES).join(', ')}$`));
    expect(SWEEP_FLAGS.slo.default).toBe(DEFAULT_SLO);
    expect(DIALECT_FLAGS['unit-timeout-s'].help).toContain(`(default: ${DEFAULT_UNIT_TIMEOUT_MS / 1000})`);
  });

  it('names the built-in conversations, and gives run and record the same conversation flags', () => {
    expect(CONVERSATION_FLAGS.conversation.help).toContain(`a built-in name (${BUILT_IN_CONVERSATIONS.join(', ')})`);
    for (const name of Object.keys(CONVERSATION_FLAGS) as Array<keyof typeof CONVERSATION_FLAGS>) {
      expect([name, RUN_FLAGS[name]]).toEqual([name, CONVERSATION_FLAGS[name]]);
      expect([name, RECORD_FLAGS[name]]).toEqual([name, CONVERSATION_FLAGS[name]]);
    }
  });

  it('gives run the arrival flags, and names in its help exactly the duration forms the lib reads', () => {
    for (const name of Object.keys(ARRIVAL_FLAGS) as Array<keyof typeof ARRIVAL_FLAGS>) expect([name, RUN_FLAGS[name]]).toEqual([name, ARRIVAL_FLAGS[name]]);
    expect(ARRIVAL_FLAGS['session-duration'].help).toContain('fixed:S, exp:MEAN or lognormal:MEAN,COV');
    expect(ARRIVAL_FLAGS['session-duration'].help).toContain('or conversation, one pass');
    for (const form of ['fixed:2', 'exp:2', 'lognormal:2,0.5', 'conversation']) expect(() => parseSessionDuration(form)).not.toThrow();
    expect(ARRIVAL_FLAGS.arrivals.default).toBe('poisson');
  });
});
