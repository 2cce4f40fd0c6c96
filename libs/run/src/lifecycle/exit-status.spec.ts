import { verdictOf, type VerdictInput } from '../verdict';
import { exitOf } from './exit-status';

const run = (over: Partial<VerdictInput> = {}): VerdictInput => ({ qualified: true, interrupted: false, unit: 'session', completed: 4, reasons: {}, ...over });

describe('exitOf', () => {
  it('maps each verdict to its exit status; --allow-unqualified only lifts unqualified', () => {
    expect(exitOf(verdictOf(run()))).toBe(0);
    expect(exitOf(verdictOf(run({ qualified: false })))).toBe(3);
    expect(exitOf(verdictOf(run({ qualified: false })), true)).toBe(0);
    expect(exitOf(verdictOf(run({ interrupted: true })), true)).toBe(130);
    expect(exitOf(verdictOf(run({ completed: 0 })), true)).toBe(1);
  });
});

