import { arrivalSchedule, type ArrivalPlan } from './arrival-schedule';
import { describeDuration, drawDurationS, meanDurationS, MIN_SESSION_S, parseSessionDuration } from './session-duration';
import { seeded } from '@duplex-bench/pacer';

const plan = (over: Partial<ArrivalPlan> = {}): ArrivalPlan => ({ rate_per_s: 4, process: 'poisson', run_for_s: 10_000, seed: 7, duration: { kind: 'fixed', s: 2 }, ...over });

/** Mean and standard error of a sample. */
function meanAndError(xs: number[]): { mean: number; se: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1);
  return { mean, se: Math.sqrt(variance / xs.length) };
}

describe('arrivalSchedule', () => {
  it('draws Poisson arrivals whose count over a long horizon lies within its own 95% Poisson interval', () => {
    // The count over T at rate R is Poisson(R×T): 40,000 ± 1.96 × √40,000 = ± 392.
    const s = arrivalSchedule(plan());
    expect(Math.abs(s.length - 40_000)).toBeLessThanOrEqual(1.96 * Math.sqrt(40_000));
    // Exponential gaps: their mean is 1/R within its standard error (the sd of an exponential is its mean).
    const gaps = s.slice(1).map((a, i) => a.offset_s - s[i].offset_s);
    expect(Math.abs(meanAndError(gaps).mean - 0.25)).toBeLessThanOrEqual(1.96 * (0.25 / Math.sqrt(gaps.length)));
    expect(gaps.every((g) => g >= 0)).toBe(true);
    expect(s.every((a) => a.offset_s >= 0 && a.offset_s < 10_000)).toBe(true);
  });

  it('replays from its seed, and another seed draws other instants', () => {
    expect(arrivalSchedule(plan({ run_for_s: 10 }))).toEqual(arrivalSchedule(plan({ run_for_s: 10 })));
    expect(arrivalSchedule(plan({ run_for_s: 10, seed: 8 }))[0].offset_s).not.toBe(arrivalSchedule(plan({ run_for_s: 10 }))[0].offset_s);
  });

  it('spaces constant arrivals exactly 1/R apart from the origin, up to (not at) --run-for', () => {
    const s = arrivalSchedule(plan({ process: 'constant', rate_per_s: 3, run_for_s: 2 }));
    expect(s.map((a) => a.offset_s)).toEqual([0, 1 / 3, 2 / 3, 1, 4 / 3, 5 / 3]);
    // A product, not a running sum: the last of 100,000 instants is exactly k/R.
    const long = arrivalSchedule(plan({ process: 'constant', rate_per_s: 10, run_for_s: 10_000 }));
    expect(long.at(-1)?.offset_s).toBe((long.length - 1) / 10);
  });

  it('draws durations whose means are the stated ones, and leaves the instants alone when the distribution changes', () => {
    const exp = arrivalSchedule(plan({ duration: { kind: 'exp', mean_s: 2 } })).map((a) => a.duration_s);
    const e = meanAndError(exp);
    expect(Math.abs(e.mean - 2)).toBeLessThanOrEqual(1.96 * e.se);
    const logn = arrivalSchedule(plan({ duration: { kind: 'lognormal', mean_s: 2, cov: 0.5 } })).map((a) => a.duration_s);
    const l = meanAndError(logn);
    expect(Math.abs(l.mean - 2)).toBeLessThanOrEqual(1.96 * l.se);
    expect(arrivalSchedule(plan({ run_for_s: 5 })).every((a) => a.duration_s === 2)).toBe(true);
    const instants = (d: ArrivalPlan['duration']) => arrivalSchedule(plan({ run_for_s: 50, duration: d })).map((a) => a.offset_s);
    expect(instants({ kind: 'exp', mean_s: 2 })).toEqual(instants({ kind: 'fixed', s: 1 }));
  });
});

describe('session durations', () => {
  it('reads fixed:S, exp:MEAN and lognormal:MEAN,COV, and says them back', () => {
    expect(parseSessionDuration('fixed:2.5')).toEqual({ kind: 'fixed', s: 2.5 });
    expect(parseSessionDuration('exp:2')).toEqual({ kind: 'exp', mean_s: 2 });
    expect(parseSessionDuration('lognormal:3,0.4')).toEqual({ kind: 'lognormal', mean_s: 3, cov: 0.4 });
    expect(describeDuration(parseSessionDuration('lognormal:3,0.4'))).toBe('lognormal:3,0.4');
    expect(meanDurationS({ kind: 'exp', mean_s: 2 })).toBe(2);
  });

  it.each(['exp', 'exp:0', 'exp:-1', 'fixed:x', 'lognormal:2', 'lognormal:2,-1', 'lognormal:2,1,3', 'uniform:2'])('refuses %s with a coded error', (text) => {
    expect(() => parseSessionDuration(text)).toThrow(expect.objectContaining({ code: 'BAD_SESSION_DURATION', message: expect.stringContaining('--session-duration') }));
  });

  it('never draws a session shorter than one millisecond', () => {
    const random = seeded(1);
    const draws = Array.from({ length: 10_000 }, () => drawDurationS({ kind: 'exp', mean_s: 0.001 }, random));
    expect(Math.min(...draws)).toBe(MIN_SESSION_S);
  });
});
