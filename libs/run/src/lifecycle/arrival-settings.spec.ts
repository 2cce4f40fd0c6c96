import { UsageError } from '@duplex-bench/cli';
import { MAX_ARRIVALS } from '../arrivals/arrival-schedule';
import { CONVERSATION_LENGTH } from '../arrivals/session-duration';
import { RunInputError } from '../input-error';
import { arrivalOptions, type ArrivalFlagValues } from './arrival-settings';

// parseRunOptions' spec (apps/probe run-options.spec.ts) reads these through the run's flags; here is
// the function itself: every refusal by its message, the defaults, and the bound at MAX_ARRIVALS.

/** The arrival flags as the parser gives them (ARRIVAL_FLAGS' defaults), with `over`. */
const flags = (over: Partial<ArrivalFlagValues> = {}): ArrivalFlagValues => ({ arrivals: 'poisson', 'max-in-flight': 1024, seed: 1, ...over });

function refusal(over: Partial<ArrivalFlagValues>): UsageError {
  try {
    arrivalOptions(flags(over));
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return err as UsageError;
  }
  throw new Error(`accepted: ${JSON.stringify(over)}`);
}

describe('arrivalOptions', () => {
  it('is null without --arrival-rate, whatever the closed load says', () => {
    expect(arrivalOptions(flags({ duration: 30, conversation: 'default' }))).toBeNull();
  });

  it.each<[string, Partial<ArrivalFlagValues>, string]>([
    ['--session-duration without --arrival-rate', { 'session-duration': 'exp:2', duration: 30 }, '--session-duration is for --arrival-rate'],
    ['--run-for without --arrival-rate', { 'run-for': 60, duration: 30 }, '--run-for is for --arrival-rate'],
    ['no session length: no --session-duration, --duration or --conversation', { 'arrival-rate': 2, 'run-for': 60 }, '--arrival-rate needs --session-duration or --duration'],
    ['a conversation length without a --conversation', { 'arrival-rate': 2, 'run-for': 60, 'session-duration': CONVERSATION_LENGTH }, '--session-duration conversation is the length of a --conversation: give one'],
    ['no schedule length: no --run-for or --duration', { 'arrival-rate': 2, 'session-duration': 'fixed:3' }, '--arrival-rate needs --run-for or --duration'],
    ['a conversation with no schedule length', { 'arrival-rate': 2, conversation: 'default' }, '--arrival-rate needs --run-for or --duration'],
    ['one arrival past MAX_ARRIVALS', { 'arrival-rate': 1000, 'run-for': MAX_ARRIVALS / 1000 + 0.001, duration: 1 }, `--arrival-rate 1000 for ${MAX_ARRIVALS / 1000 + 0.001} s is more than ${MAX_ARRIVALS} arrivals`],
  ])('refuses %s, in one line naming the flag', (_what, over, message) => {
    expect(refusal(over).message).toBe(message);
  });

  it("refuses a --session-duration it cannot read with the lib's message, its RunInputError kept as the cause", () => {
    const err = refusal({ 'arrival-rate': 2, duration: 5, 'session-duration': 'lognormal:2' });
    expect(err.message).toBe('--session-duration: lognormal takes MEAN,COV, got "lognormal:2"');
    expect(err.cause).toBeInstanceOf(RunInputError);
    expect((err.cause as RunInputError).code).toBe('BAD_SESSION_DURATION');
  });

  it('takes --duration for the session length and the schedule, and passes the process, bound and seed on', () => {
    expect(arrivalOptions(flags({ 'arrival-rate': 2.5, duration: 7, arrivals: 'constant', 'max-in-flight': 8, seed: 42 }))).toEqual({
      rate_per_s: 2.5,
      process: 'constant',
      duration: { kind: 'fixed', s: 7 },
      run_for_s: 7,
      max_in_flight: 8,
      seed: 42,
    });
  });

  it('lets --run-for set the schedule and --session-duration the session, each over --duration', () => {
    const o = arrivalOptions(flags({ 'arrival-rate': 2, duration: 7, 'run-for': 60, 'session-duration': 'exp:3' }));
    expect(o).toMatchObject({ duration: { kind: 'exp', mean_s: 3 }, run_for_s: 60 });
    expect(arrivalOptions(flags({ 'arrival-rate': 2, duration: 7, 'run-for': 60 }))?.duration).toEqual({ kind: 'fixed', s: 7 });
  });

  it("makes each session its conversation's length with --conversation, over --duration, until a length is asked", () => {
    // The bound is the script's, filled in once it is read: NaN until then.
    expect(arrivalOptions(flags({ 'arrival-rate': 2, duration: 7, conversation: 'default' }))?.duration).toEqual({ kind: 'conversation', bound_s: NaN });
    expect(arrivalOptions(flags({ 'arrival-rate': 2, duration: 7, conversation: 'default', 'session-duration': 'fixed:2' }))?.duration).toEqual({ kind: 'fixed', s: 2 });
  });

  it('takes exactly MAX_ARRIVALS arrivals', () => {
    expect(arrivalOptions(flags({ 'arrival-rate': 1000, 'run-for': MAX_ARRIVALS / 1000, duration: 1 }))?.run_for_s).toBe(MAX_ARRIVALS / 1000);
  });
});
