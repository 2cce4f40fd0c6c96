import { verdictLine, verdictOf, withVerdict, type VerdictInput } from './verdict';

const run = (over: Partial<VerdictInput> = {}): VerdictInput => ({ qualified: true, interrupted: false, unit: 'session', completed: 4, reasons: {}, ...over });
const SAYS = { qualified: 'measures the server', unqualified: 'missed its cadence', interrupted: 'partial run' };

describe('verdictOf', () => {
  it('is qualified or unqualified by pacing when a session completed', () => {
    expect(verdictOf(run())).toEqual({ verdict: 'qualified', reason: null });
    expect(verdictOf(run({ qualified: false }))).toEqual({ verdict: 'unqualified', reason: null });
  });

  it('is failed when no session completed, however well the client paced, and names what ended them', () => {
    // Every packet on time, but every session refused or broken: nothing was measured.
    const v = verdictOf(run({ completed: 0, reasons: { admission_refused: 3, server_error: 1 } }));
    expect(v).toEqual({ verdict: 'failed', reason: 'no session completed (3 admission_refused, 1 server_error)' });
    expect(verdictOf(run({ qualified: false, completed: 0, reasons: { admission_refused: 4 } })).verdict).toBe('failed');
  });

  it('names requests for an http run, and leaves out reasons counted 0 or absent', () => {
    expect(verdictOf(run({ unit: 'request', completed: 0, reasons: { connect: 2, timeout: 0, status: undefined } })).reason).toBe('no request completed (2 connect)');
    expect(verdictOf(run({ completed: 0 })).reason).toBe('no session completed');
  });

  it('puts a failure of the run itself first, then an interruption, then nothing completed', () => {
    expect(verdictOf(run({ failure: 'trace writer died', interrupted: true, completed: 0 }))).toEqual({ verdict: 'failed', reason: 'trace writer died' });
    expect(verdictOf(run({ interrupted: true, completed: 0 }))).toEqual({ verdict: 'interrupted', reason: null });
    expect(verdictOf(run({ failure: null }))).toEqual({ verdict: 'qualified', reason: null });
  });
});

describe('verdictLine', () => {
  it('starts with the verdict in capitals; a failed line says why instead of what the command would claim', () => {
    expect(verdictLine(verdictOf(run()), SAYS)).toBe('QUALIFIED: measures the server');
    expect(verdictLine(verdictOf(run({ qualified: false })), SAYS)).toBe('UNQUALIFIED: missed its cadence');
    expect(verdictLine(verdictOf(run({ interrupted: true })), SAYS)).toBe('INTERRUPTED: partial run');
    expect(verdictLine(verdictOf(run({ completed: 0, reasons: { admission_refused: 4 } })), SAYS)).toBe('FAILED: no session completed (4 admission_refused)');
  });
});

describe('withVerdict', () => {
  it('puts verdict (and failed_reason when failed) right after qualified, which keeps its value', () => {
    const summary = { qualified: true, interrupted: false, sessions: { completed: 0 } };
    const failed = withVerdict(summary, verdictOf(run({ completed: 0, reasons: { server_error: 2 } })));
    expect(Object.keys(failed)).toEqual(['qualified', 'verdict', 'failed_reason', 'interrupted', 'sessions']);
    expect(failed).toMatchObject({ qualified: true, verdict: 'failed', failed_reason: 'no session completed (2 server_error)' });
    expect(Object.keys(withVerdict(summary, verdictOf(run())))).toEqual(['qualified', 'verdict', 'interrupted', 'sessions']);
  });

  it('replaces a verdict the summary was read back with', () => {
    const stored = { qualified: false, verdict: 'failed' as const, interrupted: false };
    expect(withVerdict(stored, verdictOf(run({ qualified: false }))).verdict).toBe('unqualified');
  });
});
