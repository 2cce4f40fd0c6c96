import { seeded } from '@duplex-bench/pacer';
import { CONVERSATION_LENGTH, describeDuration, drawDurationS, meanDurationS, MIN_SESSION_S, parseSessionDuration, type SessionDuration } from './session-duration';

describe('parseSessionDuration', () => {
  it('reads each kind, and says each back as it was written', () => {
    for (const text of ['fixed:2.5', 'exp:2', 'lognormal:3,0.4', 'lognormal:3,0', CONVERSATION_LENGTH]) expect(describeDuration(parseSessionDuration(text))).toBe(text);
    expect(parseSessionDuration('fixed:2.5')).toEqual({ kind: 'fixed', s: 2.5 });
    expect(parseSessionDuration('lognormal:3,0')).toEqual({ kind: 'lognormal', mean_s: 3, cov: 0 });
  });

  it("gives a conversation's length no bound until its script is read", () => {
    const d = parseSessionDuration('conversation');
    expect(d.kind).toBe('conversation');
    expect(d.kind === 'conversation' && Number.isNaN(d.bound_s)).toBe(true);
  });

  it.each([
    ['fixed:', '--session-duration: S must be a positive number of seconds, got ""'],
    ['fixed: ', '--session-duration: S must be a positive number of seconds, got " "'],
    ['exp:Infinity', '--session-duration: MEAN must be a positive number of seconds, got "Infinity"'],
    ['lognormal:2', '--session-duration: lognormal takes MEAN,COV, got "lognormal:2"'],
    ['lognormal:2,', '--session-duration: COV must be a number >= 0, got ""'],
    ['lognormal:0,1', '--session-duration: MEAN must be a positive number of seconds, got "0"'],
    ['Conversation', '--session-duration must be fixed:S, exp:MEAN, lognormal:MEAN,COV or conversation, got "Conversation"'],
  ])('refuses %j, saying why', (text, message) => {
    expect(() => parseSessionDuration(text)).toThrow(expect.objectContaining({ name: 'RunInputError', code: 'BAD_SESSION_DURATION', message }));
  });
});

describe('meanDurationS', () => {
  it('is the stated mean of each distribution, and unknown (null) for a conversation', () => {
    expect(meanDurationS({ kind: 'fixed', s: 4 })).toBe(4);
    expect(meanDurationS({ kind: 'exp', mean_s: 2 })).toBe(2);
    expect(meanDurationS({ kind: 'lognormal', mean_s: 3, cov: 0.5 })).toBe(3);
    expect(meanDurationS({ kind: 'conversation', bound_s: 40 })).toBeNull();
  });
});

describe('drawDurationS', () => {
  const never = () => {
    throw new Error('drew a number it did not need');
  };

  it('gives a fixed length, a conversation its bound, and a lognormal of no spread its mean, drawing nothing', () => {
    expect(drawDurationS({ kind: 'fixed', s: 2.5 }, never)).toBe(2.5);
    expect(drawDurationS({ kind: 'conversation', bound_s: 41.2 }, never)).toBe(41.2);
    expect(drawDurationS({ kind: 'lognormal', mean_s: 3, cov: 0 }, never)).toBe(3);
  });

  it('raises a draw under a millisecond, and a fixed length under it, to MIN_SESSION_S', () => {
    expect(drawDurationS({ kind: 'exp', mean_s: 1 }, () => 0)).toBe(MIN_SESSION_S);
    expect(drawDurationS({ kind: 'fixed', s: 0.0001 }, never)).toBe(MIN_SESSION_S);
  });

  it('draws exponential lengths from the random source: u maps to -ln(1-u) × mean', () => {
    expect(drawDurationS({ kind: 'exp', mean_s: 2 }, () => 1 - Math.exp(-1.5))).toBeCloseTo(3, 12);
  });

  it('draws lognormal lengths whose median is mean ÷ √(1 + cov²), within its 99.9% band over 20,000 seeded draws', () => {
    const d: SessionDuration = { kind: 'lognormal', mean_s: 2, cov: 1 };
    const random = seeded(5);
    const draws = Array.from({ length: 20_000 }, () => drawDurationS(d, random)).sort((a, b) => a - b);
    const median = 2 / Math.sqrt(2);
    // The share of draws under the true median is 0.5 ± 3.29 × √(0.25/n).
    const under = draws.filter((x) => x < median).length / draws.length;
    expect(Math.abs(under - 0.5)).toBeLessThanOrEqual(3.29 * Math.sqrt(0.25 / draws.length));
  });
});
