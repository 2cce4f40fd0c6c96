import type { ResponseRecord } from '@duplex-bench/metrics';
import { judgedLive, parseSlo } from '@duplex-bench/results';
import type { SessionResult } from '@duplex-bench/session';
import { abortLine, SloWatch, type SloAbort } from './slo-watch';

/** A clock the test moves by hand. */
const manual = () => {
  const c = { t: 100, now_s: () => c.t };
  return c;
};
const response = (rtf: number) => ({ rtf }) as unknown as ResponseRecord;
const ended = (completed: boolean, reason?: string) => ({ completed, reason }) as unknown as SessionResult;

function watch(slo: string, grace_s = 5, arrivals = false) {
  const clock = manual();
  const aborts: SloAbort[] = [];
  const w = new SloWatch({ terms: parseSlo(slo), grace_s, clock, arrivals, onAbort: (a) => aborts.push(a) });
  const hooks = w.hooks();
  return { clock, aborts, w, hooks };
}

describe('SloWatch (--abort-on-fail)', () => {
  it('ends the run once a percentile has stayed over its bound for the grace, not before', () => {
    const { clock, aborts, w, hooks } = watch('ttfp_p99_ms<=100', 5);
    w.start(100, 100);
    for (let i = 0; i < 50; i++) hooks.onFirstOutput?.('ttfp', 800);
    w.judge();
    clock.t = 104;
    w.judge();
    expect(aborts).toEqual([]);
    clock.t = 105;
    w.judge();
    expect(aborts).toEqual([{ term: 'ttfp_p99_ms<=100', value: expect.closeTo(800, 0) as number, at_s: 5, how: expect.stringContaining('for 5 s') as string }]);
    expect(abortLine(aborts[0])).toMatch(/^ttfp_p99_ms<=100 \(TTFP p99 80\d(\.\d+)?, over its bound for 5 s .* at 5 s after the start gate$/);
    w.stop();
  });

  it('starts the grace again when the percentile comes back under its bound', () => {
    const { clock, aborts, w, hooks } = watch('ttfp_p99_ms<=100', 5);
    w.start(100, 100);
    hooks.onFirstOutput?.('ttfp', 800);
    w.judge();
    clock.t = 103;
    for (let i = 0; i < 500; i++) hooks.onFirstOutput?.('ttfp', 10);
    w.judge(); // p99 back under 100: the failure is forgotten
    clock.t = 106;
    for (let i = 0; i < 100; i++) hooks.onFirstOutput?.('ttfp', 900);
    w.judge();
    clock.t = 110;
    w.judge();
    expect(aborts).toEqual([]);
    clock.t = 111;
    w.judge();
    expect(aborts).toHaveLength(1);
  });

  it('leaves out the responses that finish before the steady window', () => {
    const { clock, aborts, w, hooks } = watch('ttfp_p99_ms<=100,ttft_p99_ms<=100,rtf_p99<=1', 0);
    w.start(100, 110);
    hooks.onFirstOutput?.('ttfp', 5000); // during the warm-up
    hooks.onFirstOutput?.('ttft', 5000);
    hooks.onResponse?.(response(3));
    clock.t = 111;
    hooks.onFirstOutput?.('ttfp', 50);
    hooks.onFirstOutput?.('ttft', 50);
    hooks.onResponse?.(response(0.5));
    w.judge();
    expect(aborts).toEqual([]);
  });

  it('ends the run at once when a count passes its bound, and skips interrupted and (arrivals) refused sessions', () => {
    const { aborts, w, hooks } = watch('incomplete<=1', 30, true);
    w.start(100, 100);
    hooks.onSessionEnd?.(ended(false, 'interrupted'));
    hooks.onSessionEnd?.(ended(false, 'admission_refused'));
    hooks.onSessionEnd?.(ended(true));
    hooks.onSessionEnd?.(ended(false, 'server_closed'));
    w.judge();
    expect(aborts).toEqual([]);
    hooks.onSessionEnd?.(ended(false, 'drain_timeout'));
    w.judge();
    expect(aborts.map((a) => [a.term, a.value, a.at_s])).toEqual([['incomplete<=1', 2, 0]]);
    w.judge();
    expect(aborts).toHaveLength(1);
  });

  it('judges live only the terms it can: percentiles, and counts against an upper bound', () => {
    expect(parseSlo('ttfp_p99_ms<=1,rtf_p99<1,incomplete=0,incomplete>=1,underruns=0,unit_miss_rate<=0.01').map(judgedLive)).toEqual([true, true, true, false, false, false]);
  });
});
