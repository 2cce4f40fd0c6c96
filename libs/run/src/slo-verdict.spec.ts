import { EXIT } from '@duplex-bench/cli';
import { parseSlo, type RunSummary } from '@duplex-bench/results';
import { exitWithSlo, judgeSlo } from './slo-verdict';

const summary = (ttfp_p99: number | null, incomplete: number) =>
  ({ sessions: { incomplete, incomplete_reasons: {} }, duplex: { ttfp_ms: { p99: ttfp_p99 } } }) as unknown as RunSummary;

describe('judgeSlo', () => {
  it('names each failed term with its figure, and only those', () => {
    const v = judgeSlo(parseSlo('ttfp_p99_ms<=1000,incomplete=0'), summary(1234.56789, 0));
    expect(v.block).toEqual({ passed: false, terms: [{ term: 'ttfp_p99_ms<=1000', value: 1234.56789, ok: false }, { term: 'incomplete=0', value: 0, ok: true }] });
    expect(v.line).toBe('SLO FAILED: ttfp_p99_ms<=1000 (TTFP p99 1234.568)');
  });

  it('fails a term whose figure the run does not have', () => {
    const v = judgeSlo(parseSlo('ttfp_p99_ms<=1000'), summary(null, 0));
    expect(v.block.passed).toBe(false);
    expect(v.line).toBe('SLO FAILED: ttfp_p99_ms<=1000 (TTFP p99 no figure)');
  });

  it('fails a run --abort-on-fail ended early, naming the term that ended it, whatever the end figures say', () => {
    const aborted = { term: 'ttfp_p99_ms<=100', value: 800.5, at_s: 10.9, how: 'over its bound for 10 s' };
    const v = judgeSlo(parseSlo('ttfp_p99_ms<=1000'), summary(80, 0), aborted);
    expect(v.block).toMatchObject({ passed: false, aborted });
    expect(v.line).toBe('SLO FAILED: ended early on ttfp_p99_ms<=100 (TTFP p99 800.5, over its bound for 10 s) at 10.9 s after the start gate');
  });

  it('says every term held, with the figures', () => {
    const v = judgeSlo(parseSlo('ttfp_p99_ms<=1000,incomplete=0'), summary(812, 0));
    expect(v.block.passed).toBe(true);
    expect(v.line).toBe('slo: every term held: ttfp_p99_ms<=1000 (TTFP p99 812), incomplete=0 (incomplete sessions 0)');
  });
});

describe('exitWithSlo', () => {
  const failed = judgeSlo(parseSlo('incomplete=0'), summary(null, 2));
  const held = judgeSlo(parseSlo('incomplete=0'), summary(null, 0));
  it('makes a run that would exit 0 exit 4 when a term failed', () => {
    expect(exitWithSlo(EXIT.ok, failed)).toBe(4);
    expect(exitWithSlo(EXIT.ok, held)).toBe(0);
    expect(exitWithSlo(EXIT.ok, null)).toBe(0);
  });
  it('makes a run its SLO ended early exit 4, unless it failed or a signal came too', () => {
    const early = judgeSlo(parseSlo('incomplete=0'), summary(null, 0), { term: 'incomplete=0', value: 1, at_s: 3, how: 'passed its bound' });
    expect(exitWithSlo(EXIT.interrupted, early)).toBe(4);
    expect(exitWithSlo(EXIT.interrupted, early, true)).toBe(EXIT.interrupted);
    expect(exitWithSlo(EXIT.failed, early)).toBe(EXIT.failed);
  });
  it('keeps a failed, interrupted or unqualified run its own status', () => {
    for (const code of [EXIT.failed, EXIT.interrupted, EXIT.unqualified]) expect(exitWithSlo(code, failed)).toBe(code);
  });
});
